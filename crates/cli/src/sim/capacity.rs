//! `routex sim capacity`: argument parsing, progress and printing; the
//! search lives in `routex_sim::search::capacity`.

use crate::output::usage_error;
use crate::sim::{prepare, print_warnings, ScenarioArgs};
use routex_sim::scenario::window::trace_rate_problem;
use routex_sim::search::capacity::{self, CapacitySpec};
use routex_sim::WaitMode;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

#[derive(Debug, Clone, clap::Args)]
pub struct CapacityArgs {
    /// Scenario JSON file; omitted = the built-in default scenario.
    pub scenario: Option<PathBuf>,
    /// The SLO's TTFT bound, ms.
    #[arg(long = "ttft-ms", default_value_t = 2000.0)]
    pub ttft_ms: f64,
    /// The share of requests (percent) that must meet the TTFT bound.
    #[arg(long, default_value_t = 99.0)]
    pub attainment: f64,
    /// The policies to measure (repeat the option); default: every policy.
    #[arg(long)]
    pub policy: Vec<String>,
    /// The lowest rate searched, RPS; default: the scenario's lowest rate.
    #[arg(long)]
    pub lo: Option<f64>,
    /// The highest rate searched, RPS; default: twice the scenario's
    /// highest rate.
    #[arg(long)]
    pub hi: Option<f64>,
    /// Stop when the bracket's width is at most this share of its lower
    /// end (percent).
    #[arg(long, default_value_t = 2.0)]
    pub precision: f64,
    /// Worker threads, at least 1 (the result does not depend on it).
    #[arg(long, default_value_t = 1, value_parser = crate::sim::jobs)]
    pub jobs: usize,
    /// Writes capacity.json (every probe of every seed) here.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// The scenario's options (the runs poll faithfully unless `--mode
    /// fast` or `--quick`).
    #[command(flatten)]
    pub options: ScenarioArgs,
}

/// Exit codes: 0 done, 1 invalid scenario, 2 usage or I/O, 130 interrupted.
pub fn run(a: &CapacityArgs) -> i32 {
    let positive = |v: f64| v.is_finite() && v > 0.0;
    if !(positive(a.ttft_ms) && a.attainment > 0.0 && a.attainment <= 100.0) {
        return usage_error("sim capacity: --ttft-ms must be > 0 and --attainment in (0, 100]");
    }
    if !(a.precision > 0.0 && a.precision <= 100.0) {
        return usage_error("sim capacity: --precision must be in (0, 100]");
    }
    let prepared = match prepare(a.scenario.as_deref(), &a.options, WaitMode::Faithful) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let rates = &prepared.file.rates_rps;
    let lo =
        a.lo.unwrap_or_else(|| rates.iter().copied().fold(f64::INFINITY, f64::min));
    let hi =
        a.hi.unwrap_or_else(|| 2.0 * rates.iter().copied().fold(0.0, f64::max));
    if !(positive(lo) && positive(hi) && lo < hi) {
        return usage_error(format!(
            "sim capacity: the bracket must satisfy 0 < lo < hi, got {lo} and {hi}"
        ));
    }
    if let Some(trace) = &prepared.replayed {
        let horizon = prepared.file.warmup_s + prepared.file.measure_s;
        if let Some(problem) = trace_rate_problem(trace, hi, horizon) {
            return usage_error(format!("sim capacity: --hi: {problem}"));
        }
    } else if hi * (prepared.file.warmup_s + prepared.file.measure_s) > 50e6 {
        return usage_error("sim capacity: --hi: a run would plan more than 50 million requests");
    }
    let mut policies = Vec::new();
    for name in &a.policy {
        match prepared.policies.iter().position(|p| &p.name == name) {
            Some(i) => policies.push(i),
            None => {
                let names: Vec<&str> = prepared.policies.iter().map(|p| p.name.as_str()).collect();
                eprintln!(
                    "routex sim capacity: the scenario has no policy `{name}` (it has {})",
                    names.join(", ")
                );
                return 1;
            }
        }
    }
    if policies.is_empty() {
        policies = (0..prepared.policies.len()).collect();
    }
    let spec = CapacitySpec {
        ttft_ms: a.ttft_ms,
        attainment: a.attainment / 100.0,
        lo_rps: lo,
        hi_rps: hi,
        precision: a.precision / 100.0,
        policies,
    };
    print_warnings(&prepared.cut_warnings());
    eprintln!(
        "routex sim capacity: {} policies x {} seeds, {lo}-{hi} RPS, {} mode, {} job(s)",
        spec.policies.len(),
        prepared.file.seeds.len(),
        prepared.settings.mode.name(),
        a.jobs
    );
    let stop: &'static AtomicBool = crate::interrupt::flag();
    let started = Instant::now();
    let tty = std::io::stderr().is_terminal();
    let mut progress = |done: usize, total: usize| {
        if tty {
            eprint!(
                "\r{done}/{total} searches, {:.1} s",
                started.elapsed().as_secs_f64()
            );
            if done == total {
                eprintln!();
            }
        }
    };
    let found = capacity::search(&prepared, &spec, a.jobs, stop, &mut progress);
    let interrupted = crate::interrupt::interrupted();
    if interrupted && tty {
        eprintln!();
    }
    let wall = started.elapsed().as_secs_f64();
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(capacity::table(&spec, &found).as_bytes());
    let probes: usize = found
        .iter()
        .flat_map(|f| &f.seeds)
        .map(|s| s.probes.len())
        .sum();
    let _ = out.flush();
    eprintln!("routex sim capacity: {probes} runs in {wall:.1} s wall");
    if let Some(dir) = &a.out {
        let doc = serde_json::json!({
            "scenario": prepared.file.name,
            "mode": prepared.settings.mode.name(),
            "ttft_ms": spec.ttft_ms,
            "attainment": spec.attainment,
            "lo_rps": spec.lo_rps,
            "hi_rps": spec.hi_rps,
            "precision": spec.precision,
            "incomplete": interrupted,
            "policies": found,
        });
        let text = serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n";
        if let Err(e) = std::fs::create_dir_all(dir)
            .and_then(|()| std::fs::write(dir.join("capacity.json"), text))
        {
            return usage_error(format!("{}: cannot write: {e}", dir.display()));
        }
    }
    if interrupted {
        eprintln!("routex sim capacity: interrupted; the brackets above are those reached so far");
        return 130;
    }
    0
}
