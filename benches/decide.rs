//! Decision latency of every algorithm at 20, 100 and 1000 clusters with
//! warmed caches, beside a reference: a minimal weighted rendezvous pick
//! over 10 workers, what a lean router does per request.
//!
//! `band-walk-poll` is the simulator's costliest case: the legacy band walk
//! re-polled against a full fleet (every band Unavailable), through
//! `decide` and through `decide_named` (the candidate list named, as the
//! simulator's views do).
//!
//! `decide-sessions` is wait-and-widen and pulsar-wait-and-widen under the
//! `sessions` target with `last_cluster_affinity` off, on with returning,
//! stale and new sessions mixed, and on with every session returning.
//!
//! Run: cargo bench --bench decide -- --warm-up-time 1 --measurement-time 3

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use routex::balancer::{Balancer, ClusterSnapshot, Membership, Request, Scratch};
use routex::ir::{
    Admission, Algorithm, BucketSettings, Comparator, Policy, PowerOfNSettings, PulsarSettings,
    PulsarWaitAndWidenSettings, RendezvousWeight, Settings, Target, WaitAndWidenSettings,
    IR_VERSION,
};
use std::time::Duration;
use xxhash_rust::xxh3::xxh3_64;

const SIZES: [usize; 3] = [20, 100, 1000];
const KEYS: usize = 64;

fn bucket() -> BucketSettings {
    BucketSettings {
        n: 2,
        max_queued: 4,
        ttft_bucket_size_ms: 20,
        next_bucket_unlock_factor: 0.25,
        max_queue_time_floor_ms: Some(2000),
        max_queue_time_ceil_ms: Some(4000),
        ignore_queue_time: false,
        ignore_input_processing_time: false,
    }
}

fn pww() -> PulsarWaitAndWidenSettings {
    PulsarWaitAndWidenSettings {
        seed: "bench".into(),
        consider_kv_free_tokens: true,
        rendezvous_weight: RendezvousWeight::MaxInputTps,
        cache_affinity_backend_selection_count: 1,
        cache_affinity_input_tokens_scale: 1.0,
        cache_affinity_wait_ms: 300,
        band_widen_interval_ms: 300,
        band_widen_interval_is_default: false,
        fallback_max_queued: 0,
        last_cluster_affinity: false,
        no_queue_slo_shortcut: true,
        bucket: bucket(),
    }
}

fn policies() -> Vec<(&'static str, Balancer)> {
    let p = |algorithm, settings| {
        Balancer::new(&Policy {
            version: IR_VERSION,
            stargate: Target::Widening,
            algorithm,
            admission: Admission::default(),
            settings,
        })
    };
    vec![
        (
            "round-robin",
            p(Algorithm::RoundRobin, Settings::RoundRobin {}),
        ),
        ("random", p(Algorithm::Random, Settings::Random {})),
        (
            "power-of-n",
            p(
                Algorithm::PowerOfN,
                Settings::PowerOfN(PowerOfNSettings {
                    sample_count: 2,
                    comparator: Comparator::Ttft,
                }),
            ),
        ),
        (
            "wait-and-widen",
            p(
                Algorithm::WaitAndWiden,
                Settings::WaitAndWiden(WaitAndWidenSettings {
                    seed: "bench".into(),
                    comparator: Comparator::Ttft,
                    cache_affinity_virtual_nodes: 150,
                    cache_affinity_backend_selection_count: Some(2),
                    cache_affinity_input_tokens_scale: 0.5,
                    cache_affinity_wait_ms: 300,
                    last_cluster_affinity: false,
                    bucket: bucket(),
                }),
            ),
        ),
        (
            "pulsar",
            p(
                Algorithm::Pulsar,
                Settings::Pulsar(PulsarSettings {
                    seed: "bench".into(),
                    consider_kv_free_tokens: true,
                    rendezvous_weight: RendezvousWeight::MaxInputTps,
                }),
            ),
        ),
        (
            "pulsar-wait-and-widen",
            p(
                Algorithm::PulsarWaitAndWiden,
                Settings::PulsarWaitAndWiden(pww()),
            ),
        ),
        ("legacy-band-walk", Balancer::legacy_band_walk(&pww(), 0)),
    ]
}

