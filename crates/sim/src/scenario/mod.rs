//! The scenario file (docs/simulator-model.md A10.1): schema, validation and policy
//! compilation. Every problem becomes a `Diagnostic` pointing into the JSON
//! text where practical; unknown fields are rejected.

mod spans;
mod validate;
pub mod window;

use super::engine::EngineParams;
use super::park::WaitMode;
use super::policy::{self, PolicyKind};
use super::pylon::{Mismatch, PublishedMax, PylonConfig, TpsMode};
use super::run::SimSettings;
use super::time::{from_ms, Micros, US_PER_MS};
use super::topology::{Topology, TopologySpec};
use super::workload::trace::{Limits, Trace, TraceSpec};
use super::workload::{WorkloadSource, WorkloadSpec};
use indexmap::IndexMap;
use routex::check;
use routex::diag::{Code, Diagnostic, Report, Severity, Span};
use routex::ir::{RouteTable, Settings};
use serde::{Deserialize, Serialize};
use spans::Spans;
use std::path::Path;
use std::sync::Arc;

/// The built-in default scenario: topology A3, profile A, workload R and the
/// policies of A7.3.
pub const DEFAULT_SCENARIO: &str = include_str!("default.json");
pub const DEFAULT_SOURCE: &str = "<built-in default scenario>";

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    pub name: String,
    pub seeds: Vec<u64>,
    pub warmup_s: f64,
    pub measure_s: f64,
    /// Offered rates; for a trace, `trace.speedups` may give them instead.
    #[serde(default)]
    pub rates_rps: Vec<f64>,
    pub topology: TopologySpec,
    pub engine: EngineParams,
    pub pylon: PylonSpec,
    pub router: RouterSpec,
    pub client: ClientSpec,
    /// The synthetic workload; absent when `trace` is given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload: Option<WorkloadSpec>,
    /// Trace replay instead of the synthetic workload.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<TraceSpec>,
    #[serde(default)]
    pub base_config: Option<serde_json::Value>,
    pub policies: IndexMap<String, String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PylonSpec {
    pub heartbeat_ms: u64,
    /// Change-driven publishing (A2 `Publish`, A14): at most one extra
    /// publication per this many ms after state changes; `null` = off.
    #[serde(default)]
    pub coalesce_ms: Option<u64>,
    pub input_tps: InputTpsSpec,
    pub max_input_tps: MaxInputTpsSpec,
    pub mismatch: MismatchSpec,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InputTpsSpec {
    pub mode: TpsModeSpec,
    pub initial: f64,
    pub window: usize,
    pub floor_ms: f64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TpsModeSpec {
    Window,
    Constant,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MaxInputTpsSpec {
    Constant,
    RunningMax,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MismatchSpec {
    pub enabled: bool,
    pub min_delta_ms: u64,
    pub tolerance: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RouterSpec {
    pub max_retries: u32,
    pub recheck_ms: u64,
    pub retry_sleep_ms: [u64; 2],
    pub routing_key: String,
    pub model: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClientSpec {
    pub request_slo_ms: u64,
    pub max_wait_ms: u64,
    pub timeout_ms: u64,
    pub ttft_slo_ms: u64,
}

/// A compiled policy of the scenario.
#[derive(Clone, Debug)]
pub struct NamedPolicy {
    pub name: String,
    pub text: String,
    pub kind: PolicyKind,
}

/// A validated scenario, ready to run.
#[derive(Clone, Debug)]
pub struct Prepared {
    pub file: ScenarioFile,
    pub settings: SimSettings,
    pub policies: Vec<NamedPolicy>,
    /// Warnings only (errors make `load` fail).
    pub warnings: Report,
    /// What the replayed trace holds, when the workload is a trace.
    pub trace: Option<TraceSummary>,
    /// The replayed trace itself (for the cut warnings and rate checks).
    pub replayed: Option<Arc<Trace>>,
    /// The scenario file's warm-up and window when an override (`--quick`)
    /// replaced them.
    pub asked_window: Option<(f64, f64)>,
}

/// A replayed trace's totals (written to `summary.json`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TraceSummary {
    pub requests: usize,
    pub span_s: f64,
    pub native_rps: f64,
    pub distinct_keys: usize,
    pub distinct_blocks: u32,
}

impl Prepared {
    /// `--quick`: seed 1, 30 s warmup, 90 s measured.
    pub fn quick(&mut self) {
        self.asked_window
            .get_or_insert((self.file.warmup_s, self.file.measure_s));
        self.file.seeds = vec![1];
        self.set_window(30.0, 90.0);
    }

    /// `--rng-seed N`.
    pub fn only_seed(&mut self, seed: u64) {
        self.file.seeds = vec![seed];
    }

    /// The command line's overrides: `--quick`, then `--rng-seed`, then the
    /// waiting mode (`fast` under `--quick` unless one is given, else
    /// `default_mode`).
    pub fn apply(&mut self, overrides: &Overrides, default_mode: WaitMode) {
        if overrides.quick {
            self.quick();
        }
        if let Some(seed) = overrides.rng_seed {
            self.only_seed(seed);
        }
        self.settings.mode = match overrides.mode {
            Some(mode) => mode,
            None if overrides.quick => WaitMode::Fast,
            None => default_mode,
        };
    }

    /// Sets the warm-up and the measured window, in simulated seconds.
    pub fn set_window(&mut self, warmup_s: f64, measure_s: f64) {
        self.file.warmup_s = warmup_s;
        self.file.measure_s = measure_s;
        self.settings.warmup_s = warmup_s;
        self.settings.measure_s = measure_s;
    }

    /// The base configuration's route table, which policy strings compile
    /// against (the permissive default without `base_config`).
    pub fn route_table(&self) -> Option<RouteTable> {
        let json = self
            .file
            .base_config
            .as_ref()
            .map(|v| serde_json::to_string(v).unwrap_or_default())
            .unwrap_or_default();
        base_table(&self.file, &json, 0, &mut Vec::new())
    }
}

/// What the command line changes in a loaded scenario
/// ([`Prepared::apply`]): the options `sim run`, `sim merge` and `sim tune`
/// share.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Overrides {
    /// Seed 1 only, 30 s warm-up and 90 s measured.
    pub quick: bool,
    /// Replaces the scenario's seeds with this one.
    pub rng_seed: Option<u64>,
    /// The waiting model; `None` leaves the default.
    pub mode: Option<WaitMode>,
}

/// Where a scenario's files are found.
#[derive(Clone, Copy, Debug, Default)]
pub struct LoadOptions<'a> {
    /// The scenario file's directory: a relative `trace.path` starts here.
    pub dir: Option<&'a Path>,
    /// Replaces `trace.path` (the command line's `--trace`).
    pub trace: Option<&'a Path>,
}

/// Parses and validates a scenario; `Err` holds every error (and warning).
pub fn load(source_name: &str, text: &str) -> Result<Prepared, Report> {
    load_with(source_name, text, LoadOptions::default())
}

/// [`load`] with the scenario's directory and overrides, for traces.
pub fn load_with(
    source_name: &str,
    text: &str,
    options: LoadOptions<'_>,
) -> Result<Prepared, Report> {
    let mut report = Report::new(source_name, text);
    let mut file: ScenarioFile = match serde_json::from_str(text) {
        Ok(f) => f,
        Err(e) => {
            report.diagnostics.push(json_error(text, &e));
            return Err(report);
        }
    };
    let mut errors = Vec::new();
    let spans = Spans::new(text);
    let mut invalid = |path: &str, message: String| {
        errors.push(Diagnostic::new(Code::InvalidValue, spans.at(path), message));
    };
    validate::numbers(&file, &mut invalid);
    let mut workload: Option<Arc<dyn WorkloadSource>> = file
        .workload
        .clone()
        .map(|w| Arc::new(w) as Arc<dyn WorkloadSource>);
    let mut summary = None;
    let mut replayed = None;
    if let Some(spec) = file.trace.clone() {
        if let Some(trace) = read_trace(&spec, options, &mut invalid) {
            validate::trace_window(&mut file, &trace, &mut invalid);
            window::check_trace_rates(&file, &trace, &mut invalid);
            summary = Some(TraceSummary {
                requests: trace.len(),
                span_s: trace.span_s(),
                native_rps: trace.native_rps(),
                distinct_keys: trace.distinct_keys(),
                distinct_blocks: trace.block_ids(),
            });
            let trace = Arc::new(trace);
            replayed = Some(Arc::clone(&trace));
            workload = Some(trace);
        }
    }
    let at = spans.value("base_config");
    let base_json = text.get(at.start..at.end).unwrap_or_default();
    let table = base_table(&file, base_json, at.start, &mut errors);
    let mut policies = Vec::new();
    if let Some(table) = &table {
        policies = compile_policies(&file, text, &spans, table, &mut errors);
    }
    report.diagnostics = errors;
    let Some(workload) = workload.filter(|_| !report.has_errors()) else {
        return Err(report);
    };
    let mut settings = settings(&file, workload);
    // KV statistics are published when a policy reads them, so that the
    // outputs of every other scenario stay as they were.
    settings.publish_kv = policies.iter().any(|p| p.kind.reads_kv());
    Ok(Prepared {
        file,
        settings,
        policies,
        warnings: report,
        trace: summary,
        replayed,
        asked_window: None,
    })
}

/// Streams the trace file; each malformed line is one diagnostic at
/// `trace.path` naming its line.
fn read_trace(
    spec: &TraceSpec,
    options: LoadOptions<'_>,
    invalid: &mut dyn FnMut(&str, String),
) -> Option<Trace> {
    let path = match options.trace {
        Some(p) => p.to_path_buf(),
        None => match options.dir {
            Some(dir) => dir.join(&spec.path),
            None => Path::new(&spec.path).to_path_buf(),
        },
    };
    let file = match std::fs::File::open(&path) {
        Ok(f) => f,
        Err(e) => {
            invalid(
                "trace.path",
                format!("cannot read trace {}: {e}", path.display()),
            );
            return None;
        }
    };
    match Trace::read(std::io::BufReader::new(file), spec, Limits::default()) {
        Ok(t) => Some(t),
        Err(errors) => {
            for e in errors {
                invalid(
                    "trace.path",
                    format!("trace {} line {}: {}", path.display(), e.line, e.message),
                );
            }
            None
        }
    }
}

fn settings(f: &ScenarioFile, workload: Arc<dyn WorkloadSource>) -> SimSettings {
    let p = &f.pylon;
    SimSettings {
        topology: Topology::resolve(&f.topology),
        engine: f.engine.clone(),
        pylon: PylonConfig {
            initial_tps: p.input_tps.initial,
            mode: match p.input_tps.mode {
                TpsModeSpec::Window => TpsMode::Window {
                    window: p.input_tps.window,
                    floor_us: from_ms(p.input_tps.floor_ms),
                },
                TpsModeSpec::Constant => TpsMode::Constant,
            },
            published_max: match p.max_input_tps {
                MaxInputTpsSpec::Constant => PublishedMax::Constant,
                MaxInputTpsSpec::RunningMax => PublishedMax::RunningMax,
            },
            slots: f.engine.max_concurrency(),
            mismatch: p.mismatch.enabled.then_some(Mismatch {
                min_delta_ms: p.mismatch.min_delta_ms,
                tolerance: p.mismatch.tolerance,
            }),
        },
        heartbeat_us: p.heartbeat_ms.saturating_mul(US_PER_MS),
        coalesce_us: p.coalesce_ms.map(|ms| ms.saturating_mul(US_PER_MS)),
        max_retries: f.router.max_retries,
        routing_key: f.router.routing_key.clone(),
        model: f.router.model.clone(),
        request_slo_ms: f.client.request_slo_ms,
        max_wait_ms: f.client.max_wait_ms,
        timeout_us: f.client.timeout_ms.saturating_mul(US_PER_MS),
        ttft_slo_us: f.client.ttft_slo_ms.saturating_mul(US_PER_MS) as Micros,
        workload,
        warmup_s: f.warmup_s,
        measure_s: f.measure_s,
        mode: WaitMode::Faithful,
        profiles: Vec::new(),
        max_in_flight: None,
        faults: Vec::new(),
        keep_detail: false,
        publish_kv: false,
    }
}

/// serde_json's line and column as a one-character span.
fn json_error(text: &str, e: &serde_json::Error) -> Diagnostic {
    let line_start: usize = text
        .split_inclusive('\n')
        .take(e.line().saturating_sub(1))
        .map(str::len)
        .sum();
    let at = (line_start + e.column().saturating_sub(1)).min(text.len());
    let message = e.to_string();
    let code = match e.classify() {
        serde_json::error::Category::Data if message.starts_with("unknown field") => {
            Code::UnknownField
        }
        serde_json::error::Category::Data if message.starts_with("missing field") => {
            Code::MissingField
        }
        serde_json::error::Category::Data if message.starts_with("invalid type") => {
            Code::InvalidType
        }
        serde_json::error::Category::Data => Code::InvalidValue,
        _ => Code::InvalidJson,
    };
    let message = match message.rfind(" at line ") {
        Some(i) => &message[..i],
        None => &message,
    };
    let message = routex::json_words::user_message(message);
    Diagnostic::new(
        code,
        Span::new(at, (at + 1).min(text.len()).max(at)),
        message,
    )
}

/// The base configuration: permissive unless `base_config` is an object.
/// Its own text (the slice of the scenario) is read as an lb-config.json,
/// so its diagnostics point at their keys inside the scenario.
/// `json` is the base configuration's text, at byte `offset` of the
/// scenario.
fn base_table(
    f: &ScenarioFile,
    json: &str,
    offset: usize,
    errors: &mut Vec<Diagnostic>,
) -> Option<RouteTable> {
    match &f.base_config {
        None | Some(serde_json::Value::Null) => return Some(check::permissive_table()),
        Some(_) => {}
    }
    let (table, report) = routex::config::load_table("base_config.json", json);
    for d in report.diagnostics.iter().filter(|d| d.is_error()) {
        errors.push(Diagnostic {
            span: Span::new(offset + d.span.start, offset + d.span.end),
            message: format!("base_config: {}", d.message),
            // The span is the key now, not the text the fix would replace.
            suggestion: None,
            ..d.clone()
        });
    }
    if report.has_errors() {
        None
    } else {
        table
    }
}

fn compile_policies(
    f: &ScenarioFile,
    text: &str,
    spans: &Spans,
    table: &RouteTable,
    errors: &mut Vec<Diagnostic>,
) -> Vec<NamedPolicy> {
    let mut out = Vec::new();
    for (name, policy_text) in &f.policies {
        // The string literal's content, between its quotes.
        let path = format!("policies.{name}");
        let literal = spans
            .node(&path)
            .filter(|_| !name.contains('.'))
            .map(|n| n.span)
            .filter(|sp| sp.end > sp.start + 1);
        let to_file = |d: Diagnostic| match literal {
            Some(sp) => {
                let (start, raw) = (sp.start + 1, &text[sp.start + 1..sp.end - 1]);
                Diagnostic {
                    span: Span::new(
                        start + raw_offset(raw, policy_text, d.span.start),
                        start + raw_offset(raw, policy_text, d.span.end),
                    ),
                    message: format!("policy `{name}`: {}", d.message),
                    ..d
                }
            }
            None => Diagnostic {
                span: spans.value("policies"),
                message: format!("policy `{name}`: {}", d.message),
                suggestion: None,
                ..d
            },
        };
        match policy::compile(table, &f.router.model, policy_text) {
            Err(ds) => errors.extend(ds.into_iter().map(to_file)),
            Ok((kind, warnings)) => {
                errors.extend(warnings.into_iter().map(to_file));
                let whole = Span::new(0, policy_text.len());
                for d in simulator_checks(&kind, whole) {
                    errors.push(to_file(d));
                }
                out.push(NamedPolicy {
                    name: name.clone(),
                    text: policy_text.clone(),
                    kind,
                });
            }
        }
    }
    out
}

/// Rules of A10.1 the core itself does not enforce.
fn simulator_checks(kind: &PolicyKind, whole: Span) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let (admission, _kv) = match kind {
        PolicyKind::Core(p) => (
            p.admission.max_input_work_seconds.is_some(),
            match &p.settings {
                Settings::Pulsar(s) => s.consider_kv_free_tokens,
                Settings::PulsarWaitAndWiden(s) => s.consider_kv_free_tokens,
                _ => false,
            },
        ),
        PolicyKind::Legacy { settings, .. } => (false, settings.consider_kv_free_tokens),
        PolicyKind::Baseline(_) => (false, false),
    };
    if admission {
        out.push(Diagnostic::new(
            Code::InvalidValue,
            whole,
            "`max_input_work_seconds` cannot be simulated: input-work admission is not modelled",
        ));
    }
    let (floor, ceil) = kind.queue_bounds();
    if let (Some(fl), Some(ce)) = (floor, ceil) {
        if fl > ce {
            out.push(
                Diagnostic::new(
                    Code::FloorAboveCeil,
                    whole,
                    format!("the queue-time floor {fl} ms is above the ceiling {ce} ms"),
                )
                .with_severity(Severity::Error)
                .with_help("the simulator rejects it; the core would accept it"),
            );
        }
    }
    if kind.is_band_walk() && (floor.is_none() || ceil.is_none()) {
        out.push(
            Diagnostic::new(
                Code::NoQueueSlo,
                whole,
                "without both queue-time bounds this policy degenerates to plain Pulsar while rank 1 is feasible",
            )
            .with_severity(Severity::Warning),
        );
    }
    out
}

/// Maps a byte offset in the unescaped string to its offset in the raw JSON
/// literal; offsets past the end clamp.
fn raw_offset(raw: &str, unescaped: &str, offset: usize) -> usize {
    let mut raw_at = 0;
    for (i, c) in unescaped.char_indices() {
        if i >= offset {
            return raw_at;
        }
        let escaped = serde_json::to_string(&c.to_string()).map_or(c.len_utf8(), |s| s.len() - 2);
        raw_at += escaped;
    }
    raw_at.min(raw.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_offsets_skip_escapes() {
        let unescaped = r#"a(seed="x")"#;
        let raw = r#"a(seed=\"x\")"#;
        assert_eq!(raw_offset(raw, unescaped, 0), 0);
        assert_eq!(raw_offset(raw, unescaped, 7), 7); // the opening quote
        assert_eq!(raw_offset(raw, unescaped, 8), 9); // x
        assert_eq!(raw_offset(raw, unescaped, 99), raw.len());
    }

    #[test]
    fn json_errors_point_at_the_problem() {
        let text = "{\n  \"name\": \"x\",\n  \"bogus\": 1\n}";
        let e = serde_json::from_str::<ScenarioFile>(text).unwrap_err();
        let d = json_error(text, &e);
        assert_eq!(d.code, Code::UnknownField);
        assert_eq!(routex::diag::line_column(text, d.span.start).0, 3);
        let e = serde_json::from_str::<ScenarioFile>("{\"name\": }").unwrap_err();
        assert_eq!(json_error("{\"name\": }", &e).code, Code::InvalidJson);
    }
}
