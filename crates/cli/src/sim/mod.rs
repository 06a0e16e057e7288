//! `routex sim`: the routing simulator's command line (docs/simulator-model.md A10.2).
//! Argument parsing, progress and file writing only; the simulator lives in
//! `routex_sim`.

mod bench;
pub mod capacity;
pub mod inputs;
pub mod tune;

use crate::human;
use routex::diag::Report;
use routex_sim::scenario::{self, Prepared};
use routex_sim::WaitMode;
use routex_sim::{report::output, report::results, sweep, sweep::shard};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Arguments of `routex sim`.
#[derive(Debug, clap::Args)]
pub struct SimArgs {
    #[command(subcommand)]
    pub command: SimCommand,
}

#[derive(Debug, clap::Subcommand)]
pub enum SimCommand {
    /// Runs a scenario (the built-in five-region default without a file).
    Run(RunArgs),
    /// Checks a scenario (and the trace and base configuration it names)
    /// without running it, reporting every problem in the chosen format.
    Check(crate::sim::inputs::CheckArgs),
    /// Writes a minimal scenario for a model of a configuration, every
    /// constant at its documented default.
    Init(crate::sim::inputs::InitArgs),
    /// Combines the shard files of `sim run --shard K/N` into the files an
    /// unsharded run writes.
    Merge(MergeArgs),
    /// Searches pulsar-wait-and-widen parameters for the highest goodput
    /// within a TTFT p99 bound at one offered load.
    Tune(crate::sim::tune::TuneArgs),
    /// Finds, per policy, the highest offered rate sustained in steady
    /// state with a TTFT SLO attainment, by bisection over the rate.
    Capacity(crate::sim::capacity::CapacityArgs),
}

/// The options that change a loaded scenario, shared by `sim run`,
/// `sim merge` and `sim tune` (flattened into each).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ScenarioArgs {
    /// Seed 1 only, 30 s warmup and 90 s measured.
    #[arg(long)]
    pub quick: bool,
    /// Replaces the scenario's seeds with this one.
    #[arg(long)]
    pub rng_seed: Option<u64>,
    /// Waiting model: `faithful` polls as a real router, `fast` parks
    /// waiting requests until a wait ends or the view changes. Default:
    /// `fast` with `--quick` and for `sim tune`, `faithful` otherwise.
    #[arg(long, value_parser = ["faithful", "fast"])]
    pub mode: Option<String>,
    /// Replays this trace file instead of the scenario's `trace.path`.
    #[arg(long)]
    pub trace: Option<PathBuf>,
}

impl ScenarioArgs {
    /// The overrides [`Prepared::apply`] takes.
    pub fn overrides(&self) -> scenario::Overrides {
        scenario::Overrides {
            quick: self.quick,
            rng_seed: self.rng_seed,
            mode: self.mode.as_deref().and_then(WaitMode::parse),
        }
    }
}

/// Arguments of `routex sim run`.
#[derive(Debug, Clone, clap::Args)]
pub struct RunArgs {
    /// Scenario JSON file, or a stargate-bench YAML file (`.yaml`, `.yml`);
    /// omitted = the built-in default scenario.
    pub scenario: Option<PathBuf>,
    /// stargate-bench files only: replay this manifest's requests
    /// (stargate-bench's `inspect-manifest` JSON) instead of drawing them.
    #[arg(long)]
    pub manifest: Option<PathBuf>,
    #[command(flatten)]
    pub options: ScenarioArgs,
    /// Writes summary.json, summary.csv, timeseries.csv, backends.csv, plot.svg and backends.svg here.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Worker threads, at least 1 (runs are independent; output does not
    /// depend on it).
    #[arg(long, default_value_t = 1, value_parser = jobs)]
    pub jobs: usize,
    /// Runs only the K-th of N slices of the run matrix (K/N) and writes
    /// `shard-K-of-N.json` into `--out`; `sim merge` combines the shards.
    #[arg(long, value_parser = shard::Shard::parse)]
    pub shard: Option<shard::Shard>,
    /// Prints one row per run (per seed) instead of one per (policy,
    /// rate) cell.
    #[arg(long)]
    pub per_seed: bool,
}

/// Arguments of `routex sim merge`.
#[derive(Debug, Clone, clap::Args)]
pub struct MergeArgs {
    /// The shard files written by `sim run --shard K/N`, every K once.
    #[arg(required = true)]
    pub shards: Vec<PathBuf>,
    /// The scenario the shards ran; omitted = the built-in default.
    #[arg(long)]
    pub scenario: Option<PathBuf>,
    /// The options the shards ran with (they are checked).
    #[command(flatten)]
    pub options: ScenarioArgs,
    /// Writes summary.json, summary.csv, timeseries.csv, backends.csv, plot.svg and backends.svg here.
    #[arg(long)]
    pub out: PathBuf,
}

