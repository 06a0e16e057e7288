//! Proves the "no allocation per decision after warm-up" invariant: a
//! counting global allocator, every algorithm warmed on a fixed key set,
//! then zero allocations over many decisions on the same keys.

// A counting global allocator implements `GlobalAlloc`, an unsafe trait.
#![allow(unsafe_code)]

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use routex::balancer::{Balancer, ClusterSnapshot, Request, Scratch};
use routex::ir::{
    Admission, Algorithm, BucketSettings, Comparator, Policy, PowerOfNSettings, PulsarSettings,
    PulsarWaitAndWidenSettings, RendezvousWeight, Settings, Target, WaitAndWidenSettings,
    IR_VERSION,
};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::time::Duration;

struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

fn count() {
    let _ = ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
}

// SAFETY: defers to the system allocator; only counts calls.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations() -> u64 {
    ALLOCATIONS.with(Cell::get)
}

fn bucket() -> BucketSettings {
    BucketSettings {
        n: 2,
        max_queued: 1,
        ttft_bucket_size_ms: 20,
        next_bucket_unlock_factor: 0.25,
        max_queue_time_floor_ms: Some(50),
        max_queue_time_ceil_ms: Some(400),
        ignore_queue_time: false,
        ignore_input_processing_time: false,
    }
}

fn pww() -> PulsarWaitAndWidenSettings {
    PulsarWaitAndWidenSettings {
        seed: "s".into(),
        consider_kv_free_tokens: true,
        rendezvous_weight: RendezvousWeight::MaxInputTps,
        cache_affinity_backend_selection_count: 2,
        cache_affinity_input_tokens_scale: 0.5,
        cache_affinity_wait_ms: 100,
        band_widen_interval_ms: 50,
        band_widen_interval_is_default: false,
        fallback_max_queued: 0,
        last_cluster_affinity: false,
        no_queue_slo_shortcut: false,
        bucket: bucket(),
    }
}

fn policies() -> Vec<(&'static str, Balancer)> {
    let policy = |algorithm, settings| Policy {
        version: IR_VERSION,
        stargate: Target::Sessions,
        algorithm,
        admission: Admission::default(),
        settings,
    };
    vec![
        (
            "round-robin",
            Balancer::new(&policy(Algorithm::RoundRobin, Settings::RoundRobin {})),
        ),
        (
            "random",
            Balancer::new(&policy(Algorithm::Random, Settings::Random {})),
        ),
        (
            "power-of-n",
            Balancer::new(&policy(
                Algorithm::PowerOfN,
                Settings::PowerOfN(PowerOfNSettings {
                    sample_count: 3,
                    comparator: Comparator::Ttft,
                }),
            )),
        ),
        (
            "wait-and-widen",
            Balancer::new(&policy(
                Algorithm::WaitAndWiden,
                Settings::WaitAndWiden(WaitAndWidenSettings {
                    seed: "s".into(),
                    comparator: Comparator::Ttft,
                    cache_affinity_virtual_nodes: 150,
                    cache_affinity_backend_selection_count: Some(2),
                    cache_affinity_input_tokens_scale: 0.5,
                    cache_affinity_wait_ms: 100,
                    last_cluster_affinity: false,
                    bucket: bucket(),
                }),
            )),
        ),
        (
            "pulsar",
            Balancer::new(&policy(
                Algorithm::Pulsar,
                Settings::Pulsar(PulsarSettings {
                    seed: "s".into(),
                    consider_kv_free_tokens: true,
                    rendezvous_weight: RendezvousWeight::MaxInputTps,
                }),
            )),
        ),
        (
            "pulsar-wait-and-widen",
            Balancer::new(&policy(
                Algorithm::PulsarWaitAndWiden,
                Settings::PulsarWaitAndWiden(pww()),
            )),
        ),
        ("legacy-band-walk", Balancer::legacy_band_walk(&pww(), 50)),
    ]
}

/// 20 clusters with varied load: some full, some slow, some short of KV.
fn clusters() -> Vec<ClusterSnapshot> {
    (0..20)
        .map(|i| ClusterSnapshot {
            id: format!("cluster-{i}"),
            rtt_ms: 5.0 + (i * 37 % 200) as f64,
            last_mean_input_tps: 1000.0 + i as f64,
            max_input_tps: Some(2000.0),
            queue_size: i % 3,
            queued_input_size: (i % 4) * 500,
            num_running_queries: i % 6,
            max_engine_concurrency: 4,
            queue_time_estimate_ms_by_priority: if i % 5 == 0 {
                vec![(0, 30 * i)]
            } else {
                vec![]
            },
            kv_cache_capacity_tokens: 10_000,
            kv_cache_used_tokens: 0,
            kv_cache_free_tokens: if i % 7 == 0 { 10 } else { 10_000 },
            total_query_input_size: 0,
        })
        .collect()
}

#[test]
fn decisions_do_not_allocate_after_warm_up() {
    let keys: Vec<String> = (0..40).map(|i| format!("prefix-{i}")).collect();
    assert_no_allocations_after_warm_up(&keys);
}

/// Keys over 256 bytes are never cached (3.6.6, 3.7.5): every decision
/// takes the uncached path (ring walk, direct score scan), which must not
/// allocate either.
#[test]
fn uncached_long_keys_do_not_allocate_per_decision() {
    let keys: Vec<String> = (0..8).map(|i| format!("{i:0>300}")).collect();
    assert!(keys.iter().all(|k| k.len() > 256));
    assert_no_allocations_after_warm_up(&keys);
}

fn assert_no_allocations_after_warm_up(keys: &[String]) {
    // The counter sees this thread's allocations.
    let probe = allocations();
    std::hint::black_box(vec![1u8; 16]);
    assert_eq!(allocations(), probe + 1);

    let clusters = clusters();
    let excluded = ["cluster-3", "cluster-11"];
    let elapsed = [0, 40, 99, 100, 130, 170, 260, 600];
    let mut scratch = Scratch::default();
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    for (name, balancer) in policies() {
        let mut run = |rounds: usize, rng: &mut ChaCha8Rng| {
            for round in 0..rounds {
                for (i, key) in keys.iter().enumerate() {
                    let request = Request {
                        model: "model-a",
                        routing_key: Some("rk"),
                        cache_affinity_key: Some(key),
                        input_tokens: Some(200),
                        priority: 0,
                        request_slo_ms: Some(1000),
                        elapsed: Duration::from_millis(elapsed[(i + round) % elapsed.len()]),
                        excluded: if i % 3 == 0 { &excluded } else { &[] },
                        ..Request::default()
                    };
                    std::hint::black_box(balancer.decide(&request, &clusters, rng, &mut scratch));
                }
            }
        };
        run(20, &mut rng);
        let before = allocations();
        run(50, &mut rng);
        let after = allocations();
        assert_eq!(
            after - before,
            0,
            "{name} allocated {} times",
            after - before
        );
    }
}
