//! CPU time per router operation, read from `/proc/thread-self/schedstat`
//! (Linux), so the figures hold on a loaded machine where criterion's wall
//! clock does not: a cache-hit resolve, a full route for
//! pulsar-wait-and-widen over 20 clusters, and the same route on two threads
//! sharing the router (equal per-decision CPU cost means the threads do not
//! contend, i.e. near-linear scaling on free cores).
//!
//! `cargo run --release --example router_cpu_cost`
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use routex::balancer::{ClusterSnapshot, Request, Scratch};
use routex::router::{RouteRequest, Router};
use std::time::Duration;

const PWW: &str = "pulsar-wait-and-widen;seed=v1;cache_affinity_wait_ms=300;max_queue_time_floor_ms=500;max_queue_time_ceil_ms=2000";

/// Nanoseconds this thread has spent on a CPU.
fn cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .expect("/proc/thread-self/schedstat (Linux only)")
}

fn clusters() -> Vec<ClusterSnapshot> {
    (0..20)
        .map(|i| ClusterSnapshot {
            id: format!("cluster-{i:02}"),
            rtt_ms: 5.0 + i as f64,
            last_mean_input_tps: 6000.0 + 100.0 * i as f64,
            max_input_tps: Some(8000.0 + 50.0 * i as f64),
            queue_size: i % 3,
            queued_input_size: 2000 * (i % 4),
            num_running_queries: 20 + i % 8,
            max_engine_concurrency: 25,
            queue_time_estimate_ms_by_priority: Vec::new(),
            kv_cache_capacity_tokens: 400_000,
            kv_cache_used_tokens: 1000,
            kv_cache_free_tokens: 399_000,
        })
        .collect()
}

fn route_loop(router: &Router, clusters: &[ClusterSnapshot], n: usize, seed: u64) -> f64 {
    let keys: Vec<String> = (0..64).map(|i| format!("prefix-{i}")).collect();
    let reqs: Vec<_> = keys
        .iter()
        .map(|k| RouteRequest {
            request: Request {
                model: "llama",
                routing_key: Some("tenant-a"),
                cache_affinity_key: Some(k),
                input_tokens: Some(4000),
                elapsed: Duration::from_millis(50),
                ..Request::default()
            },
            routing_method: Some(PWW.as_bytes()),
        })
        .collect();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut scratch = Scratch::default();
    let t = cpu_ns();
    for i in 0..n {
        std::hint::black_box(
            router
                .route(&reqs[i % 64], clusters, &mut rng, &mut scratch)
                .ok(),
        );
    }
    (cpu_ns() - t) as f64 / n as f64
}

fn main() {
    let router = Router::new(routex::check::permissive_table());
    let clusters = clusters();
    router
        .resolve("llama", Some("tenant-a"), Some(PWW.as_bytes()))
        .unwrap();
    for _ in 0..3 {
        let n = 3_000_000;
        let t = cpu_ns();
        for _ in 0..n {
            std::hint::black_box(
                router
                    .resolve(
                        std::hint::black_box("llama"),
                        Some("tenant-a"),
                        Some(PWW.as_bytes()),
                    )
                    .map(|r| r.source)
                    .ok(),
            );
        }
        println!(
            "resolve hit: {:.1} ns cpu",
            (cpu_ns() - t) as f64 / n as f64
        );
        println!(
            "route pww20 1 thread: {:.1} ns cpu",
            route_loop(&router, &clusters, 1_000_000, 1)
        );
        let per: Vec<f64> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..2)
                .map(|t| {
                    let (r, c) = (&router, &clusters);
                    s.spawn(move || route_loop(r, c, 1_000_000, t))
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        println!(
            "route pww20 2 threads: {:.1} / {:.1} ns cpu per decision per thread",
            per[0], per[1]
        );
    }
}
