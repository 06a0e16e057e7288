//! The async driver (feature `tokio`): the routing loop of
//! docs/stargate.md 2.2 to completion, in paused tokio time.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use routex::balancer::{Request, Scratch};
use routex::router::{
    BackendStats, CandidateView, Driver, RejectionCode, RouteRequest, Router, SharedView, Step,
    WaitLoop,
};
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

const PWW: &str = "pulsar-wait-and-widen;seed=v1;cache_affinity_wait_ms=100;band_widen_interval_ms=50;max_queue_time_floor_ms=100;max_queue_time_ceil_ms=400";

fn report(running: u64) -> BackendStats {
    BackendStats {
        last_mean_input_tps: 1000.0,
        max_input_tps: Some(1000.0),
        num_running_queries: running,
        max_engine_concurrency: 4,
        queued_input_size: 2000 * running,
        queue_size: running,
        ..BackendStats::default()
    }
}

/// Four single-backend clusters, all `running` of 4 slots busy.
fn view(running: u64) -> SharedView {
    let mut v = CandidateView::new();
    for i in 0..4 {
        let id = format!("c{i}");
        v.add_backend(&id, &format!("{id}-b"));
        v.set_rtt(&id, &format!("{id}-b"), 1.0 + f64::from(i))
            .unwrap();
        v.report(&id, &format!("{id}-b"), &report(running)).unwrap();
    }
    SharedView::new(v)
}

fn request(method: &str) -> RouteRequest<'_> {
    RouteRequest::new(Request {
        model: "m",
        routing_key: Some("tenant"),
        cache_affinity_key: Some("conversation-1"),
        input_tokens: Some(500),
        request_slo_ms: Some(2000),
        ..Request::default()
    })
    .with_method(method)
}

fn router() -> Arc<Router> {
    Arc::new(Router::new(routex::check::permissive_table()))
}

/// The sans-IO loop over a view that does not change: (selected cluster
/// position or None for a give-up, elapsed at the end, decisions).
fn sans_io(
    method: &str,
    max_wait: Option<u64>,
    view: &SharedView,
    seed: u64,
) -> (Option<usize>, Duration, u32) {
    let router = router();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut scratch = Scratch::default();
    let wait = WaitLoop::new(max_wait);
    let base = request(method);
    let resolved = router
        .resolve("m", Some("tenant"), base.routing_method)
        .unwrap();
    let mut elapsed = Duration::ZERO;
    let mut decisions = 0;
    loop {
        let r = Request {
            elapsed,
            ..base.request.clone()
        };
        decisions += 1;
        let Ok(decision) = resolved.decide(&r, view.read().snapshots(), &mut rng, &mut scratch)
        else {
            return (None, elapsed, decisions);
        };
        match wait.step(&decision, elapsed, &mut rng) {
            Step::Select(choice) => return (Some(choice.index), elapsed, decisions),
            Step::Sleep(d, _) => elapsed += d,
            Step::GiveUp => return (None, elapsed, decisions),
        }
    }
}

