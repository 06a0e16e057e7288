//! Per-target state is bounded (docs/embedding.md, bounds): 1 000 000
//! distinct routing keys through `Router::route` keep the heap within the
//! documented bound, measured by a counting global allocator (live bytes),
//! and past the cap the heap no longer grows with the number of keys; one
//! balancer instance's ranking cache, filled with affinity keys, stays
//! within its documented size; and a target's state outside the ranking
//! caches (its slot, keys, cached expression, compiled definition and
//! instance, a session counter block) stays within its own bound. The tests share one live-bytes counter, so
//! they take turns (`SERIAL`).

// A counting global allocator implements `GlobalAlloc`, an unsafe trait.
#![allow(unsafe_code)]

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use routex::balancer::{ClusterSnapshot, Request, Scratch};
use routex::router::{RouteRequest, Router, DEFAULT_CACHE_CAPACITY};
use std::alloc::{GlobalAlloc, Layout, System};
use std::fmt::Write;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

/// One test at a time measures the heap.
static SERIAL: Mutex<()> = Mutex::new(());

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator; the counter is an atomic.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        // SAFETY: same contract as ours.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: same contract as ours.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(new_size, Ordering::Relaxed);
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: same contract as ours.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The documented bound per target for a keyed target with one cached
/// expression and one pulsar instance that ranked one affinity key over 4
/// clusters (docs/embedding.md, bounds).
const BYTES_PER_TARGET: usize = 5 * 512;

/// The documented bound on a target's state outside the ranking caches
/// (docs/embedding.md, bounds).
const BYTES_OUTSIDE_RANKING_CACHES: usize = 3 * 512;

/// A pulsar request of `routing_key` (a target each) and
/// `affinity_key` (a ranking each), 100 input tokens, for model `llama`.
fn pulsar_request<'a>(routing_key: &'a str, affinity_key: &'a str) -> RouteRequest<'a> {
    RouteRequest::new(Request {
        model: "llama",
        routing_key: Some(routing_key),
        cache_affinity_key: Some(affinity_key),
        input_tokens: Some(100),
        ..Request::default()
    })
    .with_method("pulsar;seed=x")
}

// A slow guard (a million keys, about 90 s in a debug build on 2 cores):
// kept out of the README's test command and run by its own step of
// .ci/run (`-- --ignored`).
#[test]
#[ignore = "slow guard: .ci/run runs it in its own step"]
fn a_million_routing_keys_stay_within_the_documented_memory() {
    let _serial = SERIAL.lock().unwrap_or_else(PoisonError::into_inner);
    let clusters: Vec<_> = (0..4)
        .map(|i| ClusterSnapshot {
            id: format!("cluster-{i}"),
            last_mean_input_tps: 7000.0,
            max_input_tps: Some(7000.0 + f64::from(i)),
            ..ClusterSnapshot::default()
        })
        .collect();
    let router = Router::new(routex::check::permissive_table());
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let mut scratch = Scratch::default();
    let mut key = String::new();
    let base = LIVE.load(Ordering::Relaxed);
    let mut route = |n: usize| {
        key.clear();
        write!(key, "tenant-{n}").unwrap();
        let request = pulsar_request(&key, "conversation");
        router
            .route(&request, &clusters, &mut rng, &mut scratch)
            .expect("routes");
    };
    let cap = DEFAULT_CACHE_CAPACITY;
    for n in 0..2 * cap {
        route(n);
    }
    let at_cap = LIVE.load(Ordering::Relaxed) - base;
    for n in 2 * cap..1_000_000 {
        route(n);
    }
    let at_million = LIVE.load(Ordering::Relaxed) - base;
    assert_eq!(router.target_count(), cap);
    let bound = cap * BYTES_PER_TARGET;
    println!(
        "live heap: {at_cap} B at {} keys, {at_million} B at 1M ({} B per target); bound {bound} B",
        2 * cap,
        at_million / cap
    );
    assert!(
        at_million <= bound,
        "{at_million} B over the documented {bound} B"
    );
    assert!(
        at_million <= at_cap + at_cap / 20,
        "grew from {at_cap} B to {at_million} B past the cap"
    );
}

/// The documented size of one pulsar instance's ranking cache, full (4 096
/// rankings) with its probation list full too, over 20 clusters, for
/// affinity keys of about 20 bytes (docs/embedding.md, bounds).
const RANKING_CACHE_BYTES: usize = 2 * 1024 * 1024;

