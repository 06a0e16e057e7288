//! Router request path: a cache-hit resolve, a full route (resolve +
//! admission + decide) for pulsar-wait-and-widen over 20 clusters, and
//! throughput with two threads against one on a shared router (the same
//! number of decisions, split over the threads); the same route over the
//! candidate view with pending reservations, one stats report applied to a
//! 20-cluster view, and a new routing key before and past the target cap.
//!
//! `cargo bench --bench router -- --warm-up-time 1 --measurement-time 3`

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use routex::balancer::{ClusterSnapshot, Request, Scratch};
use routex::router::{BackendStats, CandidateView, RouteRequest, Router, RouterOptions};
use std::fmt::Write;
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

/// The clusters of `clusters()` as a candidate view (one backend each)
/// with `pending` reservations on every fourth cluster, and their reports.
fn view(pending: u64) -> (CandidateView, Vec<BackendStats>) {
    let mut view = CandidateView::new();
    let reports: Vec<BackendStats> = clusters()
        .iter()
        .map(|c| BackendStats {
            last_mean_input_tps: c.last_mean_input_tps,
            max_input_tps: c.max_input_tps,
            queue_size: c.queue_size,
            queued_input_size: c.queued_input_size,
            num_running_queries: c.num_running_queries,
            max_engine_concurrency: c.max_engine_concurrency,
            queue_time_estimate_ms_by_priority: vec![(0, 40), (2, 120)],
            kv_cache_capacity_tokens: c.kv_cache_capacity_tokens,
            kv_cache_used_tokens: c.kv_cache_used_tokens,
            kv_cache_free_tokens: c.kv_cache_free_tokens,
            ..BackendStats::default()
        })
        .collect();
    for (i, c) in clusters().iter().enumerate() {
        view.add_backend(&c.id, "backend-0");
        view.set_rtt(&c.id, "backend-0", c.rtt_ms).expect("valid");
        view.report_at(i, 0, &reports[i]).expect("valid");
        if i % 4 == 0 {
            for k in 0..pending {
                view.reserve(i, 0, (k % 3) as u32, 1000 + k);
            }
        }
    }
    (view, reports)
}

fn view_benches(c: &mut Criterion) {
    let router = Router::new(routex::check::permissive_table());
    let (mut view, reports) = view(3);
    let keys: Vec<String> = (0..64).map(|i| format!("prefix-{i}")).collect();
    let requests: Vec<_> = keys.iter().map(|k| request(k)).collect();
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let mut scratch = Scratch::default();
    let mut i = 0;
    c.bench_function("route/pww_20_clusters_view_with_reservations", |b| {
        b.iter(|| {
            i = (i + 1) % requests.len();
            router.route(&requests[i], view.snapshots(), &mut rng, &mut scratch)
        })
    });
    let mut n = 0usize;
    c.bench_function("view/stats_report_20_clusters", |b| {
        b.iter(|| {
            n = (n + 1) % reports.len();
            view.report_at(black_box(n), 0, &reports[n])
        })
    });
}

/// A new routing key (a new target: a compile of the expression, the
/// balancer instance and one decision) on a router far below its target
/// cap, and on one that is full, so every new key evicts one.
fn new_keys(c: &mut Criterion) {
    let clusters: Vec<_> = clusters().into_iter().take(4).collect();
    let mut group = c.benchmark_group("targets");
    for (name, capacity, prefill) in [
        ("new_key_below_cap", 1 << 24, 0),
        ("new_key_past_cap", 16_384, 20_000),
    ] {
        let options = RouterOptions::default().with_cache_capacity(capacity);
        let router = Router::with_options(routex::check::permissive_table(), options);
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut scratch = Scratch::default();
        let mut key = String::new();
        let mut n = 0u64;
        let mut route_new = |router: &Router| {
            n += 1;
            key.clear();
            write!(key, "tenant-{n}").expect("a String takes any write");
            let r = RouteRequest::new(Request {
                model: "llama",
                routing_key: Some(&key),
                input_tokens: Some(100),
                ..Request::default()
            })
            .with_method("pulsar;seed=x");
            black_box(router.route(&r, &clusters, &mut rng, &mut scratch).is_ok());
        };
        for _ in 0..prefill {
            route_new(&router);
        }
        group.bench_function(name, |b| b.iter(|| route_new(&router)));
    }
    group.finish();
}

criterion_group!(
    benches,
    resolve_hit,
    route_pww,
    view_benches,
    new_keys,
    throughput
);
criterion_main!(benches);
