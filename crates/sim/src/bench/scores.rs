//! stargate-bench's scores of one algorithm (docs/simulator.md,
//! "stargate-bench files"), from every request's log of the run.

use super::{Bench, BenchAlgorithm};
use crate::run::RunResult;
use serde::Serialize;

/// The scores stargate-bench reports per algorithm.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Scores {
    pub requests: u64,
    pub succeeded: u64,
    pub success_rate: f64,
    /// Successful requests (and their output tokens) per second, from the
    /// first send to the last completion.
    pub requests_per_s: f64,
    pub output_tokens_per_s: f64,
    pub ttft_avg_ms: f64,
    pub ttft_max_ms: f64,
    /// Time to the last token.
    pub ttlt_avg_ms: f64,
    pub ttlt_max_ms: f64,
    /// Per cluster: its share of the successful requests and of the slots.
    pub request_share: Vec<f64>,
    pub capacity_share: Vec<f64>,
    /// 1 - the total variation distance between the two shares (1 =
    /// requests exactly in proportion to capacity).
    pub balance: f64,
    pub cache_hits: u64,
    pub cache_misses: u64,
    pub cache_evictions: u64,
    pub reused_tokens: u64,
    pub uncached_tokens: u64,
    pub input_reuse_rate: f64,
    /// Of the requests whose key was served before, the share served by
    /// another cluster than the key's previous request.
    pub key_movement: f64,
    /// Final choices at rank 1 (or unranked) and deeper.
    pub primary: u64,
    pub fallback: u64,
    /// Queue-mismatch admission: on or off for this algorithm, the 429s
    /// and the requests that saw at least one.
    pub queue_admission: bool,
    pub mismatch_rejections: u64,
    pub rejected_requests: u64,
    /// Backends (pylons) removed during the run: with one per cluster,
    /// the cluster's id.
    pub removed: Vec<String>,
}

fn ms(us: u64) -> f64 {
    us as f64 / 1_000.0
}

pub fn scores(bench: &Bench, a: &BenchAlgorithm, result: &RunResult) -> Scores {
    let Some(detail) = &result.detail else {
        return Scores::default();
    };
    let reqs = &detail.requests;
    let ok: Vec<_> = reqs.iter().filter(|r| r.succeeded).collect();
    let n = ok.len() as f64;
    let first = reqs.iter().map(|r| r.sent).min().unwrap_or(0);
    let last = ok.iter().map(|r| r.done).max().unwrap_or(first);
    let span_s = (last.saturating_sub(first) as f64 / 1e6).max(1e-9);
    let avg = |f: &dyn Fn(&&crate::world::fleet::RequestLog) -> f64| {
        if ok.is_empty() {
            0.0
        } else {
            ok.iter().map(f).sum::<f64>() / n
        }
    };
    let max =
        |f: &dyn Fn(&&crate::world::fleet::RequestLog) -> f64| ok.iter().map(f).fold(0.0, f64::max);
    let ttft = |r: &&crate::world::fleet::RequestLog| ms(r.first_token.saturating_sub(r.sent));
    let ttlt = |r: &&crate::world::fleet::RequestLog| ms(r.done.saturating_sub(r.sent));
    let clusters = bench.clusters.len();
    let mut served = vec![0u64; clusters];
    for r in &ok {
        if let Some(s) = served.get_mut(r.backend as usize) {
            *s += 1;
        }
    }
    let total_slots: u64 = bench.cluster_slots.iter().sum();
    let request_share: Vec<f64> = served.iter().map(|&s| s as f64 / n.max(1.0)).collect();
    let capacity_share: Vec<f64> = bench
        .cluster_slots
        .iter()
        .map(|&s| s as f64 / total_slots.max(1) as f64)
        .collect();
    let distance: f64 = request_share
        .iter()
        .zip(&capacity_share)
        .map(|(r, c)| (r - c).abs())
        .sum::<f64>()
        / 2.0;
    let keyed: Vec<_> = ok
        .iter()
        .filter(|r| r.key != crate::world::engine::NO_KEY)
        .collect();
    let hits = keyed.iter().filter(|r| r.reused > 0).count() as u64;
    let reused: u64 = ok.iter().map(|r| r.reused).sum();
    let input: u64 = ok.iter().map(|r| r.input).sum();
    // Key movement, in send order.
    let mut order: Vec<_> = keyed.clone();
    order.sort_by_key(|r| r.sent);
    let mut last_cluster = std::collections::BTreeMap::new();
    let (mut moves, mut repeats) = (0u64, 0u64);
    for r in order {
        if let Some(prev) = last_cluster.insert(r.key, r.backend) {
            repeats += 1;
            moves += u64::from(prev != r.backend);
        }
    }
    Scores {
        requests: reqs.len() as u64,
        succeeded: ok.len() as u64,
        success_rate: n / (reqs.len().max(1) as f64),
        requests_per_s: n / span_s,
        output_tokens_per_s: ok.iter().map(|r| r.output).sum::<u64>() as f64 / span_s,
        ttft_avg_ms: avg(&ttft),
        ttft_max_ms: max(&ttft),
        ttlt_avg_ms: avg(&ttlt),
        ttlt_max_ms: max(&ttlt),
        request_share,
        capacity_share,
        balance: 1.0 - distance,
        cache_hits: hits,
        cache_misses: keyed.len() as u64 - hits,
        cache_evictions: detail.evictions.iter().sum(),
        reused_tokens: reused,
        uncached_tokens: input - reused,
        input_reuse_rate: reused as f64 / input.max(1) as f64,
        key_movement: moves as f64 / repeats.max(1) as f64,
        primary: ok.iter().filter(|r| r.rank_depth <= 1).count() as u64,
        fallback: ok.iter().filter(|r| r.rank_depth > 1).count() as u64,
        queue_admission: a.admission,
        mismatch_rejections: reqs.iter().map(|r| u64::from(r.rejections)).sum(),
        rejected_requests: reqs.iter().filter(|r| r.rejections > 0).count() as u64,
        // Removed pylons (with one per cluster, the cluster's id).
        removed: detail
            .removed_at
            .iter()
            .enumerate()
            .filter(|(_, r)| r.is_some())
            .filter_map(|(m, _)| a.settings.topology.members.get(m))
            .map(|m| m.id.clone())
            .collect(),
    }
}
