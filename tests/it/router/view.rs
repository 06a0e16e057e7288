//! The candidate view (docs/stargate.md 1.3): aggregation over backends,
//! pending reservations and malformed reports.

use routex::balancer::ClusterSnapshot;
use routex::router::{BackendStats, CandidateView, ReportError};

fn stats(tps: f64, queue: u64, queued: u64, running: u64) -> BackendStats {
    BackendStats {
        last_mean_input_tps: tps,
        max_input_tps: Some(2.0 * tps),
        queue_size: queue,
        queued_input_size: queued,
        total_query_input_size: queued.saturating_mul(2),
        num_running_queries: running,
        max_engine_concurrency: 25,
        ..BackendStats::default()
    }
}

fn two_backend_view() -> CandidateView {
    let mut v = CandidateView::new();
    assert_eq!(v.add_backend("a", "a-1"), 0);
    assert_eq!(v.add_backend("a", "a-2"), 0);
    assert_eq!(v.add_backend("b", "b-1"), 1);
    v
}

fn snapshot<'v>(v: &'v CandidateView, id: &str) -> &'v ClusterSnapshot {
    &v.snapshots()[v.position(id).expect("registered")]
}

#[test]
fn backends_aggregate_by_the_reference_rules() {
    let mut v = two_backend_view();
    v.report("a", "a-1", &stats(1000.0, 2, 300, 7)).unwrap();
    // Only a-1 reported: a-2 is not active yet.
    let a = snapshot(&v, "a");
    assert_eq!(
        (a.last_mean_input_tps, a.max_input_tps),
        (1000.0, Some(2000.0))
    );
    let mut second = stats(500.0, 3, 200, 9);
    second.max_input_tps = Some(4000.0);
    second.kv_cache_free_tokens = 77;
    v.report("a", "a-2", &second).unwrap();
    let a = snapshot(&v, "a");
    assert_eq!(a.last_mean_input_tps, 1500.0, "sum of the valid rates");
    assert_eq!(a.max_input_tps, Some(4000.0), "the greatest peak");
    assert_eq!((a.queue_size, a.queued_input_size), (5, 500), "sums");
    assert_eq!(a.total_query_input_size, 1000);
    assert_eq!(
        a.num_running_queries, 9,
        "cluster-scoped: the latest report"
    );
    assert_eq!(a.kv_cache_free_tokens, 77);
    // A backend without a peak makes the cluster's peak absent.
    second.max_input_tps = None;
    v.report("a", "a-2", &second).unwrap();
    assert_eq!(snapshot(&v, "a").max_input_tps, None);
    // The mean rate is sticky: 0 keeps a-2's last valid 500.
    second.last_mean_input_tps = 0.0;
    v.report("a", "a-2", &second).unwrap();
    assert_eq!(snapshot(&v, "a").last_mean_input_tps, 1500.0);
    // RTT: the floor of the backends' mean, at whole nanoseconds.
    v.set_rtt("a", "a-1", 1.0).unwrap();
    assert_eq!(snapshot(&v, "a").rtt_ms, 1.0);
    v.set_rtt("a", "a-2", 2.000_000_5).unwrap();
    assert_eq!(snapshot(&v, "a").rtt_ms, 1.5);
    assert_eq!(snapshot(&v, "b"), &ClusterSnapshot::new("b"));
}

#[test]
fn reservations_count_until_that_backends_next_report() {
    let mut v = two_backend_view();
    let mut published = stats(1000.0, 0, 0, 3);
    published.queue_time_estimate_ms_by_priority = vec![(5, 300), (1, 100)];
    let mut second = published.clone();
    second.last_mean_input_tps = 0.0;
    v.report("a", "a-1", &published).unwrap();
    // Cluster-scoped values (the map) come from the latest report.
    v.report("a", "a-2", &second).unwrap();
    let r1 = v.reserve(0, 0, 3, 500).unwrap();
    let a = snapshot(&v, "a");
    assert_eq!(
        (a.queue_size, a.queued_input_size, a.num_running_queries),
        (1, 500, 4)
    );
    assert_eq!(a.total_query_input_size, 500);
    // 500 tokens at 1000 tps = 500 ms, added from priority 3 up; the new
    // entry starts from the nearest lower one (priority 1).
    assert_eq!(
        a.queue_time_estimate_ms_by_priority,
        vec![(1, 100), (3, 600), (5, 800)]
    );
    v.reserve(0, 1, 0, 2000).unwrap();
    assert_eq!(
        snapshot(&v, "a").queue_time_estimate_ms_by_priority,
        vec![(0, 2000), (1, 2100), (3, 2600), (5, 2800)]
    );
    assert_eq!(v.pending(0), 2);
    // a-2's report clears a-2's reservation only.
    v.report("a", "a-2", &second).unwrap();
    assert_eq!((v.pending_on(0, 0), v.pending_on(0, 1)), (1, 0));
    assert_eq!(snapshot(&v, "a").queue_size, 1);
    // Released on cancellation; a second release is a no-op.
    assert!(v.release(r1));
    assert!(!v.release(r1));
    let a = snapshot(&v, "a");
    assert_eq!((a.queue_size, a.num_running_queries), (0, 3));
    assert_eq!(
        a.queue_time_estimate_ms_by_priority,
        vec![(1, 100), (5, 300)]
    );
}

