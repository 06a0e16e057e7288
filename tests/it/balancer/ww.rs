//! wait-and-widen (docs/stargate.md 3.6, behaviours of 7.5).

use super::{check, depth, make_full, ms, policy, request, selected, ww};
use routex::balancer::{ClusterSnapshot, Decision, Request};
use routex::ir::{Comparator, Policy, Settings, WaitAndWidenSettings};
use std::time::Duration;

const MODEL: &str = "m";
const KEY: &str = "prefix-1";

fn pol(s: WaitAndWidenSettings) -> Policy {
    policy(Settings::WaitAndWiden(s))
}

fn affinity(k: u64, wait_ms: u64) -> WaitAndWidenSettings {
    WaitAndWidenSettings {
        cache_affinity_backend_selection_count: Some(k),
        cache_affinity_wait_ms: wait_ms,
        ..ww()
    }
}

fn at(elapsed: u64) -> Request<'static> {
    Request {
        elapsed: ms(elapsed),
        cache_affinity_key: Some(KEY),
        ..request(MODEL)
    }
}

fn idle(n: usize) -> Vec<ClusterSnapshot> {
    super::clusters(n)
}

/// The ring's affinity order for KEY, read black-box: with group size j
/// and the first j - 1 members excluded, the group phase can only select
/// the j-th member.
fn ring_order(n: usize, want: usize) -> Vec<usize> {
    let cs = idle(n);
    let mut order: Vec<usize> = Vec::new();
    for j in 1..=want {
        let ids: Vec<&str> = order.iter().map(|&i| cs[i].id.as_str()).collect();
        let r = Request {
            excluded: &ids,
            ..at(0)
        };
        let d = check(&pol(affinity(j as u64, 60_000)), &r, &cs);
        assert_eq!(depth(d), 1);
        order.push(selected(d));
    }
    order
}

fn others(n: usize, group: &[usize]) -> Vec<usize> {
    (0..n).filter(|i| !group.contains(i)).collect()
}

#[test]
fn ring_group_is_deterministic_and_distinct() {
    let order = ring_order(6, 6);
    let mut sorted = order.clone();
    sorted.sort();
    assert_eq!(sorted, vec![0, 1, 2, 3, 4, 5]);
    assert_eq!(order, ring_order(6, 6));
}

#[test]
fn wait_and_widen_opens_global_buckets_only_after_affinity_deadline() {
    let order = ring_order(3, 1);
    let p = order[0];
    let rest = others(3, &order);
    let (b, c) = (rest[0], rest[1]);
    let mut cs = idle(3);
    make_full(&mut cs[p]); // TTFT 110
    cs[b].rtt_ms = 210.0; // TTFT 310: 200 ms above P, needs 50 ms
    cs[c].rtt_ms = 410.0; // TTFT 510: another 200 ms, another 50 ms
    let s = affinity(1, 200);
    assert_eq!(check(&pol(s.clone()), &at(0), &cs), Decision::Wait(ms(200)));
    assert_eq!(check(&pol(s.clone()), &at(199), &cs), Decision::Wait(ms(1)));
    assert_eq!(
        check(&pol(s.clone()), &at(200), &cs),
        Decision::Wait(ms(50))
    );
    let d = check(&pol(s.clone()), &at(250), &cs);
    assert_eq!((selected(d), depth(d)), (b, 2));
    // B full: C unlocks 50 ms later.
    make_full(&mut cs[b]);
    assert_eq!(
        check(&pol(s.clone()), &at(250), &cs),
        Decision::Wait(ms(50))
    );
    let d = check(&pol(s.clone()), &at(300), &cs);
    assert_eq!((selected(d), depth(d)), (c, 2));
    make_full(&mut cs[c]);
    assert_eq!(check(&pol(s), &at(300), &cs), Decision::Unavailable);
}

