//! Result files and the printed table (docs/simulator-model.md A10.3). Files hold no
//! wall-clock value, so they are byte-identical across reruns and thread
//! counts.

use crate::measure::metrics::RunMetrics;
use crate::scenario::Prepared;
use crate::sweep::RunOutput;
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
    "input_work_rejected",
    "mismatch_rejections",
    "mean_route_attempts",
    "waited_300ms",
    "waited_1s",
    "measured",
    "succeeded",
    "offered_rps",
    "backlog_start",
    "backlog_end",
    "backlog_growth",
    "late_share",
    "lifetime_p99_ms",
    "steady",
];

/// Growing conversations' metrics, written after [`METRICS`] when the
/// runs have them (every other workload's outputs keep their columns).
pub const CONVERSATION_METRICS: &[&str] = &[
    "conversations",
    "abandoned_conversations",
    "abandoned_share",
    "turn_retries",
];

/// The metrics the runs have: [`METRICS`], then [`CONVERSATION_METRICS`]
/// when the workload is growing conversations.
pub fn metric_names(runs: &[RunOutput]) -> Vec<&'static str> {
    let mut names = METRICS.to_vec();
    if runs
        .iter()
        .any(|r| r.result.metrics.conversations.is_some())
    {
        names.extend_from_slice(CONVERSATION_METRICS);
    }
    names
}

/// A metric by name, as f64.
pub fn metric(m: &RunMetrics, name: &str) -> f64 {
    let v = serde_json::to_value(m).unwrap_or(Value::Null);
    match v.get(name) {
        Some(Value::Bool(b)) => f64::from(u8::from(*b)),
        Some(x) => x.as_f64().unwrap_or(f64::NAN),
        None => f64::NAN,
    }
}

