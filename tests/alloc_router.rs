//! The request path does not allocate per decision: after warm-up, routing
//! through a configured definition, a method-only override and a cached
//! expression makes no heap allocation on this thread; neither do the
//! candidate view's reports, reservations and releases, nor routing over it. A counting global
//! allocator needs its own test binary.

// A counting global allocator implements `GlobalAlloc`, an unsafe trait.
#![allow(unsafe_code)]

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use routex::balancer::{ClusterSnapshot, Decision, Request, Scratch};
use routex::router::{BackendStats, CacheOutcome, CandidateView, Exclusions, RouteRequest, Router};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

#[path = "support/router_inputs.rs"]
mod router_inputs;

struct Counting;

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: forwards to the system allocator; the counters are plain
// thread-local cells that never allocate.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTING.with(Cell::get) {
            ALLOCATIONS.with(|n| n.set(n.get() + 1));
        }
        // SAFETY: same contract as ours.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as ours.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if COUNTING.with(Cell::get) {
            ALLOCATIONS.with(|n| n.set(n.get() + 1));
        }
        // SAFETY: same contract as ours.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn allocations_during(f: impl FnOnce()) -> usize {
    ALLOCATIONS.with(|n| n.set(0));
    COUNTING.with(|c| c.set(true));
    f();
    COUNTING.with(|c| c.set(false));
    ALLOCATIONS.with(Cell::get)
}

fn clusters() -> Vec<ClusterSnapshot> {
    (0..20)
        .map(|i| ClusterSnapshot {
            id: format!("cluster-{i:02}"),
            rtt_ms: 5.0 + i as f64,
            last_mean_input_tps: 5000.0 + 100.0 * i as f64,
            max_input_tps: Some(8000.0),
            queue_size: i % 3,
            queued_input_size: 1000 * (i % 4),
            num_running_queries: i % 7,
            max_engine_concurrency: 8,
            queue_time_estimate_ms_by_priority: Vec::new(),
            kv_cache_capacity_tokens: 400_000,
            kv_cache_used_tokens: 1000,
            kv_cache_free_tokens: 399_000,
            total_query_input_size: 0,
        })
        .collect()
}

#[test]
fn routing_does_not_allocate_after_warm_up() {
    let router = Router::new(routex::check::permissive_table());
    let clusters = clusters();
    let excluded = ["cluster-03"];
    let methods: [Option<&str>; 6] = [
        None,
        Some("round-robin"),
        Some("pulsar"),
        Some(
            "pulsar-wait-and-widen;seed=v1;max_queue_time_floor_ms=100;max_queue_time_ceil_ms=500",
        ),
        Some("wait-and-widen;seed=w;cache_affinity_backend_selection_count=2"),
        Some("power-of-n;sample_count=3"),
    ];
    let requests: Vec<RouteRequest<'_>> = methods
        .iter()
        .enumerate()
        .map(|(i, method)| RouteRequest {
            request: Request {
                model: "m",
                routing_key: Some(["tenant-a", "tenant-b"][i % 2]),
                cache_affinity_key: Some("prefix-1"),
                input_tokens: Some(2000),
                excluded: if i % 3 == 0 { &excluded } else { &[] },
                ..Request::default()
            },
            routing_method: method.map(str::as_bytes),
        })
        .collect();
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let mut scratch = Scratch::default();
    let mut selected = 0usize;
    let mut route_all = |rounds: usize| {
        for _ in 0..rounds {
            for request in &requests {
                let decision = router.route(request, &clusters, &mut rng, &mut scratch);
                assert!(decision.is_ok(), "{decision:?}");
                selected += usize::from(matches!(decision, Ok(Decision::Selected(_))));
            }
        }
    };
    route_all(50);
    let allocations = allocations_during(|| route_all(200));
    assert_eq!(
        allocations, 0,
        "allocations in 1200 decisions after warm-up"
    );
    assert!(
        selected > 1000,
        "only {selected} of 1500 decisions selected"
    );
    // The three expressions were served from the cache: tenant-a builds
    // one, tenant-b builds one and rebuilds for its second; the rest hit.
    let metrics = router.metrics();
    let count = |wanted: CacheOutcome| -> u64 {
        metrics
            .expressions
            .iter()
            .filter(|(_, outcome, _)| *outcome == wanted)
            .map(|(_, _, n)| n)
            .sum()
    };
    assert_eq!(count(CacheOutcome::Build), 2);
    assert_eq!(count(CacheOutcome::Rebuild), 1);
    assert_eq!(count(CacheOutcome::Hit), 3 * 250 - 3);
}