#[test]
fn wait_and_widen_global_buckets_include_affinity_candidates_at_full_prefill_cost() {
    // P (full) is fast only at the affinity scale 0: TTFT 10 in the group,
    // 1010 globally. At full cost it does not anchor G's bucket.
    let order = ring_order(2, 1);
    let (p, g) = (order[0], others(2, &order)[0]);
    let mut cs = idle(2);
    make_full(&mut cs[p]);
    cs[p].last_mean_input_tps = 100.0;
    let s = WaitAndWidenSettings {
        cache_affinity_input_tokens_scale: 0.0,
        ..affinity(1, 100)
    };
    let d = check(&pol(s), &at(100), &cs);
    assert_eq!((selected(d), depth(d)), (g, 2));
}

#[test]
fn wait_and_widen_prefill_discount_is_limited_to_the_affinity_group() {
    // A non-member with slow prefill pays it in full after X: G1 (TTFT
    // 110, full) anchors, G2 (TTFT 1010) is locked 900 x 0.25 = 225 ms.
    let order = ring_order(3, 1);
    let p = order[0];
    let rest = others(3, &order);
    let mut cs = idle(3);
    make_full(&mut cs[p]);
    make_full(&mut cs[rest[0]]);
    cs[rest[1]].last_mean_input_tps = 100.0;
    let s = WaitAndWidenSettings {
        cache_affinity_input_tokens_scale: 0.0,
        ..affinity(1, 100)
    };
    assert_eq!(
        check(&pol(s), &at(100), &cs),
        Decision::Wait(Duration::from_nanos(225_000_000))
    );
}

#[test]
fn wait_and_widen_affinity_deadline_does_not_depend_on_estimates_or_slo() {
    let order = ring_order(3, 1);
    let p = order[0];
    let mut cs = idle(3);
    // P's queue is infinite (invalid tps with queued work).
    cs[p].max_engine_concurrency = 0;
    cs[p].last_mean_input_tps = f64::NAN;
    cs[p].queued_input_size = 5000;
    let mut s = affinity(1, 300);
    assert_eq!(
        check(&pol(s.clone()), &at(40), &cs),
        Decision::Wait(ms(260))
    );
    s.bucket.max_queue_time_floor_ms = Some(10);
    s.bucket.max_queue_time_ceil_ms = Some(10);
    assert_eq!(
        check(&pol(s.clone()), &at(40), &cs),
        Decision::Wait(ms(260))
    );
    let d = check(&pol(s), &at(300), &cs);
    assert_eq!(depth(d), 2);
    assert_ne!(selected(d), p);
}

#[test]
fn wait_and_widen_affinity_wait_requires_a_configured_group_and_key() {
    let order = ring_order(3, 1);
    let p = order[0];
    let mut cs = idle(3);
    make_full(&mut cs[p]);
    let keyless = Request {
        cache_affinity_key: None,
        ..at(0)
    };
    let d = check(&pol(affinity(1, 300)), &keyless, &cs);
    assert_eq!(depth(d), 1);
    assert_ne!(selected(d), p);
    let no_group = WaitAndWidenSettings {
        cache_affinity_wait_ms: 300,
        ..ww()
    };
    let d = check(&pol(no_group), &at(0), &cs);
    assert_eq!(depth(d), 1);
    assert_ne!(selected(d), p);
}

#[test]
fn wait_and_widen_affinity_group_can_cover_all_candidates() {
    let mut cs = idle(3);
    make_full(&mut cs[0]);
    make_full(&mut cs[1]);
    // k > N selects all: the free one wins in the group phase, depth 1.
    let d = check(&pol(affinity(10, 300)), &at(0), &cs);
    assert_eq!((selected(d), depth(d)), (2, 1));
    // All full: wait until X, then Unavailable.
    make_full(&mut cs[2]);
    assert_eq!(
        check(&pol(affinity(10, 300)), &at(0), &cs),
        Decision::Wait(ms(300))
    );
    assert_eq!(
        check(&pol(affinity(10, 300)), &at(300), &cs),
        Decision::Unavailable
    );
}

