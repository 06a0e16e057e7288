//! The legacy band walk (docs/stargate.md 3.8.5), a simulator
//! baseline, and its `initial_wait_ms` (docs/simulator-model.md B2.6).

use super::{decide, depth, make_full, ms, pww, ranked_clusters, request, selected};
use routex::balancer::{Balancer, ClusterSnapshot, Decision, Request};
use routex::ir::PulsarWaitAndWidenSettings;

fn slo() -> PulsarWaitAndWidenSettings {
    let mut s = pww();
    s.bucket.max_queue_time_floor_ms = Some(10_000);
    s.bucket.max_queue_time_ceil_ms = Some(10_000);
    // Band fields are ignored by the legacy walk.
    s.cache_affinity_wait_ms = 5000;
    s.band_widen_interval_ms = 5000;
    s
}

fn at(t: u64) -> Request<'static> {
    Request {
        elapsed: ms(t),
        ..request("m")
    }
}

/// 8 ranked clusters: ranks 1-3 full (TTFT 110), ranks 4-8 at TTFT 605
/// with only rank `free` having a slot.
fn bands(free: usize) -> Vec<ClusterSnapshot> {
    let mut cs = ranked_clusters(8, &request("m"));
    for (i, c) in cs.iter_mut().enumerate() {
        if i >= 3 {
            c.rtt_ms = 505.0;
        }
        if i + 1 != free {
            make_full(c);
        }
    }
    cs
}

#[test]
fn legacy_walk_evaluates_each_band_on_its_own() {
    // Band 4-7 alone: the full fast ranks 1-3 do not anchor its buckets,
    // so rank 4 is taken at once (PWW would wait 123.75 ms).
    let b = Balancer::legacy_band_walk(&slo(), 0);
    let d = decide(&b, &at(0), &bands(4));
    assert_eq!((selected(d), depth(d)), (3, 4));
    let pww_b = Balancer::new(&super::policy(routex::ir::Settings::PulsarWaitAndWiden(
        PulsarWaitAndWidenSettings {
            cache_affinity_wait_ms: 0,
            band_widen_interval_ms: 0,
            ..slo()
        },
    )));
    assert!(matches!(
        decide(&pww_b, &at(0), &bands(4)),
        Decision::Wait(_)
    ));
    // Rank 8 is in band 8-15.
    let d = decide(&b, &at(0), &bands(8));
    assert_eq!((selected(d), depth(d)), (7, 8));
}

#[test]
fn legacy_walk_never_waits() {
    let b = Balancer::legacy_band_walk(&slo(), 0);
    assert_eq!(decide(&b, &at(0), &bands(0)), Decision::Unavailable);
    // A locked bucket inside a band is no wait either: band 2-3 with a
    // full fast rank 2 and a free slow rank 3.
    let mut cs = bands(0);
    cs[2].rtt_ms = 505.0;
    cs[2].num_running_queries = 0;
    assert_eq!(decide(&b, &at(0), &cs), Decision::Unavailable);
    assert_eq!(depth(decide(&b, &at(124), &cs)), 3);
}

#[test]
fn legacy_walk_keeps_the_no_queue_slo_shortcut() {
    let b = Balancer::legacy_band_walk(&pww(), 0);
    let d = decide(&b, &at(0), &bands(0));
    assert_eq!((selected(d), depth(d)), (0, 1));
}

#[test]
fn initial_wait_tries_rank_one_alone_then_walks() {
    let b = Balancer::legacy_band_walk(&slo(), 300);
    assert_eq!(decide(&b, &at(100), &bands(4)), Decision::Wait(ms(200)));
    assert_eq!(decide(&b, &at(0), &bands(4)), Decision::Wait(ms(300)));
    let d = decide(&b, &at(300), &bands(4));
    assert_eq!((selected(d), depth(d)), (3, 4));
    // A free rank 1 is taken during the initial wait.
    let d = decide(&b, &at(100), &bands(1));
    assert_eq!((selected(d), depth(d)), (0, 1));
}
