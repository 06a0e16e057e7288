//! Differential check of wait-and-widen without affinity (3.6.3, 3.6.7 B)
//! against a spec-literal model written from reference-behaviour.md alone:
//! with n covering every candidate the decision is deterministic up to
//! comparator ties, so the core must pick one of the model's best
//! candidates, or wait as long, or be unavailable when the model is.

use super::{policy, ww};
use proptest::prelude::*;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use routex::balancer::{Balancer, ClusterSnapshot, Decision, Request, Scratch};
use routex::ir::{Settings, WaitAndWidenSettings};
use std::time::Duration;

#[derive(Clone, Debug)]
struct Case {
    clusters: Vec<ClusterSnapshot>,
    settings: WaitAndWidenSettings,
    tokens: u64,
    elapsed_ms: u64,
    request_slo_ms: Option<u64>,
    excluded: Vec<String>,
}

enum Model {
    Best(Vec<usize>),
    Wait(f64),
    Unavailable,
}

/// 3.1 queue estimate in ms (no priority maps in these cases).
fn queue_ms(c: &ClusterSnapshot) -> f64 {
    let free = c.max_engine_concurrency > 0 && c.num_running_queries < c.max_engine_concurrency;
    if free || c.queued_input_size == 0 {
        return 0.0;
    }
    if c.last_mean_input_tps > 0.0 {
        (c.queued_input_size as f64 / c.last_mean_input_tps * 1000.0).ceil()
    } else {
        f64::INFINITY
    }
}

fn prefill_ms(c: &ClusterSnapshot, t: u64) -> f64 {
    match (t, c.last_mean_input_tps > 0.0) {
        (0, _) => 0.0,
        (_, false) => f64::INFINITY,
        (t, true) => t as f64 / c.last_mean_input_tps * 1000.0,
    }
}

fn model(case: &Case) -> Model {
    let s = &case.settings.bucket;
    let limit = match (s.max_queue_time_floor_ms, s.max_queue_time_ceil_ms) {
        (Some(f), Some(c)) => {
            let phi = match case.request_slo_ms {
                Some(slo) if slo > 0 => (case.elapsed_ms as f64 / slo as f64).clamp(0.0, 1.0),
                _ => 1.0,
            };
            Some(f as f64 + (c as f64 - f as f64) * phi)
        }
        _ => None,
    };
    // (position, bucket ttft, comparator ttft, capacity)
    let mut rows: Vec<(usize, f64, f64, bool)> = Vec::new();
    for (i, c) in case.clusters.iter().enumerate() {
        if case.excluded.contains(&c.id) {
            continue;
        }
        let q = queue_ms(c);
        if limit.is_some_and(|l| q > l) {
            continue;
        }
        let p = prefill_ms(c, case.tokens);
        let bucket = c.rtt_ms
            + if s.ignore_queue_time { 0.0 } else { q }
            + if s.ignore_input_processing_time {
                0.0
            } else {
                p
            };
        let cap = c.max_engine_concurrency == 0
            || c.num_running_queries < c.max_engine_concurrency.saturating_add(s.max_queued);
        rows.push((i, bucket, c.rtt_ms + q + p, cap));
    }
    let finite: Vec<f64> = rows.iter().map(|r| r.1).filter(|t| t.is_finite()).collect();
    if finite.is_empty() {
        return Model::Unavailable;
    }
    let size = s.ttft_bucket_size_ms as f64;
    let lo = finite.iter().cloned().fold(f64::INFINITY, f64::min);
    let hi = finite.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let mut unlocked = Vec::new();
    let mut wait = None;
    if finite.len() == rows.len() && hi - lo <= size {
        unlocked = rows.clone();
    } else {
        rows.sort_by(|a, b| {
            a.1.total_cmp(&b.1)
                .then(case.clusters[a.0].id.cmp(&case.clusters[b.0].id))
        });
        let mut slept = case.elapsed_ms as f64;
        let mut start = rows[0].1;
        for (j, r) in rows.iter().enumerate() {
            if !r.1.is_finite() {
                break;
            }
            let gap = r.1 - start;
            if gap > size {
                let need = gap * s.next_bucket_unlock_factor;
                if slept < need {
                    if rows[j..].iter().any(|r| r.1.is_finite() && r.3) {
                        wait = Some(need - slept);
                    }
                    break;
                }
                slept -= need;
                start = r.1;
            }
            unlocked.push(*r);
        }
    }
    let pool: Vec<_> = unlocked.into_iter().filter(|r| r.3).collect();
    if pool.is_empty() {
        return wait.map_or(Model::Unavailable, Model::Wait);
    }
    let best = pool.iter().map(|r| r.2).fold(f64::INFINITY, f64::min);
    Model::Best(pool.iter().filter(|r| r.2 == best).map(|r| r.0).collect())
}

