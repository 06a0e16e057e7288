//! Registration rates and backend health in the candidate view: what a
//! report without rates keeps, stats expiry, ejection with its growing
//! interval and cap, draining; positions and reservations unchanged.

use routex::router::{
    BackendRates, BackendState, BackendStats, CandidateView, HealthOptions, ManualClock,
    ReportError, SharedView,
};
use std::sync::Arc;
use std::time::Duration;

fn view(clock: &Arc<ManualClock>) -> CandidateView {
    CandidateView::with_health(
        HealthOptions {
            stats_ttl: Some(Duration::from_secs(3)),
            consecutive_failures: 2,
            base_ejection: Duration::from_secs(10),
            max_ejection: Duration::from_secs(25),
            ..HealthOptions::default()
        }
        .with_clock(clock.clone()),
    )
}

#[test]
fn registered_rates_stand_in_until_measured_ones_arrive() {
    let mut v = CandidateView::new();
    let rates = BackendRates {
        input_tps: Some(6000.0),
        max_input_tps: Some(9000.0),
    };
    assert_eq!(v.register_backend("a", "a-1", rates), Ok(true));
    assert_eq!(
        v.register_backend("a", "a-1", rates),
        Ok(false),
        "no change"
    );
    // Counted before any report: the registered rates.
    let a = &v.snapshots()[0];
    assert_eq!(
        (a.last_mean_input_tps, a.max_input_tps),
        (6000.0, Some(9000.0))
    );
    // A cold report (rate 0, no peak) keeps them.
    v.report("a", "a-1", &BackendStats::default()).unwrap();
    let a = &v.snapshots()[0];
    assert_eq!(
        (a.last_mean_input_tps, a.max_input_tps),
        (6000.0, Some(9000.0))
    );
    // Measured values win; a later report without a peak falls back to the
    // registered peak, and an idle one keeps the measured mean.
    let measured = BackendStats {
        last_mean_input_tps: 5000.0,
        max_input_tps: Some(7000.0),
        ..BackendStats::default()
    };
    v.report("a", "a-1", &measured).unwrap();
    assert_eq!(v.snapshots()[0].max_input_tps, Some(7000.0));
    v.report("a", "a-1", &BackendStats::default()).unwrap();
    let a = &v.snapshots()[0];
    assert_eq!(
        (a.last_mean_input_tps, a.max_input_tps),
        (5000.0, Some(9000.0))
    );
    // Invalid rates are refused and not used; the rest applies.
    let bad = BackendRates {
        input_tps: Some(f64::NAN),
        max_input_tps: Some(100.0),
    };
    let err = v.register_backend("a", "a-2", bad).unwrap_err();
    assert!(matches!(
        err,
        ReportError::InvalidValue {
            field: "input_tps",
            ..
        }
    ));
    assert_eq!(v.registered_rates(0, 1).unwrap().input_tps, None);
}

#[test]
fn a_silent_backend_expires_without_moving_anything() {
    let clock = Arc::new(ManualClock::new());
    let mut v = view(&clock);
    for (c, b) in [("a", "a-1"), ("a", "a-2"), ("b", "b-1")] {
        v.register_backend(c, b, BackendRates::pinned(1000.0))
            .unwrap();
    }
    let id = v.reserve(0, 1, 0, 50).unwrap();
    let epoch = v.membership_epoch();
    clock.advance(Duration::from_secs(2));
    v.report("a", "a-1", &BackendStats::default()).unwrap();
    v.report("b", "b-1", &BackendStats::default()).unwrap();
    assert!(!v.health_due());
    clock.advance(Duration::from_secs(1));
    assert!(v.health_due());
    assert!(v.maintain());
    assert_eq!(v.backend_state(0, 1), Some(BackendState::Stale));
    // a-2 no longer counts: a-1's rate only; its reservation still does.
    assert_eq!(v.snapshots()[0].last_mean_input_tps, 1000.0);
    assert_eq!(v.snapshots()[0].queued_input_size, 50);
    assert_eq!(v.pick_backend(0, |_| true), Some(0));
    assert!(v.unavailable().is_empty(), "a-1 still serves cluster a");
    assert_eq!(v.membership_epoch(), epoch);
    clock.advance(Duration::from_secs(2));
    v.maintain();
    let unavailable: Vec<&str> = v.unavailable().iter().map(|c| &**c).collect();
    assert_eq!(unavailable, ["a", "b"]);
    // Stale all along, its reservation still counted; its next report
    // revives it (and, as any report, clears what it reserved).
    assert_eq!(v.pending(0), 1, "the reservation survived");
    assert_eq!(v.snapshots()[0].queued_input_size, 50);
    v.report("a", "a-2", &BackendStats::default()).unwrap();
    assert_eq!(v.backend_state(0, 1), Some(BackendState::Eligible));
    let unavailable: Vec<&str> = v.unavailable().iter().map(|c| &**c).collect();
    assert_eq!(unavailable, ["b"]);
    assert!(!v.release(id), "cleared by the report");
}

