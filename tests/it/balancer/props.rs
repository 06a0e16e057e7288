//! Property tests over random snapshots, requests and policies, including
//! NaN/inf/0 statistics, empty candidate lists and huge values.

use super::{policy, pulsar, pww, ww};
use proptest::prelude::*;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use routex::balancer::{
    open_prefix, pulsar_weight, Balancer, ClusterSnapshot, Decision, Request, Scratch,
};
use routex::ir::{
    BucketSettings, Comparator, Policy, PowerOfNSettings, PulsarSettings,
    PulsarWaitAndWidenSettings, RendezvousWeight, Settings, WaitAndWidenSettings,
};
use std::time::Duration;

fn stat_f64() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(0.0),
        Just(f64::NAN),
        Just(f64::INFINITY),
        Just(-1.0),
        Just(1e300),
        0.5f64..5000.0,
    ]
}

fn stat_u64() -> impl Strategy<Value = u64> {
    prop_oneof![Just(0u64), Just(u64::MAX), 0u64..10, 0u64..100_000]
}

fn cluster_strategy() -> impl Strategy<Value = ClusterSnapshot> {
    (
        (stat_f64(), stat_f64(), proptest::option::of(stat_f64())),
        (stat_u64(), stat_u64(), 0u64..12, 0u64..8),
        proptest::collection::vec((0u32..4, stat_u64()), 0..3),
        (stat_u64(), stat_u64()),
    )
        .prop_map(
            |((rtt, tps, max_tps), (qs, qi, running, mec), mut map, (cap, free))| {
                map.sort_by_key(|e| e.0);
                map.dedup_by_key(|e| e.0);
                ClusterSnapshot {
                    id: String::new(),
                    rtt_ms: rtt,
                    last_mean_input_tps: tps,
                    max_input_tps: max_tps,
                    queue_size: qs,
                    queued_input_size: qi,
                    num_running_queries: running,
                    max_engine_concurrency: mec,
                    queue_time_estimate_ms_by_priority: map,
                    kv_cache_capacity_tokens: cap,
                    kv_cache_used_tokens: 0,
                    kv_cache_free_tokens: free,
                    total_query_input_size: 0,
                }
            },
        )
}

fn clusters_strategy() -> impl Strategy<Value = Vec<ClusterSnapshot>> {
    proptest::collection::vec(cluster_strategy(), 0..10).prop_map(|mut cs| {
        for (i, c) in cs.iter_mut().enumerate() {
            c.id = format!("c{i}");
        }
        cs
    })
}

fn bucket_strategy() -> impl Strategy<Value = BucketSettings> {
    (
        (0u64..4, prop_oneof![Just(0u64), Just(u64::MAX), 0u64..3]),
        (
            prop_oneof![Just(0u64), 1u64..200],
            prop_oneof![
                Just(0.25),
                Just(f64::NAN),
                Just(-1.0),
                Just(1e300),
                0.0f64..2.0
            ],
        ),
        proptest::option::of((0u64..500, 0u64..500)),
        (any::<bool>(), any::<bool>()),
    )
        .prop_map(|((n, q), (size, factor), slo, (iq, ip))| BucketSettings {
            n: n.max(1),
            max_queued: q,
            ttft_bucket_size_ms: size,
            next_bucket_unlock_factor: factor,
            max_queue_time_floor_ms: slo.map(|s| s.0),
            max_queue_time_ceil_ms: slo.map(|s| s.1),
            ignore_queue_time: iq,
            ignore_input_processing_time: ip,
        })
}

fn comparator() -> impl Strategy<Value = Comparator> {
    proptest::sample::select(Comparator::ALL.to_vec())
}

fn pww_strategy() -> impl Strategy<Value = PulsarWaitAndWidenSettings> {
    (
        bucket_strategy(),
        (any::<bool>(), any::<bool>(), 1u64..5, 0.0f64..=1.0),
        (0u64..400, 0u64..400, 0u64..3),
    )
        .prop_map(
            |(b, (kv, mean, k, s), (x, interval, f))| PulsarWaitAndWidenSettings {
                consider_kv_free_tokens: kv,
                rendezvous_weight: if mean {
                    RendezvousWeight::LastMeanInputTps
                } else {
                    RendezvousWeight::MaxInputTps
                },
                cache_affinity_backend_selection_count: k,
                cache_affinity_input_tokens_scale: s,
                cache_affinity_wait_ms: x,
                band_widen_interval_ms: interval,
                fallback_max_queued: f,
                bucket: b,
                ..pww()
            },
        )
}

fn policy_strategy() -> impl Strategy<Value = Policy> {
    prop_oneof![
        Just(policy(Settings::RoundRobin {})),
        Just(policy(Settings::Random {})),
        (1u64..65, comparator()).prop_map(|(sample_count, comparator)| policy(Settings::PowerOfN(
            PowerOfNSettings {
                sample_count,
                comparator
            }
        ))),
        (
            bucket_strategy(),
            comparator(),
            proptest::option::of(0u64..5),
            (0.0f64..=1.0, 0u64..400, 1u64..20)
        )
            .prop_map(|(b, c, k, (s, x, v))| policy(Settings::WaitAndWiden(
                WaitAndWidenSettings {
                    comparator: c,
                    cache_affinity_virtual_nodes: v,
                    cache_affinity_backend_selection_count: k,
                    cache_affinity_input_tokens_scale: s,
                    cache_affinity_wait_ms: x,
                    bucket: b,
                    ..ww()
                }
            ))),
        any::<bool>().prop_map(|kv| policy(Settings::Pulsar(PulsarSettings {
            consider_kv_free_tokens: kv,
            ..pulsar()
        }))),
        pww_strategy().prop_map(|s| policy(Settings::PulsarWaitAndWiden(s))),
    ]
}

