//! `Balancer::unavailable_lasts`: an `Unavailable` it says lasts is
//! answered again at every later elapsed over the same candidates, with no
//! random draw (the simulator reuses it instead of deciding again); a
//! queue-SLO limit that still moves with elapsed is the one case where it
//! does not last, and the balancer says so.

use super::{clusters, ms, policy, pww, request, selected, ww};
use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use routex::balancer::{Balancer, ClusterSnapshot, Decision, Request, Scratch};
use routex::ir::Settings;

fn balancers() -> Vec<(&'static str, Balancer)> {
    let mut out = Vec::new();
    let mut w = ww();
    w.bucket.max_queued = 1;
    out.push(("wait-and-widen, no affinity", w.clone()));
    w.cache_affinity_backend_selection_count = Some(2);
    w.cache_affinity_wait_ms = 50;
    out.push(("wait-and-widen, affinity", w.clone()));
    w.bucket.max_queue_time_floor_ms = Some(400);
    w.bucket.max_queue_time_ceil_ms = Some(400);
    out.push(("wait-and-widen, fixed queue SLO", w));
    let mut out: Vec<_> = out
        .into_iter()
        .map(|(n, s)| (n, Balancer::new(&policy(Settings::WaitAndWiden(s)))))
        .collect();
    let mut p = pww();
    p.bucket.max_queued = 1;
    p.cache_affinity_wait_ms = 50;
    p.band_widen_interval_ms = 30;
    p.band_widen_interval_is_default = false;
    p.no_queue_slo_shortcut = false;
    let pww_of = |s| Balancer::new(&policy(Settings::PulsarWaitAndWiden(s)));
    out.push(("pulsar-wait-and-widen, bands", pww_of(p.clone())));
    p.bucket.max_queue_time_floor_ms = Some(400);
    p.bucket.max_queue_time_ceil_ms = Some(400);
    p.fallback_max_queued = 1;
    out.push(("pulsar-wait-and-widen, fixed queue SLO", pww_of(p)));
    out
}

/// 3 000 decisions per policy over 8 clusters whose loads, queue
/// estimates and exclusions change every step, at elapsed times across
/// the affinity wait and the bands: each lasting Unavailable is asked
/// again at six later elapsed times and must be Unavailable without a
/// draw.
#[test]
fn a_lasting_unavailable_is_answered_again_later() {
    for (name, b) in balancers() {
        let mut state = ChaCha8Rng::seed_from_u64(5);
        let mut cs = clusters(8);
        let keys: Vec<String> = (0..6).map(|k| format!("key-{k}")).collect();
        let mut scratch = Scratch::new();
        let (mut unavailable, mut checked) = (0, 0);
        for step in 0..3000 {
            // Max concurrency 4, max_queued 1: room below 5 running; most
            // steps leave room on a few clusters at most.
            let full = [0.7, 0.9, 1.0][step % 3];
            for c in cs.iter_mut() {
                c.num_running_queries = if state.random_bool(full) {
                    state.random_range(5..=6)
                } else {
                    state.random_range(3..=4)
                };
                c.rtt_ms = f64::from(state.random_range(1..200u32));
                c.queued_input_size = state.random_range(0..4000);
                c.queue_time_estimate_ms_by_priority = if state.random_bool(0.5) {
                    vec![(0, state.random_range(0..800))]
                } else {
                    Vec::new()
                };
            }
            let excluded = [cs[step % 8].id.as_str()];
            let r = Request {
                cache_affinity_key: Some(&keys[step % keys.len()]),
                elapsed: ms(state.random_range(0..300)),
                request_slo_ms: [None, Some(1000)][step % 2],
                excluded: if step % 5 == 0 { &excluded } else { &[] },
                ..request("m")
            };
            let mut rng = ChaCha8Rng::seed_from_u64(step as u64);
            let d = b.decide(&r, &cs, &mut rng, &mut scratch);
            if d != Decision::Unavailable {
                continue;
            }
            unavailable += 1;
            if !b.unavailable_lasts(&r) {
                continue;
            }
            checked += 1;
            for later in [1, 7, 29, 61, 333, 100_000] {
                let again = Request {
                    elapsed: r.elapsed + ms(later),
                    ..r.clone()
                };
                let mut copy = rng.clone();
                let d = b.decide(&again, &cs, &mut copy, &mut scratch);
                assert_eq!(d, Decision::Unavailable, "{name}, step {step}, +{later} ms");
                assert_eq!(copy.next_u64(), rng.clone().next_u64(), "{name}: a draw");
            }
        }
        // Every lasting answer was checked, and there were enough.
        assert!(checked > 200, "{name}: {checked} of {unavailable}");
    }
}

/// A request SLO stretches the queue-SLO limit from floor to ceiling: an
/// Unavailable for a cluster over the floor turns into a selection once
/// the limit passes its estimate, so it does not last until the request
/// SLO is spent.
#[test]
fn a_moving_queue_limit_does_not_last() {
    let mut s = ww();
    s.bucket.max_queued = 1;
    s.bucket.max_queue_time_floor_ms = Some(1000);
    s.bucket.max_queue_time_ceil_ms = Some(4000);
    let b = Balancer::new(&policy(Settings::WaitAndWiden(s)));
    // Every slot busy, room to queue one, a 2 000 ms queue estimate.
    let cs = vec![ClusterSnapshot {
        num_running_queries: 4,
        queue_time_estimate_ms_by_priority: vec![(0, 2000)],
        ..clusters(1).remove(0)
    }];
    let at = |elapsed| Request {
        elapsed: ms(elapsed),
        request_slo_ms: Some(10_000),
        ..request("m")
    };
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let mut scratch = Scratch::new();
    // Limit 1 000 ms at arrival, 2 500 ms at 5 s: the cluster gets in.
    assert_eq!(
        b.decide(&at(0), &cs, &mut rng, &mut scratch),
        Decision::Unavailable
    );
    assert!(!b.unavailable_lasts(&at(0)));
    assert_eq!(
        selected(b.decide(&at(5000), &cs, &mut rng, &mut scratch)),
        0
    );
    // Spent: the limit stays at the ceiling.
    assert!(!b.unavailable_lasts(&at(9999)));
    assert!(b.unavailable_lasts(&at(10_000)));
    // Without a request SLO the limit is the ceiling at every elapsed.
    assert!(b.unavailable_lasts(&Request {
        request_slo_ms: None,
        ..at(0)
    }));
}

/// The other algorithms are not examined: never said to last.
#[test]
fn other_algorithms_do_not_claim_it() {
    let r = request("m");
    for s in [
        Settings::Pulsar(super::pulsar()),
        Settings::PowerOfN(super::power_of_n(2, routex::ir::Comparator::Ttft)),
        Settings::RoundRobin {},
        Settings::Random {},
    ] {
        assert!(!Balancer::new(&policy(s)).unavailable_lasts(&r));
    }
    assert!(!Balancer::legacy_band_walk(&pww(), 0).unavailable_lasts(&r));
}