/// Routing over the candidate view with pending reservations, and the view's
/// own updates, allocate nothing once its buffers have grown.
#[test]
fn the_candidate_view_does_not_allocate_after_warm_up() {
    let router = Router::new(routex::check::permissive_table());
    let mut view = CandidateView::new();
    let mut reports: Vec<BackendStats> = clusters()
        .iter()
        .map(|c| router_inputs::report_of(c, vec![(0, 20), (4, 90)]))
        .collect();
    for (i, c) in clusters().iter().enumerate() {
        view.add_backend(&c.id, "b");
        view.set_rtt(&c.id, "b", c.rtt_ms).unwrap();
        view.report_at(i, 0, &reports[i]).unwrap();
    }
    let request = RouteRequest::new(Request {
        model: "m",
        cache_affinity_key: Some("prefix-1"),
        input_tokens: Some(2000),
        ..Request::default()
    })
    .with_method(
        "pulsar-wait-and-widen;seed=v1;max_queue_time_floor_ms=100;max_queue_time_ceil_ms=500",
    );
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let mut scratch = Scratch::default();
    let mut round = |view: &mut CandidateView, n: u64| {
        let mut held = [None; 4];
        for k in 0..4u64 {
            let decision = router.route(&request, view.snapshots(), &mut rng, &mut scratch);
            if let Ok(Decision::Selected(choice)) = decision {
                held[k as usize] = view.reserve(choice.index, 0, (k % 3) as u32, 500 + k);
            }
        }
        if let Some(id) = held[0] {
            view.release(id);
        }
        let b = (n % 20) as usize;
        reports[b].queue_size = n % 5;
        view.report_at(b, 0, &reports[b]).unwrap();
    };
    for n in 0..200 {
        round(&mut view, n);
    }
    let allocations = allocations_during(|| {
        for n in 200..400 {
            round(&mut view, n);
        }
    });
    assert_eq!(
        allocations, 0,
        "allocations in 800 decisions and their updates"
    );
    let pending: usize = (0..20).map(|c| view.pending(c)).sum();
    assert!(pending > 0, "the decisions ran with reservations pending");
}

/// An embedder's own retry loop (without the async driver): clusters
/// excluded across attempts in an `Exclusions`, each attempt's
/// `Request::excluded` borrowed from it, with no allocation per attempt.
#[test]
fn exclusions_across_attempts_do_not_allocate_per_attempt() {
    let router = Router::new(routex::check::permissive_table());
    let clusters = clusters();
    let caller = ["cluster-19"];
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let mut scratch = Scratch::default();
    // One request's attempts: each selected cluster "fails" and is
    // excluded, until 8 are; then the next request starts afresh.
    let mut request_attempts = |excluded: &mut Exclusions| {
        excluded.clear();
        let mut chosen = [0usize; 8];
        for slot in &mut chosen {
            let decision = excluded.with_slice(&caller, |ids| {
                let request = RouteRequest::new(Request {
                    model: "m",
                    cache_affinity_key: Some("prefix-1"),
                    input_tokens: Some(2000),
                    excluded: ids,
                    ..Request::default()
                })
                .with_method("pulsar");
                router.route(&request, &clusters, &mut rng, &mut scratch)
            });
            let Ok(Decision::Selected(choice)) = decision else {
                panic!("{decision:?}")
            };
            *slot = choice.index;
            // The attempt failed: one `Arc<str>` for the excluded id.
            excluded.insert(clusters[choice.index].id.as_str());
        }
        chosen
    };
    let mut excluded = Exclusions::new();
    let first = request_attempts(&mut excluded);
    let mut distinct = first.to_vec();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(
        distinct.len(),
        8,
        "each attempt avoided the excluded: {first:?}"
    );
    assert!(!first.contains(&19), "the caller's exclusion holds");
    // Warm: the list's buffer has grown; what remains is one Arc<str> per
    // newly excluded cluster (8 per request), none per attempt.
    let allocations = allocations_during(|| {
        for _ in 0..10 {
            assert_eq!(request_attempts(&mut excluded), first);
        }
    });
    assert_eq!(allocations, 10 * 8, "one per excluded id, none per attempt");
}

