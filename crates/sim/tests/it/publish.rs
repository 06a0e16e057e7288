//! Change-driven publishing (`pylon.coalesce_ms`): extra stats reports after
//! Pylon state changes, at most one per backend per interval.

use super::support::{run_one, small};

#[test]
fn publications_are_bounded_by_the_interval_and_off_by_default() {
    let mut p = small();
    p.set_window(5.0, 10.0);
    let off = run_one(&p, "guard", 8.0, 1);
    assert_eq!(off.stats.publications, 0, "off by default");

    // Interval 0: every change publishes. At 8 RPS the guard serves every
    // request, and each changes its Pylon three times (accept, first token,
    // completion).
    p.settings.coalesce_us = Some(0);
    let every = run_one(&p, "guard", 8.0, 1);
    assert_eq!(every.metrics.succeeded, every.metrics.measured);
    assert_eq!((every.stats.requests, every.metrics.timed_out), (116, 0));
    // 3 x 116 = 348 changes; two of them fall on the same microsecond at one
    // backend and go out as one report.
    assert_eq!(every.stats.publications, 347);

    // A 1 s interval coalesces: at most one publication per backend per
    // second of the run (6 backends; arrivals over 15 s, the last
    // completions within 3 s after).
    p.settings.coalesce_us = Some(1_000_000);
    let coalesced = run_one(&p, "guard", 8.0, 1);
    let n = coalesced.stats.publications;
    assert!(n <= 6 * 18, "{n} publications");
    assert_eq!(n, 95);
    assert!(coalesced.stats.engines_idle_at_end);
}
