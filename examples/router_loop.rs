//! Runs one case of `benches/router.rs` N times in a loop, for
//! instruction counts that the machine's noise does not move
//! (docs/performance.md, Router):
//!
//! ```sh
//! cargo build --release -p routex --example router_loop
//! valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//!     target/release/examples/router_loop resolve-hit 20000
//! ```
//!
//! Run it with N and 2N: the difference of the two totals divided by N is
//! the cost of one operation, set-up (including the new-key case's 20 000
//! keys that fill the router) excluded.

#[path = "../tests/support/router_inputs.rs"]
mod inputs;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use routex::balancer::{Request, Scratch};
use routex::router::{RouteRequest, Router, RouterOptions};
use std::collections::HashMap;
use std::fmt::Write;
use std::hint::black_box;
use std::sync::Arc;

const OPERATIONS: &str =
    "reference | resolve-hit | route-pww | route-pww-sessions | route-pww-returning | route-pww-primary | \
route-pww-returning-primary | route-view | route-shared-view | stats-report | \
new-key-below-cap | new-key-past-cap | threads-same-T | threads-own-T (T threads)";

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(operation), Some(n)) = (args.next(), args.next().and_then(|n| n.parse().ok())) else {
        eprintln!("usage: router_loop OPERATION N   (OPERATION: {OPERATIONS})");
        std::process::exit(2);
    };
    let n: usize = n;
    let table = routex::check::permissive_table;
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let mut scratch = Scratch::default();
    let keys = inputs::affinity_keys("prefix");
    let requests: Vec<_> = keys
        .iter()
        .map(|k| inputs::request("tenant-a", k))
        .collect();
    match operation.as_str() {
        "reference" => {
            // benches/router.rs's reference: a std HashMap hit, Arc clone.
            let mut map: HashMap<(String, String, String), Arc<String>> = HashMap::new();
            for i in 0..64 {
                let key = (
                    "llama".to_owned(),
                    format!("tenant-{i}"),
                    inputs::PWW.to_owned(),
                );
                map.insert(key, Arc::new(format!("definition {i}")));
            }
            let probe = (
                "llama".to_owned(),
                "tenant-a".to_owned(),
                inputs::PWW.to_owned(),
            );
            map.insert(probe.clone(), Arc::new("definition".to_owned()));
            for _ in 0..n {
                black_box(map.get(black_box(&probe)).cloned());
            }
        }
        "resolve-hit" => {
            let router = Router::new(table());
            let method = Some(inputs::PWW.as_bytes());
            router
                .resolve("llama", Some("tenant-a"), method)
                .expect("compiles");
            for _ in 0..n {
                let r = router.resolve(black_box("llama"), Some("tenant-a"), method);
                black_box(r.map(|r| r.source).ok());
            }
        }
        "route-pww" => {
            let router = Router::new(table());
            let clusters = inputs::clusters();
            for i in 0..n {
                let r = &requests[i % requests.len()];
                black_box(router.route(r, &clusters, &mut rng, &mut scratch).ok());
            }
        }
        "route-pww-sessions" => {
            // route-pww with `last_cluster_affinity` on in the base the
            // expression builds on; returning, stale and new sessions.
            let router = Router::new(inputs::sessions_table());
            let clusters = inputs::clusters();
            let requests = inputs::session_requests(&requests, &clusters);
            for i in 0..n {
                let r = &requests[i % requests.len()];
                black_box(router.route(r, &clusters, &mut rng, &mut scratch).ok());
            }
        }
        "route-pww-returning" => {
            // route-pww-sessions with every request a returning session.
            let router = Router::new(inputs::sessions_table());
            let clusters = inputs::clusters();
            let requests = inputs::returning_requests(&requests, &clusters);
            for i in 0..n {
                let r = &requests[i % requests.len()];
                black_box(router.route(r, &clusters, &mut rng, &mut scratch).ok());
            }
        }
        "route-pww-primary" | "route-pww-returning-primary" => {
            // The requests that go to their primary at once, with the flag
            // off, or returning to that primary with the flag on: the same
            // decision path, so the difference is the classification and
            // the reorder alone.
            let clusters = inputs::clusters();
            let off = Router::new(table());
            let (plain, returning) = inputs::primary_requests(&off, &requests, &clusters);
            let (router, requests) = if operation == "route-pww-primary" {
                (off, plain)
            } else {
                (Router::new(inputs::sessions_table()), returning)
            };
            for i in 0..n {
                let r = &requests[i % requests.len()];
                black_box(router.route(r, &clusters, &mut rng, &mut scratch).ok());
            }
        }
        "route-view" => {
            let router = Router::new(table());
            let (view, _) = inputs::view(3);
            for i in 0..n {
                let r = &requests[i % requests.len()];
                black_box(
                    router
                        .route(r, view.snapshots(), &mut rng, &mut scratch)
                        .ok(),
                );
            }
        }
        "route-shared-view" => {
            // What the async driver does per attempt over a shared view:
            // the health check (`maintain`), a decision under the read
            // lock, a reservation, then its release.
            let router = Router::new(table());
            let (view, _) = inputs::view(3);
            let shared = routex::router::SharedView::new(view);
            for i in 0..n {
                let r = &requests[i % requests.len()];
                shared.maintain();
                let chosen = {
                    let read = shared.read();
                    match router.route(r, read.snapshots(), &mut rng, &mut scratch) {
                        Ok(routex::balancer::Decision::Selected(c)) => Some(c.index),
                        _ => None,
                    }
                };
                if let Some(c) = chosen {
                    black_box(shared.reserve(c, 0, 0, 100));
                }
            }
        }
        "stats-report" => {
            let (mut view, reports) = inputs::view(3);
            for i in 0..n {
                let c = i % reports.len();
                black_box(view.report_at(black_box(c), 0, &reports[c]).ok());
            }
        }
        "new-key-below-cap" | "new-key-past-cap" => {
            let (capacity, prefill) = if operation == "new-key-past-cap" {
                (16_384, 20_000)
            } else {
                (1 << 24, 0)
            };
            let options = RouterOptions::default().with_cache_capacity(capacity);
            let router: Router = Router::with_options(table(), options);
            let clusters: Vec<_> = inputs::clusters().into_iter().take(4).collect();
            let mut key = String::new();
            for i in 0..prefill + n {
                key.clear();
                write!(key, "tenant-{i}").expect("a String takes any write");
                let r = RouteRequest::new(Request {
                    model: "llama",
                    routing_key: Some(&key),
                    input_tokens: Some(100),
                    ..Request::default()
                })
                .with_method("pulsar;seed=x");
                black_box(router.route(&r, &clusters, &mut rng, &mut scratch).is_ok());
            }
        }
        threads if threads.starts_with("threads-") => {
            // The throughput cases: N decisions split over T threads on one
            // router, each thread with its own affinity keys, on one shared
            // target (same) or one target per thread (own). The process's
            // CPU time for N decisions, compared between T = 1 and 2, shows
            // what contention costs even on a loaded machine.
            let (shared, t) = match threads.strip_prefix("threads-same-") {
                Some(t) => (true, t),
                None => (false, threads.trim_start_matches("threads-own-")),
            };
            let Ok(t) = t.parse::<usize>() else {
                eprintln!("{threads}: T must be a number");
                std::process::exit(2);
            };
            let router = Router::new(table());
            let clusters = inputs::clusters();
            std::thread::scope(|s| {
                for thread in 0..t {
                    let (router, clusters) = (&router, &clusters);
                    s.spawn(move || {
                        let tenant = if shared {
                            "tenant-a".to_owned()
                        } else {
                            format!("tenant-{thread}")
                        };
                        let keys = inputs::affinity_keys(&format!("thread-{thread}"));
                        let requests: Vec<_> =
                            keys.iter().map(|k| inputs::request(&tenant, k)).collect();
                        let mut rng = ChaCha8Rng::seed_from_u64(thread as u64);
                        let mut scratch = Scratch::default();
                        for i in 0..n / t {
                            let r = &requests[i % requests.len()];
                            black_box(router.route(r, clusters, &mut rng, &mut scratch).ok());
                        }
                    });
                }
            });
        }
        other => {
            eprintln!("unknown operation {other}: {OPERATIONS}");
            std::process::exit(2);
        }
    }
}