/// `--jobs`: a thread count of at least 1 (0 would run nothing).
pub fn jobs(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(0) => Err("at least 1 worker thread is needed".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(e.to_string()),
    }
}

/// Runs `routex sim`; returns the exit code (0 ok, 1 invalid scenario,
/// 2 usage or I/O).
pub fn run(args: &SimArgs) -> i32 {
    match &args.command {
        SimCommand::Run(a) => run_scenario(a),
        SimCommand::Check(a) => crate::sim::inputs::check(a),
        SimCommand::Init(a) => crate::sim::inputs::init(a),
        SimCommand::Merge(a) => merge_shards(a),
        SimCommand::Tune(a) => crate::sim::tune::run(a),
        SimCommand::Capacity(a) => crate::sim::capacity::run(a),
    }
}

/// One report's diagnostics through the shared human renderer, on stderr.
pub fn print_report(report: &Report) {
    print_reports(std::slice::from_ref(report));
}

/// Diagnostics through the shared human renderer, on stderr.
pub fn print_reports(reports: &[Report]) {
    if reports.iter().all(|r| r.diagnostics.is_empty()) {
        return;
    }
    let style = crate::output::human_style(crate::output::Stream::Stderr);
    eprint!("{}", human::render(reports, style));
}

/// Warnings that are not about a place in the scenario (cuts, transient
/// cells), one `warning:` line each on stderr.
pub fn print_warnings(warnings: &[String]) {
    let mut err = std::io::stderr().lock();
    for w in warnings {
        let _ = writeln!(err, "warning: {w}");
    }
}

/// Loads the scenario (file or built-in) and applies the overrides; the
/// waiting mode defaults to `default_mode` unless `--quick` or `--mode`
/// says otherwise. Diagnostics (the scenario's, then those of the files it
/// names) go to stderr.
pub fn prepare(
    scenario_path: Option<&Path>,
    a: &ScenarioArgs,
    default_mode: WaitMode,
) -> Result<Prepared, i32> {
    let mut prepared = match crate::sim::inputs::load(scenario_path, a.trace.as_deref())? {
        Ok(p) => p,
        Err(failure) => {
            print_reports(&failure.reports());
            return Err(1);
        }
    };
    print_reports(std::slice::from_ref(&prepared.warnings));
    print_reports(&prepared.file_warnings);
    prepared.apply(&a.overrides(), default_mode);
    Ok(prepared)
}

