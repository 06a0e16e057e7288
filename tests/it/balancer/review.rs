//! Review of the balancer against docs/stargate.md: the two-candidate
//! shortcut (3.6.4) and the fast path (3.6.5), which routex serves through
//! the general bucketed path, must give the spec's distributions; waits are
//! positive; odd statistics never panic; `rank_depth` after the group.

use super::{
    check, cluster, clusters, decide_seeded, depth, make_full, ms, policy, power_of_n, pulsar, pww,
    request, selected, ww,
};
use routex::balancer::{Balancer, ClusterSnapshot, Decision, Request};
use routex::ir::{Comparator, Settings, WaitAndWidenSettings};
use std::time::Duration;

const DRAWS: u64 = 4000;

/// How often each position is selected over `DRAWS` seeded decisions.
fn histogram(s: WaitAndWidenSettings, r: &Request<'_>, cs: &[ClusterSnapshot]) -> Vec<u64> {
    let b = Balancer::new(&policy(Settings::WaitAndWiden(s)));
    let mut counts = vec![0; cs.len()];
    for seed in 0..DRAWS {
        counts[selected(decide_seeded(&b, r, cs, seed))] += 1;
    }
    counts
}

/// `count` is within 5 percentage points of `share` of the draws.
fn near(count: u64, share: f64) -> bool {
    (count as f64 / DRAWS as f64 - share).abs() < 0.05
}

/// Fast-path settings (3.6.5): no affinity, `ignore_queue_time`, no SLO.
fn fast(n: u64) -> WaitAndWidenSettings {
    let mut s = ww();
    s.bucket.n = n;
    s.bucket.ignore_queue_time = true;
    s
}

#[test]
fn fast_path_n1_is_a_uniform_pick_among_candidates_with_capacity() {
    let mut cs = clusters(4);
    make_full(&mut cs[0]);
    let r = Request {
        excluded: &["c3"],
        ..request("m")
    };
    let counts = histogram(fast(1), &r, &cs);
    assert_eq!((counts[0], counts[3]), (0, 0), "{counts:?}");
    assert!(near(counts[1], 0.5) && near(counts[2], 0.5), "{counts:?}");
}

#[test]
fn fast_path_n2_ties_split_evenly() {
    // Two tied candidates: 50/50.
    let counts = histogram(fast(2), &request("m"), &clusters(2));
    assert!(near(counts[0], 0.5), "{counts:?}");
    // Three tied: a random distinct pair, then a fair tie-break: 1/3 each.
    let counts = histogram(fast(2), &request("m"), &clusters(3));
    assert!(counts.iter().all(|&c| near(c, 1.0 / 3.0)), "{counts:?}");
    // n > 2: shuffle prefix and minimum, still fair.
    let counts = histogram(fast(3), &request("m"), &clusters(3));
    assert!(counts.iter().all(|&c| near(c, 1.0 / 3.0)), "{counts:?}");
}

#[test]
fn fast_path_pair_uses_the_standalone_comparator_with_queue_time() {
    // Bucket TTFTs ignore the queue (both 110 ms, one bucket); the ttft
    // comparator still adds the queue estimate: 50 vs 5 ms.
    let mut cs = clusters(2);
    for (c, queue) in cs.iter_mut().zip([50, 5]) {
        c.max_engine_concurrency = 0; // unknown: no free slot, capacity kept
        c.queue_time_estimate_ms_by_priority = vec![(0, queue)];
    }
    let counts = histogram(fast(2), &request("m"), &cs);
    assert_eq!(counts, vec![0, DRAWS]);
    // With the queue-time comparator as well.
    let mut s = fast(2);
    s.comparator = Comparator::QueueTime;
    assert_eq!(histogram(s, &request("m"), &cs), vec![0, DRAWS]);
}

#[test]
fn two_candidate_shortcut_ties_split_evenly() {
    // 3.6.4: two candidates within one bucket, both with capacity, n >= 2.
    let mut cs = clusters(2);
    let counts = histogram(ww(), &request("m"), &cs);
    assert!(near(counts[0], 0.5), "{counts:?}");
    // A strict winner is always taken: 111 vs 110 ms, one bucket.
    cs[0].rtt_ms = 11.0;
    assert_eq!(histogram(ww(), &request("m"), &cs), vec![0, DRAWS]);
}