#[test]
fn wait_and_widen_zero_prefill_scale_preserves_invalid_tps() {
    let order = ring_order(2, 1);
    let p = order[0];
    let mut cs = idle(2);
    cs[p].last_mean_input_tps = 0.0;
    let s = WaitAndWidenSettings {
        cache_affinity_input_tokens_scale: 0.0,
        ..affinity(1, 300)
    };
    // P's prefill stays +inf at scale 0: the group is unavailable.
    assert_eq!(check(&pol(s), &at(0), &cs), Decision::Wait(ms(300)));
}

/// Two group members for the 60 vs 51 comparator: L has the lower RTT and
/// the slower prefill. At scale 0.1, L = 1 + 50 = 51, F = 50 + 10 = 60;
/// at full prefill L = 501, F = 150.
fn discount_case(flags: (bool, bool)) -> (Vec<ClusterSnapshot>, usize, WaitAndWidenSettings) {
    let order = ring_order(2, 2);
    let (l, f) = (order[0], order[1]);
    let mut cs = idle(2);
    cs[l].rtt_ms = 1.0;
    cs[l].last_mean_input_tps = 2000.0;
    cs[f].rtt_ms = 50.0;
    cs[f].last_mean_input_tps = 10_000.0;
    let mut s = WaitAndWidenSettings {
        cache_affinity_input_tokens_scale: 0.1,
        ..affinity(2, 0)
    };
    s.bucket.ttft_bucket_size_ms = 1000; // one bucket: the comparator decides
    s.bucket.ignore_queue_time = flags.0;
    s.bucket.ignore_input_processing_time = flags.1;
    (cs, l, s)
}

fn discount_request() -> Request<'static> {
    Request {
        input_tokens: Some(1000),
        ..at(0)
    }
}

#[test]
fn wait_and_widen_affinity_discount_without_bucket_flags() {
    let (cs, l, s) = discount_case((false, false));
    for seed in 0..20 {
        let b = routex::balancer::Balancer::new(&pol(s.clone()));
        let d = super::decide_seeded(&b, &discount_request(), &cs, seed);
        assert_eq!((selected(d), depth(d)), (l, 1));
    }
}

#[test]
fn wait_and_widen_affinity_discount_with_ignore_queue() {
    let (cs, l, s) = discount_case((true, false));
    let d = check(&pol(s), &discount_request(), &cs);
    assert_eq!(selected(d), l);
}

#[test]
fn wait_and_widen_affinity_discount_with_ignore_prefill() {
    let (cs, l, s) = discount_case((false, true));
    let d = check(&pol(s), &discount_request(), &cs);
    assert_eq!(selected(d), l);
}

#[test]
fn wait_and_widen_affinity_wait_preserves_the_next_bucket_wakeup() {
    // Group {P full, Q free 200 ms slower}: group wait 50, X - t = 300.
    let order = ring_order(3, 2);
    let (p, q) = (order[0], order[1]);
    let mut cs = idle(3);
    make_full(&mut cs[p]);
    cs[q].rtt_ms = 210.0;
    assert_eq!(
        check(&pol(affinity(2, 300)), &at(0), &cs),
        Decision::Wait(ms(50))
    );
    assert_eq!(
        check(&pol(affinity(2, 30)), &at(0), &cs),
        Decision::Wait(ms(30))
    );
    let d = check(&pol(affinity(2, 300)), &at(50), &cs);
    assert_eq!((selected(d), depth(d)), (q, 1));
}

#[test]
fn wait_and_widen_without_affinity_waits_for_a_slower_bucket_with_capacity() {
    let mut cs = idle(2);
    make_full(&mut cs[0]);
    cs[0].rtt_ms = 105.0; // TTFT 205
    cs[1].rtt_ms = 705.0; // TTFT 805
    assert_eq!(check(&pol(ww()), &at(0), &cs), Decision::Wait(ms(150)));
    assert_eq!(selected(check(&pol(ww()), &at(150), &cs)), 1);
}

