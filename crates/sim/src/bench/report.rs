//! What `routex sim run FILE.yaml` prints and writes: stargate-bench's
//! scores per algorithm next to routex's own metrics.

use super::{AlgorithmRun, Bench};
use serde::Serialize;
use std::fmt::Write;

/// The printed table, one row per algorithm (wall-clock time last).
pub fn table(bench: &Bench, runs: &[AlgorithmRun]) -> String {
    let mut out = String::new();
    let f = &bench.file;
    let _ = writeln!(
        out,
        "{}: {} requests, {} clusters, {} stargate(s), at most {} in flight",
        f.name,
        f.request_count,
        bench.clusters.len(),
        f.stargates.count,
        f.max_concurrency
    );
    let _ = writeln!(
        out,
        "{:<44} {:>6} {:>7} {:>8} {:>8} {:>8} {:>8} {:>8} {:>5} {:>5} {:>5} {:>6} {:>5} {:>7} {:>9} {:>8} {:>8} {:>8}",
        "algorithm", "ok%", "req/s", "out/s", "ttft", "ttftmax", "ttlt", "ttltmax", "bal", "hits", "evict",
        "reuse", "moves", "pri/fb", "adm/429", "goodput", "ttft99", "wall ms"
    );
    for r in runs {
        let s = &r.scores;
        let m = &r.result.metrics;
        let _ = writeln!(
            out,
            "{:<44} {:>6.1} {:>7.2} {:>8.1} {:>8.1} {:>8.1} {:>8.1} {:>8.1} {:>5.2} {:>5} {:>5} {:>6.3} {:>5.2} {:>7} {:>9} {:>8.2} {:>8.1} {:>8.1}",
            r.name,
            100.0 * s.success_rate,
            s.requests_per_s,
            s.output_tokens_per_s,
            s.ttft_avg_ms,
            s.ttft_max_ms,
            s.ttlt_avg_ms,
            s.ttlt_max_ms,
            s.balance,
            s.cache_hits,
            s.cache_evictions,
            s.input_reuse_rate,
            s.key_movement,
            format!("{}/{}", s.primary, s.fallback),
            format!("{}/{}", if s.queue_admission { "on" } else { "off" }, s.mismatch_rejections),
            m.goodput_rps,
            m.ttft_p99_ms,
            r.wall_ms
        );
    }
    out
}

#[derive(Serialize)]
struct Row<'a> {
    algorithm: &'a str,
    scores: &'a super::scores::Scores,
    routex: &'a crate::RunMetrics,
}

#[derive(Serialize)]
struct Out<'a> {
    benchmark: &'a str,
    seed: u64,
    expected_signal: &'a str,
    clusters: &'a [String],
    algorithms: Vec<Row<'a>>,
}

/// `bench.json`: every score and routex's metrics per algorithm (no
/// wall-clock time, so the file is the same on every run).
pub fn json(bench: &Bench, runs: &[AlgorithmRun]) -> String {
    let out = Out {
        benchmark: &bench.file.name,
        seed: bench.file.seed,
        expected_signal: &bench.file.metadata.expected_signal,
        clusters: &bench.clusters,
        algorithms: runs
            .iter()
            .map(|r| Row {
                algorithm: &r.name,
                scores: &r.scores,
                routex: &r.result.metrics,
            })
            .collect(),
    };
    serde_json::to_string_pretty(&out).unwrap_or_default() + "\n"
}
