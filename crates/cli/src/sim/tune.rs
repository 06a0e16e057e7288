//! `routex sim tune`: argument parsing, progress on stderr and printing;
//! the search lives in `routex_sim::search::tune`.

use crate::output::usage_error;
use crate::sim::{prepare, ScenarioArgs};
use routex_sim::search::tune::{self, report, space::Space, Progress, TuneSpec};
use routex_sim::WaitMode;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::time::Instant;

#[derive(Debug, Clone, clap::Args)]
pub struct TuneArgs {
    /// Scenario JSON file; omitted = the built-in default scenario.
    pub scenario: Option<PathBuf>,
    /// The offered load to tune for (requests per second).
    #[arg(long)]
    pub rate: f64,
    /// The TTFT p99 bound (ms) a setting must meet on every seed.
    #[arg(long = "ttft-p99-ms")]
    pub ttft_p99_ms: f64,
    /// The scenario policy to tune (a pulsar-wait-and-widen expression);
    /// its other arguments are kept. Default: the first such policy.
    #[arg(long)]
    pub policy: Option<String>,
    /// Settings to try, the template's own values included.
    #[arg(long, default_value_t = 100)]
    pub trials: usize,
    /// Seed of the sampling (runs use the scenario's seeds).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Successive halving keeps 1/eta of the trials at each rung (1 = no halving).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u64).range(1..=100))]
    pub eta: u64,
    /// Worker threads, at least 1 (the result does not depend on it).
    #[arg(long, default_value_t = 1, value_parser = crate::sim::jobs)]
    pub jobs: usize,
    /// The scenario's options; the runs' waiting model is `fast` unless
    /// `--mode` says otherwise (validated against `faithful` in
    /// docs/simulator.md).
    #[command(flatten)]
    pub options: ScenarioArgs,
    /// Writes the scenario's base configuration with the winner applied to
    /// this file (an lb-config.json).
    #[arg(long)]
    pub write_config: Option<PathBuf>,
}

/// Exit codes: 0 done, 1 invalid scenario or template, 2 usage or I/O.
pub fn run(a: &TuneArgs) -> i32 {
    let positive = |v: f64| v.is_finite() && v > 0.0;
    if !(positive(a.rate) && positive(a.ttft_p99_ms)) {
        return usage_error("sim tune: --rate and --ttft-p99-ms must be finite and > 0");
    }
    if a.trials == 0 || a.trials > 10_000 {
        return usage_error("sim tune: --trials must be between 1 and 10000");
    }
    let prepared = match prepare(a.scenario.as_deref(), &a.options, WaitMode::Fast) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let template = tune::template(&prepared, a.policy.as_deref());
    let Some(template) = template else {
        eprintln!(
            "routex sim tune: {}",
            match &a.policy {
                Some(n) => format!("the scenario has no policy `{n}`"),
                None => "the scenario has no pulsar-wait-and-widen policy to tune".into(),
            }
        );
        return 1;
    };
    let spec = TuneSpec {
        template,
        rate_rps: a.rate,
        ttft_p99_bound_ms: a.ttft_p99_ms,
        trials: a.trials,
        seed: a.seed,
        eta: a.eta as usize,
        space: Space::default(),
    };
    eprintln!(
        "routex sim tune: policy `{}` at {} RPS, TTFT p99 <= {} ms, {} trials, {} mode, {} job(s)",
        prepared.policies[template].name,
        a.rate,
        a.ttft_p99_ms,
        a.trials,
        prepared.settings.mode.name(),
        a.jobs.max(1)
    );
    let started = Instant::now();
    let tty = std::io::stderr().is_terminal();
    let mut progress = |p: Progress| {
        let line = format!(
            "rung {}/{}: {} trials, {}/{} runs, {:.1} s",
            p.rung + 1,
            p.rungs,
            p.trials,
            p.done,
            p.total,
            started.elapsed().as_secs_f64()
        );
        if tty {
            eprint!("\r{line}");
            if p.done == p.total {
                eprintln!();
            }
        } else if p.done == p.total {
            eprintln!("{line}");
        }
    };
    let result = match tune::tune(&prepared, &spec, a.jobs.max(1), &mut progress) {
        Ok(r) => r,
        Err(report) => {
            for d in &report.diagnostics {
                eprintln!("routex sim tune: {}", d.message);
            }
            return 1;
        }
    };
    let wall = started.elapsed().as_secs_f64();
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(report::table(&result, &spec).as_bytes());
    let _ = writeln!(out);
    let _ = out.write_all(report::summary(&result, &spec).as_bytes());
    let table = prepared.route_table();
    let model = &prepared.file.router.model;
    let best = &result.best().expression;
    let patched = table.as_ref().and_then(|t| {
        report::patched_config(prepared.file.base_config.as_ref(), t, model, best)
            .map(|(config, entry)| (t, config, entry))
    });
    let Some((old_table, config, entry)) = patched else {
        eprintln!("routex sim tune: the best setting does not compile");
        return 1;
    };
    let _ = writeln!(out, "\nrouting expression:\n{best}");
    let member = serde_json::to_string_pretty(&serde_json::json!({ model.as_str(): entry }))
        .unwrap_or_default();
    let member: Vec<&str> = member.lines().collect();
    let inner = member
        .get(1..member.len().saturating_sub(1))
        .unwrap_or_default()
        .iter()
        .map(|l| l.strip_prefix("  ").unwrap_or(l))
        .collect::<Vec<_>>()
        .join("\n");
    let _ = writeln!(
        out,
        "\nlb-config.json model entry (the base configuration's, with the winner's fields):\n{inner}"
    );
    let config_text = serde_json::to_string_pretty(&config).unwrap_or_default() + "\n";
    let (new_table, _) = routex::config::load_table("patched lb-config.json", &config_text);
    let has_base = !matches!(
        prepared.file.base_config,
        None | Some(serde_json::Value::Null)
    );
    if !has_base {
        let _ = writeln!(
            out,
            "\nroutex diff of the change: none (the scenario has no base_config to patch)"
        );
    } else if let Some(new_table) = new_table {
        let diff = routex::diff::diff_tables(old_table, &new_table);
        let _ = writeln!(
            out,
            "\nroutex diff of the change:\n{}",
            routex::render::diff::render_human(&diff, "base_config", "patched").trim_end()
        );
    }
    if let Some(path) = &a.write_config {
        if let Err(e) = std::fs::write(path, &config_text) {
            return usage_error(format!("{}: cannot write: {e}", path.display()));
        }
        eprintln!(
            "routex sim tune: wrote the patched configuration to {}",
            path.display()
        );
    }
    eprintln!(
        "routex sim tune: {} runs, {} simulated requests in {wall:.1} s wall",
        result.runs, result.simulated_requests
    );
    0
}