#[test]
fn wait_and_widen_without_affinity_is_unavailable_when_no_bucket_has_capacity() {
    let mut cs = idle(2);
    make_full(&mut cs[0]);
    make_full(&mut cs[1]);
    cs[1].rtt_ms = 705.0;
    assert_eq!(check(&pol(ww()), &at(0), &cs), Decision::Unavailable);
}

#[test]
fn wait_and_widen_max_queued_at_u64_max_admits_full_candidates_in_selection() {
    let mut cs = idle(1);
    cs[0].num_running_queries = 1_000_000;
    let mut s = ww();
    assert_eq!(check(&pol(s.clone()), &at(0), &cs), Decision::Unavailable);
    s.bucket.max_queued = u64::MAX;
    assert_eq!(selected(check(&pol(s), &at(0), &cs)), 0);
}

#[test]
fn wait_and_widen_retry_preserves_the_affinity_deadline() {
    let order = ring_order(3, 1);
    let cs = idle(3);
    let ids = [cs[order[0]].id.as_str()];
    let r = Request {
        excluded: &ids,
        ..at(100)
    };
    // The excluded primary stays the group: no successor, wait until X.
    assert_eq!(
        check(&pol(affinity(1, 300)), &r, &cs),
        Decision::Wait(ms(200))
    );
    let r = Request {
        excluded: &ids,
        ..at(300)
    };
    let d = check(&pol(affinity(1, 300)), &r, &cs);
    assert_eq!(depth(d), 2);
    assert_ne!(selected(d), order[0]);
}

#[test]
fn wait_and_widen_retry_keeps_affinity_group_and_returns_public_slice_index() {
    let order = ring_order(5, 2);
    let cs = idle(5);
    let ids = [cs[order[0]].id.as_str()];
    let r = Request {
        excluded: &ids,
        ..at(0)
    };
    let d = check(&pol(affinity(2, 300)), &r, &cs);
    assert_eq!((selected(d), depth(d)), (order[1], 1));
    assert_eq!(cs[selected(d)].id, cs[order[1]].id);
}

#[test]
fn wait_and_widen_keeps_an_unexcluded_affine_backup() {
    let order = ring_order(4, 2);
    let mut cs = idle(4);
    for i in others(4, &order) {
        cs[i].rtt_ms = 1.0; // faster non-members must not win before X
    }
    let ids = [cs[order[0]].id.as_str()];
    let r = Request {
        excluded: &ids,
        ..at(0)
    };
    assert_eq!(selected(check(&pol(affinity(2, 300)), &r, &cs)), order[1]);
}

#[test]
fn wait_and_widen_affine_primary_must_meet_interpolated_queue_limit() {
    let order = ring_order(2, 1);
    let p = order[0];
    let mut cs = idle(2);
    make_full(&mut cs[p]);
    cs[p].queue_time_estimate_ms_by_priority = vec![(0, 250)];
    let mut s = affinity(1, 2000);
    s.bucket.max_queue_time_floor_ms = Some(100);
    s.bucket.max_queue_time_ceil_ms = Some(300);
    s.bucket.max_queued = 10;
    let slo = |t| Request {
        request_slo_ms: Some(1000),
        ..at(t)
    };
    // Limit 200 at 500 ms: P violates; 280 at 900 ms: P admitted.
    assert_eq!(
        check(&pol(s.clone()), &slo(500), &cs),
        Decision::Wait(ms(1500))
    );
    assert_eq!(selected(check(&pol(s), &slo(900), &cs)), p);
}

