//! Registration rates and backend health in the candidate view: what a
//! report without rates keeps, stats expiry, ejection with its growing
//! and decaying interval and cap, the half-open probe, active health
//! checks, one record per backend across models, draining; positions and
//! reservations unchanged.

use routex::router::{
    Applied, BackendRates, BackendState, BackendStats, CandidateView, FailureOutcome,
    HealthOptions, Ignored, ManualClock, ModelViews, ReportError, SharedView,
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
            probe_after: None,
            ..HealthOptions::default()
        }
        .with_clock(clock.clone()),
    )
}

fn changed() -> Applied {
    Applied {
        views: 1,
        ignored: None,
    }
}

#[test]
fn registered_rates_stand_in_until_measured_ones_arrive() {
    let mut v = CandidateView::new();
    let rates = BackendRates {
        input_tps: Some(6000.0),
        max_input_tps: Some(9000.0),
    };
    assert_eq!(v.register_backend("a", "a-1", rates), changed());
    assert_eq!(
        v.register_backend("a", "a-1", rates),
        Applied::default(),
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
    let applied = v.register_backend("a", "a-2", bad);
    assert!(applied.changed(), "registered, the rest applied");
    assert!(matches!(
        applied.ignored,
        Some(Ignored {
            field: "input_tps",
            ..
        })
    ));
    assert_eq!(v.registered_rates(0, 1).unwrap().input_tps, None);
}

#[test]
fn a_silent_backend_expires_without_moving_anything() {
    let clock = Arc::new(ManualClock::new());
    let mut v = view(&clock);
    for (c, b) in [("a", "a-1"), ("a", "a-2"), ("b", "b-1")] {
        assert!(v
            .register_backend(c, b, BackendRates::pinned(1000.0))
            .changed());
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

fn ejected(secs: u64) -> Option<BackendState> {
    Some(BackendState::Ejected {
        remaining: Duration::from_secs(secs),
    })
}

#[test]
fn failures_eject_for_a_growing_interval_up_to_the_cap_that_decays_in_service() {
    let clock = Arc::new(ManualClock::new());
    let shared = SharedView::new(view(&clock));
    shared.update(|v| {
        v.add_backend("a", "a-1");
        v.add_backend("a", "a-2");
    });
    let fail = |b: usize| shared.reserve(0, b, 0, 1).unwrap().fail();
    // Two in a row eject a-1 for 10 s.
    assert_eq!(fail(0), FailureOutcome::Counted);
    assert_eq!(
        shared.read().backend_state(0, 0),
        Some(BackendState::Eligible)
    );
    assert_eq!(fail(0), FailureOutcome::Ejected);
    assert_eq!(shared.read().backend_state(0, 0), ejected(10));
    clock.advance(Duration::from_secs(4));
    assert_eq!(
        shared.read().backend_state(0, 0),
        ejected(6),
        "a duration left"
    );
    // The cap: half of 2 backends, so a-2 is not ejected while a-1 is.
    fail(1);
    assert_eq!(fail(1), FailureOutcome::Capped);
    assert_eq!(
        shared.read().backend_state(0, 1),
        Some(BackendState::Eligible)
    );
    assert!(shared.read().unavailable().is_empty());
    // Back at 10 s; two more failures at once: 20 s this time, then at
    // most 25 s.
    clock.advance(Duration::from_secs(6));
    assert!(shared.maintain());
    fail(0);
    fail(0);
    assert_eq!(shared.read().backend_state(0, 0), ejected(20));
    clock.advance(Duration::from_secs(20));
    shared.maintain();
    fail(0);
    fail(0);
    assert_eq!(shared.read().backend_state(0, 0), ejected(25));
    // A success does not reset the multiplier (3); time in service does,
    // by one per 10 s: back at 55 s, 30 s in service brings it to 0, so
    // the next ejection is a first one again (10 s).
    clock.advance(Duration::from_secs(25));
    shared.maintain();
    shared.reserve(0, 0, 0, 1).unwrap().keep();
    clock.advance(Duration::from_secs(30));
    fail(0);
    fail(0);
    assert_eq!(shared.read().backend_state(0, 0), ejected(10));
    let rows = shared.read().backend_health();
    assert_eq!((rows[0].ejections, rows[0].consecutive_failures), (4, 0));
    assert_eq!((rows[1].ejections, rows[1].consecutive_failures), (0, 2));
}

fn probing_view(clock: &Arc<ManualClock>) -> SharedView {
    let options = HealthOptions {
        consecutive_failures: 2,
        base_ejection: Duration::from_secs(30),
        probe_after: Some(Duration::from_secs(5)),
        ..HealthOptions::default()
    }
    .with_clock(clock.clone());
    let shared = SharedView::new(CandidateView::with_health(options));
    shared.update(|v| {
        v.add_backend("a", "a-1");
        v.add_backend("b", "b-1");
    });
    shared
}

#[test]
fn a_half_open_probe_lets_one_request_through_and_its_outcome_decides() {
    let clock = Arc::new(ManualClock::new());
    let shared = probing_view(&clock);
    let fail = || shared.reserve(0, 0, 0, 1).unwrap().fail();
    fail();
    assert_eq!(fail(), FailureOutcome::Ejected);
    assert_eq!(shared.read().pick_backend(0, |_| true), None);
    assert_eq!(shared.read().unavailable().len(), 1);
    // 5 s in: the probe is due; one request may go.
    clock.advance(Duration::from_secs(5));
    assert!(shared.maintain());
    assert_eq!(
        shared.read().backend_state(0, 0),
        Some(BackendState::Probing)
    );
    assert_eq!(shared.read().pick_backend(0, |_| true), Some(0));
    let probe = shared.reserve(0, 0, 0, 1).unwrap();
    assert!(probe.id().is_probe());
    // Only one: the backend is out again while the probe is in flight.
    assert_eq!(shared.read().pick_backend(0, |_| true), None);
    assert!(shared.reserve(0, 0, 0, 1).is_none(), "no second probe");
    // The probe is cancelled: the next request may probe.
    drop(probe);
    assert_eq!(shared.read().pick_backend(0, |_| true), Some(0));
    // A failed probe ejects it again, for longer (2 x 30 s), with the next
    // probe 5 s later.
    let probe = shared.reserve(0, 0, 0, 1).unwrap();
    assert_eq!(probe.fail(), FailureOutcome::Ejected);
    assert_eq!(shared.read().backend_state(0, 0), ejected(60));
    clock.advance(Duration::from_secs(5));
    shared.maintain();
    // A successful probe returns it at once, whatever was left.
    let probe = shared.reserve(0, 0, 0, 1).unwrap();
    assert!(probe.id().is_probe());
    probe.complete();
    assert_eq!(
        shared.read().backend_state(0, 0),
        Some(BackendState::Eligible)
    );
    assert!(shared.read().unavailable().is_empty());
    let rows = shared.read().backend_health();
    assert_eq!(rows[0].ejections, 2);
}

#[test]
fn an_active_health_check_returns_a_backend_early() {
    let clock = Arc::new(ManualClock::new());
    let shared = probing_view(&clock);
    shared.reserve(0, 0, 0, 1).unwrap().fail();
    shared.reserve(0, 0, 0, 1).unwrap().fail();
    assert_eq!(shared.read().backend_state(0, 0), ejected(30));
    assert_eq!(shared.health_check("a", "a-1", true), Ok(true));
    assert_eq!(
        shared.read().backend_state(0, 0),
        Some(BackendState::Eligible)
    );
    assert_eq!(shared.health_check("a", "a-1", true), Ok(false));
    // A failed check counts as a failed send.
    assert_eq!(shared.health_check("a", "a-1", false), Ok(false));
    assert_eq!(shared.health_check("a", "a-1", false), Ok(true));
    assert!(matches!(
        shared.health_check("a", "zz", true),
        Err(ReportError::UnknownBackend { .. })
    ));
}

#[test]
fn one_health_record_per_backend_across_models() {
    let clock = Arc::new(ManualClock::new());
    let options = HealthOptions {
        consecutive_failures: 5,
        probe_after: Some(Duration::from_secs(5)),
        ..HealthOptions::default()
    }
    .with_clock(clock.clone());
    let views = ModelViews::new().with_health(options);
    let models = ["m1", "m2", "m3", "m4"];
    views.ensure_backend(models, "a", "a-1", BackendRates::pinned(1000.0));
    views.ensure_backend(models, "b", "b-1", BackendRates::pinned(1000.0));
    // Five failures spread over four models eject a-1 from all four.
    for (i, model) in models.iter().cycle().take(5).enumerate() {
        let view = views.get(model).unwrap();
        let outcome = view.reserve(0, 0, 0, 1).unwrap().fail();
        assert_eq!(outcome == FailureOutcome::Ejected, i == 4, "failure {i}");
    }
    for model in models {
        let view = views.get(model).unwrap();
        view.maintain();
        assert!(
            matches!(
                view.read().backend_state(0, 0),
                Some(BackendState::Ejected { .. })
            ),
            "{model}"
        );
        let read = view.read();
        let unavailable: Vec<&str> = read.unavailable().iter().map(|c| &**c).collect();
        assert_eq!(unavailable, ["a"], "{model}");
    }
    let rows = views.backend_health();
    assert_eq!(rows.len(), 2, "one row per backend");
    assert_eq!((&*rows[0].backend, rows[0].ejections), ("a-1", 1));
    // The probe opens in every view; one model takes it, and its success
    // returns the backend to all of them.
    clock.advance(Duration::from_secs(5));
    let m3 = views.get("m3").unwrap();
    m3.maintain();
    let probe = m3.reserve(0, 0, 0, 1).unwrap();
    let m1 = views.get("m1").unwrap();
    m1.maintain();
    assert_eq!(
        m1.read().pick_backend(0, |_| true),
        None,
        "one probe for all"
    );
    probe.keep();
    for model in models {
        let view = views.get(model).unwrap();
        view.maintain();
        assert_eq!(
            view.read().backend_state(0, 0),
            Some(BackendState::Eligible),
            "{model}"
        );
        assert!(view.read().unavailable().is_empty(), "{model}");
    }
    // Health settings change on live views.
    views.set_health(HealthOptions {
        consecutive_failures: 1,
        ..views.health()
    });
    assert_eq!(
        views.get("m2").unwrap().reserve(0, 0, 0, 1).unwrap().fail(),
        FailureOutcome::Ejected
    );
    // A passed active check anywhere returns it everywhere.
    assert_eq!(views.health_check("a", "a-1", true), Ok(true));
    for model in models {
        let view = views.get(model).unwrap();
        assert!(view.read().unavailable().is_empty(), "{model}");
    }
    // Records go with the last registration.
    assert!(views.remove_backend("a", "a-1"));
    assert_eq!(views.backend_health().len(), 1);
}

#[test]
fn complete_frees_the_slot_at_once_and_counts_a_success() {
    let clock = Arc::new(ManualClock::new());
    let shared = probing_view(&clock);
    let running = |s: &SharedView| s.read().snapshots()[0].num_running_queries;
    let report = |n| BackendStats {
        num_running_queries: n,
        max_engine_concurrency: 4,
        ..BackendStats::default()
    };
    // Pending: released at once.
    let r = shared.reserve(0, 0, 0, 10).unwrap();
    assert_eq!(running(&shared), 1);
    r.complete();
    assert_eq!(running(&shared), 0);
    // Kept: held until the next report.
    shared.reserve(0, 0, 0, 10).unwrap().keep();
    assert_eq!(running(&shared), 1);
    // Counted by a report (2 running, ours included), then completed: one
    // off the report's count until the next report.
    let a = shared.reserve(0, 0, 0, 10).unwrap();
    shared.report("a", "a-1", &report(2)).unwrap();
    assert_eq!(running(&shared), 2);
    a.complete();
    assert_eq!(running(&shared), 1);
    shared.report("a", "a-1", &report(3)).unwrap();
    assert_eq!(running(&shared), 3, "a new report is the truth again");
    // A request that two reports counted comes off the latest one's count.
    let long = shared.reserve(0, 0, 0, 10).unwrap();
    shared.report("a", "a-1", &report(2)).unwrap();
    shared.report("a", "a-1", &report(2)).unwrap();
    long.complete();
    assert_eq!(running(&shared), 1);
    // One reserved after the latest report is only pending: released.
    let fresh = shared.reserve(0, 0, 0, 10).unwrap();
    assert_eq!(running(&shared), 2);
    fresh.complete();
    assert_eq!(running(&shared), 1);
    // A success: one failure, then a completion, then one more failure
    // does not eject (threshold 2).
    assert_eq!(
        shared.reserve(0, 0, 0, 1).unwrap().fail(),
        FailureOutcome::Counted
    );
    shared.reserve(0, 0, 0, 1).unwrap().complete();
    assert_eq!(
        shared.reserve(0, 0, 0, 1).unwrap().fail(),
        FailureOutcome::Counted
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
        changed()
    );
    assert_eq!(
        shared.ensure_backend("a", "a-1", BackendRates::default()),
        Applied::default()
    );
    assert_eq!(shared.set_rtt("a", "a-1", 5.0), Ok(true));
    assert_eq!(shared.set_rtt("a", "a-1", 5.0), Ok(false));
    assert!(shared.set_rtt("a", "a-1", -1.0).is_err());
    assert_eq!(shared.read().snapshots()[0].rtt_ms, 5.0);
    assert!(shared.remove_backend("a", "a-1"));
    assert!(!shared.remove_backend("a", "a-1"));
    assert!(shared.read().snapshots().is_empty());
}
