//! A12 policy calibrations on the default topology: the oracle (a static
//! Pulsar primary with an unlimited engine queue) and round-robin.

use super::support::default_with;

#[test]
fn oracle_pulsar_reuses_nearly_every_token() {
    let mut p = default_with(&[("oracle", r#"pulsar(seed="routesim-v1")"#)]);
    p.set_window(25.0, 15.0);
    // "Unlimited engine queue": the Pylon admits everything, so no 429
    // pushes a request off its primary.
    p.settings.pylon.mismatch = None;
    let r = super::support::run_one(&p, "oracle", 200.0, 1);
    assert!(r.metrics.token_reuse >= 0.99, "{}", r.metrics.token_reuse);
    assert_eq!(r.metrics.off_primary, 0.0);
    assert_eq!(r.metrics.mismatch_rejections, 0);
}

#[test]
fn round_robin_reuses_little_and_stays_near_cold_capacity() {
    let mut p = default_with(&[("rr", "round-robin")]);
    p.set_window(25.0, 15.0);
    let r = super::support::run_one(&p, "rr", 200.0, 1);
    assert!(r.metrics.token_reuse <= 0.1, "{}", r.metrics.token_reuse);
    // C_c = 20 x 25 / 2.552 s = 196 RPS.
    assert!(
        r.metrics.goodput_rps <= 1.05 * 196.0,
        "{}",
        r.metrics.goodput_rps
    );
}