#[test]
fn a_full_ranking_cache_stays_within_the_documented_memory() {
    let _serial = SERIAL.lock().unwrap_or_else(PoisonError::into_inner);
    let clusters: Vec<_> = (0..20)
        .map(|i| ClusterSnapshot {
            id: format!("cluster-{i:02}"),
            last_mean_input_tps: 7000.0,
            max_input_tps: Some(7000.0 + f64::from(i)),
            ..ClusterSnapshot::default()
        })
        .collect();
    let router = Router::new(routex::check::permissive_table());
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let mut scratch = Scratch::default();
    let mut key = String::new();
    let mut route = |n: usize| {
        key.clear();
        write!(key, "conversation-{n:07}").unwrap(); // 20 bytes
        let request = pulsar_request("tenant", &key);
        router
            .route(&request, &clusters, &mut rng, &mut scratch)
            .expect("routes");
    };
    route(0); // the target, its definition and instance
    let base = LIVE.load(Ordering::Relaxed);
    // 4 096 keys fill the cache; 4 096 more fill the probation list.
    for n in 1..=8192 {
        route(n);
    }
    let full = LIVE.load(Ordering::Relaxed) - base;
    // Further keys replace entries: the size stays.
    for n in 8193..=30_000 {
        route(n);
    }
    let later = LIVE.load(Ordering::Relaxed) - base;
    println!(
        "ranking cache: {full} B full ({} B per cached key), {later} B after 30 000 keys",
        full / 4096
    );
    assert!(
        full <= RANKING_CACHE_BYTES,
        "{full} B over {RANKING_CACHE_BYTES} B"
    );
    assert!(later <= full + full / 20, "grew from {full} B to {later} B");
}

/// Four clusters with rates, for the per-target measurements.
fn four_clusters() -> Vec<ClusterSnapshot> {
    (0..4)
        .map(|i| ClusterSnapshot {
            id: format!("cluster-{i}"),
            last_mean_input_tps: 7000.0,
            max_input_tps: Some(7000.0 + f64::from(i)),
            max_engine_concurrency: 4,
            ..ClusterSnapshot::default()
        })
        .collect()
}

/// One kind of target, measured over twice the cap of distinct routing
/// keys: `model` with `method` (or its configured definition), an
/// affinity key and a last-cluster hint when given.
struct Case<'a> {
    table: &'a routex::ir::RouteTable,
    model: &'a str,
    method: Option<&'a str>,
    affinity_key: Option<&'a str>,
    hint: Option<&'a str>,
}

/// Live heap bytes per target once a default router holds `cap` targets
/// of `case` (2 x cap keys routed, so every slot was reused once).
fn bytes_per_target(case: &Case<'_>) -> usize {
    let clusters = four_clusters();
    let base = LIVE.load(Ordering::Relaxed);
    let router = Router::new(case.table.clone());
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let mut scratch = Scratch::default();
    let mut key = String::new();
    let cap = DEFAULT_CACHE_CAPACITY;
    for n in 0..2 * cap {
        key.clear();
        write!(key, "tenant-{n}").unwrap();
        let mut request = RouteRequest::new(Request {
            model: case.model,
            routing_key: Some(&key),
            cache_affinity_key: case.affinity_key,
            input_tokens: Some(100),
            last_cluster_id: case.hint,
            ..Request::default()
        });
        if let Some(method) = case.method {
            request = request.with_method(method);
        }
        router
            .route(&request, &clusters, &mut rng, &mut scratch)
            .expect("routes");
    }
    assert_eq!(router.target_count(), cap);
    (LIVE.load(Ordering::Relaxed) - base) / cap
}

// Five routers filled past the cap (about 50 s in a debug build on a
// loaded 2-core host): a slow guard, with the million keys above.
#[test]
#[ignore = "slow guard: .ci/run runs it in its own step"]
fn a_targets_state_outside_the_ranking_caches_stays_within_its_bound() {
    let _serial = SERIAL.lock().unwrap_or_else(PoisonError::into_inner);
    let permissive = routex::check::permissive_table();
    let json = r#"{"models": {
        "sessions": {"algorithm": "pulsar-wait-and-widen", "seed": "s",
            "cache_affinity_wait_ms": 300, "last_cluster_affinity": true},
        "plain": {"algorithm": "pulsar-wait-and-widen", "seed": "s",
            "cache_affinity_wait_ms": 300}}}"#;
    let (table, report) = routex::config::check_lb_config("lb-config.json", json);
    assert!(!report.has_errors(), "{report:?}");
    let configured = table.unwrap();
    let expression = |method, affinity_key| Case {
        table: &permissive,
        model: "llama",
        method: Some(method),
        affinity_key,
        hint: None,
    };
    // A keyed target with a cached expression, its compiled definition
    // and its balancer instance, of an algorithm without a ranking cache:
    // every per-target structure but the cache (a pulsar instance is the
    // same size: the instance's kinds share one enum).
    let outside = bytes_per_target(&expression("power-of-n;sample_count=3", None));
    // The same target with pulsar, whose ranking cache then holds one
    // ranking (a keyless request's too). The caches of every instance live
    // in one process-wide pool (src/sync.rs) whose tables shrink as
    // instances go: each run pays for the pool's table entries.
    let pulsar = expression("pulsar;seed=x", Some("conversation"));
    let first = bytes_per_target(&pulsar);
    let cached = bytes_per_target(&pulsar);
    // A configured pulsar-wait-and-widen target with and without
    // last_cluster_affinity, one returning session each: the difference
    // is the instance's session counter block.
    let session = |model| Case {
        table: &configured,
        model,
        method: None,
        affinity_key: Some("conversation"),
        hint: Some("cluster-1"),
    };
    let with_sessions = bytes_per_target(&session("sessions"));
    let without_sessions = bytes_per_target(&session("plain"));
    println!(
        "per target: {outside} B outside the ranking caches; pulsar with one cached \
         ranking: {cached} B ({} B of cache), {first} B the first time ({} B more); \
         configured pulsar-wait-and-widen with one session: \
         {with_sessions} B with last_cluster_affinity, {without_sessions} B without",
        cached.saturating_sub(outside),
        first.saturating_sub(cached)
    );
    assert!(
        outside <= BYTES_OUTSIDE_RANKING_CACHES,
        "{outside} B over {BYTES_OUTSIDE_RANKING_CACHES} B"
    );
    // The session counts (56 bytes) and the ranking cache's id index (18
    // bytes over 4 clusters: 16 of slots, 2 saying the ids are distinct).
    let counter_block = with_sessions.saturating_sub(without_sessions);
    assert!(
        counter_block <= 80,
        "session counters and id index: {counter_block} B"
    );
    // Its ranking cache holds one ranking, and its share of the pool's
    // table: the bound of a target with a cache holding one key.
    assert!(
        with_sessions <= BYTES_PER_TARGET,
        "{with_sessions} B with its ranking cache"
    );
    assert!(first <= BYTES_PER_TARGET, "{first} B");
}

