//! A12 invariants of whole runs: one outcome per measured request, engines
//! idle at the end, slots within bounds, Little's law.

use super::support::{run_one, small};

#[test]
fn every_measured_request_has_one_outcome_and_engines_drain() {
    let mut p = small();
    p.set_window(5.0, 10.0);
    for policy in ["guard", "legacy", "p2c"] {
        for rate in [8.0, 20.0] {
            let r = run_one(&p, policy, rate, 1);
            let m = &r.metrics;
            assert!(m.measured > 0);
            assert_eq!(
                m.succeeded + m.no_route + m.retries_exhausted + m.timed_out,
                m.measured,
                "{policy} at {rate}"
            );
            assert!(r.stats.engines_idle_at_end, "{policy} at {rate}");
            assert!(r.stats.max_slots_in_use <= 4);
            // Reports are freed after their last delivery: with a 1 s
            // heartbeat and at most 25 ms of delay, at most one report per
            // backend is in flight (6 backends), however long the run.
            assert!(
                (1..=6).contains(&r.stats.max_reports_in_flight),
                "{}",
                r.stats.max_reports_in_flight
            );
            // Little's law: mean slots in use = completion rate x mean holding
            // time; both sides are accumulated independently.
            let area = r.stats.slot_area_us as f64;
            let holding = r.stats.slot_holding_us as f64;
            assert!((area / holding - 1.0).abs() < 0.03, "{area} vs {holding}");
        }
    }
}

#[test]
fn overload_times_out_and_cancels_engine_work() {
    // power-of-two has no capacity gate: at 20 RPS against about 9 RPS of
    // cold capacity, queues grow until clients time out in every engine state.
    let mut p = small();
    p.settings.timeout_us = 8_000_000;
    let r = run_one(&p, "p2c", 20.0, 1);
    assert!(r.metrics.timed_out > 50, "{:?}", r.metrics);
    assert!(r.stats.engines_idle_at_end);
}

#[test]
fn guard_at_low_load_serves_everyone_from_cache() {
    let p = small();
    let r = run_one(&p, "guard", 8.0, 1);
    let m = &r.metrics;
    assert_eq!(m.succeeded, m.measured);
    assert!(m.token_reuse > 0.8, "{}", m.token_reuse);
    assert_eq!(m.goodput_rps, m.throughput_rps);
    assert_eq!(r.series.len(), 3, "30 s in 10 s bins");
}
