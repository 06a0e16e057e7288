//! The expression cache (docs/stargate.md 5.6), one test per bullet
//! of 7.3, named as there.

use super::support::*;
use routex::ir::Algorithm;
use routex::router::{
    CacheOutcome, Resolved, Source, DEFAULT_CACHE_CAPACITY, DEFAULT_IDLE_TIMEOUT,
};
use std::sync::{Arc, Barrier};
use std::time::Duration;

const E1: &[u8] = b"pulsar;seed=a";
const E2: &[u8] = b"pulsar;seed=b";
const E3: &[u8] = b"pulsar;seed=c";

fn resolve(h: &Harness, key: Option<&str>, value: &[u8]) -> Resolved {
    h.router
        .resolve("m", key, Some(value))
        .unwrap_or_else(|r| panic!("{r}"))
}

fn outcome(r: &Resolved) -> CacheOutcome {
    match r.source {
        Source::Expression(o) => o,
        other => panic!("not an expression: {other:?}"),
    }
}

#[test]
fn stargate_bounds_are_the_defaults() {
    assert_eq!(DEFAULT_CACHE_CAPACITY, 16_384);
    assert_eq!(DEFAULT_IDLE_TIMEOUT, Duration::from_secs(15 * 60));
}

#[test]
fn test_resolve_same_bytes_reuses_definition_and_instance() {
    let h = harness();
    let first = resolve(&h, None, E1);
    let second = resolve(&h, None, E1);
    assert_eq!(outcome(&first), CacheOutcome::Build);
    assert_eq!(outcome(&second), CacheOutcome::Hit);
    assert!(Arc::ptr_eq(first.definition(), second.definition()));
    assert!(Arc::ptr_eq(first.instance(), second.instance()));
    assert_eq!(h.compiler.builds(), 1);
    // Byte-exact keys: an equivalent spelling is another entry.
    let respelt = resolve(&h, None, b"PULSAR; seed=a");
    assert_eq!(outcome(&respelt), CacheOutcome::Rebuild);
    assert!(!Arc::ptr_eq(first.definition(), respelt.definition()));
    assert!(!Arc::ptr_eq(first.instance(), respelt.instance()));
}

#[test]
fn test_resolve_keeps_previous_expression_and_forgets_older_ones() {
    let h = harness();
    let e1 = resolve(&h, None, E1);
    let e2 = resolve(&h, None, E2);
    assert_eq!(outcome(&e2), CacheOutcome::Rebuild);
    // E1 is the previous expression: still a hit, same instance.
    let again = resolve(&h, None, E1);
    assert_eq!(outcome(&again), CacheOutcome::Hit);
    assert!(Arc::ptr_eq(again.instance(), e1.instance()));
    // A hit does not reorder: current stays E2, previous E1. E3 becomes
    // current, E2 previous, and E1 is dropped.
    let e3 = resolve(&h, None, E3);
    assert_eq!(outcome(&e3), CacheOutcome::Rebuild);
    let (current, previous) = h.router.cached_definitions("m", None);
    assert!(Arc::ptr_eq(&current.unwrap(), e3.definition()));
    assert!(Arc::ptr_eq(&previous.unwrap(), e2.definition()));
    assert!(!h.router.has_instance("m", None, e1.definition()));
    let back = resolve(&h, None, E1);
    assert_eq!(outcome(&back), CacheOutcome::Rebuild);
    assert!(!Arc::ptr_eq(back.instance(), e1.instance()));
    assert_eq!(h.compiler.builds(), 4);
}

#[test]
fn test_forget_instance_removes_only_the_named_definition() {
    let h = harness();
    let configured = h.router.resolve("m", None, None).unwrap();
    let e1 = resolve(&h, None, E1);
    let e2 = resolve(&h, None, E2);
    assert_eq!(h.router.instance_count("m", None), 3);
    let e3 = resolve(&h, None, E3);
    assert!(!h.router.has_instance("m", None, e1.definition()));
    for kept in [configured.definition(), e2.definition(), e3.definition()] {
        assert!(h.router.has_instance("m", None, kept));
    }
    assert_eq!(h.router.instance_count("m", None), 3);
}

#[test]
fn test_capacity_evictions_forget_instances() {
    let h = harness_with(permissive_table(), 2, DEFAULT_IDLE_TIMEOUT);
    let k1 = resolve(&h, Some("k1"), E1);
    h.clock.advance(Duration::from_secs(1));
    let k2 = resolve(&h, Some("k2"), E1);
    h.clock.advance(Duration::from_secs(1));
    // A hit refreshes k1, so k2 is now the least recently used.
    resolve(&h, Some("k1"), E1);
    h.clock.advance(Duration::from_secs(1));
    let k3 = resolve(&h, Some("k3"), E1);
    assert_eq!(h.router.metrics().entries, 2);
    assert_eq!(h.router.cached_definitions("m", Some("k2")), (None, None));
    assert!(!h.router.has_instance("m", Some("k2"), k2.definition()));
    assert!(h.router.has_instance("m", Some("k1"), k1.definition()));
    assert!(h.router.has_instance("m", Some("k3"), k3.definition()));
    // The evicted target rebuilds as a fresh entry.
    assert_eq!(outcome(&resolve(&h, Some("k2"), E1)), CacheOutcome::Build);
    assert_eq!(h.router.metrics().entries, 2);
}

