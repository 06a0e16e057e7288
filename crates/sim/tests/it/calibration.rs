//! A4.1 closed-loop calibration: one backend, 25 clients.

use routex_sim::world::calibrate::closed_loop;
use routex_sim::world::engine::EngineParams;

/// T_w = 0.010 + 0.010 + 255 x ln(max/min) / (max - min); T_c adds the cold prefill.
fn service_times(p: &EngineParams) -> (f64, f64) {
    let [lo, hi] = p.decode_tps;
    let warm =
        (p.ttft_base_ms + p.ttft_jitter_ms / 2.0) / 1_000.0 + 255.0 * (hi / lo).ln() / (hi - lo);
    (warm, warm + 6_661.0 / p.prefill_tps)
}

fn check(p: &EngineParams, expected_warm: f64, expected_cold: f64) {
    let (t_w, t_c) = service_times(p);
    assert!((t_w - expected_warm).abs() < 0.001, "T_w {t_w}");
    assert!((t_c - expected_cold).abs() < 0.001, "T_c {t_c}");
    let warm = closed_loop(p, 25, 6_661, 256, true, 3_000.0, 1);
    let cold = closed_loop(p, 25, 6_661, 256, false, 3_000.0, 1);
    let rel = |x: f64, want: f64| (x / want - 1.0).abs();
    assert!(
        rel(warm, 25.0 / t_w) < 0.01,
        "warm {warm} vs {}",
        25.0 / t_w
    );
    assert!(
        rel(cold, 25.0 / t_c) < 0.01,
        "cold {cold} vs {}",
        25.0 / t_c
    );
}

#[test]
fn profile_a_warm_and_cold_throughput() {
    // T_w 1.601 s, T_c 2.552 s: 20 backends give C_w 312 and C_c 196 RPS.
    check(&EngineParams::profile_a(), 1.601, 2.552);
    let (t_w, t_c) = service_times(&EngineParams::profile_a());
    assert_eq!((20.0 * 25.0 / t_w).round(), 312.0);
    assert_eq!((20.0 * 25.0 / t_c).round(), 196.0);
}

#[test]
fn profile_b_warm_and_cold_throughput() {
    check(&EngineParams::profile_b(), 1.997, 2.500);
    let (t_w, t_c) = service_times(&EngineParams::profile_b());
    assert_eq!((20.0 * 25.0 / t_w).round(), 250.0);
    assert_eq!((20.0 * 25.0 / t_c).round(), 200.0);
}