/// A loaded fleet: a third of the clusters full, varied RTT and queues.
fn clusters(n: usize) -> Vec<ClusterSnapshot> {
    (0..n)
        .map(|i| ClusterSnapshot {
            id: format!("cluster-{i:04}"),
            rtt_ms: 5.0 + (i * 37 % 120) as f64,
            last_mean_input_tps: 8000.0 + (i % 7) as f64 * 100.0,
            max_input_tps: Some(10_000.0 + (i % 3) as f64 * 1000.0),
            queue_size: (i % 4) as u64,
            queued_input_size: (i % 4) as u64 * 2000,
            num_running_queries: if i % 3 == 0 { 8 } else { (i % 5) as u64 },
            max_engine_concurrency: 8,
            queue_time_estimate_ms_by_priority: Vec::new(),
            kv_cache_capacity_tokens: 1_000_000,
            kv_cache_used_tokens: 0,
            kv_cache_free_tokens: 500_000,
            total_query_input_size: 0,
        })
        .collect()
}

fn bench_algorithms(c: &mut Criterion) {
    let keys: Vec<String> = (0..KEYS).map(|i| format!("prefix-{i}")).collect();
    let mut group = c.benchmark_group("decide");
    for n in SIZES {
        let cs = clusters(n);
        for (name, balancer) in policies() {
            let mut scratch = Scratch::default();
            let mut rng = ChaCha8Rng::seed_from_u64(1);
            let request = |i: usize| Request {
                model: "model-a",
                routing_key: None,
                cache_affinity_key: Some(&keys[i % KEYS]),
                input_tokens: Some(2000),
                priority: 0,
                request_slo_ms: None,
                elapsed: Duration::from_millis((i as u64 * 37) % 900),
                excluded: &[],
                ..Request::default()
            };
            for i in 0..KEYS * 4 {
                balancer.decide(&request(i), &cs, &mut rng, &mut scratch);
            }
            let mut i = 0;
            group.bench_with_input(BenchmarkId::new(name, n), &n, |b, _| {
                b.iter(|| {
                    i += 1;
                    black_box(balancer.decide(&request(i), &cs, &mut rng, &mut scratch))
                })
            });
        }
    }
    group.finish();
}

/// The reference: highest w / -ln(u) over 10 workers, u from XXH3 of the
/// key and worker id.
fn rendezvous_pick(key: &[u8], workers: &[(String, f64)], buf: &mut Vec<u8>) -> usize {
    let mut best = (f64::NEG_INFINITY, 0);
    for (i, (id, weight)) in workers.iter().enumerate() {
        buf.clear();
        buf.extend_from_slice(key);
        buf.extend_from_slice(id.as_bytes());
        let u = (xxh3_64(buf) as f64 + 1.0) / (u64::MAX as f64 + 2.0);
        let score = weight / -u.ln();
        if score > best.0 {
            best = (score, i);
        }
    }
    best.1
}

fn bench_reference(c: &mut Criterion) {
    let workers: Vec<(String, f64)> = (0..10)
        .map(|i| (format!("worker-{i}"), 1.0 + i as f64))
        .collect();
    let keys: Vec<String> = (0..KEYS).map(|i| format!("prefix-{i}")).collect();
    let mut buf = Vec::new();
    let mut i = 0;
    c.bench_function("reference/weighted-rendezvous-10", |b| {
        b.iter(|| {
            i += 1;
            black_box(rendezvous_pick(
                keys[i % KEYS].as_bytes(),
                &workers,
                &mut buf,
            ))
        })
    });
}

fn bench_band_walk_poll(c: &mut Criterion) {
    let keys: Vec<String> = (0..KEYS).map(|i| format!("prefix-{i}")).collect();
    let mut cs = clusters(20);
    for c in &mut cs {
        c.num_running_queries = c.max_engine_concurrency + 4; // at the limit
    }
    // One instance per entry point, each warmed through it (a named
    // instance fills its cache under the name).
    let walk = Balancer::legacy_band_walk(&pww(), 0);
    let named = Balancer::legacy_band_walk(&pww(), 0);
    let ids = Membership::fresh();
    let mut scratch = Scratch::default();
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let request = |i: usize| Request {
        model: "model-a",
        routing_key: None,
        cache_affinity_key: Some(&keys[i % KEYS]),
        input_tokens: Some(2000),
        priority: 0,
        request_slo_ms: None,
        elapsed: Duration::from_millis(1000 + (i as u64 * 37) % 900),
        excluded: &[],
        ..Request::default()
    };
    for i in 0..KEYS * 4 {
        walk.decide(&request(i), &cs, &mut rng, &mut scratch);
        named.decide_named(&request(i), &cs, ids, &mut rng, &mut scratch);
    }
    let mut group = c.benchmark_group("band-walk-poll");
    let mut i = 0;
    group.bench_function("decide/20", |b| {
        b.iter(|| {
            i += 1;
            black_box(walk.decide(&request(i), &cs, &mut rng, &mut scratch))
        })
    });
    group.bench_function("decide_named/20", |b| {
        b.iter(|| {
            i += 1;
            black_box(named.decide_named(&request(i), &cs, ids, &mut rng, &mut scratch))
        })
    });
    group.finish();
}