#[test]
fn test_resolve_targets_have_independent_entries() {
    let h = harness();
    let a = resolve(&h, Some("tenant-a"), E1);
    let b = resolve(&h, Some("tenant-b"), E1);
    let keyless = resolve(&h, None, E1);
    let other_model = h.router.resolve("m2", Some("tenant-a"), Some(E1)).unwrap();
    for r in [&a, &b, &keyless, &other_model] {
        assert_eq!(outcome(r), CacheOutcome::Build);
    }
    assert!(!Arc::ptr_eq(a.definition(), b.definition()));
    assert!(!Arc::ptr_eq(a.instance(), b.instance()));
    assert!(!Arc::ptr_eq(a.instance(), other_model.instance()));
    // Replacing tenant-a's expressions leaves tenant-b's alone.
    resolve(&h, Some("tenant-a"), E2);
    resolve(&h, Some("tenant-a"), E3);
    assert_eq!(
        outcome(&resolve(&h, Some("tenant-b"), E1)),
        CacheOutcome::Hit
    );
    assert_eq!(h.router.metrics().entries, 4);
}

#[test]
fn test_rebuild_racing_instance_creation_does_not_retain_retired_definitions() {
    let h = harness();
    // A request resolves E1 but has not fetched its instance yet...
    let in_flight = h.router.resolve_definition("m", None, Some(E1)).unwrap();
    let retired = in_flight.definition.clone();
    // ...while two newer expressions push E1 out of the cache.
    resolve(&h, None, E2);
    resolve(&h, None, E3);
    let late = h.router.instantiate(in_flight);
    assert!(Arc::ptr_eq(late.definition(), &retired));
    assert!(!h.router.has_instance("m", None, &retired));
    assert_eq!(h.router.instance_count("m", None), 2);
    // It still decides for its own request.
    let mut rng = rand::rng();
    let decision = late.decide(
        &request("m"),
        &[cluster("a")],
        &mut rng,
        &mut routex::balancer::Scratch::default(),
    );
    assert!(decision.is_ok());
}

#[test]
fn test_idle_expiry_forgets_instance_and_rebuilds() {
    let idle = Duration::from_secs(60);
    let h = harness_with(permissive_table(), 16, idle);
    let first = resolve(&h, None, E1);
    h.clock.advance(idle - Duration::from_millis(1));
    assert_eq!(h.router.maintenance(), 0);
    h.clock.advance(Duration::from_millis(1));
    assert_eq!(h.router.maintenance(), 1);
    assert_eq!(h.router.cached_definitions("m", None), (None, None));
    assert!(!h.router.has_instance("m", None, first.definition()));
    let again = resolve(&h, None, E1);
    assert_eq!(outcome(&again), CacheOutcome::Build);
    assert!(!Arc::ptr_eq(again.instance(), first.instance()));
}

#[test]
fn idle_entry_is_not_a_hit_even_before_maintenance_runs() {
    let idle = Duration::from_secs(60);
    let h = harness_with(permissive_table(), 16, idle);
    let first = resolve(&h, None, E1);
    resolve(&h, None, E2);
    h.clock.advance(idle);
    let again = resolve(&h, None, E1);
    assert_eq!(outcome(&again), CacheOutcome::Build);
    assert!(!h.router.has_instance("m", None, first.definition()));
    assert_eq!(h.router.cached_definitions("m", None).1, None);
    assert_eq!(h.router.metrics().entries, 1);
}

#[test]
fn test_metrics_scrape_reports_entries_and_drives_idle_expiry() {
    let idle = Duration::from_secs(60);
    let h = harness_with(permissive_table(), 16, idle);
    resolve(&h, Some("a"), E1);
    resolve(&h, Some("a"), E1);
    resolve(&h, Some("a"), E2);
    resolve(&h, Some("b"), b"random;require_input_tokens=true");
    let m = h.router.metrics();
    assert_eq!(m.entries, 2);
    assert_eq!(m.count(Algorithm::Pulsar, CacheOutcome::Build), 1);
    assert_eq!(m.count(Algorithm::Pulsar, CacheOutcome::Hit), 1);
    assert_eq!(m.count(Algorithm::Pulsar, CacheOutcome::Rebuild), 1);
    assert_eq!(m.count(Algorithm::Random, CacheOutcome::Build), 1);
    let text = m.to_prometheus();
    assert!(text.contains(
        "stargate_routing_expressions_total{algorithm=\"pulsar\",cache=\"rebuild\"} 1\n"
    ));
    assert!(text.contains("stargate_routing_expression_cache_entries 2\n"));
    // Method-only and absent headers are not counted.
    h.router.resolve("m", None, Some(b"pulsar")).unwrap();
    h.router.resolve("m", None, None).unwrap();
    assert_eq!(h.router.metrics().expressions.len(), 4);
    // The scrape itself expires idle entries.
    h.clock.advance(idle);
    assert_eq!(h.router.metrics().entries, 0);
    assert_eq!(h.router.instance_count("m", Some("a")), 0);
}