fn run_scenario(a: &RunArgs) -> i32 {
    if let Some(path) = a
        .scenario
        .as_deref()
        .filter(|p| crate::sim::bench::is_bench(p))
    {
        return crate::sim::bench::run(path, a);
    }
    let prepared = match prepare(a.scenario.as_deref(), &a.options, WaitMode::Faithful) {
        Ok(p) => p,
        Err(code) => return code,
    };
    if let Some(dir) = &a.out {
        if let Err(e) = std::fs::create_dir_all(dir) {
            return crate::output::usage_error(format!("{}: cannot create: {e}", dir.display()));
        }
    }
    print_warnings(&prepared.cut_warnings());
    let started = Instant::now();
    let tty = std::io::stderr().is_terminal();
    let mut progress = |done: usize, total: usize| {
        if tty {
            let width = 30;
            let filled = done * width / total.max(1);
            eprint!(
                "\r[{}{}] {done}/{total} runs, {:.1} s",
                "#".repeat(filled),
                " ".repeat(width - filled),
                started.elapsed().as_secs_f64()
            );
            if done == total {
                eprintln!();
            }
        }
    };
    let all = sweep::run_keys(&prepared);
    let owned: Vec<usize> = (0..all.len())
        .filter(|&i| a.shard.is_none_or(|s| s.owns(i)))
        .collect();
    let keys: Vec<sweep::RunKey> = owned.iter().map(|&i| all[i]).collect();
    let stop = crate::interrupt::flag();
    let runs = sweep::sweep_keys_until(&prepared, &keys, a.jobs.max(1), stop, &mut progress);
    let interrupted = crate::interrupt::interrupted();
    if interrupted && tty {
        // The progress line ends only when every run is done.
        eprintln!();
    }
    let wall = started.elapsed().as_secs_f64();
    let mut stdout = std::io::stdout().lock();
    let table = if a.per_seed {
        output::table_per_seed(&prepared, &runs)
    } else {
        output::table(&prepared, &runs)
    };
    let _ = stdout.write_all(table.as_bytes());
    let _ = stdout.write_all(output::LEGEND.as_bytes());
    let requests: u64 = runs.iter().map(|r| r.result.stats.requests).sum();
    let decisions: u64 = runs.iter().map(|r| r.result.stats.decisions).sum();
    let reused: u64 = runs.iter().map(|r| r.result.stats.decisions_reused).sum();
    let events: u64 = runs.iter().map(|r| r.result.stats.events).sum();
    let _ = stdout.flush();
    eprintln!(
        "{} runs ({} mode), {requests} simulated requests ({decisions} decisions, {reused} of them a lasting Unavailable reused; {events} events) in {wall:.1} s wall ({:.0} requests/s)",
        runs.len(),
        prepared.settings.mode.name(),
        requests as f64 / wall.max(1e-9)
    );
    let _ = stdout.flush();
    print_warnings(&output::run_warnings(&prepared, &runs));
    if interrupted {
        eprintln!(
            "routex sim run: interrupted after {} of {} runs{}",
            runs.len(),
            keys.len(),
            match (&a.out, a.shard) {
                (Some(dir), None) => format!(
                    "; the finished runs are in {} marked incomplete",
                    dir.display()
                ),
                (Some(_), Some(_)) => "; no shard file written (it would be incomplete)".into(),
                (None, _) => String::new(),
            }
        );
        if let (Some(dir), None) = (&a.out, a.shard) {
            let written = write_files(dir, &prepared, prepared.settings.mode.name(), &runs, true);
            if let Err(e) = written {
                return crate::output::usage_error(format!("{}: cannot write: {e}", dir.display()));
            }
        }
        return 130;
    }
    if let Some(sh) = a.shard {
        let Some(dir) = &a.out else {
            return 0;
        };
        let indexed: Vec<(usize, &sweep::RunOutput)> = owned.iter().copied().zip(&runs).collect();
        let text = shard::write(&fingerprint(&prepared), sh, all.len(), &indexed);
        return match std::fs::write(dir.join(sh.file_name()), text) {
            Ok(()) => 0,
            Err(e) => crate::output::usage_error(format!("{}: cannot write: {e}", dir.display())),
        };
    }
    match &a.out {
        Some(dir) => match write_outputs(dir, &prepared, prepared.settings.mode.name(), &runs) {
            Ok(()) => 0,
            Err(e) => crate::output::usage_error(format!("{}: cannot write: {e}", dir.display())),
        },
        None => 0,
    }
}

/// What a shard's results depend on: the scenario after the options, the
/// waiting mode and the replayed trace.
fn fingerprint(p: &Prepared) -> String {
    let file = serde_json::to_string(&p.file).unwrap_or_default();
    let trace = serde_json::to_string(&p.trace).unwrap_or_default();
    shard::fingerprint(&[&file, p.settings.mode.name(), &trace])
}

/// `sim merge`: the shards' runs in run order, then the six files.
fn merge_shards(a: &MergeArgs) -> i32 {
    let prepared = match prepare(a.scenario.as_deref(), &a.options, WaitMode::Faithful) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let mut files = Vec::new();
    for path in &a.shards {
        match crate::input::read_text(path) {
            Ok(text) => files.push((path.display().to_string(), text)),
            Err(e) => return crate::output::usage_error(e),
        }
    }
    let keys = sweep::run_keys(&prepared);
    let runs = match shard::merge(&fingerprint(&prepared), &keys, &files) {
        Ok(r) => r,
        Err(e) => return crate::output::usage_error(format!("sim merge: {e}")),
    };
    if let Err(e) = std::fs::create_dir_all(&a.out) {
        return crate::output::usage_error(format!("{}: cannot create: {e}", a.out.display()));
    }
    match write_outputs(&a.out, &prepared, prepared.settings.mode.name(), &runs) {
        Ok(()) => {
            println!(
                "{} runs from {} shards written to {}",
                runs.len(),
                files.len(),
                a.out.display()
            );
            0
        }
        Err(e) => crate::output::usage_error(format!("{}: cannot write: {e}", a.out.display())),
    }
}

/// The six result files.
pub fn write_outputs(
    dir: &Path,
    prepared: &Prepared,
    mode: &str,
    runs: &[sweep::RunOutput],
) -> std::io::Result<()> {
    write_files(dir, prepared, mode, runs, false)
}

/// The six result files; `incomplete` (an interrupted sweep) is recorded
/// in summary.json.
fn write_files(
    dir: &Path,
    prepared: &Prepared,
    mode: &str,
    runs: &[sweep::RunOutput],
    incomplete: bool,
) -> std::io::Result<()> {
    let files = results::contents(prepared, mode, runs, incomplete);
    for (name, text) in results::FILES.iter().zip(files) {
        std::fs::write(dir.join(name), text)?;
    }
    Ok(())
}