#[tokio::test(start_paused = true)]
async fn decisions_match_the_sans_io_wait_loop() {
    for (method, running, max_wait) in [
        (PWW, 4, None),
        (PWW, 4, Some(30)),
        (PWW, 4, Some(170)),
        (PWW, 2, None),
        ("power-of-n", 4, None),
        ("random;max_input_work_seconds=0.001", 0, Some(40)),
    ] {
        let view = view(running);
        let expected = sans_io(method, max_wait, &view, 9);
        let driver = Driver::with_seed(router(), 9);
        let start = Instant::now();
        let got = driver.route(request(method), max_wait, &view).await;
        let elapsed = start.elapsed();
        let got = match got {
            Ok(routed) => {
                assert_eq!(view.read().pending(routed.choice.index), 1);
                assert_eq!(
                    &*routed.cluster,
                    view.read().snapshots()[routed.choice.index].id
                );
                (Some(routed.choice.index), elapsed, routed.decisions)
            }
            Err(rejection) => {
                assert_eq!(rejection.status, 503, "{rejection}");
                (None, elapsed, expected.2)
            }
        };
        assert_eq!(
            got, expected,
            "{method} running={running} max_wait={max_wait:?}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn a_waiting_request_wakes_when_a_report_frees_capacity() {
    let view = view(4);
    let driver = Driver::with_seed(router(), 1);
    let task = {
        let (driver, view) = (driver.clone(), view.clone());
        tokio::spawn(async move {
            let start = Instant::now();
            let routed = driver.route(request(PWW), None, &view).await.unwrap();
            (start.elapsed(), routed.cluster.clone(), routed)
        })
    };
    tokio::time::sleep(Duration::from_millis(7)).await;
    for i in 0..4 {
        view.report(&format!("c{i}"), &format!("c{i}-b"), &report(0))
            .unwrap();
    }
    let (elapsed, cluster, routed) = task.await.unwrap();
    assert_eq!(
        elapsed,
        Duration::from_millis(7),
        "woken by the report, not the 25 ms recheck"
    );
    assert_eq!(routed.choice.rank_depth, 1, "its primary {cluster}");
}

#[tokio::test(start_paused = true)]
async fn dropping_the_future_or_the_guard_leaves_no_reservation() {
    let view = view(4);
    let driver = Driver::with_seed(router(), 1);
    let fut = driver.route(request(PWW), None, &view);
    fn is_send<T: Send>(_: &T) {}
    is_send(&fut);
    assert!(tokio::time::timeout(Duration::from_millis(60), fut)
        .await
        .is_err());
    let pending: usize = (0..4).map(|c| view.read().pending(c)).sum();
    assert_eq!(pending, 0, "a cancelled routing reserves nothing");
    let free = self::view(0);
    let routed = driver.route(request(PWW), None, &free).await.unwrap();
    assert_eq!(free.read().pending(routed.choice.index), 1);
    drop(routed);
    let pending: usize = (0..4).map(|c| free.read().pending(c)).sum();
    assert_eq!(pending, 0, "the guard released it");
}

#[tokio::test(start_paused = true)]
async fn failed_backends_exclude_their_cluster_then_404_and_503() {
    let view = view(0);
    let driver = Driver::with_seed(router(), 1);
    let mut routing = driver.routing(request("round-robin"), None);
    let mut seen = Vec::new();
    for _ in 0..4 {
        let routed = routing.next(&view).await.unwrap();
        assert!(!seen.contains(&routed.cluster), "{} twice", routed.cluster);
        seen.push(routed.cluster.clone());
        routing.failed(routed);
    }
    let rejection = routing.next(&view).await.unwrap_err();
    assert_eq!(rejection.code, RejectionCode::CandidatesExhausted);
    assert_eq!(rejection.status, 503);
    let pending: usize = (0..4).map(|c| view.read().pending(c)).sum();
    assert_eq!(pending, 0, "failed attempts released their reservations");
    let empty = SharedView::new(CandidateView::new());
    let rejection = driver.route(request(PWW), None, &empty).await.unwrap_err();
    assert_eq!(rejection.code, RejectionCode::NoEligibleCandidates);
    assert_eq!(
        driver.router().target_count(),
        1,
        "only the routed target holds state"
    );
}

/// Sessions (docs/stargate.md 3.10): the driver classifies a request once,
/// on its first attempt. A returning request whose last cluster leaves the
/// fleet during its affinity wait stays returning (it keeps waiting the
/// configured 100 ms) instead of turning stale (which would take a freed
/// cluster at once), and counts as returning/fallback.
#[tokio::test(start_paused = true)]
async fn a_session_is_classified_once_per_request() {
    use routex::balancer::{SessionSelection, SessionState};
    let json = r#"{"models": {"m": {"algorithm": "pulsar-wait-and-widen", "seed": "v1",
        "cache_affinity_wait_ms": 100, "last_cluster_affinity": true}}}"#;
    let (table, diagnostics) = routex::config::check_lb_config("lb-config.json", json);
    assert!(!diagnostics.has_errors(), "{diagnostics:?}");
    let router = Arc::new(Router::new(table.unwrap()));
    let driver = Driver::with_seed(router.clone(), 9);
    let view = view(4);
    let start = Instant::now();
    let request = RouteRequest::new(Request {
        last_cluster_id: Some("c3"),
        ..request("pulsar").request
    });
    let task = {
        let view = view.clone();
        let driver = driver.clone();
        tokio::spawn(async move {
            let routed = driver.route(request, None, &view).await.unwrap();
            (routed.cluster.to_string(), routed.choice.rank_depth)
        })
    };
    tokio::time::sleep(Duration::from_millis(10)).await;
    view.update(|v| {
        assert!(v.remove_cluster("c3"));
        v.report("c1", "c1-b", &report(0)).unwrap();
    });
    let (cluster, _) = task.await.unwrap();
    assert_eq!(cluster, "c1");
    assert!(
        start.elapsed() >= Duration::from_millis(100),
        "{:?}",
        start.elapsed()
    );
    let rows = router.session_selections();
    assert_eq!(rows.len(), 1);
    assert_eq!(
        rows[0].count(SessionState::Returning, SessionSelection::Fallback),
        1
    );
    assert_eq!(rows[0].series().map(|(_, _, n)| n).sum::<u64>(), 1);
}
