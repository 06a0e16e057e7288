//! Shared routers under concurrent load decide exactly as a single thread
//! does with the same per-thread seeds: the cache, the instances and the
//! balancers' own caches never change a result. Round-robin is left out
//! (its shared counter makes the interleaving visible by design).

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use routex::balancer::{ClusterSnapshot, Decision, Request, Scratch};
use routex::router::{Rejection, RouteRequest, Router};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// Per routing key, at most two expressions, so every target's entry holds
/// both after warm-up; plus method-only values and no header.
const METHODS: [(&str, Option<&str>); 8] = [
    ("k0", Some("pulsar-wait-and-widen;seed=v1;cache_affinity_wait_ms=20;max_queue_time_floor_ms=50;max_queue_time_ceil_ms=400")),
    ("k0", Some("wait-and-widen;seed=w;cache_affinity_backend_selection_count=2;cache_affinity_wait_ms=10")),
    ("k1", Some("power-of-n;sample_count=3;comparator=queue-time")),
    ("k1", Some("pulsar;seed=p;consider_kv_free_tokens=true")),
    ("k2", Some("pulsar-wait-and-widen")),
    ("k2", Some("random")),
    ("k2", None),
    ("k3", Some("wait-and-widen;max_input_work_seconds=0.4")),
];

fn cluster_sets() -> Vec<Vec<ClusterSnapshot>> {
    (0..4u64)
        .map(|set| {
            (0..12u64)
                .map(|i| ClusterSnapshot {
                    id: format!("c{i:02}"),
                    rtt_ms: 3.0 + ((i * 7 + set) % 11) as f64,
                    last_mean_input_tps: if (i + set) % 9 == 0 {
                        0.0
                    } else {
                        5000.0 + 250.0 * i as f64
                    },
                    max_input_tps: (i % 5 != 4).then_some(9000.0 - 100.0 * i as f64),
                    queue_size: (i + set) % 4,
                    queued_input_size: 1500 * ((i + set) % 5),
                    num_running_queries: 20 + (i * 3 + set) % 9,
                    max_engine_concurrency: 25,
                    queue_time_estimate_ms_by_priority: if i % 3 == 0 {
                        vec![(0, 40 * set), (2, 90)]
                    } else {
                        vec![]
                    },
                    kv_cache_capacity_tokens: 100_000,
                    kv_cache_used_tokens: 10_000 * ((i + set) % 10),
                    kv_cache_free_tokens: 100_000 - 10_000 * ((i + set) % 10),
                    total_query_input_size: 0,
                })
                .collect()
        })
        .collect()
}

type Outcome = Result<Decision, Rejection>;

fn workload(
    router: &Router,
    clusters: &[Vec<ClusterSnapshot>],
    thread: u64,
    decisions: usize,
) -> Vec<Outcome> {
    let mut rng = ChaCha8Rng::seed_from_u64(thread);
    let mut scratch = Scratch::default();
    let affinity_keys = ["conv-1", "conv-2", "conv-3", "conv-4", "conv-5"];
    let excluded_sets: [&[&str]; 3] = [&[], &["c00"], &["c03", "c07"]];
    (0..decisions)
        .map(|i| {
            let (key, method) = METHODS[(i + thread as usize) % METHODS.len()];
            let request = RouteRequest {
                request: Request {
                    model: "m",
                    routing_key: Some(key),
                    cache_affinity_key: Some(affinity_keys[i % affinity_keys.len()]),
                    input_tokens: Some(500 + (i as u64 % 7) * 900),
                    priority: (i % 3) as u32,
                    request_slo_ms: (i % 4 == 0).then_some(1000),
                    elapsed: Duration::from_millis((i as u64 * 37) % 700),
                    excluded: excluded_sets[i % excluded_sets.len()],
                    ..Request::default()
                },
                routing_method: method.map(str::as_bytes),
            };
            router.route(
                &request,
                &clusters[i % clusters.len()],
                &mut rng,
                &mut scratch,
            )
        })
        .collect()
}

fn check(threads: u64, decisions: usize) {
    let clusters = cluster_sets();
    let table = || routex::check::permissive_table();
    let single = Router::new(table());
    let expected: Vec<Vec<Outcome>> = (0..threads)
        .map(|t| workload(&single, &clusters, t, decisions))
        .collect();
    let shared = Router::new(table());
    let actual: Vec<Vec<Outcome>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (shared, clusters) = (&shared, &clusters);
                s.spawn(move || workload(shared, clusters, t, decisions))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for (t, (a, e)) in actual.iter().zip(&expected).enumerate() {
        assert!(a == e, "thread {t} diverged from the single-threaded run");
    }
    // The workload exercises every kind of answer.
    let all = || expected.iter().flatten();
    assert!(all().any(|o| matches!(o, Ok(Decision::Selected(_)))));
    assert!(all().any(|o| matches!(o, Ok(Decision::Wait(_)))));
    assert!(all().any(|o| o.is_err()));
    // After warm-up every expression is a hit: one build per value with
    // parameters (k0: 2, k1: 2, k3: 1).
    let m = shared.metrics();
    let builds: u64 = m
        .expressions
        .iter()
        .filter(|(_, o, _)| o.as_str() != "hit")
        .map(|(_, _, n)| n)
        .sum();
    assert_eq!(builds, 5);
}

/// The specified size: 8 threads x 100 000 decisions (about 7 s in a debug
/// build on 2 cores).
#[test]
fn shared_routers_decide_as_a_single_thread_does() {
    check(8, 100_000);
}

/// Writers interleaved with routing: while 4 threads route, another resets
/// and removes their targets and runs maintenance (each of which waits for
/// the decisions in flight). Decisions still equal the single-threaded run.
#[test]
fn decisions_are_unchanged_while_targets_are_reset_and_removed() {
    let (threads, decisions) = (4, 2_000);
    let clusters = cluster_sets();
    let single = Router::new(routex::check::permissive_table());
    let expected: Vec<Vec<Outcome>> = (0..threads)
        .map(|t| workload(&single, &clusters, t, decisions))
        .collect();
    let shared = Router::new(routex::check::permissive_table());
    let running = AtomicUsize::new(threads as usize);
    let mut rounds = 0u64;
    let actual: Vec<Vec<Outcome>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (shared, clusters, running) = (&shared, &clusters, &running);
                s.spawn(move || {
                    let outcomes = workload(shared, clusters, t, decisions);
                    running.fetch_sub(1, Ordering::Relaxed);
                    outcomes
                })
            })
            .collect();
        while running.load(Ordering::Relaxed) > 0 {
            for key in ["k0", "k1", "k2", "k3"] {
                shared.reset_target("m", Some(key));
                if rounds % 4 == 0 {
                    shared.remove_target("m", Some(key));
                }
            }
            shared.maintenance();
            rounds += 1;
            std::thread::yield_now();
        }
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for (t, (a, e)) in actual.iter().zip(&expected).enumerate() {
        assert!(a == e, "thread {t} diverged from the single-threaded run");
    }
    assert!(
        rounds > 0,
        "the writer never ran alongside the routing threads"
    );
}