#[test]
fn reserved_tokens_without_a_rate_clear_the_map_and_an_empty_map_stays_empty() {
    let mut v = CandidateView::new();
    v.add_backend("a", "a-1");
    let mut report = stats(0.0, 0, 0, 0);
    report.queue_time_estimate_ms_by_priority = vec![(0, 40)];
    v.report("a", "a-1", &report).unwrap();
    v.reserve(0, 0, 0, 0).unwrap();
    assert_eq!(
        v.snapshots()[0].queue_time_estimate_ms_by_priority,
        vec![(0, 40)]
    );
    v.reserve(0, 0, 0, 10).unwrap();
    assert!(v.snapshots()[0]
        .queue_time_estimate_ms_by_priority
        .is_empty());
    v.report("a", "a-1", &stats(100.0, 0, 0, 0)).unwrap();
    v.reserve(0, 0, 0, 10).unwrap();
    assert!(v.snapshots()[0]
        .queue_time_estimate_ms_by_priority
        .is_empty());
    assert_eq!(v.snapshots()[0].queued_input_size, 10);
}

#[test]
fn malformed_reports_are_errors_and_never_panic() {
    let mut v = two_backend_view();
    v.report("a", "a-1", &stats(1000.0, 1, 10, 1)).unwrap();
    let before = v.snapshots().to_vec();
    let unknown = v.report("zz", "a-1", &stats(1.0, 9, 9, 9)).unwrap_err();
    assert_eq!(unknown, ReportError::UnknownCluster("zz".into()));
    let unknown = v.report("a", "zz", &stats(1.0, 9, 9, 9)).unwrap_err();
    assert_eq!(
        unknown.to_string(),
        "stats for unknown backend \"zz\" of cluster \"a\""
    );
    assert_eq!(v.snapshots(), &before[..], "nothing changed");
    for bad in [f64::NAN, f64::INFINITY, -5.0] {
        let mut report = stats(bad, 4, 40, 4);
        report.max_input_tps = Some(bad);
        // Not an error: applied, with the first refused field named.
        let applied = v.report("a", "a-1", &report).unwrap();
        assert!(matches!(
            applied.ignored,
            Some(routex::router::Ignored {
                field: "last_mean_input_tps",
                ..
            })
        ));
        let a = snapshot(&v, "a");
        assert_eq!(a.last_mean_input_tps, 1000.0, "the last valid rate stays");
        assert_eq!(a.max_input_tps, None, "an invalid peak is absent");
        assert_eq!(a.queue_size, 4, "the rest applied");
    }
    let err = v.set_rtt("a", "a-1", f64::NAN).unwrap_err();
    assert!(matches!(
        err,
        ReportError::InvalidValue {
            field: "rtt_ms",
            ..
        }
    ));
    assert_eq!(snapshot(&v, "a").rtt_ms, 0.0);
    assert!(v.report_at(9, 0, &BackendStats::default()).is_err());
    assert!(v.reserve(9, 0, 0, 1).is_none());
    // Saturating sums.
    v.report("a", "a-1", &stats(1.0, u64::MAX, u64::MAX, u64::MAX))
        .unwrap();
    v.reserve(0, 0, 0, u64::MAX).unwrap();
    let a = snapshot(&v, "a");
    assert_eq!(
        (a.queue_size, a.queued_input_size, a.num_running_queries),
        (u64::MAX, u64::MAX, u64::MAX)
    );
}

#[test]
fn order_is_stable_until_membership_changes() {
    let mut v = CandidateView::new();
    for id in ["c", "a", "b"] {
        v.add_backend(id, "x");
    }
    let epoch = v.membership_epoch();
    let name = v.membership();
    v.report("b", "x", &stats(5.0, 1, 1, 1)).unwrap();
    v.reserve(0, 0, 0, 1).unwrap();
    v.add_backend("a", "y");
    let ids: Vec<_> = v.snapshots().iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["c", "a", "b"]);
    assert_eq!(
        v.membership_epoch(),
        epoch,
        "a backend joining keeps positions"
    );
    assert_eq!(v.membership(), name, "and the ids' name");
    assert!(
        v.remove_backend("c", "x"),
        "its last backend: the cluster goes"
    );
    let ids: Vec<_> = v.snapshots().iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["a", "b"]);
    assert_eq!(v.position("b"), Some(1));
    assert_ne!(v.membership_epoch(), epoch);
    assert_ne!(v.membership(), name, "new ids, a new name");
    assert_ne!(
        CandidateView::new().membership(),
        CandidateView::new().membership(),
        "two views never share a name"
    );
}

#[test]
fn a_release_after_positions_moved_still_finds_its_reservation() {
    let mut v = CandidateView::new();
    v.add_backend("a", "x");
    v.add_backend("b", "x");
    let r = v.reserve(1, 0, 0, 5).unwrap();
    v.remove_cluster("a");
    assert_eq!(v.snapshots()[0].queue_size, 1);
    assert!(v.release(r));
    assert_eq!(v.snapshots()[0].queue_size, 0);
}

#[test]
fn shared_reservations_release_on_drop_and_keep_until_the_report() {
    use routex::router::SharedView;
    let mut v = CandidateView::new();
    v.add_backend("a", "a-1");
    let shared = SharedView::new(v);
    let dropped = shared.reserve(0, 0, 0, 100).expect("backend exists");
    let kept = shared.reserve(0, 0, 0, 50).expect("backend exists");
    assert_eq!(shared.read().snapshots()[0].queued_input_size, 150);
    drop(dropped);
    assert_eq!(shared.read().snapshots()[0].queued_input_size, 50);
    kept.keep();
    assert_eq!(shared.read().pending(0), 1, "kept until a-1 reports");
    shared.report("a", "a-1", &BackendStats::default()).unwrap();
    assert_eq!(shared.read().pending(0), 0);
    assert!(shared.reserve(0, 1, 0, 1).is_none());
    let err = shared
        .report("b", "x", &BackendStats::default())
        .unwrap_err();
    assert_eq!(err, ReportError::UnknownCluster("b".into()));
}
