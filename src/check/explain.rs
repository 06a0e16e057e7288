//! Provenance of each resolved field for `routex explain` and `routex
//! diff`: the expression, the place in the configuration that sets it, the
//! built-in default, or another field whose value implies this one. Both
//! commands name them with one vocabulary (docs/cli.md "Provenance").

use super::expr::Checked;
use super::schema::{get, Field, Typed};
use super::Provenance;
use crate::ir::{Origin, Policy, Resolution, SetKind};
use indexmap::IndexMap;

/// Where a configured definition is written in its file: the place a value
/// the configuration sets comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Place {
    /// The model's own entry under `models` (its configured algorithm;
    /// route file: `model "ID" = ...`).
    ModelEntry,
    /// The model entry's own `request_algorithms` (route file: its `allow`).
    ModelRequestAlgorithms,
    /// The top-level `request_algorithms` (route file: top-level `allow`).
    RequestAlgorithms,
    /// The top-level `default`, for models without an entry.
    DefaultEntry,
}

impl Place {
    /// The place a resolution found its definition in.
    pub(crate) fn of(resolution: &Resolution<'_>) -> Place {
        match (resolution.set, resolution.origin) {
            (SetKind::Model, Origin::Configured) => Place::ModelEntry,
            (SetKind::Model, Origin::SetRequestAlgorithms) => Place::ModelRequestAlgorithms,
            (SetKind::Default, Origin::Configured) => Place::DefaultEntry,
            (_, _) => Place::RequestAlgorithms,
        }
    }

    /// The JSON spelling (`model_entry`, ...).
    pub const fn name(self) -> &'static str {
        match self {
            Place::ModelEntry => "model_entry",
            Place::ModelRequestAlgorithms => "model_request_algorithms",
            Place::RequestAlgorithms => "request_algorithms",
            Place::DefaultEntry => "default_entry",
        }
    }

    /// The human spelling (`model entry`, ...): the JSON words with spaces.
    pub const fn label(self) -> &'static str {
        match self {
            Place::ModelEntry => "model entry",
            Place::ModelRequestAlgorithms => "model request_algorithms",
            Place::RequestAlgorithms => "request_algorithms",
            Place::DefaultEntry => "default entry",
        }
    }

    /// A configured value's human provenance: `config`, then the place
    /// that writes it (`config (model entry)`, ...).
    pub const fn config_label(self) -> &'static str {
        match self {
            Place::ModelEntry => "config (model entry)",
            Place::ModelRequestAlgorithms => "config (model request_algorithms)",
            Place::RequestAlgorithms => "config (request_algorithms)",
            Place::DefaultEntry => "config (default entry)",
        }
    }
}

/// The field whose value a field's default is (docs/stargate.md 3.8:
/// `band_widen_interval_ms` defaults to `cache_affinity_wait_ms`), by IR
/// name; `None` for a field with a constant default.
pub fn default_follows(field: &str) -> Option<&'static str> {
    (Field::from_name(field) == Some(Field::BandWidenIntervalMs))
        .then(|| Field::CacheAffinityWaitMs.name())
}

/// A value one field forces on another over what that field was given
/// (docs/stargate.md 3.9: `consider_kv_free_tokens` implies
/// `require_input_tokens`). Recorded only when it changes the value.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Implication {
    /// The field whose value implies this one.
    pub by: &'static str,
    /// Where that field's value came from.
    pub by_from: Provenance,
    /// What the field itself was given, which the implication overrides.
    pub configured: serde_json::Value,
    /// Where the given value came from.
    pub configured_from: Provenance,
}

/// Provenance of every admission and settings field of `policy`, by IR
/// name; `place` is where the base configuration the expression merged
/// onto is written. A default defined as another field's value is
/// [`Provenance::Default`] ([`default_follows`] names the field it follows).
pub fn provenance(
    policy: &Policy,
    checked: &Checked,
    place: Place,
) -> IndexMap<String, Provenance> {
    let implied = implications(checked, place);
    let mut out = IndexMap::new();
    let json = serde_json::to_value(policy).unwrap_or_default();
    for section in ["admission", "settings"] {
        if let Some(map) = json.get(section).and_then(|v| v.as_object()) {
            for key in map.keys() {
                if implied.contains_key(key) {
                    out.insert(key.clone(), Provenance::Implied);
                } else if let Some(field) = Field::from_name(key) {
                    out.insert(key.clone(), origin(checked, field, place));
                }
            }
        }
    }
    out
}

/// The fields whose resolved value another field's value forced, by IR
/// name: `require_input_tokens` when `consider_kv_free_tokens` is true and
/// the field itself was given false (by default or explicitly). When it
/// was given true, the implication changes nothing and is not recorded.
/// `place` as for [`provenance`].
pub fn implications(checked: &Checked, place: Place) -> IndexMap<String, Implication> {
    let mut out = IndexMap::new();
    let resolved = |field| get(&checked.config.fields, field);
    if resolved(Field::ConsiderKvFreeTokens) == Some(Typed::Bool(true))
        && resolved(Field::RequireInputTokens) != Some(Typed::Bool(true))
    {
        out.insert(
            Field::RequireInputTokens.name().to_string(),
            Implication {
                by: Field::ConsiderKvFreeTokens.name(),
                by_from: origin(checked, Field::ConsiderKvFreeTokens, place),
                configured: false.into(),
                configured_from: origin(checked, Field::RequireInputTokens, place),
            },
        );
    }
    out
}

/// Who set `field` itself: the expression, the base configuration (at
/// `place`), or nobody (the default).
fn origin(checked: &Checked, field: Field, place: Place) -> Provenance {
    if checked.set_by_expression.contains(&field) {
        Provenance::Expression
    } else if get(&checked.base.fields, field).is_some() {
        Provenance::Config(place)
    } else {
        Provenance::Default
    }
}