#[test]
fn test_hit_does_not_wait_for_concurrent_rebuild() {
    let h = harness();
    let cached = resolve(&h, None, E1);
    std::thread::scope(|s| {
        let builder = s.spawn(|| resolve(&h, None, b"pulsar;seed=slow"));
        // The build is now parked inside the compiler, holding the
        // target's build lock.
        h.gate.wait_entered();
        let hit = resolve(&h, None, E1);
        assert_eq!(outcome(&hit), CacheOutcome::Hit);
        assert!(Arc::ptr_eq(hit.instance(), cached.instance()));
        h.gate.release();
        assert_eq!(outcome(&builder.join().unwrap()), CacheOutcome::Rebuild);
    });
}

#[test]
fn test_hits_keep_entry_alive_past_idle_window() {
    let idle = Duration::from_secs(60);
    let h = harness_with(permissive_table(), 16, idle);
    let first = resolve(&h, None, E1);
    for _ in 0..5 {
        h.clock.advance(Duration::from_secs(40));
        assert_eq!(h.router.maintenance(), 0);
        assert_eq!(outcome(&resolve(&h, None, E1)), CacheOutcome::Hit);
    }
    // 200 s after the build, one build in all, same instance.
    assert_eq!(h.compiler.builds(), 1);
    assert!(h.router.has_instance("m", None, first.definition()));
}

#[test]
fn test_failed_build_preserves_cache_contents() {
    let h = harness();
    let e1 = resolve(&h, None, E1);
    let e2 = resolve(&h, None, E2);
    let err = h
        .router
        .resolve("m", None, Some(b"pulsar;bad=1"))
        .err()
        .unwrap();
    assert_eq!(err.code.as_str(), "unknown_parameter");
    let (current, previous) = h.router.cached_definitions("m", None);
    assert!(Arc::ptr_eq(&current.unwrap(), e2.definition()));
    assert!(Arc::ptr_eq(&previous.unwrap(), e1.definition()));
    assert_eq!(outcome(&resolve(&h, None, E1)), CacheOutcome::Hit);
    // Errors are not cached: the same bad value fails again.
    assert!(h.router.resolve("m", None, Some(b"pulsar;bad=1")).is_err());
    let m = h.router.metrics();
    assert_eq!(m.entries, 1);
    assert_eq!(m.count(Algorithm::Pulsar, CacheOutcome::Build), 1);
    assert_eq!(m.count(Algorithm::Pulsar, CacheOutcome::Rebuild), 1);
}

#[test]
fn test_concurrent_resolve_builds_once_and_reuses_instance() {
    let h = harness();
    let threads = 8;
    let barrier = Barrier::new(threads);
    let results: Vec<Resolved> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    barrier.wait();
                    resolve(&h, None, E1)
                })
            })
            .collect();
        handles.into_iter().map(|t| t.join().unwrap()).collect()
    });
    assert_eq!(h.compiler.builds(), 1);
    for r in &results[1..] {
        assert!(Arc::ptr_eq(r.definition(), results[0].definition()));
        assert!(Arc::ptr_eq(r.instance(), results[0].instance()));
    }
    let m = h.router.metrics();
    assert_eq!(m.count(Algorithm::Pulsar, CacheOutcome::Build), 1);
    assert_eq!(m.count(Algorithm::Pulsar, CacheOutcome::Hit), 7);
    assert_eq!(h.router.instance_count("m", None), 1);
}

#[test]
fn removing_a_target_forgets_its_entry_and_instances() {
    let h = harness();
    let e1 = resolve(&h, Some("k"), E1);
    h.router.resolve("m", Some("k"), None).unwrap();
    resolve(&h, Some("other"), E1);
    assert_eq!(h.router.metrics().entries, 2);
    h.router.remove_target("m", Some("k"));
    assert_eq!(h.router.metrics().entries, 1);
    assert_eq!(h.router.instance_count("m", Some("k")), 0);
    assert!(!h.router.has_instance("m", Some("k"), e1.definition()));
    // The next request starts the target afresh.
    assert_eq!(outcome(&resolve(&h, Some("k"), E1)), CacheOutcome::Build);
    assert_eq!(outcome(&resolve(&h, Some("other"), E1)), CacheOutcome::Hit);
    h.router.remove_target("absent", None);
}

/// Hits read `SystemClock::now_coarse`: it must trail the exact clock by
/// no more than a tick plus scheduling slack (generous here: the test
/// machine is shared), and keep advancing.
#[test]
fn system_clock_coarse_reading_tracks_the_exact_clock() {
    use routex::router::{Clock, SystemClock};
    let clock = SystemClock::new();
    std::thread::sleep(std::time::Duration::from_millis(50));
    let coarse = clock.now_coarse();
    let exact = clock.now();
    assert!(
        coarse <= exact,
        "coarse {coarse:?} ahead of exact {exact:?}"
    );
    assert!(
        coarse >= std::time::Duration::from_millis(1),
        "coarse {coarse:?} did not advance"
    );
    assert!(exact - coarse < std::time::Duration::from_secs(1));
}
