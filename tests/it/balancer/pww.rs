//! pulsar-wait-and-widen (docs/stargate.md 3.8, behaviours of 7.1).
//! Clusters are built in rank order: position i holds rank i + 1.

use super::{check, decide, depth, make_full, ms, policy, pww, ranked_clusters, request, selected};
use routex::balancer::{open_prefix, Balancer, ClusterSnapshot, Decision, Request};
use routex::ir::{Policy, PulsarWaitAndWidenSettings, Settings};
use std::time::Duration;

const MODEL: &str = "m";

fn pol(s: PulsarWaitAndWidenSettings) -> Policy {
    policy(Settings::PulsarWaitAndWiden(s))
}

/// Queue SLO on, with a limit no test cluster reaches by default.
fn with_slo(
    mut s: PulsarWaitAndWidenSettings,
    floor: u64,
    ceil: u64,
) -> PulsarWaitAndWidenSettings {
    s.bucket.max_queue_time_floor_ms = Some(floor);
    s.bucket.max_queue_time_ceil_ms = Some(ceil);
    s
}

fn at(elapsed: u64) -> Request<'static> {
    Request {
        elapsed: ms(elapsed),
        ..request(MODEL)
    }
}

/// `n` ranked clusters, all full except the given ranks (1-based).
fn all_full_but(n: usize, free_ranks: &[usize]) -> Vec<ClusterSnapshot> {
    let mut cs = ranked_clusters(n, &request(MODEL));
    for (i, c) in cs.iter_mut().enumerate() {
        if !free_ranks.contains(&(i + 1)) {
            make_full(c);
        }
    }
    cs
}

fn wait(d: Decision) -> Duration {
    match d {
        Decision::Wait(d) => d,
        other => panic!("expected a wait, got {other:?}"),
    }
}

#[test]
fn without_queue_slo_keeps_full_primary() {
    let cs = all_full_but(4, &[2, 3, 4]);
    let d = check(&pol(pww()), &at(0), &cs);
    assert_eq!((selected(d), depth(d)), (0, 1));
}

#[test]
fn kv_skip_uses_ranked_fallback_band_and_composes_with_slo() {
    let s = PulsarWaitAndWidenSettings {
        consider_kv_free_tokens: true,
        ..pww()
    };
    let mut cs = ranked_clusters(3, &request(MODEL));
    cs[0].kv_cache_free_tokens = 10; // < 100 input tokens
    cs[2].num_running_queries = 1; // rank 2 is the least loaded
    let d = check(&pol(s.clone()), &at(0), &cs);
    assert_eq!(
        d,
        Decision::Selected(routex::balancer::Choice {
            index: 1,
            rank_depth: 2,
            selected_after_kv_free_tokens_skip: true
        })
    );
    cs[1].kv_cache_free_tokens = 0;
    cs[1].kv_cache_capacity_tokens = 0; // metrics absent
    let d = check(&pol(s.clone()), &at(0), &cs);
    assert_eq!((selected(d), depth(d)), (2, 3));
    assert!(matches!(d, Decision::Selected(c) if c.selected_after_kv_free_tokens_skip));

    // With a queue SLO: SLO-violating rank 1 + KV-infeasible rank 2 -> rank 3.
    let mut cs = ranked_clusters(3, &request(MODEL));
    make_full(&mut cs[0]);
    cs[0].queue_time_estimate_ms_by_priority = vec![(0, 5000)];
    cs[1].kv_cache_free_tokens = 10;
    let d = check(&pol(with_slo(s, 1000, 1000)), &at(0), &cs);
    assert_eq!((selected(d), depth(d)), (2, 3));
    assert!(matches!(d, Decision::Selected(c) if c.selected_after_kv_free_tokens_skip));
}

#[test]
fn keeps_primary_until_queue_slo_requires_first_band_fallback() {
    let s = with_slo(
        PulsarWaitAndWidenSettings {
            band_widen_interval_ms: 1000,
            bucket: routex::ir::BucketSettings {
                max_queued: 4,
                ..super::bucket()
            },
            ..pww()
        },
        500,
        500,
    );
    let mut cs = all_full_but(8, &[2, 4]);
    // Rank 1 is queued (5 running of 4, within max_queued 4) at 100 ms.
    cs[0].num_running_queries = 5;
    cs[0].queue_time_estimate_ms_by_priority = vec![(0, 100)];
    cs[3].rtt_ms = 1.0; // rank 4 is globally faster
    let d = check(&pol(s.clone()), &at(0), &cs);
    assert_eq!((selected(d), depth(d)), (0, 1));

    // Over the SLO: the first band (ranks 2-3), not the faster rank 4.
    cs[0].queue_time_estimate_ms_by_priority = vec![(0, 900)];
    let d = check(&pol(s.clone()), &at(0), &cs);
    assert_eq!((selected(d), depth(d)), (1, 2));

    // Ranks 1-3 all violating: Wait for the next band, then rank 4 at 1 s.
    for c in &mut cs[1..3] {
        make_full(c);
        c.queue_time_estimate_ms_by_priority = vec![(0, 900)];
    }
    assert_eq!(
        check(&pol(s.clone()), &at(0), &cs),
        Decision::Wait(ms(1000))
    );
    let d = check(&pol(s), &at(1000), &cs);
    assert_eq!((selected(d), depth(d)), (3, 4));
}

