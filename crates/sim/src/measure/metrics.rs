//! Per-run metrics (docs/simulator-model.md A9) computed from per-request records.

use crate::kernel::time::{to_ms, Micros, US_PER_S};
use crate::measure::record::{Outcome, Record};
use serde::Serialize;

/// Nearest-rank percentile: x[ceil(q n) - 1] of the ascending values,
/// clamped to the range; 0 when empty.
pub fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = (q * sorted.len() as f64).ceil() as i64 - 1;
    let i = rank.clamp(0, sorted.len() as i64 - 1) as usize;
    sorted[i]
}

fn sorted_ms(values: impl Iterator<Item = Micros>) -> Vec<f64> {
    let mut v: Vec<f64> = values.map(to_ms).collect();
    v.sort_by(f64::total_cmp);
    v
}

fn ratio(num: f64, den: f64) -> f64 {
    if den > 0.0 {
        num / den
    } else {
        0.0
    }
}

/// The A9 metrics of one run over its measured set.
#[derive(Clone, Debug, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct RunMetrics {
    pub measured: u64,
    pub succeeded: u64,
    pub goodput_rps: f64,
    pub throughput_rps: f64,
    pub slo_attainment: f64,
    pub token_reuse: f64,
    pub cache_hit_rate: f64,
    pub ttft_p50_ms: f64,
    pub ttft_p90_ms: f64,
    pub ttft_p99_ms: f64,
    pub routing_delay_p50_ms: f64,
    pub routing_delay_p99_ms: f64,
    pub backend_ttft_p50_ms: f64,
    pub backend_ttft_p99_ms: f64,
    pub off_primary: f64,
    pub cross_region: f64,
    pub peak_to_mean: f64,
    pub no_route: u64,
    pub retries_exhausted: u64,
    pub timed_out: u64,
    /// Requests refused by input-work admission (`max_input_work_seconds`):
    /// 503 `input_work_limit_exceeded` or `input_work_capacity_unavailable`.
    #[serde(default)]
    pub input_work_rejected: u64,
    pub mismatch_rejections: u64,
    pub mean_route_attempts: f64,
    /// Share of succeeded requests whose routing delay was at least 300 ms / 1 s.
    pub waited_300ms: f64,
    pub waited_1s: f64,
    /// The window's requests per second of window.
    #[serde(default)]
    pub offered_rps: f64,
    /// Requests in the system at the window's start and end, and the
    /// growth as a share of the window's requests (docs/simulator.md,
    /// "Steady-state measurement").
    #[serde(default)]
    pub backlog_start: u64,
    #[serde(default)]
    pub backlog_end: u64,
    #[serde(default)]
    pub backlog_growth: f64,
    /// Share of the window's requests that finished after it.
    #[serde(default)]
    pub late_share: f64,
    /// p99 of a window request's lifetime (arrival to its end), ms.
    #[serde(default)]
    pub lifetime_p99_ms: f64,
    /// Whether the window is a steady state ([`crate::measure::steady::is_steady`]).
    #[serde(default)]
    pub steady: bool,
    /// Growing conversations only (absent otherwise, so other outputs keep
    /// their bytes): conversations whose first turn was sent in the
    /// window, those of them abandoned after `max_turn_attempts` failed
    /// attempts of a turn, their share, and the retry attempts sent in
    /// the window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversations: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub abandoned_conversations: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub abandoned_share: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_retries: Option<u64>,
}

/// B2.5 diagnostics of one run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct RunDiagnostics {
    /// Per backend (topology order): succeeded requests served and token reuse.
    pub served: Vec<u64>,
    pub backend_reuse: Vec<f64>,
    /// Succeeded requests by final rank depth 1, 2, ..., the last entry
    /// counting every depth at or beyond its position.
    pub rank_depth_histogram: Vec<u64>,
}

/// One 10 s bin of the time series, by arrival, warmup included.
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct Bin {
    pub start_s: u64,
    pub token_reuse: f64,
    pub goodput_rps: f64,
    pub ttft_p99_ms: f64,
}

pub const BIN_US: Micros = 10 * US_PER_S;
const DEPTH_BUCKETS: usize = 16;