fn case_strategy() -> impl Strategy<Value = Case> {
    let cluster = (
        0u32..300,
        prop_oneof![Just(0.0), Just(250.0), Just(1000.0), Just(4000.0)],
        prop_oneof![Just(0u64), 0u64..5000],
        (0u64..6, 0u64..5),
    );
    (
        proptest::collection::vec(cluster, 1..8),
        (
            prop_oneof![Just(0u64), Just(20), Just(50)],
            prop_oneof![Just(0.25), Just(0.5), Just(1.0)],
            0u64..3,
            any::<(bool, bool)>(),
            proptest::option::of((0u64..400, 0u64..400)),
        ),
        (0u64..400, 0u64..1000, proptest::option::of(0u64..2000)),
        proptest::collection::vec(0usize..8, 0..3),
    )
        .prop_map(
            |(raw, (size, factor, q, (iq, ip), slo), (tokens, t, rslo), ex)| {
                let clusters: Vec<ClusterSnapshot> = raw
                    .into_iter()
                    .enumerate()
                    .map(|(i, (rtt, tps, queued, (running, max)))| ClusterSnapshot {
                        rtt_ms: f64::from(rtt),
                        last_mean_input_tps: tps,
                        queued_input_size: queued,
                        num_running_queries: running,
                        max_engine_concurrency: max,
                        ..ClusterSnapshot::new(format!("c{i}"))
                    })
                    .collect();
                let mut settings = ww();
                settings.bucket.n = 64;
                settings.bucket.ttft_bucket_size_ms = size;
                settings.bucket.next_bucket_unlock_factor = factor;
                settings.bucket.max_queued = q;
                settings.bucket.ignore_queue_time = iq;
                settings.bucket.ignore_input_processing_time = ip;
                settings.bucket.max_queue_time_floor_ms = slo.map(|s| s.0);
                settings.bucket.max_queue_time_ceil_ms = slo.map(|s| s.1);
                Case {
                    excluded: ex.iter().map(|i| format!("c{i}")).collect(),
                    clusters,
                    settings,
                    tokens,
                    elapsed_ms: t,
                    request_slo_ms: rslo,
                }
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn wait_and_widen_matches_a_spec_literal_model(case in case_strategy(), seed in any::<u64>()) {
        let b = Balancer::new(&policy(Settings::WaitAndWiden(case.settings.clone())));
        let excluded: Vec<&str> = case.excluded.iter().map(String::as_str).collect();
        let request = Request {
            model: "m",
            input_tokens: Some(case.tokens),
            request_slo_ms: case.request_slo_ms,
            elapsed: Duration::from_millis(case.elapsed_ms),
            excluded: &excluded,
            ..Request::default()
        };
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let got = b.decide(&request, &case.clusters, &mut rng, &mut Scratch::default());
        match (model(&case), got) {
            (Model::Best(best), Decision::Selected(c)) => {
                prop_assert!(best.contains(&c.index), "model {best:?}, got {c:?}");
                prop_assert_eq!(c.rank_depth, 1);
            }
            (Model::Wait(ms), Decision::Wait(d)) => {
                let got_ms = d.as_secs_f64() * 1000.0;
                prop_assert!((got_ms - ms).abs() < 1e-5, "model {ms}, got {got_ms}");
            }
            (Model::Unavailable, Decision::Unavailable) => {}
            (Model::Best(best), other) => prop_assert!(false, "model {best:?}, got {other:?}"),
            (Model::Wait(ms), other) => prop_assert!(false, "model Wait({ms}), got {other:?}"),
            (Model::Unavailable, other) => prop_assert!(false, "model Unavailable, got {other:?}"),
        }
    }
}
