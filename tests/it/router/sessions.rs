//! Sessions at the router (docs/stargate.md 3.10): the per-target
//! session-selection counts an exporter reads, and `last_cluster_affinity`
//! through a configured route table.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use routex::balancer::{
    ClusterSnapshot, Decision, Request, Scratch, SessionSelection, SessionState,
};
use routex::router::{RouteRequest, Router};

fn router() -> Router {
    let json = r#"{"models": {
        "chat": {"algorithm": "pulsar-wait-and-widen", "seed": "s", "last_cluster_affinity": true},
        "plain": {"algorithm": "pulsar-wait-and-widen", "seed": "s"}}}"#;
    let (table, report) = routex::config::check_lb_config("lb-config.json", json);
    assert!(!report.has_errors(), "{report:?}");
    Router::new(table.expect("table"))
}

fn clusters() -> Vec<ClusterSnapshot> {
    (0..4)
        .map(|i| ClusterSnapshot {
            rtt_ms: 10.0,
            last_mean_input_tps: 1000.0,
            max_input_tps: Some(1000.0),
            max_engine_concurrency: 4,
            ..ClusterSnapshot::new(format!("c{i}"))
        })
        .collect()
}

fn route(router: &Router, model: &str, key: Option<&str>, hint: Option<&str>) -> Decision {
    let request = RouteRequest::new(Request {
        model,
        routing_key: Some("tenant"),
        cache_affinity_key: key,
        input_tokens: Some(100),
        last_cluster_id: hint,
        ..Request::default()
    });
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    router
        .route(&request, &clusters(), &mut rng, &mut Scratch::default())
        .expect("routes")
}

#[test]
fn session_counts_per_target_and_algorithm() {
    let router = router();
    assert!(router.session_selections().is_empty());
    // Keyless requests and a policy without the flag are not classified.
    route(&router, "chat", None, Some("c1"));
    route(&router, "plain", Some("k"), Some("c1"));
    assert!(router.session_selections().is_empty());
    // A returning request goes to its last cluster (all free): primary.
    let d = route(&router, "chat", Some("k"), Some("c2"));
    assert!(matches!(d, Decision::Selected(c) if c.index == 2 && c.rank_depth == 1));
    route(&router, "chat", Some("k"), None);
    route(&router, "chat", Some("k"), Some("C2"));
    let rows = router.session_selections();
    assert_eq!(rows.len(), 1, "{rows:?}");
    let row = &rows[0];
    assert_eq!(
        (
            row.model.as_str(),
            row.routing_key.as_deref(),
            row.algorithm.name()
        ),
        ("chat", Some("tenant"), "pulsar-wait-and-widen")
    );
    assert_eq!(
        row.count(SessionState::Returning, SessionSelection::Primary),
        1
    );
    assert_eq!(row.count(SessionState::New, SessionSelection::Primary), 1);
    assert_eq!(row.count(SessionState::Stale, SessionSelection::Primary), 1);
    // All six series, in label order.
    let series: Vec<_> = row
        .series()
        .map(|(s, sel, n)| format!("{}/{}={n}", s.as_str(), sel.as_str()))
        .collect();
    assert_eq!(
        series,
        [
            "new/primary=1",
            "new/fallback=0",
            "returning/primary=1",
            "returning/fallback=0",
            "stale/primary=1",
            "stale/fallback=0"
        ]
    );
    assert_eq!(
        routex::router::SESSION_SELECTIONS_TOTAL,
        "stargate_routing_session_selections_total"
    );
}

