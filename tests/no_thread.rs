//! Building and using a `Router` with the default options starts no thread
//! (docs/embedding.md, threading model). Counted from /proc/self/task, so
//! this binary holds this one test and nothing else runs beside it.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use routex::balancer::{ClusterSnapshot, Request, Scratch};
use routex::router::{Clock, RouteRequest, Router, SystemClock};

fn threads() -> usize {
    std::fs::read_dir("/proc/self/task")
        .expect("Linux /proc")
        .count()
}

#[test]
fn a_router_starts_no_thread() {
    let before = threads();
    let router = Router::new(routex::check::permissive_table());
    let clusters: Vec<_> = (0..4)
        .map(|i| ClusterSnapshot {
            id: format!("c{i}"),
            last_mean_input_tps: 7000.0,
            max_input_tps: Some(7000.0),
            ..ClusterSnapshot::default()
        })
        .collect();
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let mut scratch = Scratch::default();
    for i in 0..200 {
        let key = format!("tenant-{}", i % 7);
        let request = RouteRequest::new(Request {
            model: "m",
            routing_key: Some(&key),
            input_tokens: Some(100),
            ..Request::default()
        })
        .with_method("pulsar;seed=x");
        router
            .route(&request, &clusters, &mut rng, &mut scratch)
            .expect("routes");
    }
    assert_eq!(router.metrics().entries, 7);
    let clock = SystemClock::new();
    assert!(clock.now_coarse() <= clock.now());
    assert_eq!(threads(), before, "a thread was started");
}