fn metric_map(m: &RunMetrics, names: &[&str]) -> Map<String, Value> {
    let v = serde_json::to_value(m).unwrap_or(Value::Null);
    names
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

/// The scenario as run (after the command line's options, as normalised
/// JSON) and the replayed trace's totals, hashed: equal hashes, equal runs.
pub fn scenario_hash(p: &Prepared) -> String {
    let file = serde_json::to_string(&p.file).unwrap_or_default();
    let trace = serde_json::to_string(&p.trace).unwrap_or_default();
    format!(
        "xxh3-64:{:016x}",
        xxhash_rust::xxh3::xxh3_64(format!("{file}\n{trace}").as_bytes())
    )
}

/// Per policy, what `routex explain` prints for it against the scenario's
/// base configuration and model: the resolved settings and where each
/// came from (default, config, expression, implied). The simulator's own
/// baselines (`legacy-band-walk`, the peers' routers) are not routing
/// expressions and resolve to `null`.
fn resolved_policies(p: &Prepared) -> Value {
    let table = p.route_table();
    let model = Some(p.file.router.model.as_str());
    let list: Vec<Value> = p
        .policies
        .iter()
        .map(|pol| {
            let resolved = match &pol.kind {
                crate::routers::policy::PolicyKind::Core(_) => {
                    let (explanation, _) = routex::check::explain_expression(
                        &pol.name,
                        &pol.text,
                        table.as_ref(),
                        model,
                    );
                    explanation.map_or(Value::Null, |e| routex::render::explain::to_value(&e))
                }
                _ => Value::Null,
            };
            json!({"name": pol.name, "expression": pol.text, "resolved": resolved})
        })
        .collect();
    Value::Array(list)
}

/// summary.json of a complete sweep.
pub fn summary_json(p: &Prepared, mode: &str, runs: &[RunOutput]) -> String {
    summary_doc(p, mode, runs, false)
}

/// summary.json of an interrupted sweep: the finished runs only, with
/// `"incomplete": true` and a warning saying how many ran.
pub fn summary_json_incomplete(p: &Prepared, mode: &str, runs: &[RunOutput]) -> String {
    summary_doc(p, mode, runs, true)
}

fn summary_doc(p: &Prepared, mode: &str, runs: &[RunOutput], incomplete: bool) -> String {
    let names = metric_names(runs);
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
            obj.extend(metric_map(&r.result.metrics, &names));
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
            obj.insert("steady".into(), json!(cell_is_steady(&group)));
            for k in names.iter().filter(|k| **k != "steady") {
                let values: Vec<f64> = group.iter().map(|r| metric(&r.result.metrics, k)).collect();
                let (med, min, max) = median_min_max(&values);
                obj.insert((*k).into(), json!({"median": med, "min": min, "max": max}));
            }
            Value::Object(obj)
        })
        .collect();
    let mut doc = json!({
        "scenario": p.file.name,
        "mode": mode,
        "warmup_s": p.file.warmup_s,
        "measure_s": p.file.measure_s,
        "backends": p.settings.topology.backends.iter().map(|b| b.id.clone()).collect::<Vec<_>>(),
        "runs": run_values,
        "aggregates": aggregates,
        "warnings": warnings(p, runs),
        "scenario_hash": scenario_hash(p),
        "routex_version": env!("CARGO_PKG_VERSION"),
        "policies": resolved_policies(p),
    });
    if let (true, Value::Object(map)) = (incomplete, &mut doc) {
        map.insert("incomplete".into(), json!(true));
        if let Some(Value::Array(w)) = map.get_mut("warnings") {
            w.push(json!(format!(
                "interrupted: {} of {} runs finished; the missing cells and seeds were not run",
                runs.len(),
                crate::sweep::run_keys(p).len()
            )));
        }
    }
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
    let names = metric_names(runs);
    let mut s = String::from("policy,expression,rate_rps,seed");
    for k in &names {
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
        for k in &names {
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

/// `backends.csv`: per run, per 10 s bin (those of `timeseries.csv`) and
/// per backend (the topology's members, in order), its timeline
/// ([`crate::measure::timeline`]; docs/simulator.md, "Command line and outputs",
/// says what each column means). A run without a timeline (too many
/// cells, [`run_warnings`] says so) has no rows.
pub fn backends_csv(p: &Prepared, runs: &[RunOutput]) -> String {
    let mut s = String::from(
        "policy,rate_rps,seed,bin_start_s,backend,cluster,region,registered,stats_out_s,\
         slow_factor,routed,rejected_429,completed,in_flight,input_tps,reuse,backend_ttft_ms\n",
    );
    let topo = &p.settings.topology;
    let region = |m: usize| {
        let r = topo.backends[topo.members[m].cluster].region;
        p.file
            .topology
            .regions
            .get(r)
            .map_or("", |r| r.name.as_str())
    };
    for r in runs {
        let name = csv_field(&p.policies[r.key.policy].name);
        let (rate, seed) = (r.key.rate_rps, r.key.seed);
        for (bin, cells) in r.result.timeline.bins().enumerate() {
            let start_s =
                bin as u64 * (crate::measure::metrics::BIN_US / crate::kernel::time::US_PER_S);
            for (m, c) in cells.iter().enumerate() {
                let Some(member) = topo.members.get(m) else {
                    continue;
                };
                let reuse = if c.input_tokens > 0 {
                    c.reused_tokens as f64 / c.input_tokens as f64
                } else {
                    0.0
                };
                let ttft_ms = if c.first_tokens > 0 {
                    c.ttft_sum_us as f64 / c.first_tokens as f64 / 1_000.0
                } else {
                    0.0
                };
                let _ = writeln!(
                    s,
                    "{name},{rate},{seed},{start_s},{},{},{},{},{},{},{},{},{},{},{},{reuse},{ttft_ms}",
                    csv_field(&member.id),
                    csv_field(&topo.backends[member.cluster].id),
                    csv_field(region(m)),
                    u8::from(c.registered),
                    c.stats_out_us as f64 / crate::kernel::time::US_PER_S as f64,
                    c.slow_factor,
                    c.routed,
                    c.rejected,
                    c.completed,
                    c.in_flight,
                    c.input_tps,
                );
            }
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

/// A cell's state: `0 goodput` when no seed had any (a backlog can stay
/// level while every request times out, so `steady` alone would read as
/// a result), else `steady`, or `trans k/n` when k of its n seeds'
/// windows are transient.
fn cell_state(group: &[&RunOutput]) -> String {
    let transient = group.iter().filter(|r| !r.result.metrics.steady).count();
    if no_goodput(group).is_some() {
        NO_GOODPUT.into()
    } else if transient == 0 {
        "steady".into()
    } else {
        format!("trans {transient}/{}", group.len())
    }
}

/// The printed state of a cell or run without goodput.
const NO_GOODPUT: &str = "0 goodput";

/// Why a cell had no goodput, when none of its seeds had any (and each
/// measured requests): every request timed out, or none succeeded, or
/// none met the TTFT SLO, with the share that timed out (over its seeds).
fn no_goodput(group: &[&RunOutput]) -> Option<String> {
    let metrics: Vec<&RunMetrics> = group.iter().map(|r| &r.result.metrics).collect();
    if metrics.is_empty()
        || !metrics
            .iter()
            .all(|m| m.measured > 0 && m.goodput_rps == 0.0)
    {
        return None;
    }
    let measured: u64 = metrics.iter().map(|m| m.measured).sum();
    let timed_out: u64 = metrics.iter().map(|m| m.timed_out).sum();
    let succeeded: u64 = metrics.iter().map(|m| m.succeeded).sum();
    let share = 100.0 * timed_out as f64 / measured as f64;
    Some(if timed_out == measured {
        "every request timed out".into()
    } else if succeeded == 0 {
        format!("no request succeeded; {share:.1}% timed out")
    } else {
        format!("no request met the TTFT SLO; {share:.1}% timed out")
    })
}

/// Whether every seed of a cell measured a steady window.
pub fn cell_is_steady(group: &[&RunOutput]) -> bool {
    group.iter().all(|r| r.result.metrics.steady)
}

/// The printed table: one row per (policy, rate) cell, the median over
/// seeds (goodput with its min-max). Nothing in it depends on the
/// machine (wall time is in the per-seed table and on stderr).
pub fn table(p: &Prepared, runs: &[RunOutput]) -> String {
    let mut s = format!(
        "{:<18} {:>7} {:>5} {:<9} {:>8} {:>13} {:>6} {:>8} {:>8} {:>8} {:>5} {:>6} {:>6} {:>7} {:>8} {:>7} {:>6} {:>9}\n",
        "policy", "RPS", "seeds", "state", "goodput", "[min-max]", "slo%", "ttft50", "ttft99", "route99",
        "hit%", "reuse%", "429", "timeout", "no-route", "offpri%", "cross%", "peak/mean"
    );
    let _ = writeln!(
        s,
        "{:<18} {:>7} {:>5} {:<9} {:>8} {:>13} {:>6} {:>8} {:>8} {:>8} {:>5} {:>6} {:>6} {:>7} {:>8} {:>7} {:>6} {:>9}",
        "", "offered", "", "", "RPS", "RPS", "%", "ms", "ms", "ms", "%", "%", "count", "count", "count", "%", "%", "ratio"
    );
    for (policy, rate, group) in cells(runs) {
        let med = |k: &str| {
            let v: Vec<f64> = group.iter().map(|r| metric(&r.result.metrics, k)).collect();
            median_min_max(&v)
        };
        let (good, lo, hi) = med("goodput_rps");
        let _ = writeln!(
            s,
            "{:<18} {:>7} {:>5} {:<9} {:>8.1} {:>13} {:>6.1} {:>8.0} {:>8.0} {:>8.0} {:>5.1} {:>6.1} {:>6.0} {:>7.0} {:>8.0} {:>7.1} {:>6.1} {:>9.2}",
            p.policies[policy].name,
            rate_text(rate),
            group.len(),
            cell_state(&group),
            good,
            format!("[{lo:.1}-{hi:.1}]"),
            med("slo_attainment").0 * 100.0,
            med("ttft_p50_ms").0,
            med("ttft_p99_ms").0,
            med("routing_delay_p99_ms").0,
            med("cache_hit_rate").0 * 100.0,
            med("token_reuse").0 * 100.0,
            med("mismatch_rejections").0,
            med("timed_out").0,
            med("no_route").0,
            med("off_primary").0 * 100.0,
            med("cross_region").0 * 100.0,
            med("peak_to_mean").0,
        );
    }
    s.push_str(&input_work_note(p, runs));
    s.push_str(&conversation_note(p, runs));
    s.push_str(&arrival_note(p, runs));
    s
}

/// A workload whose rate changes during a run (`workload.arrival`
/// bursty or stair_step): one line per offered rate saying how the
/// measured window falls on its phases; empty for steady laws.
fn arrival_note(p: &Prepared, runs: &[RunOutput]) -> String {
    let Some(spec) = p.file.workload.as_ref().and_then(|w| w.arrival.as_ref()) else {
        return String::new();
    };
    // The runs' rates, once each, in increasing order (sorting, not a
    // search per run: the runs are as many as the matrix).
    let mut rates: Vec<f64> = runs.iter().map(|r| r.key.rate_rps).collect();
    rates.sort_by(f64::total_cmp);
    rates.dedup();
    let mut s = String::new();
    for rate in rates {
        if let Some(line) =
            crate::workload::arrival::describe(spec, rate, p.file.warmup_s, p.file.measure_s)
        {
            s.push_str(&line);
            s.push('\n');
        }
    }
    s
}

/// Growing conversations: per cell, the conversations started in the
/// window, the abandoned and their share, and the retried turns (median
/// over seeds); empty for every other workload.
fn conversation_note(p: &Prepared, runs: &[RunOutput]) -> String {
    let mut s = String::new();
    for (policy, rate, group) in cells(runs) {
        if group
            .iter()
            .all(|r| r.result.metrics.conversations.is_none())
        {
            continue;
        }
        let med = |k: &str| {
            let v: Vec<f64> = group.iter().map(|r| metric(&r.result.metrics, k)).collect();
            median_min_max(&v)
        };
        let (share, lo, hi) = med("abandoned_share");
        let _ = writeln!(
            s,
            "conversations: {} at {}: {:.0} started in the window, {:.0} abandoned ({:.2}% [{:.2}-{:.2}]), {:.0} turn retries",
            p.policies[policy].name,
            rate_text(rate),
            med("conversations").0,
            med("abandoned_conversations").0,
            share * 100.0,
            lo * 100.0,
            hi * 100.0,
            med("turn_retries").0,
        );
    }
    s
}

/// The cells where input-work admission (`max_input_work_seconds`)
/// refused requests, one line each (median over seeds, [min-max]); empty
/// when none did, so a table without the field keeps its layout.
fn input_work_note(p: &Prepared, runs: &[RunOutput]) -> String {
    let mut s = String::new();
    for (policy, rate, group) in cells(runs) {
        let v: Vec<f64> = group
            .iter()
            .map(|r| r.result.metrics.input_work_rejected as f64)
            .collect();
        let (median, lo, hi) = median_min_max(&v);
        if hi > 0.0 {
            let _ = writeln!(
                s,
                "input-work 503: {} at {}: {median:.0} [{lo:.0}-{hi:.0}] requests refused by max_input_work_seconds before any decision",
                p.policies[policy].name,
                rate_text(rate),
            );
        }
    }
    s
}

/// What every column of [`table`] means, printed under it.
pub const LEGEND: &str = "\
Each row is one (policy, offered rate) cell: the median over its seeds; goodput also shows the seeds' [min-max].
  RPS        offered rate, requests per second (a trace: speed-up x the trace's native rate)
  state      steady: every seed's backlog (requests arrived, not finished) stayed level across the measured
             window; trans k/n: it grew in k of n seeds, so the window's figures are a transient, not a capacity;
             0 goodput: no seed had any goodput (a warning says how its requests ended)
  goodput    requests per second of window that succeeded with TTFT within client.ttft_slo_ms
  slo%       share of the window's requests that succeeded within that TTFT SLO
  ttft50/99  time to first token of succeeded requests, p50 and p99, ms
  route99    routing delay (arrival to dispatch) p99, ms
  hit%       share of succeeded requests that reused any cached prefix
  reuse%     share of succeeded requests' input tokens served from cache; equal to hit% when every hit reuses the
             whole prompt and prompts have one size (engine v1 caches a key's whole prompt; workload R has one size)
  429        queue-mismatch rejections; timeout: requests the client abandoned; no-route: requests no backend took
             (a policy with max_input_work_seconds: its 503s before any decision are listed under the table)
  offpri%    share served off their key's primary backend; cross%: served outside their entry router's region
  peak/mean  requests served by the busiest backend over the mean per backend
";

/// The per-seed table (`--per-seed`): one row per run, wall time last.
pub fn table_per_seed(p: &Prepared, runs: &[RunOutput]) -> String {
    let mut s = format!(
        "{:<18} {:>5} {:>4} {:<9} {:>8} {:>8} {:>6} {:>8} {:>6} {:>7} {:>8} {:>8} {:>8} {:>5} {:>6} {:>7} {:>7} {:>9} {:>8}\n",
        "policy", "RPS", "seed", "state", "goodput", "thruput", "slo%", "no-route", "429", "timeout",
        "ttft50ms", "ttft99ms", "route99", "hit%", "reuse%", "cross%", "offpri%", "peak/mean", "wall ms"
    );
    for r in runs {
        let m = &r.result.metrics;
        let _ = writeln!(
            s,
            "{:<18} {:>5} {:>4} {:<9} {:>8.1} {:>8.1} {:>6.1} {:>8} {:>6} {:>7} {:>8.0} {:>8.0} {:>8.0} {:>5.1} {:>6.1} {:>7.1} {:>7.1} {:>9.2} {:>8.0}",
            p.policies[r.key.policy].name,
            rate_text(r.key.rate_rps),
            r.key.seed,
            if no_goodput(&[r]).is_some() {
                NO_GOODPUT
            } else if m.steady {
                "steady"
            } else {
                "trans"
            },
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
    s.push_str(&input_work_note(p, runs));
    s.push_str(&conversation_note(p, runs));
    s.push_str(&arrival_note(p, runs));
    s
}

/// Warnings that depend on the runs' results: cells whose window is
/// shorter than their p99 request lifetime, and transient cells.
pub fn run_warnings(p: &Prepared, runs: &[RunOutput]) -> Vec<String> {
    let mut out = Vec::new();
    let mut transient = Vec::new();
    let mut dead = Vec::new();
    for (policy, rate, group) in cells(runs) {
        let name = &p.policies[policy].name;
        let longest = group
            .iter()
            .map(|r| r.result.metrics.lifetime_p99_ms)
            .fold(0.0, f64::max);
        if longest > p.file.measure_s * 1_000.0 {
            out.push(format!(
                "{name} at {} RPS: the p99 request lifetime ({:.1} s) is longer than the {} s window, so its figures are transient",
                rate_text(rate),
                longest / 1_000.0,
                p.file.measure_s
            ));
        }
        if !cell_is_steady(&group) {
            transient.push(format!("{name} at {}", rate_text(rate)));
        }
        if let Some(why) = no_goodput(&group) {
            dead.push(format!("{name} at {} ({why})", rate_text(rate)));
        }
    }
    if !dead.is_empty() {
        out.push(format!(
            "{} of {} cells had no goodput (`0 goodput` in the table; `steady` in summary.json says only that the backlog stayed level): {}",
            dead.len(),
            cells(runs).len(),
            dead.join(", ")
        ));
    }
    let long: Vec<String> = runs
        .iter()
        .filter(|r| r.result.timeline.too_long)
        .map(|r| {
            format!(
                "{} at {} seed {}",
                p.policies[r.key.policy].name,
                rate_text(r.key.rate_rps),
                r.key.seed
            )
        })
        .collect();
    if !long.is_empty() {
        out.push(format!(
            "backends.csv has no rows for {}: their 10 s bins x {} backends pass the {} cells a run of this sweep keeps ({} over its {} runs, at most {} a run)",
            long.join(", "),
            p.settings.topology.members.len(),
            crate::measure::timeline::cells_per_run(crate::sweep::run_keys(p).len()),
            crate::measure::timeline::MAX_SWEEP_CELLS,
            crate::sweep::run_keys(p).len(),
            crate::measure::timeline::MAX_CELLS,
        ));
    }
    if !transient.is_empty() {
        out.push(format!(
            "{} of {} cells are transient (the backlog grew across the window in at least one seed; `trans` in the table): {}; their goodput is not a capacity",
            transient.len(),
            cells(runs).len(),
            transient.join(", ")
        ));
    }
    out
}

/// Every warning of a sweep: the cuts, then the results'.
pub fn warnings(p: &Prepared, runs: &[RunOutput]) -> Vec<String> {
    let mut w = p.cut_warnings();
    w.extend(run_warnings(p, runs));
    w
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
