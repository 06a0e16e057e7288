//! Differential check of wait-and-widen without affinity (3.6.3, 3.6.7 B)
//! against a spec-literal model written from docs/stargate.md alone:
//! with n covering every candidate the decision is deterministic up to
//! comparator ties, so the core must pick one of the model's best
//! candidates, or wait as long, or be unavailable when the model is.

use super::{policy, ww};
use proptest::prelude::*;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use routex::balancer::{Balancer, ClusterSnapshot, Decision, Request, Scratch};
use routex::ir::{BucketSettings, Comparator, Settings, WaitAndWidenSettings};
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

/// The queue-SLO limit of 3.6.2.
fn limit_ms(s: &BucketSettings, request_slo_ms: Option<u64>, elapsed_ms: u64) -> Option<f64> {
    match (s.max_queue_time_floor_ms, s.max_queue_time_ceil_ms) {
        (Some(f), Some(c)) => {
            let phi = match request_slo_ms {
                Some(slo) if slo > 0 => (elapsed_ms as f64 / slo as f64).clamp(0.0, 1.0),
                _ => 1.0,
            };
            Some(f as f64 + (c as f64 - f as f64) * phi)
        }
        _ => None,
    }
}

/// One run of 3.6.3 over `members`; the best set is by `key` (lower wins).
#[allow(clippy::too_many_arguments)]
fn bucketed(
    case: &Case,
    members: &[usize],
    limit: Option<f64>,
    scale: f64,
    unlock_ms: f64,
    max_queued: u64,
    key: impl Fn(usize, f64) -> (f64, f64),
) -> Model {
    let s = &case.settings.bucket;
    // (position, bucket ttft, comparator key, capacity)
    let mut rows: Vec<(usize, f64, (f64, f64), bool)> = Vec::new();
    for &i in members {
        let c = &case.clusters[i];
        if case.excluded.contains(&c.id) {
            continue;
        }
        let q = queue_ms(c);
        if limit.is_some_and(|l| q > l) {
            continue;
        }
        let p = prefill_ms(c, case.tokens) * scale;
        let p = if p.is_nan() { f64::INFINITY } else { p };
        let bucket = c.rtt_ms
            + if s.ignore_queue_time { 0.0 } else { q }
            + if s.ignore_input_processing_time {
                0.0
            } else {
                p
            };
        let cap = c.max_engine_concurrency == 0
            || c.num_running_queries < c.max_engine_concurrency.saturating_add(max_queued);
        rows.push((i, bucket, key(i, c.rtt_ms + q + p), cap));
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
        let mut slept = unlock_ms;
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
    let best = pool
        .iter()
        .map(|r| r.2)
        .min_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)))
        .unwrap_or((f64::INFINITY, f64::INFINITY));
    Model::Best(pool.iter().filter(|r| r.2 == best).map(|r| r.0).collect())
}