/// Request inputs that own their text; `request()` borrows them.
#[derive(Clone, Debug)]
struct Req {
    key: Option<String>,
    tokens: Option<u64>,
    priority: u32,
    slo: Option<u64>,
    elapsed_ms: u64,
    excluded: Vec<String>,
}

fn req_strategy() -> impl Strategy<Value = Req> {
    (
        proptest::option::of("[a-c]{0,3}"),
        proptest::option::of(prop_oneof![Just(0u64), Just(u64::MAX), 1u64..5000]),
        0u32..5,
        proptest::option::of(0u64..2000),
        0u64..3000,
        proptest::collection::vec(0usize..12, 0..4),
    )
        .prop_map(|(key, tokens, priority, slo, elapsed_ms, ex)| Req {
            key,
            tokens,
            priority,
            slo,
            elapsed_ms,
            excluded: ex.into_iter().map(|i| format!("c{i}")).collect(),
        })
}

fn run(p: &Policy, r: &Req, cs: &[ClusterSnapshot], seed: u64) -> Decision {
    let excluded: Vec<&str> = r.excluded.iter().map(String::as_str).collect();
    let request = Request {
        model: "m",
        routing_key: None,
        cache_affinity_key: r.key.as_deref(),
        input_tokens: r.tokens,
        priority: r.priority,
        request_slo_ms: r.slo,
        elapsed: Duration::from_millis(r.elapsed_ms),
        excluded: &excluded,
        ..Request::default()
    };
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    Balancer::new(p).decide(&request, cs, &mut rng, &mut Scratch::default())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn decisions_are_well_formed_and_reproducible(
        p in policy_strategy(),
        r in req_strategy(),
        cs in clusters_strategy(),
        seed in any::<u64>(),
    ) {
        let d = run(&p, &r, &cs, seed);
        match d {
            Decision::Selected(c) => {
                prop_assert!(c.index < cs.len());
                prop_assert!(!r.excluded.contains(&cs[c.index].id));
                prop_assert!(c.rank_depth >= 1);
            }
            Decision::Wait(w) => {
                prop_assert!(w > Duration::ZERO);
                prop_assert!(matches!(
                    p.settings,
                    Settings::WaitAndWiden(_) | Settings::PulsarWaitAndWiden(_)
                ));
            }
            Decision::Unavailable => {}
        }
        prop_assert_eq!(d, run(&p, &r, &cs, seed));
    }

    #[test]
    fn pulsar_rankings_are_independent_of_candidate_order(
        r in req_strategy(),
        cs in clusters_strategy(),
        rotate in 0usize..10,
    ) {
        let p = policy(Settings::Pulsar(pulsar()));
        let mut moved = cs.clone();
        if !moved.is_empty() {
            let by = rotate % moved.len();
            moved.rotate_left(by);
        }
        let pick = |d: Decision, cs: &[ClusterSnapshot]| match d {
            Decision::Selected(c) => Some((cs[c.index].id.clone(), c.rank_depth)),
            _ => None,
        };
        prop_assert_eq!(pick(run(&p, &r, &cs, 1), &cs), pick(run(&p, &r, &moved, 1), &moved));
    }

    #[test]
    fn pww_never_selects_outside_the_open_prefix(
        s in pww_strategy(),
        r in req_strategy(),
        cs in clusters_strategy(),
    ) {
        let p = policy(Settings::PulsarWaitAndWiden(s.clone()));
        if let Decision::Selected(c) = run(&p, &r, &cs, 3) {
            let len = cs.iter().filter(|c| pulsar_weight(c, s.rendezvous_weight).is_some()).count();
            let k = s.cache_affinity_backend_selection_count.max(1) as usize;
            let t = Duration::from_millis(r.elapsed_ms);
            let x = Duration::from_millis(s.cache_affinity_wait_ms);
            let limit = if t < x {
                k.min(len)
            } else {
                open_prefix(k, len, Duration::from_millis(s.band_widen_interval_ms), t - x).0
            };
            prop_assert!(c.rank_depth as usize <= limit.max(1), "{c:?} limit {limit}");
        }
    }

    #[test]
    fn ring_primary_is_independent_of_candidate_order(
        n in 1usize..12,
        key in "[a-z0-9]{1,12}",
        rotate in 0usize..12,
    ) {
        let s = WaitAndWidenSettings {
            cache_affinity_backend_selection_count: Some(1),
            cache_affinity_wait_ms: 60_000,
            ..ww()
        };
        let p = policy(Settings::WaitAndWiden(s));
        let cs = super::clusters(n);
        let mut moved = cs.clone();
        moved.rotate_left(rotate % n);
        let r = Req {
            key: Some(key),
            tokens: Some(100),
            priority: 0,
            slo: None,
            elapsed_ms: 0,
            excluded: Vec::new(),
        };
        let id = |d: Decision, cs: &[ClusterSnapshot]| match d {
            Decision::Selected(c) => Some((cs[c.index].id.clone(), c.rank_depth)),
            _ => None,
        };
        let a = id(run(&p, &r, &cs, 1), &cs);
        prop_assert!(a.is_some());
        prop_assert_eq!(a, id(run(&p, &r, &moved, 2), &moved));
    }
}
