//! Result files and the printed table (docs/simulator-model.md A10.3). Files hold no
//! wall-clock value, so they are byte-identical across reruns and thread
//! counts.

use super::metrics::RunMetrics;
use super::scenario::Prepared;
use super::sweep::RunOutput;
use serde_json::{json, Map, Value};
use std::fmt::Write as _;

/// The metrics written per run and aggregated per (policy, rate), in order.
pub const METRICS: &[&str] = &[
    "goodput_rps",
    "throughput_rps",
    "slo_attainment",
    "token_reuse",
    "cache_hit_rate",
    "ttft_p50_ms",
    "ttft_p90_ms",
    "ttft_p99_ms",
    "routing_delay_p50_ms",
    "routing_delay_p99_ms",
    "backend_ttft_p50_ms",
    "backend_ttft_p99_ms",
    "off_primary",
    "cross_region",
    "peak_to_mean",
    "no_route",
    "retries_exhausted",
    "timed_out",
    "mismatch_rejections",
    "mean_route_attempts",
    "waited_300ms",
    "waited_1s",
    "measured",
    "succeeded",
];

/// A metric by name, as f64.
pub fn metric(m: &RunMetrics, name: &str) -> f64 {
    let v = serde_json::to_value(m).unwrap_or(Value::Null);
    v.get(name).and_then(Value::as_f64).unwrap_or(f64::NAN)
}

fn metric_map(m: &RunMetrics) -> Map<String, Value> {
    let v = serde_json::to_value(m).unwrap_or(Value::Null);
    METRICS
        .iter()
        .filter_map(|k| v.get(*k).map(|x| ((*k).to_string(), x.clone())))
        .collect()
}

/// Median (mean of the middle two for an even count), min and max.
pub fn median_min_max(values: &[f64]) -> (f64, f64, f64) {
    let mut v: Vec<f64> = values.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => (0.0, 0.0, 0.0),
        n if n % 2 == 1 => (v[n / 2], v[0], v[n - 1]),
        n => ((v[n / 2 - 1] + v[n / 2]) / 2.0, v[0], v[n - 1]),
    }
}

/// Runs grouped by (policy, rate) in run order.
pub fn cells(runs: &[RunOutput]) -> Vec<(usize, f64, Vec<&RunOutput>)> {
    let mut out: Vec<(usize, f64, Vec<&RunOutput>)> = Vec::new();
    for r in runs {
        match out.last_mut() {
            Some((p, rate, v)) if *p == r.key.policy && *rate == r.key.rate_rps => v.push(r),
            _ => out.push((r.key.policy, r.key.rate_rps, vec![r])),
        }
    }
    out
}