/// Computes the metrics of the records whose arrival lies in [from, to).
pub fn summarize(
    records: &[Record],
    from: Micros,
    to: Micros,
    backends: usize,
    ttft_slo_us: Micros,
) -> (RunMetrics, RunDiagnostics) {
    let measured: Vec<&Record> = records
        .iter()
        .filter(|r| r.arrival >= from && r.arrival < to)
        .collect();
    let ok: Vec<&Record> = measured
        .iter()
        .copied()
        .filter(|r| r.outcome == Outcome::Succeeded)
        .collect();
    let count = |o: Outcome| measured.iter().filter(|r| r.outcome == o).count() as u64;
    let duration_s = (to.saturating_sub(from)) as f64 / US_PER_S as f64;
    let good = ok.iter().filter(|r| r.ttft_us <= ttft_slo_us).count() as f64;
    let n_ok = ok.len() as f64;
    let input: u64 = ok.iter().map(|r| r.input).sum();
    let reused: u64 = ok.iter().map(|r| r.reused).sum();
    let ttft = sorted_ms(ok.iter().map(|r| r.ttft_us));
    let delay = sorted_ms(ok.iter().map(|r| r.routing_delay_us));
    let backend_ttft = sorted_ms(ok.iter().map(|r| r.backend_ttft_us));
    let steadiness = crate::measure::steady::assess(records, from, to);

    let mut diag = RunDiagnostics {
        served: vec![0; backends],
        backend_reuse: vec![0.0; backends],
        rank_depth_histogram: vec![0; DEPTH_BUCKETS],
    };
    let mut backend_tokens = vec![(0u64, 0u64); backends];
    for r in &ok {
        let b = r.backend as usize;
        if let (Some(s), Some(t)) = (diag.served.get_mut(b), backend_tokens.get_mut(b)) {
            *s += 1;
            t.0 += r.reused;
            t.1 += r.input;
        }
        let d = (r.rank_depth.max(1) as usize - 1).min(DEPTH_BUCKETS - 1);
        diag.rank_depth_histogram[d] += 1;
    }
    for (reuse, (re, inp)) in diag.backend_reuse.iter_mut().zip(&backend_tokens) {
        *reuse = ratio(*re as f64, *inp as f64);
    }
    let peak = diag.served.iter().copied().max().unwrap_or(0) as f64;

    let metrics = RunMetrics {
        measured: measured.len() as u64,
        succeeded: ok.len() as u64,
        goodput_rps: ratio(good, duration_s),
        throughput_rps: ratio(n_ok, duration_s),
        slo_attainment: ratio(good, measured.len() as f64),
        token_reuse: ratio(reused as f64, input as f64),
        cache_hit_rate: ratio(ok.iter().filter(|r| r.reused > 0).count() as f64, n_ok),
        ttft_p50_ms: percentile(&ttft, 0.50),
        ttft_p90_ms: percentile(&ttft, 0.90),
        ttft_p99_ms: percentile(&ttft, 0.99),
        routing_delay_p50_ms: percentile(&delay, 0.50),
        routing_delay_p99_ms: percentile(&delay, 0.99),
        backend_ttft_p50_ms: percentile(&backend_ttft, 0.50),
        backend_ttft_p99_ms: percentile(&backend_ttft, 0.99),
        off_primary: ratio(ok.iter().filter(|r| r.rank_depth > 1).count() as f64, n_ok),
        cross_region: ratio(ok.iter().filter(|r| r.cross_region).count() as f64, n_ok),
        peak_to_mean: ratio(peak, ratio(n_ok, backends as f64)),
        no_route: count(Outcome::NoRoute),
        retries_exhausted: count(Outcome::RetriesExhausted),
        timed_out: count(Outcome::TimedOut),
        input_work_rejected: count(Outcome::InputWorkRejected),
        mismatch_rejections: measured
            .iter()
            .map(|r| u64::from(r.mismatch_rejections))
            .sum(),
        mean_route_attempts: ratio(
            measured.iter().map(|r| f64::from(r.route_attempts)).sum(),
            measured.len() as f64,
        ),
        waited_300ms: ratio(
            ok.iter().filter(|r| r.routing_delay_us >= 300_000).count() as f64,
            n_ok,
        ),
        waited_1s: ratio(
            ok.iter()
                .filter(|r| r.routing_delay_us >= 1_000_000)
                .count() as f64,
            n_ok,
        ),
        offered_rps: ratio(measured.len() as f64, duration_s),
        backlog_start: steadiness.backlog_start,
        backlog_end: steadiness.backlog_end,
        backlog_growth: steadiness.backlog_growth,
        late_share: steadiness.late_share,
        lifetime_p99_ms: steadiness.lifetime_p99_ms,
        steady: steadiness.steady,
        ..RunMetrics::default()
    };
    (metrics, diag)
}