fn affinity_wait_300() -> PulsarWaitAndWidenSettings {
    with_slo(
        PulsarWaitAndWidenSettings {
            cache_affinity_wait_ms: 300,
            band_widen_interval_ms: 300,
            ..pww()
        },
        10_000,
        10_000,
    )
}

#[test]
fn affinity_wait_holds_full_primary_before_widening() {
    let s = affinity_wait_300();
    let cs = all_full_but(8, &[2, 3]);
    assert_eq!(
        check(&pol(s.clone()), &at(100), &cs),
        Decision::Wait(ms(200))
    );
    assert_eq!(check(&pol(s.clone()), &at(0), &cs), Decision::Wait(ms(300)));
    let d = check(&pol(s.clone()), &at(300), &cs);
    assert!(matches!(depth(d), 2 | 3), "{d:?}");
    // A free primary wins before and after X.
    let cs = all_full_but(8, &[1, 2, 3]);
    for t in [0, 100, 300, 400] {
        let d = check(&pol(s.clone()), &at(t), &cs);
        assert_eq!((selected(d), depth(d)), (0, 1), "at {t} ms");
    }
}

#[test]
fn widen_interval_defaults_to_the_affinity_wait() {
    // The compiler resolves an unset S to X; the core sees S = X = 300.
    let s = affinity_wait_300();
    let cs = all_full_but(8, &[4]);
    assert_eq!(
        check(&pol(s.clone()), &at(300), &cs),
        Decision::Wait(ms(300))
    );
    let d = check(&pol(s), &at(600), &cs);
    assert_eq!((selected(d), depth(d)), (3, 4));
}

#[test]
fn affinity_group_size_widens_the_group_before_fallback() {
    let s = PulsarWaitAndWidenSettings {
        cache_affinity_backend_selection_count: 2,
        ..affinity_wait_300()
    };
    let cs = all_full_but(8, &[2]);
    let d = check(&pol(s), &at(0), &cs);
    assert_eq!((selected(d), depth(d)), (1, 2));
}

#[test]
fn locked_fallback_bucket_returns_timed_wait() {
    let s = with_slo(pww(), 10_000, 10_000);
    let mut cs = all_full_but(4, &[4]);
    cs[3].rtt_ms = 505.0; // TTFT 605: 495 ms slower than the full ones
    let d = check(&pol(s.clone()), &at(0), &cs);
    assert_eq!(d, Decision::Wait(Duration::from_nanos(123_750_000)));
    assert!(wait(d) > ms(100) && wait(d) < ms(150));
    let d = check(&pol(s), &at(200), &cs);
    assert_eq!((selected(d), depth(d)), (3, 4));
}

#[test]
fn widen_interval_opens_bands_progressively() {
    let s = with_slo(
        PulsarWaitAndWidenSettings {
            cache_affinity_wait_ms: 100,
            band_widen_interval_ms: 200,
            ..pww()
        },
        10_000,
        10_000,
    );
    let cs = all_full_but(8, &[8]);
    assert_eq!(check(&pol(s.clone()), &at(0), &cs), Decision::Wait(ms(100)));
    assert_eq!(
        check(&pol(s.clone()), &at(100), &cs),
        Decision::Wait(ms(200))
    );
    assert_eq!(
        check(&pol(s.clone()), &at(350), &cs),
        Decision::Wait(ms(150))
    );
    let d = check(&pol(s.clone()), &at(500), &cs);
    assert_eq!((selected(d), depth(d)), (7, 8));
    let zero = PulsarWaitAndWidenSettings {
        band_widen_interval_ms: 0,
        ..s
    };
    let d = check(&pol(zero), &at(100), &cs);
    assert_eq!((selected(d), depth(d)), (7, 8));
}