pub fn summary_json(p: &Prepared, mode: &str, runs: &[RunOutput]) -> String {
    let run_values: Vec<Value> = runs
        .iter()
        .map(|r| {
            let policy = &p.policies[r.key.policy];
            let mut obj = Map::new();
            obj.insert("policy".into(), json!(policy.name));
            obj.insert("expression".into(), json!(policy.text));
            obj.insert("rate_rps".into(), json!(r.key.rate_rps));
            obj.insert("seed".into(), json!(r.key.seed));
            if let Some(t) = &p.trace {
                obj.insert("speedup".into(), json!(r.key.rate_rps / t.native_rps));
            }
            obj.extend(metric_map(&r.result.metrics));
            let d = &r.result.diagnostics;
            obj.insert("served_per_backend".into(), json!(d.served));
            obj.insert("reuse_per_backend".into(), json!(d.backend_reuse));
            obj.insert("rank_depth_histogram".into(), json!(d.rank_depth_histogram));
            Value::Object(obj)
        })
        .collect();
    let aggregates: Vec<Value> = cells(runs)
        .into_iter()
        .map(|(policy, rate, group)| {
            let mut obj = Map::new();
            obj.insert("policy".into(), json!(p.policies[policy].name));
            obj.insert("rate_rps".into(), json!(rate));
            obj.insert("seeds".into(), json!(group.len()));
            for k in METRICS {
                let values: Vec<f64> = group.iter().map(|r| metric(&r.result.metrics, k)).collect();
                let (med, min, max) = median_min_max(&values);
                obj.insert((*k).into(), json!({"median": med, "min": min, "max": max}));
            }
            Value::Object(obj)
        })
        .collect();
    let doc = json!({
        "scenario": p.file.name,
        "mode": mode,
        "warmup_s": p.file.warmup_s,
        "measure_s": p.file.measure_s,
        "backends": p.settings.topology.backends.iter().map(|b| b.id.clone()).collect::<Vec<_>>(),
        "runs": run_values,
        "aggregates": aggregates,
    });
    let mut doc = doc;
    if let (Some(t), Value::Object(map)) = (&p.trace, &mut doc) {
        map.insert("trace".into(), json!(t));
    }
    let mut s = serde_json::to_string_pretty(&doc).unwrap_or_default();
    s.push('\n');
    s
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

pub fn summary_csv(p: &Prepared, runs: &[RunOutput]) -> String {
    let mut s = String::from("policy,expression,rate_rps,seed");
    for k in METRICS {
        s.push(',');
        s.push_str(k);
    }
    s.push('\n');
    for r in runs {
        let policy = &p.policies[r.key.policy];
        let _ = write!(
            s,
            "{},{},{},{}",
            csv_field(&policy.name),
            csv_field(&policy.text),
            r.key.rate_rps,
            r.key.seed
        );
        for k in METRICS {
            let _ = write!(s, ",{}", metric(&r.result.metrics, k));
        }
        s.push('\n');
    }
    s
}

pub fn timeseries_csv(p: &Prepared, runs: &[RunOutput]) -> String {
    let mut s =
        String::from("policy,rate_rps,seed,bin_start_s,token_reuse,goodput_rps,ttft_p99_ms\n");
    for r in runs {
        let name = csv_field(&p.policies[r.key.policy].name);
        for b in &r.result.series {
            let _ = writeln!(
                s,
                "{name},{},{},{},{},{},{}",
                r.key.rate_rps, r.key.seed, b.start_s, b.token_reuse, b.goodput_rps, b.ttft_p99_ms
            );
        }
    }
    s
}

/// A rate for the table: whole rates as written, a trace's derived rates
/// (speed-up x native rate) to one decimal.
fn rate_text(rate: f64) -> String {
    if rate.fract() == 0.0 {
        format!("{rate}")
    } else {
        format!("{rate:.1}")
    }
}

/// The printed table: one row per run, wall time included.
pub fn table(p: &Prepared, runs: &[RunOutput]) -> String {
    let mut s = format!(
        "{:<18} {:>5} {:>4} {:>8} {:>8} {:>6} {:>8} {:>6} {:>7} {:>8} {:>8} {:>8} {:>5} {:>6} {:>7} {:>7} {:>9} {:>8}\n",
        "policy", "rps", "seed", "goodput", "thruput", "slo%", "no-route", "429", "timeout",
        "ttft50", "ttft99", "route99", "hit%", "reuse%", "cross%", "offpri%", "peak/mean", "wall ms"
    );
    for r in runs {
        let m = &r.result.metrics;
        let _ = writeln!(
            s,
            "{:<18} {:>5} {:>4} {:>8.1} {:>8.1} {:>6.1} {:>8} {:>6} {:>7} {:>8.0} {:>8.0} {:>8.0} {:>5.1} {:>6.1} {:>7.1} {:>7.1} {:>9.2} {:>8.0}",
            p.policies[r.key.policy].name,
            rate_text(r.key.rate_rps),
            r.key.seed,
            m.goodput_rps,
            m.throughput_rps,
            m.slo_attainment * 100.0,
            m.no_route,
            m.mismatch_rejections,
            m.timed_out,
            m.ttft_p50_ms,
            m.ttft_p99_ms,
            m.routing_delay_p99_ms,
            m.cache_hit_rate * 100.0,
            m.token_reuse * 100.0,
            m.cross_region * 100.0,
            m.off_primary * 100.0,
            m.peak_to_mean,
            r.wall_ms,
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median_min_max(&[3.0, 1.0, 2.0]), (2.0, 1.0, 3.0));
        assert_eq!(median_min_max(&[4.0, 1.0]), (2.5, 1.0, 4.0));
        assert_eq!(median_min_max(&[]), (0.0, 0.0, 0.0));
    }

    #[test]
    fn every_metric_name_exists() {
        let m = RunMetrics::default();
        for k in METRICS {
            assert!(!metric(&m, k).is_nan(), "{k}");
        }
    }
}