/// Sessions (docs/stargate.md 3.10): classifying a request and reordering
/// its affinity order allocate nothing, for returning, stale and new
/// sessions on both algorithms that take `last_cluster_affinity`.
#[test]
fn session_classification_and_reorder_do_not_allocate() {
    let json = r#"{"models": {
        "pww": {"algorithm": "pulsar-wait-and-widen", "seed": "s", "last_cluster_affinity": true,
                "cache_affinity_backend_selection_count": 2, "cache_affinity_wait_ms": 50},
        "ww": {"algorithm": "wait-and-widen", "seed": "s", "last_cluster_affinity": true,
               "cache_affinity_backend_selection_count": 2, "cache_affinity_wait_ms": 50}}}"#;
    let (table, report) = routex::config::check_lb_config("lb-config.json", json);
    assert!(!report.has_errors(), "{report:?}");
    let router = Router::new(table.expect("table"));
    let clusters = clusters();
    let hints = [Some("cluster-17"), Some("cluster-02"), Some("gone"), None];
    let requests: Vec<RouteRequest<'_>> = ["pww", "ww"]
        .iter()
        .flat_map(|model| hints.iter().map(move |hint| (*model, *hint)))
        .enumerate()
        .map(|(i, (model, hint))| RouteRequest {
            request: Request {
                model,
                cache_affinity_key: Some(["prefix-1", "prefix-2", "prefix-3"][i % 3]),
                input_tokens: Some(2000),
                last_cluster_id: hint,
                elapsed: std::time::Duration::from_millis(60),
                ..Request::default()
            },
            routing_method: None,
        })
        .collect();
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let mut scratch = Scratch::default();
    let mut route_all = |rounds: usize| {
        for _ in 0..rounds {
            for request in &requests {
                let decision = router.route(request, &clusters, &mut rng, &mut scratch);
                assert!(
                    matches!(decision, Ok(Decision::Selected(_))),
                    "{decision:?}"
                );
            }
        }
    };
    // The hints classify as intended: the counted decisions include
    // returning sessions (whose order is reordered), not only new ones.
    let resolved = router.resolve("pww", None, None).expect("resolves");
    let states: Vec<_> = requests[..4]
        .iter()
        .map(|r| resolved.instance().classify(&r.request, &clusters))
        .collect();
    use routex::balancer::SessionState::{New, Returning, Stale};
    assert_eq!(
        states,
        [Some(Returning), Some(Returning), Some(Stale), Some(New)]
    );
    route_all(20);
    let allocations = allocations_during(|| route_all(200));
    assert_eq!(
        allocations, 0,
        "allocations in 1600 session decisions after warm-up"
    );
    // The classification the driver makes once per request is free too.
    let allocations = allocations_during(|| {
        for request in &requests {
            std::hint::black_box(resolved.instance().classify(&request.request, &clusters));
        }
    });
    assert_eq!(allocations, 0);
}