#[test]
fn fast_path_spread_over_the_bucket_falls_through_to_the_timed_wait() {
    // c0 full at 110 ms, c1 free at 300 ms: gap 190, need 47.5 ms.
    let mut cs = clusters(2);
    make_full(&mut cs[0]);
    cs[1].rtt_ms = 200.0;
    let d = check(&policy(Settings::WaitAndWiden(fast(2))), &request("m"), &cs);
    assert_eq!(d, Decision::Wait(Duration::from_micros(47_500)));
    let r = Request {
        elapsed: Duration::from_micros(47_500),
        ..request("m")
    };
    let d = check(&policy(Settings::WaitAndWiden(fast(2))), &r, &cs);
    assert_eq!(selected(d), 1);
}

#[test]
fn a_tiny_shortfall_is_still_a_positive_wait() {
    // c0 full at 110 ms, c1 free a hair over one bucket later.
    let mut cs = clusters(2);
    make_full(&mut cs[0]);
    cs[1].rtt_ms = 30.000_004;
    let r = Request {
        elapsed: ms(5),
        ..request("m")
    };
    match check(&policy(Settings::WaitAndWiden(ww())), &r, &cs) {
        Decision::Wait(d) => assert!(d > Duration::ZERO && d < Duration::from_micros(1), "{d:?}"),
        other => panic!("expected a wait, got {other:?}"),
    }
}

#[test]
fn global_selection_depth_is_group_size_plus_one_when_k_exceeds_n() {
    // k = 5 over 3 clusters: the group is all 3. Scale 0 in the group puts
    // the full c0 first (10 ms vs 100 ms: Wait); at full prefill c1 leads
    // (200 ms vs 1010 ms) and is selected globally at depth 3 + 1.
    let mut cs = clusters(3);
    cs[0].last_mean_input_tps = 100.0;
    make_full(&mut cs[0]);
    cs[1].rtt_ms = 100.0;
    make_full(&mut cs[2]);
    cs[2].rtt_ms = 5_000.0;
    let s = WaitAndWidenSettings {
        cache_affinity_backend_selection_count: Some(5),
        cache_affinity_input_tokens_scale: 0.0,
        ..ww()
    };
    let r = Request {
        cache_affinity_key: Some("k"),
        ..request("m")
    };
    let d = check(&policy(Settings::WaitAndWiden(s)), &r, &cs);
    assert_eq!((selected(d), depth(d)), (1, 4));
}

#[test]
fn odd_statistics_never_panic_and_waits_stay_positive() {
    let odd = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -1.0, 0.0, -0.0];
    let mut s_ww = ww();
    s_ww.bucket.max_queue_time_floor_ms = Some(10);
    s_ww.bucket.max_queue_time_ceil_ms = Some(5);
    s_ww.cache_affinity_backend_selection_count = Some(2);
    s_ww.cache_affinity_wait_ms = 50;
    let mut s_pww = pww();
    s_pww.bucket = s_ww.bucket.clone();
    s_pww.cache_affinity_wait_ms = 50;
    s_pww.band_widen_interval_ms = 7;
    let policies = [
        policy(Settings::WaitAndWiden(s_ww)),
        policy(Settings::WaitAndWiden(ww())),
        policy(Settings::PulsarWaitAndWiden(s_pww)),
        policy(Settings::Pulsar(pulsar())),
        policy(Settings::PowerOfN(power_of_n(3, Comparator::Ttft))),
        policy(Settings::PowerOfN(power_of_n(
            3,
            Comparator::InputWorkSeconds,
        ))),
        policy(Settings::RoundRobin {}),
        policy(Settings::Random {}),
    ];
    for &x in &odd {
        let mut cs = clusters(3);
        cs[0].rtt_ms = x;
        cs[1].last_mean_input_tps = x;
        cs[1].max_input_tps = Some(x);
        cs[2] = ClusterSnapshot {
            rtt_ms: x,
            last_mean_input_tps: x,
            max_input_tps: Some(x),
            queued_input_size: u64::MAX,
            num_running_queries: u64::MAX,
            ..cluster("c2")
        };
        for p in &policies {
            for t in [0, 49, 50, 10_000] {
                let r = Request {
                    elapsed: ms(t),
                    cache_affinity_key: Some("k"),
                    request_slo_ms: Some(100),
                    excluded: &["c1"],
                    ..request("m")
                };
                if let Decision::Wait(d) = check(p, &r, &cs) {
                    assert!(d > Duration::ZERO, "{x} {t}: {d:?}");
                }
                let _ = check(p, &r, &[]);
            }
        }
    }
}
