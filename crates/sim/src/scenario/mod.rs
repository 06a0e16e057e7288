//! The scenario file (docs/simulator-model.md A10.1): schema, validation and policy
//! compilation. Every problem becomes a `Diagnostic` pointing into the JSON
//! text where practical; unknown fields are rejected.

mod admission;
mod arrival;
mod base;
mod classes;
mod conversations;
pub mod faults;
mod file;
pub mod init;
mod limits;
mod load;
mod profiles;
pub mod schema;
mod spans;
mod trace_report;
mod validate;
pub mod window;

use crate::kernel::time::{from_ms, Micros, US_PER_MS};
use crate::routers::park::WaitMode;
use crate::routers::policy::{self, PolicyKind};
use crate::run::SimSettings;
use crate::workload::conversations::ConversationSpec;
use crate::workload::trace::{Limits, Trace, TraceSpec};
use crate::workload::{WorkloadSource, WorkloadSpec};
use crate::world::engine::EngineParams;
use crate::world::pylon::{Mismatch, PublishedMax, PylonConfig, TpsMode};
use crate::world::topology::{Topology, TopologySpec};
use indexmap::IndexMap;
use routex::diag::{Code, Diagnostic, Report, Severity, Span};
use routex::ir::{RouteTable, Target};
use serde::{Deserialize, Serialize};
use spans::Spans;
use std::path::Path;
use std::sync::Arc;

/// The built-in default scenario: topology A3, profile A, workload R and the
/// policies of A7.3.
pub const DEFAULT_SCENARIO: &str = include_str!("default.json");
pub const DEFAULT_SOURCE: &str = "<built-in default scenario>";

/// A compiled policy of the scenario.
#[derive(Clone, Debug)]
pub struct NamedPolicy {
    pub name: String,
    pub text: String,
    pub kind: PolicyKind,
    /// The queue-mismatch admission of its runs' Pylons (`pylon.mismatch`,
    /// or its entry of `pylon.mismatch_by_policy`); `None`: off.
    pub admission: Option<Mismatch>,
}

/// A validated scenario, ready to run.
#[derive(Clone, Debug)]
pub struct Prepared {
    pub file: ScenarioFile,
    pub settings: SimSettings,
    pub policies: Vec<NamedPolicy>,
    /// Warnings only (errors make `load` fail).
    pub warnings: Report,
    /// Warnings of the files the scenario names (a `base_config` file).
    pub file_warnings: Vec<Report>,
    /// What the replayed trace holds, when the workload is a trace.
    pub trace: Option<TraceSummary>,
    /// The replayed trace itself (for the cut warnings and rate checks).
    pub replayed: Option<Arc<Trace>>,
    /// The scenario file's warm-up and window when an override (`--quick`)
    /// replaced them.
    pub asked_window: Option<(f64, f64)>,
    /// The base configuration's route table (the permissive default
    /// without `base_config`).
    pub base_table: RouteTable,
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

    /// The settings of `policy`'s runs: the scenario's, with the policy's
    /// own queue-mismatch admission in every Pylon when it differs.
    pub fn settings_for(&self, policy: &NamedPolicy) -> std::borrow::Cow<'_, SimSettings> {
        let s = &self.settings;
        let same = s.pylon.mismatch == policy.admission
            && s.profiles
                .iter()
                .all(|p| p.pylon.mismatch == policy.admission);
        if same {
            return std::borrow::Cow::Borrowed(s);
        }
        let mut own = s.clone();
        own.pylon.mismatch = policy.admission;
        for p in &mut own.profiles {
            p.pylon.mismatch = policy.admission;
        }
        std::borrow::Cow::Owned(own)
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
        Some(self.base_table.clone())
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
    /// The scenario file's directory: a relative `trace.path` or
    /// `base_config` path starts here.
    pub dir: Option<&'a Path>,
    /// Replaces `trace.path` (the command line's `--trace`).
    pub trace: Option<&'a Path>,
    /// The target of a scenario that names none (the command line's
    /// `--stargate`).
    pub stargate: Option<Target>,
}

/// Why a scenario did not load: the scenario's own report, and those of the
/// files it names (a trace whose lines cannot be read, a `base_config`
/// file with errors), each pointing into its own text. The scenario's
/// report then holds one diagnostic naming each such file.
#[derive(Clone, Debug)]
pub struct LoadFailure {
    pub scenario: Report,
    pub files: Vec<Report>,
}

impl LoadFailure {
    /// The scenario's report first, then the files'.
    pub fn reports(self) -> Vec<Report> {
        std::iter::once(self.scenario).chain(self.files).collect()
    }
}

pub use file::{
    ClientSpec, InputTpsSpec, LastClusterStoreSpec, MaxInputTpsSpec, MismatchSpec, PylonSpec,
    RouterSpec, ScenarioFile, TpsModeSpec,
};
pub use load::{load, load_with};
