//! `max_input_work_seconds` in the simulator (docs/simulator.md,
//! "Input-work admission"): the core's admission check before every
//! decision, a refused request ending as its own outcome.

use super::support::{input, prepared, run_one};

const GUARD: &str = "pulsar-wait-and-widen(max_queued=2, cache_affinity_wait_ms=300, band_widen_interval_ms=300, fallback_max_queued=0, max_queue_time_floor_ms=4000, max_queue_time_ceil_ms=4000, seed=\"routesim-v1\"";

/// crates/sim/tests/inputs/small.json with `guard` and the same policy with the
/// given limit, as `limited`.
fn with_limit(limit: &str) -> routex_sim::scenario::Prepared {
    let mut v: serde_json::Value = serde_json::from_str(&input("small.json")).expect("json");
    v["policies"] = serde_json::json!({
        "guard": format!("{GUARD})"),
        "limited": format!("{GUARD}, max_input_work_seconds={limit})"),
    });
    prepared(&v.to_string())
}

#[test]
fn a_limit_nothing_reaches_changes_nothing() {
    let p = with_limit("1000000");
    for rate in [8.0, 20.0] {
        let plain = run_one(&p, "guard", rate, 1).metrics;
        let limited = run_one(&p, "limited", rate, 1).metrics;
        assert_eq!(limited.input_work_rejected, 0);
        assert_eq!(
            serde_json::to_value(&plain).unwrap(),
            serde_json::to_value(&limited).unwrap(),
            "at {rate} RPS"
        );
    }
}

#[test]
fn a_limit_below_one_request_refuses_every_request() {
    // One request alone is 6 661 tokens over a fleet of six backends at
    // 28 000 tokens/s each (the initial rate): 0.04 s of work, so a limit
    // of 0.001 s refuses every request before any decision.
    let p = with_limit("0.001");
    let m = run_one(&p, "limited", 8.0, 1).metrics;
    assert!(m.measured > 100, "{}", m.measured);
    assert_eq!(m.input_work_rejected, m.measured);
    assert_eq!(m.succeeded, 0);
    assert_eq!(m.goodput_rps, 0.0);
    assert_eq!(m.mismatch_rejections, 0, "nothing was sent");
}

#[test]
fn a_limit_between_refuses_only_under_load_and_every_request_ends_once() {
    // Queued work grows with the offered rate: a limit of 0.5 s refuses
    // nothing at 8 RPS and some requests at 20 RPS (above the small fleet's
    // capacity), and every measured request has exactly one outcome.
    let p = with_limit("0.5");
    let low = run_one(&p, "limited", 8.0, 1).metrics;
    let high = run_one(&p, "limited", 20.0, 1).metrics;
    assert_eq!(low.input_work_rejected, 0);
    assert!(high.input_work_rejected > 0, "{high:?}");
    assert!(high.input_work_rejected < high.measured);
    for m in [&low, &high] {
        assert_eq!(
            m.succeeded + m.no_route + m.retries_exhausted + m.timed_out + m.input_work_rejected,
            m.measured
        );
    }
}