/// Reuse, goodput and TTFT p99 in 10 s bins over [0, horizon).
pub fn time_series(records: &[Record], horizon: Micros, ttft_slo_us: Micros) -> Vec<Bin> {
    let bins = horizon.div_ceil(BIN_US) as usize;
    let mut per_bin: Vec<Vec<&Record>> = vec![Vec::new(); bins];
    for r in records {
        if let Some(b) = per_bin.get_mut((r.arrival / BIN_US) as usize) {
            if r.outcome == Outcome::Succeeded {
                b.push(r);
            }
        }
    }
    per_bin
        .iter()
        .enumerate()
        .map(|(i, ok)| {
            let input: u64 = ok.iter().map(|r| r.input).sum();
            let reused: u64 = ok.iter().map(|r| r.reused).sum();
            let good = ok.iter().filter(|r| r.ttft_us <= ttft_slo_us).count() as f64;
            let ttft = sorted_ms(ok.iter().map(|r| r.ttft_us));
            Bin {
                start_s: i as u64 * (BIN_US / US_PER_S),
                token_reuse: ratio(reused as f64, input as f64),
                goodput_rps: good / (BIN_US / US_PER_S) as f64,
                ttft_p99_ms: percentile(&ttft, 0.99),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(arrival: Micros, outcome: Outcome, ttft_ms: u64, reused: u64) -> Record {
        Record {
            arrival,
            finished: arrival + ttft_ms * 1_000,
            outcome,
            input: 100,
            reused,
            ttft_us: ttft_ms * 1_000,
            backend_ttft_us: 0,
            routing_delay_us: 0,
            backend: 0,
            rank_depth: 1,
            cross_region: false,
            route_attempts: 1,
            mismatch_rejections: 0,
        }
    }

    #[test]
    fn nearest_rank_percentiles() {
        let v: Vec<f64> = (1..=10).map(f64::from).collect();
        assert_eq!(percentile(&v, 0.5), 5.0);
        assert_eq!(percentile(&v, 0.9), 9.0);
        assert_eq!(percentile(&v, 0.99), 10.0);
        assert_eq!(percentile(&v, 0.0), 1.0);
        assert_eq!(percentile(&[], 0.99), 0.0);
        assert_eq!(percentile(&[3.0], 0.5), 3.0);
    }

    #[test]
    fn measured_window_and_outcomes() {
        let recs = vec![
            rec(0, Outcome::Succeeded, 5, 100),         // warmup: not measured
            rec(1_000_000, Outcome::Succeeded, 5, 100), // good, hit
            rec(1_500_000, Outcome::Succeeded, 20_000, 0), // over the SLO
            rec(1_600_000, Outcome::NoRoute, 0, 0),
            rec(2_000_000, Outcome::TimedOut, 0, 0), // outside [1 s, 2 s)
        ];
        let (m, d) = summarize(&recs, 1_000_000, 2_000_000, 2, 10_000_000);
        assert_eq!(m.measured, 3);
        assert_eq!(m.succeeded, 2);
        assert_eq!(
            m.no_route + m.timed_out + m.retries_exhausted + m.succeeded,
            3
        );
        assert_eq!(m.goodput_rps, 1.0);
        assert_eq!(m.throughput_rps, 2.0);
        assert!((m.slo_attainment - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(m.token_reuse, 0.5);
        assert_eq!(m.cache_hit_rate, 0.5);
        assert_eq!(m.ttft_p50_ms, 5.0);
        assert_eq!(m.ttft_p99_ms, 20_000.0);
        assert_eq!(m.peak_to_mean, 2.0);
        assert_eq!(d.served, vec![2, 0]);
        assert_eq!(d.rank_depth_histogram[0], 2);
    }

    #[test]
    fn time_series_bins_by_arrival() {
        let recs = vec![
            rec(0, Outcome::Succeeded, 5, 100),
            rec(9_999_999, Outcome::Succeeded, 7, 0),
            rec(10_000_000, Outcome::Succeeded, 9, 100),
        ];
        let bins = time_series(&recs, 25_000_000, 10_000_000);
        assert_eq!(bins.len(), 3);
        assert_eq!(bins[0].token_reuse, 0.5);
        assert_eq!(bins[0].goodput_rps, 0.2);
        assert_eq!(bins[0].ttft_p99_ms, 7.0);
        assert_eq!(bins[1].start_s, 10);
        assert_eq!(bins[2].goodput_rps, 0.0);
    }
}
