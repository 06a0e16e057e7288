//! Bounded per-target state (docs/embedding.md, bounds): targets exist only
//! for requests that pass validation and have candidates, expire when idle
//! and are capped, least recently used first.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use routex::balancer::{ClusterSnapshot, Request, Scratch};
use routex::router::{ManualClock, RejectionCode, RouteRequest, Router, RouterOptions};
use std::sync::Arc;
use std::time::Duration;

fn clusters() -> Vec<ClusterSnapshot> {
    (0..3)
        .map(|i| ClusterSnapshot {
            id: format!("c{i}"),
            last_mean_input_tps: 7000.0,
            max_input_tps: Some(7000.0),
            ..ClusterSnapshot::default()
        })
        .collect()
}

fn router(capacity: usize) -> (Router, Arc<ManualClock>) {
    let clock = Arc::new(ManualClock::new());
    let options = RouterOptions::default()
        .with_cache_capacity(capacity)
        .with_idle_timeout(Duration::from_secs(60))
        .with_clock(clock.clone());
    (
        Router::with_options(routex::check::permissive_table(), options),
        clock,
    )
}

fn route(
    router: &Router,
    key: &str,
    method: &str,
    clusters: &[ClusterSnapshot],
) -> Result<(), RejectionCode> {
    let request = RouteRequest::new(Request {
        model: "m",
        routing_key: Some(key),
        input_tokens: Some(10),
        ..Request::default()
    })
    .with_method(method);
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    router
        .route(&request, clusters, &mut rng, &mut Scratch::default())
        .map(drop)
        .map_err(|r| r.code)
}

#[test]
fn rejected_requests_leave_no_target_behind() {
    let (router, _) = router(16);
    let code = route(&router, "k", "pulsar;seed=x;bogus=1", &clusters()).unwrap_err();
    assert!(matches!(code, RejectionCode::Expression(_)), "{code:?}");
    assert_eq!(router.target_count(), 0, "failed validation");
    let code = route(&router, "k", "pulsar;seed=x", &[]).unwrap_err();
    assert_eq!(code, RejectionCode::NoEligibleCandidates);
    let code = route(&router, "k", "pulsar", &[]).unwrap_err();
    assert_eq!(code, RejectionCode::NoEligibleCandidates);
    assert_eq!(router.target_count(), 0, "no candidates");
    // The affinity-key check still comes before the candidates check.
    let code = route(
        &router,
        "k",
        "pulsar;seed=x;require_cache_affinity_key=true",
        &[],
    );
    assert_eq!(code, Err(RejectionCode::MissingCacheAffinityKey));
    // `resolve` has no candidates to check, but a failed compile still
    // leaves nothing.
    assert!(router
        .resolve("m", Some("k"), Some(b"pulsar;nope=1"))
        .is_err());
    assert_eq!(router.target_count(), 0);
    route(&router, "k", "pulsar;seed=x", &clusters()).unwrap();
    assert_eq!(router.target_count(), 1);
    assert_eq!(router.metrics().entries, 1);
}

#[test]
fn targets_are_capped_least_recently_used_first() {
    let (router, clock) = router(4);
    let c = clusters();
    for key in ["a", "b", "c", "d"] {
        route(&router, key, "pulsar;seed=x", &c).unwrap();
        clock.advance(Duration::from_secs(1));
    }
    // "a" is used again, so "b" is now the least recently used.
    route(&router, "a", "pulsar;seed=x", &c).unwrap();
    clock.advance(Duration::from_secs(1));
    route(&router, "e", "pulsar", &c).unwrap();
    assert_eq!(router.target_count(), 4);
    assert_eq!(
        router.metrics().entries,
        3,
        "b's cached expression went with it"
    );
    assert_eq!(router.instance_count("m", Some("b")), 0);
    assert_eq!(router.cached_definitions("m", Some("b")), (None, None));
    for kept in ["a", "c", "d", "e"] {
        assert_eq!(router.instance_count("m", Some(kept)), 1, "{kept}");
    }
    for i in 0..1000 {
        route(&router, &format!("k{i}"), "pulsar;seed=x", &c).unwrap();
    }
    assert_eq!(router.target_count(), 4);
    assert_eq!(router.metrics().entries, 4);
}

#[test]
fn idle_targets_expire_whatever_their_definition() {
    let (router, clock) = router(16);
    let c = clusters();
    route(&router, "configured", "pulsar", &c).unwrap();
    route(&router, "expression", "pulsar;seed=x", &c).unwrap();
    clock.advance(Duration::from_secs(30));
    route(&router, "configured", "pulsar", &c).unwrap();
    clock.advance(Duration::from_secs(31));
    assert_eq!(router.maintenance(), 1, "the expression's target expired");
    assert_eq!(router.target_count(), 1, "the one used 31 s ago stays");
    clock.advance(Duration::from_secs(30));
    router.maintenance();
    assert_eq!(router.target_count(), 0);
}