/// The router's own counts (what the collector exports) add up every
/// target's, through `Router::route` and `Resolved::decide` alike, and keep
/// them when the targets and their instances go.
#[test]
fn the_routers_session_counts_outlive_targets() {
    use routex::ir::Algorithm;
    let router = router();
    let count = |state, selection| {
        router.metrics().counters.session_selections(
            Algorithm::PulsarWaitAndWiden,
            state,
            selection,
        )
    };
    assert!(router.metrics().counters.sessions.is_empty());
    route(&router, "chat", None, Some("c1"));
    route(&router, "plain", Some("k"), Some("c1"));
    assert!(
        router.metrics().counters.sessions.is_empty(),
        "not classified"
    );
    route(&router, "chat", Some("k"), Some("c2"));
    route(&router, "chat", Some("k"), Some("nowhere"));
    // Through a resolved instance, as an embedder without `route` decides.
    let resolved = router
        .resolve("chat", Some("tenant"), None)
        .expect("resolves");
    let request = Request {
        model: "chat",
        routing_key: Some("tenant"),
        cache_affinity_key: Some("k"),
        input_tokens: Some(100),
        ..Request::default()
    };
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    resolved
        .decide(&request, &clusters(), &mut rng, &mut Scratch::default())
        .expect("decides");
    assert_eq!(count(SessionState::Returning, SessionSelection::Primary), 1);
    assert_eq!(count(SessionState::Stale, SessionSelection::Primary), 1);
    assert_eq!(count(SessionState::New, SessionSelection::Primary), 1);
    router.remove_target("chat", Some("tenant"));
    assert!(
        router.session_selections().is_empty(),
        "the target's rows go"
    );
    route(&router, "chat", Some("k"), Some("c2"));
    let metrics = router.metrics();
    assert_eq!(metrics.counters.sessions.len(), 1, "one algorithm");
    assert_eq!(count(SessionState::Returning, SessionSelection::Primary), 2);
    assert_eq!(
        count(SessionState::Returning, SessionSelection::Fallback),
        0
    );
    // The target's own rows restarted with it.
    let rows = router.session_selections();
    assert_eq!(
        rows[0].count(SessionState::Returning, SessionSelection::Primary),
        1
    );
}

/// A returning session whose last cluster is already its key's primary
/// decides exactly as the same request without the flag: the promotion is
/// a no-op, so the same decision path (benches/router.rs's
/// `_returning_primary` case compares the two).
#[test]
fn returning_to_the_primary_decides_as_without_the_flag() {
    let router = router();
    let mut compared = 0;
    for k in 0..64 {
        let key = format!("key-{k}");
        let Decision::Selected(off) = route(&router, "plain", Some(&key), None) else {
            continue;
        };
        assert_eq!(off.rank_depth, 1, "all clusters free: the primary");
        let last = format!("c{}", off.index);
        let on = route(&router, "chat", Some(&key), Some(&last));
        assert_eq!(on, Decision::Selected(off), "{key} returning to {last}");
        compared += 1;
    }
    assert_eq!(compared, 64);
}

/// The router's counts keep each algorithm's apart (wait-and-widen and
/// pulsar-wait-and-widen), and a classified request that only waits makes
/// its algorithm's six series exist, at 0, as the instance's own counts
/// do.
#[test]
fn the_routers_counts_per_algorithm_exist_from_a_wait() {
    use routex::ir::Algorithm;
    let json = r#"{"models": {
        "chat": {"algorithm": "pulsar-wait-and-widen", "seed": "s", "last_cluster_affinity": true,
                 "cache_affinity_wait_ms": 300},
        "ww": {"algorithm": "wait-and-widen", "last_cluster_affinity": true,
               "cache_affinity_backend_selection_count": 1}}}"#;
    let (table, report) = routex::config::check_lb_config("lb-config.json", json);
    assert!(!report.has_errors(), "{report:?}");
    let router = Router::new(table.expect("table"));
    let full: Vec<ClusterSnapshot> = clusters()
        .into_iter()
        .map(|c| ClusterSnapshot {
            num_running_queries: c.max_engine_concurrency,
            ..c
        })
        .collect();
    let request = |model, hint| {
        RouteRequest::new(Request {
            model,
            routing_key: Some("tenant"),
            cache_affinity_key: Some("k"),
            input_tokens: Some(100),
            last_cluster_id: hint,
            ..Request::default()
        })
    };
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let mut scratch = Scratch::default();
    let waited = router
        .route(&request("chat", Some("c1")), &full, &mut rng, &mut scratch)
        .expect("routes");
    assert!(matches!(waited, Decision::Wait(_)), "{waited:?}");
    let sessions = router.metrics().counters.sessions;
    assert_eq!(
        sessions,
        [(Algorithm::PulsarWaitAndWiden, [[0, 0], [0, 0], [0, 0]])]
    );
    let served = router
        .route(
            &request("ww", Some("c3")),
            &clusters(),
            &mut rng,
            &mut scratch,
        )
        .expect("routes");
    assert!(
        matches!(served, Decision::Selected(c) if c.index == 3),
        "{served:?}"
    );
    let sessions = router.metrics().counters.sessions;
    assert_eq!(
        sessions,
        [
            (Algorithm::WaitAndWiden, [[0, 0], [1, 0], [0, 0]]),
            (Algorithm::PulsarWaitAndWiden, [[0, 0], [0, 0], [0, 0]]),
        ]
    );
}
