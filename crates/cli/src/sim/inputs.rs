//! `routex sim check` and `routex sim init`, and the loading of a scenario
//! every `sim` command shares: the simulator's inputs, checked like `lint`
//! checks lb-config.json (docs/simulator.md, "Scenario files").

use crate::output::{emit, status, usage_error, Stream};
use crate::Format;
use routex::diag::Report;
use routex_sim::scenario::{self, init, LoadFailure, Prepared};
use std::io::BufRead;
use std::path::{Component, Path, PathBuf};

/// Arguments of `routex sim check`.
#[derive(Debug, Clone, clap::Args)]
pub struct CheckArgs {
    /// Scenario JSON file; omitted = the built-in default scenario.
    pub scenario: Option<PathBuf>,
    /// Checks this trace file instead of the scenario's `trace.path`.
    #[arg(long)]
    pub trace: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
    /// Exit 1 on warnings too.
    #[arg(long)]
    pub deny_warnings: bool,
}

/// Arguments of `routex sim init`.
#[derive(Debug, Clone, clap::Args)]
pub struct InitArgs {
    /// The lb-config.json or route file the scenario simulates.
    #[arg(long)]
    pub config: PathBuf,
    /// The model to simulate: one the configuration lists.
    #[arg(long)]
    pub model: String,
    /// Replays this trace (Mooncake JSONL, or a CSV or JSONL session log)
    /// instead of the synthetic workload.
    #[arg(long)]
    pub trace: Option<PathBuf>,
    /// Growing conversations (turns that extend their prompt, think time,
    /// retries) instead of the synthetic workload, on engine v2.
    #[arg(long, conflicts_with = "trace")]
    pub conversations: bool,
    /// Writes the scenario here (paths in it relative to its directory)
    /// instead of stdout (paths relative to the current directory).
    #[arg(long, short = 'o')]
    pub out: Option<PathBuf>,
}

/// Reads and loads a scenario (the built-in default without a path).
/// The outer `Err` is a usage error already printed (its exit status).
pub fn load(
    path: Option<&Path>,
    trace: Option<&Path>,
) -> Result<Result<Prepared, LoadFailure>, i32> {
    let (name, text) = match path {
        // The input limit applies to the scenario; a trace is streamed
        // and bounded by what it holds (the trace reader's limits).
        Some(path) => match crate::input::read_text(path) {
            Ok(t) => (crate::input::source_name(path), t),
            Err(e) => return Err(usage_error(e)),
        },
        None => (
            scenario::DEFAULT_SOURCE.to_string(),
            scenario::DEFAULT_SCENARIO.to_string(),
        ),
    };
    let options = scenario::LoadOptions {
        dir: path.and_then(Path::parent),
        trace,
        stargate: crate::target::chosen().or_else(|| crate::project::configured_target(path)),
    };
    Ok(scenario::load_with(&name, &text, options))
}

/// `routex sim check`: every diagnostic of the scenario and of the files it
/// names, on stdout in `--format`; exit 1 on an error.
pub fn check(args: &CheckArgs) -> i32 {
    let reports: Vec<Report> = match load(args.scenario.as_deref(), args.trace.as_deref()) {
        Err(code) => return code,
        Ok(Ok(prepared)) => std::iter::once(prepared.warnings)
            .chain(prepared.file_warnings)
            .collect(),
        Ok(Err(failure)) => failure.reports(),
    };
    // The scenario's project configuration: its levels and suppressions.
    let reports = match finish_reports(args.scenario.as_deref(), reports) {
        Ok(reports) => reports,
        Err(error) => return usage_error(error),
    };
    emit(&reports, args.format, Stream::Stdout, "file", false);
    status(&reports, args.deny_warnings)
}

