//! A scenario's `faults` (docs/simulator.md, "Faults"): how the fleet
//! changes during a run, read into the run's [`Fault`] list. A fault names a
//! backend or a cluster (a cluster's fault applies to each of its
//! backends), one trigger (`at_s` or `at_request`) and an action; each
//! problem is reported at the key it is about.

use super::spans::Spans;
use super::validate;
use super::ScenarioFile;
use crate::kernel::time::from_secs;
use crate::world::fleet::{Fault, FaultAction, Trigger};
use crate::world::topology::Topology;
use routex::diag::{Code, Diagnostic};
use serde::{Deserialize, Serialize};

/// The most entries of `faults`: the run looks each request's index up in
/// the list, so its length is a per-request cost.
pub const MAX_FAULTS: usize = 1_000;

/// One entry of `faults`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FaultSpec {
    /// When, in seconds from the run's start (warmup included).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_s: Option<f64>,
    /// When the request of this index (in arrival order, from 0) is sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_request: Option<u32>,
    /// A backend's id, or a cluster's (each of its backends).
    pub backend: String,
    pub action: FaultActionSpec,
    /// How long a `stats_outage` (required) or a `slow_down` (optional:
    /// else for the rest of the run) lasts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_s: Option<f64>,
    /// How many times slower a `slow_down` serves.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub factor: Option<f64>,
}

/// What a fault does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FaultActionSpec {
    /// The backend's registration ends.
    Remove,
    /// Its Pylon publishes nothing for `duration_s`.
    StatsOutage,
    /// Its engine serves `factor` times slower.
    SlowDown,
}

/// The accepted names of [`FaultActionSpec`] (the shape table's).
pub(super) const ACTIONS: [&str; 3] = ["remove", "stats_outage", "slow_down"];

/// The greatest slow-down factor (and the smallest is its inverse).
pub const MAX_FACTOR: f64 = 1_000.0;

/// The members a backend id names: the member of that id, or every member
/// of the cluster of that id.
fn members_named(topo: &Topology, id: &str) -> Option<Vec<usize>> {
    if let Some(c) = topo.backends.iter().find(|c| c.id == id) {
        return Some(c.members.clone().collect());
    }
    topo.members
        .iter()
        .position(|m| m.id == id)
        .map(|m| vec![m])
}

/// Checks every entry of `faults`; diagnostics go to `errors`. Ids are not
/// checked on a fleet too large to resolve (validate.rs reports its size).
pub(super) fn check(f: &ScenarioFile, spans: &Spans, errors: &mut Vec<Diagnostic>) {
    if f.faults.is_empty() {
        return;
    }
    let mut invalid = |path: &str, message: String| {
        errors.push(Diagnostic::new(Code::InvalidValue, spans.at(path), message));
    };
    if f.faults.len() > MAX_FAULTS {
        invalid(
            "faults",
            format!(
                "`faults` may have at most {MAX_FAULTS} entries, got {}",
                f.faults.len()
            ),
        );
        return;
    }
    let horizon = f.warmup_s + f.measure_s;
    for (i, fault) in f.faults.iter().enumerate() {
        let at = |key: &str| format!("faults.{i}.{key}");
        match (fault.at_s, fault.at_request) {
            (None, None) => invalid(
                &at("action"),
                "a fault needs a trigger: `at_s` (seconds from the run's start) or `at_request` (a request's index)".into(),
            ),
            (Some(_), Some(_)) => invalid(
                &at("at_request"),
                "a fault has one trigger: `at_s` or `at_request`, not both".into(),
            ),
            (Some(t), None) if !(t.is_finite() && t >= 0.0) => invalid(
                &at("at_s"),
                format!("`at_s` must be finite and >= 0, got {t}"),
            ),
            (Some(t), None) if horizon.is_finite() && t > horizon => invalid(
                &at("at_s"),
                format!("`at_s` {t} is after the run's end (`warmup_s` + `measure_s` = {horizon} s)"),
            ),
            _ => {}
        }
        match (fault.action, fault.duration_s) {
            (FaultActionSpec::StatsOutage, None) => invalid(
                &at("action"),
                "a `stats_outage` needs `duration_s`".into(),
            ),
            (FaultActionSpec::Remove, Some(_)) => invalid(
                &at("duration_s"),
                "a removal is for the rest of the run: `duration_s` applies to `stats_outage` and `slow_down` only".into(),
            ),
            (_, Some(d)) if !(d.is_finite() && d > 0.0) => invalid(
                &at("duration_s"),
                format!("`duration_s` must be finite and > 0, got {d}"),
            ),
            (_, Some(d)) if d > super::limits::MAX_HORIZON_S => invalid(
                &at("duration_s"),
                format!(
                    "`duration_s` must be at most {} s, got {d}",
                    super::limits::MAX_HORIZON_S
                ),
            ),
            _ => {}
        }
        match (fault.action, fault.factor) {
            (FaultActionSpec::SlowDown, None) => invalid(
                &at("action"),
                "a `slow_down` needs `factor` (how many times slower the backend serves)".into(),
            ),
            (FaultActionSpec::SlowDown, Some(x))
                if !(x.is_finite() && (1.0 / MAX_FACTOR..=MAX_FACTOR).contains(&x)) =>
            {
                invalid(
                    &at("factor"),
                    format!(
                        "`factor` must be between {} and {MAX_FACTOR}, got {x}",
                        1.0 / MAX_FACTOR
                    ),
                )
            }
            (FaultActionSpec::Remove | FaultActionSpec::StatsOutage, Some(_)) => {
                invalid(&at("factor"), "`factor` applies to `slow_down` only".into())
            }
            _ => {}
        }
    }
    if !validate::backends_resolvable(f) {
        return;
    }
    let topo = Topology::resolve(&f.topology);
    let names = topo.ids();
    for (i, fault) in f.faults.iter().enumerate() {
        if members_named(&topo, &fault.backend).is_some() {
            continue;
        }
        let name = &fault.backend;
        let d = Diagnostic::new(
            Code::InvalidValue,
            spans.at(&format!("faults.{i}.backend")),
            format!("`{name}` is no cluster or backend of the topology"),
        );
        errors.push(validate::unknown_name_help(
            d,
            name,
            &names,
            "the topology's clusters and backends",
            validate::ID_PATTERN,
        ));
    }
}

/// The run's faults, in the file's order (a cluster's, member after
/// member). Run on a checked scenario: an id that names nothing is skipped.
pub(super) fn resolve(f: &ScenarioFile, topo: &Topology) -> Vec<Fault> {
    let mut out = Vec::new();
    for fault in &f.faults {
        let trigger = match (fault.at_request, fault.at_s) {
            (Some(i), _) => Trigger::Request(i),
            (None, t) => Trigger::At(from_secs(t.unwrap_or(0.0))),
        };
        let action = match fault.action {
            FaultActionSpec::Remove => FaultAction::Remove,
            FaultActionSpec::StatsOutage => {
                FaultAction::StatsOutage(from_secs(fault.duration_s.unwrap_or(0.0)))
            }
            FaultActionSpec::SlowDown => FaultAction::SlowDown {
                factor: fault.factor.unwrap_or(1.0),
                duration: fault.duration_s.map(from_secs),
            },
        };
        for m in members_named(topo, &fault.backend).unwrap_or_default() {
            out.push(Fault {
                trigger,
                backend: m as u32,
                action,
            });
        }
    }
    out
}
