//! Router request path: a cache-hit resolve, a full route (resolve +
//! admission + decide) for pulsar-wait-and-widen over 20 clusters, and
//! throughput with two threads against one on a shared router (the same
//! number of decisions, split over the threads).
//!
//! `cargo bench --bench router -- --warm-up-time 1 --measurement-time 3`

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use routex::balancer::{ClusterSnapshot, Request, Scratch};
use routex::router::{RouteRequest, Router};
use std::time::{Duration, Instant};

const PWW: &str = "pulsar-wait-and-widen;seed=v1;cache_affinity_wait_ms=300;max_queue_time_floor_ms=500;max_queue_time_ceil_ms=2000";

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
            total_query_input_size: 0,
        })
        .collect()
}

fn request(key: &str) -> RouteRequest<'_> {
    RouteRequest {
        request: Request {
            model: "llama",
            routing_key: Some("tenant-a"),
            cache_affinity_key: Some(key),
            input_tokens: Some(4000),
            elapsed: Duration::from_millis(50),
            ..Request::default()
        },
        routing_method: Some(PWW.as_bytes()),
    }
}

fn resolve_hit(c: &mut Criterion) {
    let router = Router::new(routex::check::permissive_table());
    router
        .resolve("llama", Some("tenant-a"), Some(PWW.as_bytes()))
        .expect("compiles");
    c.bench_function("resolve/cache_hit", |b| {
        b.iter(|| {
            router
                .resolve(black_box("llama"), Some("tenant-a"), Some(PWW.as_bytes()))
                .map(|r| r.source)
        })
    });
}

fn route_pww(c: &mut Criterion) {
    let router = Router::new(routex::check::permissive_table());
    let clusters = clusters();
    let keys: Vec<String> = (0..64).map(|i| format!("prefix-{i}")).collect();
    let requests: Vec<_> = keys.iter().map(|k| request(k)).collect();
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let mut scratch = Scratch::default();
    let mut i = 0;
    c.bench_function("route/pww_20_clusters", |b| {
        b.iter(|| {
            i = (i + 1) % requests.len();
            router.route(&requests[i], &clusters, &mut rng, &mut scratch)
        })
    });
}

/// `total` decisions split evenly over `threads` threads deciding on one
/// shared router; the wall time from the first spawn until the last thread
/// ends, so a second thread helps only if it really runs alongside.
fn run_threads(
    router: &Router,
    clusters: &[ClusterSnapshot],
    requests: &[RouteRequest<'_>],
    threads: usize,
    total: u64,
) -> Duration {
    let threads_u64 = threads as u64;
    let start = Instant::now();
    std::thread::scope(|s| {
        for t in 0..threads {
            let share = total / threads_u64 + u64::from((t as u64) < total % threads_u64);
            s.spawn(move || {
                let mut rng = ChaCha8Rng::seed_from_u64(t as u64);
                let mut scratch = Scratch::default();
                for i in 0..share {
                    let r = &requests[i as usize % requests.len()];
                    black_box(router.route(r, clusters, &mut rng, &mut scratch).ok());
                }
            });
        }
    });
    start.elapsed()
}

/// One criterion iteration is one decision whatever the thread count, so
/// the 1- and 2-thread times per iteration compare directly.
fn throughput(c: &mut Criterion) {
    let router = Router::new(routex::check::permissive_table());
    let clusters = clusters();
    let keys: Vec<String> = (0..64).map(|i| format!("prefix-{i}")).collect();
    let requests: Vec<_> = keys.iter().map(|k| request(k)).collect();
    let mut group = c.benchmark_group("throughput");
    group.throughput(Throughput::Elements(1));
    for threads in [1, 2] {
        group.bench_function(format!("threads_{threads}"), |b| {
            b.iter_custom(|total| run_threads(&router, &clusters, &requests, threads, total))
        });
    }
    group.finish();
}

criterion_group!(benches, resolve_hit, route_pww, throughput);
criterion_main!(benches);