/// `last_cluster_affinity` (docs/stargate.md 3.10) on the two algorithms
/// that take it, with the `sessions` target's settings: `off` (the flag
/// off, no hints: the baseline of the same run), `mixed` (a third of the
/// requests returning to a cluster spread over the fleet, a third stale, a
/// third new) and `returning` (every request returning).
fn bench_sessions(c: &mut Criterion) {
    let keys: Vec<String> = (0..KEYS).map(|i| format!("prefix-{i}")).collect();
    let mut group = c.benchmark_group("decide-sessions");
    for n in SIZES {
        let cs = clusters(n);
        let returning = |i: usize| Some(cs[(i * 7) % n].id.as_str());
        let mixed: Vec<Option<&str>> = (0..KEYS)
            .map(|i| match i % 3 {
                0 => returning(i),
                1 => Some("gone"),
                _ => None,
            })
            .collect();
        let all_returning: Vec<Option<&str>> = (0..KEYS).map(returning).collect();
        let no_hints: Vec<Option<&str>> = vec![None; KEYS];
        let balancer = |algorithm, flag| {
            let settings = match algorithm {
                Algorithm::WaitAndWiden => Settings::WaitAndWiden(WaitAndWidenSettings {
                    seed: "bench".into(),
                    comparator: Comparator::Ttft,
                    cache_affinity_virtual_nodes: 150,
                    cache_affinity_backend_selection_count: Some(2),
                    cache_affinity_input_tokens_scale: 0.5,
                    cache_affinity_wait_ms: 300,
                    last_cluster_affinity: flag,
                    bucket: bucket(),
                }),
                _ => Settings::PulsarWaitAndWiden(PulsarWaitAndWidenSettings {
                    last_cluster_affinity: flag,
                    no_queue_slo_shortcut: false,
                    ..pww()
                }),
            };
            Balancer::new(&Policy {
                version: IR_VERSION,
                stargate: Target::Sessions,
                algorithm,
                admission: Admission::default(),
                settings,
            })
        };
        for (name, algorithm) in [
            ("wait-and-widen", Algorithm::WaitAndWiden),
            ("pulsar-wait-and-widen", Algorithm::PulsarWaitAndWiden),
        ] {
            for (variant, flag, hints) in [
                ("off", false, &no_hints),
                ("mixed", true, &mixed),
                ("returning", true, &all_returning),
            ] {
                let balancer = balancer(algorithm, flag);
                let mut scratch = Scratch::default();
                let mut rng = ChaCha8Rng::seed_from_u64(1);
                let request = |i: usize| Request {
                    model: "model-a",
                    cache_affinity_key: Some(&keys[i % KEYS]),
                    input_tokens: Some(2000),
                    elapsed: Duration::from_millis((i as u64 * 37) % 900),
                    last_cluster_id: hints[i % KEYS],
                    ..Request::default()
                };
                for i in 0..KEYS * 4 {
                    balancer.decide(&request(i), &cs, &mut rng, &mut scratch);
                }
                let mut i = 0;
                group.bench_with_input(
                    BenchmarkId::new(format!("{name}-{variant}"), n),
                    &n,
                    |b, _| {
                        b.iter(|| {
                            i += 1;
                            black_box(balancer.decide(&request(i), &cs, &mut rng, &mut scratch))
                        })
                    },
                );
            }
        }
    }
    group.finish();
}

criterion_group!(
    benches,
    bench_reference,
    bench_algorithms,
    bench_sessions,
    bench_band_walk_poll
);
criterion_main!(benches);