#[test]
fn wait_and_widen_uses_comparator_in_every_selection_path() {
    let s = |k: Option<u64>| WaitAndWidenSettings {
        comparator: Comparator::NumRequestsQueued,
        cache_affinity_backend_selection_count: k,
        ..ww()
    };
    let mut cs = idle(2);
    cs[0].queue_size = 5;
    cs[1].queue_size = 2;
    cs[1].rtt_ms = 25.0; // slower TTFT, same bucket
                         // Global path (no affinity) and group path (k = 2 covers both).
    for k in [None, Some(2)] {
        for seed in 0..10 {
            let b = routex::balancer::Balancer::new(&pol(s(k)));
            assert_eq!(selected(super::decide_seeded(&b, &at(0), &cs, seed)), 1);
        }
    }
    // After-X global path: full primary, two others compared by queue size.
    let order = ring_order(3, 1);
    let rest = others(3, &order);
    let mut cs = idle(3);
    make_full(&mut cs[order[0]]);
    cs[rest[0]].queue_size = 7;
    cs[rest[1]].queue_size = 3;
    cs[rest[1]].rtt_ms = 25.0;
    for seed in 0..10 {
        let b = routex::balancer::Balancer::new(&pol(s(Some(1))));
        let d = super::decide_seeded(&b, &at(0), &cs, seed);
        assert_eq!((selected(d), depth(d)), (rest[1], 2));
    }
}

#[test]
fn wait_and_widen_filters_queue_slo_before_ttft_bucket_locking() {
    // F violates the SLO; had it stayed it would anchor bucket 0 and lock S.
    let mut cs = idle(2);
    cs[0].rtt_ms = 1.0;
    make_full(&mut cs[0]);
    cs[0].queue_time_estimate_ms_by_priority = vec![(0, 500)];
    cs[1].rtt_ms = 400.0;
    let mut s = ww();
    s.bucket.ignore_queue_time = true;
    assert!(matches!(
        check(&pol(s.clone()), &at(0), &cs),
        Decision::Wait(_)
    ));
    s.bucket.max_queue_time_floor_ms = Some(100);
    s.bucket.max_queue_time_ceil_ms = Some(100);
    assert_eq!(selected(check(&pol(s), &at(0), &cs)), 1);
}

#[test]
fn bucket_unlock_costs_are_cumulative() {
    // 3.6.3: TTFTs 110, 210 (full), 310 (free): each boundary costs 25 ms
    // of E, and a wait names only the next boundary.
    let mut cs = idle(3);
    make_full(&mut cs[0]);
    make_full(&mut cs[1]);
    cs[1].rtt_ms = 110.0;
    cs[2].rtt_ms = 210.0;
    assert_eq!(check(&pol(ww()), &at(0), &cs), Decision::Wait(ms(25)));
    assert_eq!(check(&pol(ww()), &at(30), &cs), Decision::Wait(ms(20)));
    assert_eq!(selected(check(&pol(ww()), &at(50), &cs)), 2);
    // Within one bucket (spread <= 20): all unlocked at once.
    let mut near = idle(2);
    make_full(&mut near[0]);
    near[1].rtt_ms = 30.0;
    assert_eq!(selected(check(&pol(ww()), &at(0), &near)), 1);
}

#[test]
fn unlock_factor_is_unchecked() {
    let mut cs = idle(2);
    make_full(&mut cs[0]);
    cs[1].rtt_ms = 1000.0;
    for factor in [-1.0, f64::NAN] {
        let mut s = ww();
        s.bucket.next_bucket_unlock_factor = factor;
        assert_eq!(selected(check(&pol(s), &at(0), &cs)), 1);
    }
    // A huge factor is a huge wait, kept (docs/stargate.md 2.3 item 4):
    // 999999999999 x the 990 ms gap, far beyond 2^64 ns; 1e300 saturates.
    let mut s = ww();
    s.bucket.next_bucket_unlock_factor = 999_999_999_999.0;
    let huge = std::time::Duration::from_secs_f64(990.0 * 999_999_999_999.0 / 1000.0);
    assert!(huge.as_nanos() > u128::from(u64::MAX));
    assert_eq!(check(&pol(s), &at(0), &cs), Decision::Wait(huge));
    let mut s = ww();
    s.bucket.next_bucket_unlock_factor = 1e300;
    assert_eq!(
        check(&pol(s), &at(0), &cs),
        Decision::Wait(std::time::Duration::MAX)
    );
}