/// wait-and-widen without affinity (3.6.7 B), comparator `ttft`.
fn model(case: &Case) -> Model {
    let all: Vec<usize> = (0..case.clusters.len()).collect();
    let limit = limit_ms(&case.settings.bucket, case.request_slo_ms, case.elapsed_ms);
    bucketed(
        case,
        &all,
        limit,
        1.0,
        case.elapsed_ms as f64,
        case.settings.bucket.max_queued,
        |_, ttft| (ttft, 0.0),
    )
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

/// PWW parameters on top of a case (3.8.2).
#[derive(Clone, Debug)]
struct Pww {
    k: u64,
    x_ms: u64,
    s_ms: u64,
    f: u64,
    scale: f64,
}

/// The outcome of 3.8.3 with selections as ranking positions.
fn pww_model(case: &Case, p: &Pww, ranking: &[usize]) -> Model {
    if ranking.is_empty() {
        return Model::Unavailable;
    }
    let b = &case.settings.bucket;
    let slo = b.max_queue_time_floor_ms.is_some() && b.max_queue_time_ceil_ms.is_some();
    let feasible = |i: &usize| !case.excluded.contains(&case.clusters[*i].id);
    if !slo && feasible(&ranking[0]) {
        return Model::Best(vec![ranking[0]]);
    }
    let limit = limit_ms(b, case.request_slo_ms, case.elapsed_ms);
    let lqt = |i: usize, _ttft: f64| {
        let c = &case.clusters[i];
        let util = c.num_running_queries as f64 / c.max_engine_concurrency as f64;
        (queue_ms(c), util)
    };
    let len = ranking.len() as u64;
    let group: Vec<usize> = ranking[..p.k.min(len) as usize].to_vec();
    let t = case.elapsed_ms;
    let affinity = bucketed(case, &group, limit, p.scale, t as f64, b.max_queued, lqt);
    let affinity_wait = match affinity {
        Model::Best(_) => return affinity,
        Model::Wait(w) => Some(w),
        Model::Unavailable => None,
    };
    if t < p.x_ms {
        let until_x = (p.x_ms - t) as f64;
        return Model::Wait(affinity_wait.map_or(until_x, |w| w.min(until_x)));
    }
    let w = t - p.x_ms;
    // S = 0 opens every band at X.
    let bands = w.checked_div(p.s_ms).map_or(u64::MAX, |b| b + 1);
    let (mut open_end, mut width, mut opened) = (p.k.min(len), 2u64, 0u64);
    while opened < bands && open_end < len {
        open_end = (open_end + width).min(len);
        width *= 2;
        opened += 1;
    }
    let next_band = (open_end < len).then(|| (p.s_ms * bands - w) as f64);
    let open: Vec<usize> = ranking[..open_end as usize].to_vec();
    let open = bucketed(case, &open, limit, 1.0, w as f64, p.f, lqt);
    let open_wait = match open {
        Model::Best(_) => return open,
        Model::Wait(w) => Some(w),
        Model::Unavailable => None,
    };
    [affinity_wait, open_wait, next_band]
        .into_iter()
        .flatten()
        .min_by(f64::total_cmp)
        .map_or(Model::Unavailable, Model::Wait)
}

fn pww_strategy() -> impl Strategy<Value = (Case, Pww)> {
    (
        case_strategy(),
        (1u64..4, 0u64..600, 0u64..400, 0u64..3),
        prop_oneof![Just(0.0), Just(0.5), Just(1.0)],
    )
        .prop_map(|(mut case, (k, x_ms, s_ms, f), scale)| {
            for c in &mut case.clusters {
                c.max_input_tps = Some(1000.0);
                // A known engine limit keeps least queue time a total order.
                c.max_engine_concurrency = c.max_engine_concurrency.max(1);
            }
            let p = Pww {
                k,
                x_ms,
                s_ms,
                f,
                scale,
            };
            (case, p)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn pulsar_wait_and_widen_matches_a_spec_literal_model(
        (case, p) in pww_strategy(),
        seed in any::<u64>(),
    ) {
        let mut s = super::pww();
        s.bucket = case.settings.bucket.clone();
        s.cache_affinity_backend_selection_count = p.k;
        s.cache_affinity_wait_ms = p.x_ms;
        s.band_widen_interval_ms = p.s_ms;
        s.fallback_max_queued = p.f;
        s.cache_affinity_input_tokens_scale = p.scale;
        let b = Balancer::new(&policy(Settings::PulsarWaitAndWiden(s)));
        let excluded: Vec<&str> = case.excluded.iter().map(String::as_str).collect();
        let request = Request {
            model: "m",
            input_tokens: Some(case.tokens),
            request_slo_ms: case.request_slo_ms,
            elapsed: Duration::from_millis(case.elapsed_ms),
            excluded: &excluded,
            ..Request::default()
        };
        let ranking = super::ranking("", &Request { excluded: &[], ..request.clone() }, &case.clusters);
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let got = b.decide(&request, &case.clusters, &mut rng, &mut Scratch::default());
        match (pww_model(&case, &p, &ranking), got) {
            (Model::Best(best), Decision::Selected(c)) => {
                prop_assert!(best.contains(&c.index), "model {best:?}, got {c:?}");
                let rank = ranking.iter().position(|&i| i == c.index).map(|r| r + 1);
                prop_assert_eq!(Some(c.rank_depth as usize), rank);
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

/// `tag(name, value)` of 3.6.6.
fn tag(out: &mut Vec<u8>, name: &str, value: &[u8]) {
    out.extend_from_slice(name.as_bytes());
    out.push(0xFF);
    out.extend_from_slice(&(value.len() as u64).to_le_bytes());
    out.extend_from_slice(value);
}

/// The affinity order of 3.6.6 (seed "", no routing key, model "m").
fn ring_group(clusters: &[ClusterSnapshot], v: u64, key: &str, k: u64) -> Vec<usize> {
    use xxhash_rust::xxh3::xxh3_64;
    let mut prefix = vec![1u8];
    tag(&mut prefix, "seed", b"");
    tag(&mut prefix, "routing_key", b"");
    tag(&mut prefix, "model_id", b"m");
    let mut points = Vec::new();
    for (i, c) in clusters.iter().enumerate() {
        for node in 0..v {
            let mut b = prefix.clone();
            tag(&mut b, "cluster_id", c.id.as_bytes());
            tag(&mut b, "virtual_node", &node.to_le_bytes());
            points.push((xxh3_64(&b), c.id.clone(), i));
        }
    }
    points.sort();
    let mut kb = prefix;
    tag(&mut kb, "cache_affinity_key", key.as_bytes());
    let keypoint = xxh3_64(&kb);
    let start = points.partition_point(|p| p.0 < keypoint);
    let want = (k as usize).min(clusters.len());
    let mut group: Vec<usize> = Vec::new();
    for step in 0..points.len() {
        if group.len() == want {
            break;
        }
        let pos = points[(start + step) % points.len()].2;
        if !group.contains(&pos) {
            group.push(pos);
        }
    }
    group
}

/// wait-and-widen with affinity (3.6.7 A): selections with their depth.
fn ww_affinity_model(case: &Case, group: &[usize]) -> (Model, u32) {
    let s = &case.settings;
    let limit = limit_ms(&s.bucket, case.request_slo_ms, case.elapsed_ms);
    let ttft = |_, t: f64| (t, 0.0);
    let t = case.elapsed_ms;
    let q = s.bucket.max_queued;
    let scale = s.cache_affinity_input_tokens_scale;
    let affinity = bucketed(case, group, limit, scale, t as f64, q, ttft);
    let group_wait = match affinity {
        Model::Best(_) => return (affinity, 1),
        Model::Wait(w) => Some(w),
        Model::Unavailable => None,
    };
    let x = s.cache_affinity_wait_ms;
    if t < x {
        let until_x = (x - t) as f64;
        return (
            Model::Wait(group_wait.map_or(until_x, |w| w.min(until_x))),
            0,
        );
    }
    let all: Vec<usize> = (0..case.clusters.len()).collect();
    let depth = group.len() as u32 + 1;
    match bucketed(case, &all, limit, 1.0, (t - x) as f64, q, ttft) {
        Model::Best(best) => (Model::Best(best), depth),
        Model::Wait(w) => (Model::Wait(group_wait.map_or(w, |g| g.min(w))), 0),
        Model::Unavailable => (group_wait.map_or(Model::Unavailable, Model::Wait), 0),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn wait_and_widen_with_affinity_matches_a_spec_literal_model(
        mut case in case_strategy(),
        (k, x_ms, v) in (1u64..5, 0u64..600, 1u64..6),
        scale in prop_oneof![Just(0.0), Just(0.1), Just(1.0)],
        key in "[a-z]{1,8}",
        seed in any::<u64>(),
    ) {
        case.settings.cache_affinity_backend_selection_count = Some(k);
        case.settings.cache_affinity_wait_ms = x_ms;
        case.settings.cache_affinity_virtual_nodes = v;
        case.settings.cache_affinity_input_tokens_scale = scale;
        let b = Balancer::new(&policy(Settings::WaitAndWiden(case.settings.clone())));
        let excluded: Vec<&str> = case.excluded.iter().map(String::as_str).collect();
        let request = Request {
            model: "m",
            cache_affinity_key: Some(&key),
            input_tokens: Some(case.tokens),
            request_slo_ms: case.request_slo_ms,
            elapsed: Duration::from_millis(case.elapsed_ms),
            excluded: &excluded,
            ..Request::default()
        };
        let group = ring_group(&case.clusters, v, &key, k);
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let got = b.decide(&request, &case.clusters, &mut rng, &mut Scratch::default());
        match (ww_affinity_model(&case, &group), got) {
            ((Model::Best(best), depth), Decision::Selected(c)) => {
                prop_assert!(best.contains(&c.index), "model {best:?}, got {c:?}");
                prop_assert_eq!(c.rank_depth, depth);
            }
            ((Model::Wait(ms), _), Decision::Wait(d)) => {
                let got_ms = d.as_secs_f64() * 1000.0;
                prop_assert!((got_ms - ms).abs() < 1e-5, "model {ms}, got {got_ms}");
            }
            ((Model::Unavailable, _), Decision::Unavailable) => {}
            ((Model::Best(best), _), other) => prop_assert!(false, "model {best:?}, got {other:?}"),
            ((Model::Wait(ms), _), other) => prop_assert!(false, "model Wait({ms}), got {other:?}"),
            ((Model::Unavailable, _), other) => prop_assert!(false, "model Unavailable, got {other:?}"),
        }
    }
}

/// The Pulsar ranking of 3.7.1-3.7.3 computed from the spec alone (seed
/// "", no routing key, model "m"): positions, best first.
fn pulsar_model(clusters: &[ClusterSnapshot], key: Option<&str>) -> Vec<usize> {
    use xxhash_rust::xxh3::xxh3_64;
    let mut scored: Vec<(f64, &str, usize)> = Vec::new();
    for (i, c) in clusters.iter().enumerate() {
        let Some(w) = c.max_input_tps.filter(|w| w.is_finite() && *w > 0.0) else {
            continue;
        };
        let mut b = vec![1u8];
        tag(&mut b, "seed", b"");
        tag(&mut b, "routing_key", b"");
        tag(&mut b, "model_id", b"m");
        tag(&mut b, "cache_affinity_key", key.unwrap_or("").as_bytes());
        tag(&mut b, "cluster_id", c.id.as_bytes());
        let u = (xxh3_64(&b) as f64 + 1.0) / (u64::MAX as f64 + 2.0);
        let e = -u.ln();
        if e.is_finite() && e > 0.0 {
            scored.push((w / e, c.id.as_str(), i));
        }
    }
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
    scored.into_iter().map(|s| s.2).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn pulsar_ranking_matches_a_spec_literal_model(
        weights in proptest::collection::vec(
            proptest::option::of(prop_oneof![
                Just(f64::NAN), Just(-1.0), Just(0.0), Just(f64::INFINITY),
                Just(500.0), 1.0f64..5000.0,
            ]),
            0..10,
        ),
        key in proptest::option::of("[a-z0-9]{0,12}"),
    ) {
        let clusters: Vec<ClusterSnapshot> = weights
            .iter()
            .enumerate()
            .map(|(i, w)| ClusterSnapshot {
                max_input_tps: *w,
                ..ClusterSnapshot::new(format!("inst-{i}"))
            })
            .collect();
        let request = Request {
            model: "m",
            cache_affinity_key: key.as_deref(),
            input_tokens: Some(1),
            ..Request::default()
        };
        prop_assert_eq!(
            super::ranking("", &request, &clusters),
            pulsar_model(&clusters, key.as_deref())
        );
    }
}

/// The legacy band walk of 3.8.5 (no initial wait): selections only.
fn legacy_model(case: &Case, ranking: &[usize]) -> Model {
    if ranking.is_empty() {
        return Model::Unavailable;
    }
    let b = &case.settings.bucket;
    let slo = b.max_queue_time_floor_ms.is_some() && b.max_queue_time_ceil_ms.is_some();
    if !slo && !case.excluded.contains(&case.clusters[ranking[0]].id) {
        return Model::Best(vec![ranking[0]]);
    }
    let limit = limit_ms(b, case.request_slo_ms, case.elapsed_ms);
    let lqt = |i: usize, _ttft: f64| {
        let c = &case.clusters[i];
        let util = c.num_running_queries as f64 / c.max_engine_concurrency as f64;
        (queue_ms(c), util)
    };
    let (mut start, mut width) = (0, 1);
    while start < ranking.len() {
        let end = (start + width).min(ranking.len());
        let band = &ranking[start..end];
        let t = case.elapsed_ms as f64;
        if let Model::Best(best) = bucketed(case, band, limit, 1.0, t, b.max_queued, lqt) {
            return Model::Best(best);
        }
        start = end;
        width *= 2;
    }
    Model::Unavailable
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn legacy_band_walk_matches_a_spec_literal_model(
        (case, _) in pww_strategy(),
        seed in any::<u64>(),
    ) {
        let mut s = super::pww();
        s.bucket = case.settings.bucket.clone();
        let b = Balancer::legacy_band_walk(&s, 0);
        let excluded: Vec<&str> = case.excluded.iter().map(String::as_str).collect();
        let request = Request {
            model: "m",
            input_tokens: Some(case.tokens),
            request_slo_ms: case.request_slo_ms,
            elapsed: Duration::from_millis(case.elapsed_ms),
            excluded: &excluded,
            ..Request::default()
        };
        let ranking = super::ranking("", &Request { excluded: &[], ..request.clone() }, &case.clusters);
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let got = b.decide(&request, &case.clusters, &mut rng, &mut Scratch::default());
        match (legacy_model(&case, &ranking), got) {
            (Model::Best(best), Decision::Selected(c)) => {
                prop_assert!(best.contains(&c.index), "model {best:?}, got {c:?}");
                let rank = ranking.iter().position(|&i| i == c.index).map(|r| r + 1);
                prop_assert_eq!(Some(c.rank_depth as usize), rank);
            }
            (Model::Unavailable, Decision::Unavailable) => {}
            (Model::Best(best), other) => prop_assert!(false, "model {best:?}, got {other:?}"),
            (_, other) => prop_assert!(false, "model Unavailable, got {other:?}"),
        }
    }
}

/// 3.1 queue estimate for priority `p`, with priority maps.
fn queue_ms_at(c: &ClusterSnapshot, p: u32) -> f64 {
    let free = c.max_engine_concurrency > 0 && c.num_running_queries < c.max_engine_concurrency;
    if free {
        return 0.0;
    }
    if !c.queue_time_estimate_ms_by_priority.is_empty() {
        return c
            .queue_time_estimate_ms_by_priority
            .iter()
            .filter(|e| e.0 <= p)
            .max_by_key(|e| e.0)
            .map_or(0.0, |e| e.1 as f64);
    }
    queue_ms(c)
}

/// The standalone comparator scores of 3.2.
fn standalone(comparator: Comparator, c: &ClusterSnapshot, t: u64, p: u32) -> f64 {
    let tps = c.last_mean_input_tps;
    match comparator {
        Comparator::Ttft => c.rtt_ms + queue_ms_at(c, p) + prefill_ms(c, t),
        Comparator::QueueTime => queue_ms_at(c, p),
        Comparator::InputWorkSeconds => match (c.queued_input_size + t, tps > 0.0) {
            (0, _) => 0.0,
            (_, false) => f64::INFINITY,
            (w, true) => w as f64 / tps,
        },
        Comparator::Utilization => {
            c.num_running_queries as f64 / c.max_engine_concurrency.max(1) as f64
        }
        Comparator::NumRequestsQueued => c.queue_size as f64,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn power_of_n_sampling_everyone_takes_a_best_standalone_score(
        (case, _) in pww_strategy(),
        maps in proptest::collection::vec(
            proptest::collection::btree_map(0u32..4, 0u64..300, 0..3), 8),
        sizes in proptest::collection::vec(0u64..4, 8),
        p in 0u32..4,
        which in 0usize..5,
        seed in any::<u64>(),
    ) {
        let comparator = [
            Comparator::Ttft,
            Comparator::QueueTime,
            Comparator::InputWorkSeconds,
            Comparator::Utilization,
            Comparator::NumRequestsQueued,
        ][which];
        let mut clusters = case.clusters.clone();
        for (i, c) in clusters.iter_mut().enumerate() {
            c.queue_time_estimate_ms_by_priority = maps[i].clone().into_iter().collect();
            c.queue_size = sizes[i];
        }
        let b = Balancer::new(&policy(Settings::PowerOfN(super::power_of_n(64, comparator))));
        let excluded: Vec<&str> = case.excluded.iter().map(String::as_str).collect();
        let request = Request {
            model: "m",
            input_tokens: Some(case.tokens),
            priority: p,
            excluded: &excluded,
            ..Request::default()
        };
        let eligible: Vec<usize> = (0..clusters.len())
            .filter(|&i| !case.excluded.contains(&clusters[i].id))
            .collect();
        let score = |i: usize| standalone(comparator, &clusters[i], case.tokens, p);
        let best = eligible.iter().map(|&i| score(i)).fold(f64::INFINITY, f64::min);
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        match b.decide(&request, &clusters, &mut rng, &mut Scratch::default()) {
            Decision::Selected(c) => {
                prop_assert!(eligible.contains(&c.index));
                prop_assert_eq!(score(c.index), best);
                prop_assert_eq!(c.rank_depth, 1);
            }
            other => prop_assert!(eligible.is_empty(), "got {other:?}"),
        }
    }
}