#[test]
fn failures_eject_for_a_growing_interval_up_to_the_cap() {
    let clock = Arc::new(ManualClock::new());
    let shared = SharedView::new(view(&clock));
    shared.update(|v| {
        v.add_backend("a", "a-1");
        v.add_backend("a", "a-2");
    });
    let fail = |b: usize| shared.reserve(0, b, 0, 1).unwrap().fail();
    // Two in a row eject a-1 for 10 s.
    fail(0);
    assert_eq!(
        shared.read().backend_state(0, 0),
        Some(BackendState::Eligible)
    );
    fail(0);
    let until = Duration::from_secs(10);
    assert_eq!(
        shared.read().backend_state(0, 0),
        Some(BackendState::Ejected { until })
    );
    // The cap: half of 2 backends, so a-2 is not ejected while a-1 is.
    fail(1);
    fail(1);
    assert_eq!(
        shared.read().backend_state(0, 1),
        Some(BackendState::Eligible)
    );
    assert!(shared.read().unavailable().is_empty());
    // Back at 10 s; two more failures: 20 s this time, then at most 25 s.
    clock.advance(Duration::from_secs(10));
    assert!(shared.maintain());
    fail(0);
    fail(0);
    let until = Duration::from_secs(30);
    assert_eq!(
        shared.read().backend_state(0, 0),
        Some(BackendState::Ejected { until })
    );
    clock.advance(Duration::from_secs(20));
    shared.maintain();
    fail(0);
    fail(0);
    let until = Duration::from_secs(55);
    assert_eq!(
        shared.read().backend_state(0, 0),
        Some(BackendState::Ejected { until })
    );
    // A success after it returns (at 55 s) resets the multiplier.
    clock.advance(Duration::from_secs(25));
    shared.maintain();
    shared.reserve(0, 0, 0, 1).unwrap().keep();
    fail(0);
    fail(0);
    let until = Duration::from_secs(65);
    assert_eq!(
        shared.read().backend_state(0, 0),
        Some(BackendState::Ejected { until })
    );
}

#[test]
fn draining_keeps_position_and_reservations_and_wakes_only_on_change() {
    let mut v = CandidateView::new();
    v.add_backend("a", "a-1");
    v.add_backend("b", "b-1");
    let id = v.reserve(0, 0, 0, 10).unwrap();
    assert_eq!(v.set_draining("a", "a-1", true), Ok(true));
    assert_eq!(v.set_draining("a", "a-1", true), Ok(false));
    assert_eq!(v.backend_state(0, 0), Some(BackendState::Draining));
    assert_eq!(v.position("a"), Some(0));
    assert_eq!(v.pending(0), 1);
    assert_eq!(v.pick_backend(0, |_| true), None);
    let unavailable: Vec<&str> = v.unavailable().iter().map(|c| &**c).collect();
    assert_eq!(unavailable, ["a"]);
    assert!(v.release(id));
    assert!(matches!(
        v.set_draining("a", "zz", true),
        Err(ReportError::UnknownBackend { .. })
    ));
}

#[test]
fn shared_view_operations_change_only_what_differs() {
    let shared = SharedView::default();
    assert_eq!(
        shared.ensure_backend("a", "a-1", BackendRates::default()),
        Ok(true)
    );
    assert_eq!(
        shared.ensure_backend("a", "a-1", BackendRates::default()),
        Ok(false)
    );
    assert_eq!(shared.set_rtt("a", "a-1", 5.0), Ok(true));
    assert_eq!(shared.set_rtt("a", "a-1", 5.0), Ok(false));
    assert!(shared.set_rtt("a", "a-1", -1.0).is_err());
    assert_eq!(shared.read().snapshots()[0].rtt_ms, 5.0);
    assert!(shared.remove_backend("a", "a-1"));
    assert!(!shared.remove_backend("a", "a-1"));
    assert!(shared.read().snapshots().is_empty());
}