#[test]
fn non_finite_ttfts_stop_the_walk_and_are_never_selected() {
    let mut cs = idle(2);
    cs[0].last_mean_input_tps = f64::NAN; // prefill +inf
    assert_eq!(selected(check(&pol(ww()), &at(0), &cs)), 1);
    cs[1].last_mean_input_tps = 0.0;
    assert_eq!(check(&pol(ww()), &at(0), &cs), Decision::Unavailable);
    assert_eq!(check(&pol(ww()), &at(0), &[]), Decision::Unavailable);
}

/// tag(name, value) written out independently of the crate.
fn tag(out: &mut Vec<u8>, name: &str, value: &[u8]) {
    out.extend_from_slice(name.as_bytes());
    out.push(0xFF);
    out.extend_from_slice(&(value.len() as u64).to_le_bytes());
    out.extend_from_slice(value);
}

fn ring_prefix(seed: &str, model: &str) -> Vec<u8> {
    let mut b = vec![1u8];
    tag(&mut b, "seed", seed.as_bytes());
    tag(&mut b, "routing_key", b"");
    tag(&mut b, "model_id", model.as_bytes());
    b
}

#[test]
fn ring_matches_an_independent_construction() {
    use xxhash_rust::xxh3::xxh3_64;
    let cs = idle(7);
    let v = 5u64;
    let mut points: Vec<(u64, &str)> = Vec::new();
    for c in &cs {
        for node in 0..v {
            let mut b = ring_prefix("ring-seed", MODEL);
            tag(&mut b, "cluster_id", c.id.as_bytes());
            tag(&mut b, "virtual_node", &node.to_le_bytes());
            points.push((xxh3_64(&b), c.id.as_str()));
        }
    }
    points.sort();
    let mut kb = ring_prefix("ring-seed", MODEL);
    tag(&mut kb, "cache_affinity_key", KEY.as_bytes());
    let key = xxh3_64(&kb);
    let start = points.iter().position(|p| p.0 >= key).unwrap_or(0);
    let mut expected: Vec<&str> = Vec::new();
    for i in 0..points.len() {
        let id = points[(start + i) % points.len()].1;
        if !expected.contains(&id) {
            expected.push(id);
        }
    }
    // Read the group order black-box, one member at a time.
    let mut found: Vec<usize> = Vec::new();
    for j in 1..=3u64 {
        let ids: Vec<&str> = found.iter().map(|&i| cs[i].id.as_str()).collect();
        let r = Request {
            excluded: &ids,
            ..at(0)
        };
        let s = WaitAndWidenSettings {
            seed: "ring-seed".into(),
            cache_affinity_virtual_nodes: v,
            ..affinity(j, 60_000)
        };
        found.push(selected(check(&pol(s), &r, &cs)));
    }
    let found: Vec<&str> = found.iter().map(|&i| cs[i].id.as_str()).collect();
    assert_eq!(found, expected[..3].to_vec());
}

#[test]
fn ring_ignores_candidate_order_and_rebuilds_on_membership_change() {
    let b = routex::balancer::Balancer::new(&pol(affinity(1, 60_000)));
    let cs = idle(6);
    let primary = cs[selected(super::decide(&b, &at(0), &cs))].id.clone();
    let mut reversed = cs.clone();
    reversed.reverse();
    assert_eq!(
        reversed[selected(super::decide(&b, &at(0), &reversed))].id,
        primary
    );
    // Dropping a non-member keeps the primary (consistent hashing); any
    // change gives the same answer as a fresh instance.
    let fewer: Vec<ClusterSnapshot> = cs
        .iter()
        .filter(|c| c.id != primary)
        .take(2)
        .cloned()
        .chain(cs.iter().filter(|c| c.id == primary).cloned())
        .collect();
    assert_eq!(
        fewer[selected(super::decide(&b, &at(0), &fewer))].id,
        primary
    );
    let more = idle(12);
    let fresh = check(&pol(affinity(1, 60_000)), &at(0), &more);
    assert_eq!(super::decide(&b, &at(0), &more), fresh);
}