#[test]
fn fallback_max_queued_defaults_to_free_slot_overflow() {
    let s = with_slo(
        PulsarWaitAndWidenSettings {
            band_widen_interval_ms: 1000,
            ..pww()
        },
        10_000,
        10_000,
    );
    let mut cs = all_full_but(5, &[4, 5]);
    cs[0].num_running_queries = 5; // rank 1 is over f = 1 as well
    let overflow = PulsarWaitAndWidenSettings {
        fallback_max_queued: 1,
        ..s.clone()
    };
    let d = check(&pol(overflow), &at(0), &cs);
    assert!(matches!(depth(d), 2 | 3), "{d:?}");
    assert_eq!(
        check(&pol(s.clone()), &at(0), &cs),
        Decision::Wait(ms(1000))
    );
    let d = check(&pol(s), &at(1000), &cs);
    assert!(matches!(depth(d), 4 | 5), "{d:?}");
}

#[test]
fn defaults_open_everything_at_once() {
    // X = 0, S = 0 (edge case 2): with an SLO, a free rank 8 is taken at t = 0.
    let s = with_slo(pww(), 10_000, 10_000);
    let cs = all_full_but(8, &[8]);
    let d = check(&pol(s), &at(0), &cs);
    assert_eq!((selected(d), depth(d)), (7, 8));
}

#[test]
fn affinity_wait_answers_wait_even_when_the_group_is_unavailable() {
    // Edge case 3: rank 1 excluded, X = 300: still Wait(300 - t), never
    // Unavailable, while the ranking is non-empty.
    let s = affinity_wait_300();
    let cs = all_full_but(4, &[1, 2, 3, 4]);
    let excluded = [cs[0].id.as_str()];
    let r = Request {
        excluded: &excluded,
        ..at(50)
    };
    assert_eq!(check(&pol(s), &r, &cs), Decision::Wait(ms(250)));
}

#[test]
fn open_set_reincludes_affinity_members_under_the_fallback_limit() {
    // Edge case 4: the open set re-includes affinity members, judged by
    // the limit f, not q.
    let mut s = with_slo(pww(), 10_000, 10_000);
    s.bucket.max_queued = 2;
    s.cache_affinity_input_tokens_scale = 0.0;
    let mut cs = all_full_but(1, &[]);
    cs[0].num_running_queries = 6; // over q = 2: 6 >= 4 + 2
    assert_eq!(check(&pol(s.clone()), &at(0), &cs), Decision::Unavailable);
    let wide = PulsarWaitAndWidenSettings {
        fallback_max_queued: 3,
        ..s
    };
    let d = check(&pol(wide), &at(0), &cs);
    assert_eq!((selected(d), depth(d)), (0, 1));
}

#[test]
fn ranking_empty_is_unavailable() {
    let mut cs = ranked_clusters(3, &request(MODEL));
    for c in &mut cs {
        c.max_input_tps = None;
    }
    assert_eq!(check(&pol(pww()), &at(0), &cs), Decision::Unavailable);
    assert_eq!(check(&pol(pww()), &at(0), &[]), Decision::Unavailable);
}

#[test]
fn band_schedule_doubles_from_k() {
    let s = |ms_| Duration::from_millis(ms_);
    // k = 1, S = 200: prefixes 3, 7, 15, 31 ...; next band waits.
    assert_eq!(open_prefix(1, 100, s(200), s(0)), (3, Some(s(200))));
    assert_eq!(open_prefix(1, 100, s(200), s(250)), (7, Some(s(150))));
    assert_eq!(open_prefix(1, 100, s(200), s(400)), (15, Some(s(200))));
    assert_eq!(open_prefix(1, 100, s(200), s(600)), (31, Some(s(200))));
    assert_eq!(open_prefix(3, 100, s(200), s(0)), (5, Some(s(200))));
    assert_eq!(open_prefix(3, 100, s(200), s(200)), (9, Some(s(200))));
    // Capped at the ranking; S = 0 opens everything.
    assert_eq!(open_prefix(1, 8, s(200), s(400)), (8, None));
    assert_eq!(open_prefix(1, 1000, s(0), s(0)), (1000, None));
    // Integer nanoseconds: 1 ns before the boundary is still the old band.
    assert_eq!(
        open_prefix(1, 100, s(200), Duration::from_nanos(199_999_999)),
        (3, Some(Duration::from_nanos(1)))
    );
}

#[test]
fn pww_state_is_shared_across_decisions_of_one_instance() {
    // The ranking cache must not change answers between attempts.
    let b = Balancer::new(&pol(with_slo(pww(), 10_000, 10_000)));
    let cs = all_full_but(8, &[8]);
    for _ in 0..3 {
        assert_eq!(depth(decide(&b, &at(0), &cs)), 8);
    }
}
