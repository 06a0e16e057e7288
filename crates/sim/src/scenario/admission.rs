//! Queue-mismatch admission per policy (docs/simulator.md, "Scenario
//! files"): `pylon.mismatch_by_policy` names policies of `policies` and
//! overrides any of `pylon.mismatch`'s keys for that policy's runs, as
//! a stargate-bench file sets `pylon_queue_admission` per algorithm. The
//! names are checked against `policies` (with a did-you-mean) and the
//! values by `pylon.mismatch`'s rules.

use super::spans::Spans;
use super::ScenarioFile;
use crate::world::pylon::Mismatch;
use routex::diag::{Code, Diagnostic};
use serde::{Deserialize, Serialize};

/// One policy's admission: each key absent keeps `pylon.mismatch`'s.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MismatchOverride {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_delta_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tolerance: Option<f64>,
}

/// The admission of policy `name`'s Pylons: `pylon.mismatch` with the
/// policy's override applied; `None` when it is off.
pub(super) fn for_policy(f: &ScenarioFile, name: &str) -> Option<Mismatch> {
    let base = &f.pylon.mismatch;
    let o = f.pylon.mismatch_by_policy.get(name);
    let enabled = o.and_then(|o| o.enabled).unwrap_or(base.enabled);
    enabled.then(|| Mismatch {
        min_delta_ms: o.and_then(|o| o.min_delta_ms).unwrap_or(base.min_delta_ms),
        tolerance: o.and_then(|o| o.tolerance).unwrap_or(base.tolerance),
    })
}

/// Every name that is no policy (at its key, with a did-you-mean or the
/// policies' names) and every value out of `pylon.mismatch`'s bounds (at
/// its key); diagnostics go to `errors`.
pub(super) fn check(f: &ScenarioFile, spans: &Spans, errors: &mut Vec<Diagnostic>) {
    let names: Vec<&str> = f.policies.keys().map(String::as_str).collect();
    for (name, o) in &f.pylon.mismatch_by_policy {
        let path = format!("pylon.mismatch_by_policy.{name}");
        if !f.policies.contains_key(name) {
            let d = Diagnostic::new(
                Code::InvalidValue,
                spans.key(&path),
                format!(
                    "`pylon.mismatch_by_policy` names `{name}`, which is no policy of `policies`"
                ),
            );
            errors.push(super::validate::unknown_name_help(
                d,
                name,
                &names,
                "the policies",
                "`policies` names them",
            ));
        }
        if let Some(ms) = o.min_delta_ms.filter(|&ms| ms > super::limits::MAX_MS) {
            errors.push(Diagnostic::new(
                Code::InvalidValue,
                spans.at(&format!("{path}.min_delta_ms")),
                format!(
                    "`min_delta_ms` must be at most {} ms, got {ms}",
                    super::limits::MAX_MS
                ),
            ));
        }
        if o.tolerance.is_some_and(|t| !(t.is_finite() && t >= 0.0)) {
            errors.push(Diagnostic::new(
                Code::InvalidValue,
                spans.at(&format!("{path}.tolerance")),
                "`tolerance` must be finite and >= 0",
            ));
        }
    }
}
