//! Router request path, against a same-run reference (a std `HashMap` hit
//! and an `Arc` clone): a cache-hit resolve, a full route (resolve +
//! admission + decide) for pulsar-wait-and-widen over 20 clusters, and
//! throughput with two threads against one on a shared router (the same
//! number of decisions, split over the threads; one shared target, then
//! one target per thread); the same route over the
//! candidate view with pending reservations, one stats report applied to a
//! 20-cluster view, and a new routing key before and past the target cap.
//!
//! `cargo bench --bench router -- --warm-up-time 1 --measurement-time 3`

#[path = "../tests/support/router_inputs.rs"]
mod inputs;

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use inputs::{clusters, PWW};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use routex::balancer::{ClusterSnapshot, Request, Scratch};
use routex::router::{RouteRequest, Router, RouterOptions};
use std::collections::HashMap;
use std::fmt::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The route cases' requests: routing key `tenant-a`, 64 affinity keys.
fn request(key: &str) -> RouteRequest<'_> {
    inputs::request("tenant-a", key)
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

/// The same-run reference the router figures are divided by
/// (docs/performance.md): what a naive expression cache pays on a hit, a
/// std `HashMap` (SipHash) keyed by (model, routing key, header value)
/// returning an `Arc` clone, here with 64 entries.
fn reference(c: &mut Criterion) {
    let mut map: HashMap<(String, String, String), Arc<String>> = HashMap::new();
    for i in 0..64 {
        let key = ("llama".to_owned(), format!("tenant-{i}"), PWW.to_owned());
        map.insert(key, Arc::new(format!("definition {i}")));
    }
    let probe = ("llama".to_owned(), "tenant-a".to_owned(), PWW.to_owned());
    map.insert(probe.clone(), Arc::new("definition".to_owned()));
    c.bench_function("reference/std_hashmap_hit_arc_clone", |b| {
        b.iter(|| map.get(black_box(&probe)).cloned())
    });
}

fn route_pww(c: &mut Criterion) {
    let router = Router::new(routex::check::permissive_table());
    let clusters = clusters();
    let keys = inputs::affinity_keys("prefix");
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
    // The same route with `last_cluster_affinity` on in the base the
    // expression builds on (docs/stargate.md 3.10): a third of the
    // requests returning, a third stale, a third new; then all returning.
    let sessions = Router::new(inputs::sessions_table());
    for (name, requests) in [
        (
            "route/pww_20_clusters_sessions",
            inputs::session_requests(&requests, &clusters),
        ),
        (
            "route/pww_20_clusters_returning",
            inputs::returning_requests(&requests, &clusters),
        ),
    ] {
        let mut i = 0;
        c.bench_function(name, |b| {
            b.iter(|| {
                i = (i + 1) % requests.len();
                sessions.route(&requests[i], &clusters, &mut rng, &mut scratch)
            })
        });
    }
    // The same decision path with the flag off and on: requests that go
    // to their primary at once, and the same requests returning to it.
    let (plain, returning) = inputs::primary_requests(&router, &requests, &clusters);
    for (name, table_router, requests) in [
        ("route/pww_20_clusters_primary", &router, plain),
        (
            "route/pww_20_clusters_returning_primary",
            &sessions,
            returning,
        ),
    ] {
        let mut i = 0;
        c.bench_function(name, |b| {
            b.iter(|| {
                i = (i + 1) % requests.len();
                table_router.route(&requests[i], &clusters, &mut rng, &mut scratch)
            })
        });
    }
}

/// Each thread's requests: its own 64 affinity keys (as request threads
/// serving different conversations), on routing key `tenant-a` (one
/// shared target) or on a routing key of its own (one target per thread).
struct Workload {
    keys: Vec<(String, Vec<String>)>,
}

impl Workload {
    fn new(threads: usize, shared_target: bool) -> Self {
        let keys = (0..threads)
            .map(|t| {
                let tenant = if shared_target {
                    "tenant-a".to_owned()
                } else {
                    format!("tenant-{t}")
                };
                (tenant, inputs::affinity_keys(&format!("thread-{t}")))
            })
            .collect();
        Workload { keys }
    }

    fn requests(&self, thread: usize) -> Vec<RouteRequest<'_>> {
        let (tenant, keys) = &self.keys[thread];
        keys.iter().map(|k| inputs::request(tenant, k)).collect()
    }
}

/// `total` decisions split evenly over the workload's threads, deciding
/// on one shared router; the wall time from the first spawn until the
/// last thread ends, so a second thread helps only if it really runs
/// alongside.
fn run_threads(
    router: &Router,
    clusters: &[ClusterSnapshot],
    workload: &Workload,
    total: u64,
) -> Duration {
    let threads = workload.keys.len() as u64;
    let start = Instant::now();
    std::thread::scope(|s| {
        for t in 0..threads {
            let share = total / threads + u64::from(t < total % threads);
            let requests = workload.requests(t as usize);
            s.spawn(move || {
                let mut rng = ChaCha8Rng::seed_from_u64(t);
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

/// 1 and 2 threads routing on one shared router, in the same run. One
/// criterion iteration is one decision whatever the thread count, so
/// threads_1 / threads_2 is the speed-up. `same_target`: every thread on
/// one target (the hardest case: one slot, one instance, one ranking
/// cache); `own_target`: one routing key per thread, same model.
fn throughput(c: &mut Criterion) {
    let clusters = clusters();
    for (group_name, shared_target) in [("throughput", true), ("throughput_own_target", false)] {
        let router = Router::new(routex::check::permissive_table());
        let mut group = c.benchmark_group(group_name);
        group.throughput(Throughput::Elements(1));
        for threads in [1, 2] {
            let workload = Workload::new(threads, shared_target);
            group.bench_function(format!("threads_{threads}"), |b| {
                b.iter_custom(|total| run_threads(&router, &clusters, &workload, total))
            });
        }
        group.finish();
    }
}

fn view_benches(c: &mut Criterion) {
    let router = Router::new(routex::check::permissive_table());
    let (mut view, reports) = inputs::view(3);
    let keys = inputs::affinity_keys("prefix");
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
    reference,
    resolve_hit,
    route_pww,
    view_benches,
    new_keys,
    throughput
);
criterion_main!(benches);