/// `routex sim init`: the scenario text, checked by loading it before it
/// is written.
pub fn init(args: &InitArgs) -> i32 {
    let config_text = match crate::input::read_text(&args.config) {
        Ok(t) => t,
        Err(e) => return usage_error(e),
    };
    let config_name = crate::input::source_name(&args.config);
    let (table, report) = routex::config::load_table_for(
        &config_name,
        &config_text,
        crate::project::target_for_file(Some(&args.config)),
    );
    let table = match table {
        Some(t) if !report.has_errors() => t,
        _ => {
            emit(&[report], Format::Human, Stream::Stderr, "file", false);
            return crate::output::FAILED;
        }
    };
    let algorithm = match table.models.get(&args.model) {
        Some(entry) => entry.definition.policy.algorithm.name(),
        None if table.models.is_empty() => table.default.policy.algorithm.name(),
        None => {
            let hint = crate::check::unlisted_model_hint(&table, &args.model);
            return usage_error(format!(
                "model '{}' is not listed in {config_name}{hint}",
                args.model
            ));
        }
    };
    let out_dir = match &args.out {
        Some(out) => out.parent().map(Path::to_path_buf).unwrap_or_default(),
        None => PathBuf::new(),
    };
    let config_path = relative(&args.config, &out_dir);
    let trace_path = args.trace.as_ref().map(|t| relative(t, &out_dir));
    let format = match &args.trace {
        Some(t) => match first_line(t) {
            Ok(line) => Some(init::guess_format(&line)),
            Err(e) => return usage_error(format!("{}: {e}", t.display())),
        },
        None => None,
    };
    let name = args.out.as_ref().and_then(|o| o.file_stem()).map_or_else(
        || format!("{}-scenario", args.model),
        |s| s.to_string_lossy().into_owned(),
    );
    let mut spec = init::InitSpec {
        name: &name,
        config_path: &config_path,
        model: &args.model,
        algorithm,
        trace: trace_path
            .as_deref()
            .zip(format)
            .map(|(path, format)| init::TraceInit {
                path,
                format,
                span_s: None,
            }),
        conversations: args.conversations,
    };
    // Loaded as it will be read, from its own directory: once for the
    // trace's span (the window covers it), once more to check the result.
    let dir = if out_dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        &out_dir
    };
    let options = scenario::LoadOptions {
        dir: Some(dir),
        trace: None,
        stargate: crate::target::chosen(),
    };
    let source = args.out.as_ref().map_or_else(
        || "<sim init>".to_string(),
        |o| crate::input::source_name(o),
    );
    let mut text = init::scenario(&spec);
    if let Some(trace) = spec.trace.as_mut() {
        if let Ok(p) = scenario::load_with(&source, &text, options) {
            trace.span_s = p.trace.map(|t| t.span_s);
            text = init::scenario(&spec);
        }
    }
    if let Err(failure) = scenario::load_with(&source, &text, options) {
        let reports = failure.reports();
        emit(&reports, Format::Human, Stream::Stderr, "file", true);
        return crate::output::FAILED;
    }
    match &args.out {
        Some(out) => match std::fs::write(out, &text) {
            Ok(()) => crate::output::OK,
            Err(e) => usage_error(format!("{}: cannot write: {e}", out.display())),
        },
        None => {
            crate::output::stdout(&text);
            crate::output::OK
        }
    }
}

/// The first non-blank line of a file (bounded: at most 1 MiB is read).
fn first_line(path: &Path) -> std::io::Result<String> {
    let file = std::fs::File::open(path)?;
    let mut reader = std::io::BufReader::new(std::io::Read::take(file, 1 << 20));
    let mut line = String::new();
    loop {
        line.clear();
        if reader.read_line(&mut line)? == 0 || !line.trim().is_empty() {
            return Ok(line);
        }
    }
}

/// `target` as a path relative to `dir` (both as the user gave them,
/// resolved against the current directory), with `/` separators; the
/// target as given when the two share no root.
fn relative(target: &Path, dir: &Path) -> String {
    let absolute = |p: &Path| -> Option<PathBuf> {
        let p = if p.as_os_str().is_empty() {
            Path::new(".")
        } else {
            p
        };
        std::fs::canonicalize(p).ok()
    };
    let (Some(target_abs), Some(dir_abs)) = (absolute(target), absolute(dir)) else {
        return target.display().to_string();
    };
    let t: Vec<Component> = target_abs.components().collect();
    let d: Vec<Component> = dir_abs.components().collect();
    let common = t.iter().zip(&d).take_while(|(a, b)| a == b).count();
    if common == 0 {
        return target.display().to_string();
    }
    let mut parts: Vec<String> = vec!["..".to_string(); d.len() - common];
    parts.extend(
        t[common..]
            .iter()
            .map(|c| c.as_os_str().to_string_lossy().into_owned()),
    );
    parts.join("/")
}

/// `reports` finished with the project configuration of `scenario` (the
/// built-in scenario: the working directory's), then the configuration's
/// own problems.
fn finish_reports(
    scenario: Option<&Path>,
    mut reports: Vec<Report>,
) -> Result<Vec<Report>, crate::input::UsageError> {
    let mut projects = crate::project::Projects::new(&crate::project::ProjectArgs::default())?;
    for report in &mut reports {
        projects.finish(scenario, report)?;
    }
    reports.extend(projects.config_reports());
    Ok(reports)
}