/// The documented budget of every wait-and-widen ring's points in the
/// process (docs/embedding.md, Bounds; src/balancer/ring.rs).
const RING_BYTES_BUDGET: usize = 32 << 20;

// A default router filled past its cap with wait-and-widen targets whose
// rings would take 16 384 x 7 200 bytes without the budget (about 30 s in
// a debug build): a slow guard.
#[test]
#[ignore = "slow guard: .ci/run runs it in its own step"]
fn wait_and_widen_rings_stay_within_the_budget() {
    let _serial = SERIAL.lock().unwrap_or_else(PoisonError::into_inner);
    let json = r#"{"models": {
        "ring": {"algorithm": "wait-and-widen", "seed": "s",
            "cache_affinity_backend_selection_count": 2,
            "cache_affinity_wait_ms": 300}}}"#;
    let (table, report) = routex::config::check_lb_config("lb-config.json", json);
    assert!(!report.has_errors(), "{report:?}");
    let table = table.unwrap();
    let per_target = bytes_per_target(&Case {
        table: &table,
        model: "ring",
        method: None,
        affinity_key: Some("conversation"),
        hint: None,
    });
    let total = per_target * DEFAULT_CACHE_CAPACITY;
    let bound = DEFAULT_CACHE_CAPACITY * BYTES_PER_TARGET + RING_BYTES_BUDGET;
    println!(
        "wait-and-widen with a ring over 4 clusters: {per_target} B per target, \
         {total} B for {DEFAULT_CACHE_CAPACITY} targets; bound {bound} B"
    );
    assert!(total <= bound, "{total} B over {bound} B");
}

/// Once a router's instances go, the process-wide pool of ranking caches
/// gives back its table room (src/sync.rs): at most 4 entries per live
/// instance and a small minimum per shard, not the peak's.
#[test]
fn the_ranking_cache_pool_shrinks_when_instances_go() {
    let _serial = SERIAL.lock().unwrap_or_else(PoisonError::into_inner);
    let clusters = four_clusters();
    let table = routex::check::permissive_table();
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let mut scratch = Scratch::default();
    let mut key = String::new();
    // One route first, in a router of its own: the pool's 64 locks (64
    // KiB, once per process) and the scratch space are not in the figure.
    {
        let warm = Router::new(table.clone());
        let request = pulsar_request("warm", "conversation");
        warm.route(&request, &clusters, &mut rng, &mut scratch)
            .expect("routes");
    }
    key.reserve(32);
    let base = LIVE.load(Ordering::Relaxed);
    let options = routex::router::RouterOptions::default().with_cache_capacity(4096);
    let router: Router = Router::with_options(table, options);
    for n in 0..4096 {
        key.clear();
        write!(key, "tenant-{n}").unwrap();
        let request = pulsar_request(&key, "conversation");
        router
            .route(&request, &clusters, &mut rng, &mut scratch)
            .expect("routes");
    }
    let full = LIVE.load(Ordering::Relaxed) - base;
    drop(router);
    let left = LIVE.load(Ordering::Relaxed).saturating_sub(base);
    println!("4 096 pulsar targets: {full} B live, {left} B left after the router went");
    assert!(left <= 16 * 1024, "{left} B left of {full} B");
}
