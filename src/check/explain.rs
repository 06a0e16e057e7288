//! Provenance of each resolved field for `routex explain`: the expression,
//! the configuration it overrides, the built-in default, or another field
//! whose value implies this one.

use super::expr::Checked;
use super::schema::{get, Field, Typed};
use super::Provenance;
use crate::ir::Policy;
use indexmap::IndexMap;

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

/// Provenance of every admission and settings field of `policy`, by IR name.
pub fn provenance(policy: &Policy, checked: &Checked) -> IndexMap<String, Provenance> {
    let implied = implications(checked);
    // A default defined as another field's value takes that field's
    // provenance (docs/stargate.md 3.8: S defaults to X).
    let derived = |field: Field| match field {
        Field::BandWidenIntervalMs if origin(checked, field) == Provenance::Default => {
            origin(checked, Field::CacheAffinityWaitMs)
        }
        _ => origin(checked, field),
    };
    let mut out = IndexMap::new();
    let json = serde_json::to_value(policy).unwrap_or_default();
    for section in ["admission", "settings"] {
        if let Some(map) = json.get(section).and_then(|v| v.as_object()) {
            for key in map.keys() {
                if implied.contains_key(key) {
                    out.insert(key.clone(), Provenance::Implied);
                } else if let Some(field) = Field::from_name(key) {
                    out.insert(key.clone(), derived(field));
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
pub fn implications(checked: &Checked) -> IndexMap<String, Implication> {
    let mut out = IndexMap::new();
    let resolved = |field| get(&checked.config.fields, field);
    if resolved(Field::ConsiderKvFreeTokens) == Some(Typed::Bool(true))
        && resolved(Field::RequireInputTokens) != Some(Typed::Bool(true))
    {
        out.insert(
            Field::RequireInputTokens.name().to_string(),
            Implication {
                by: Field::ConsiderKvFreeTokens.name(),
                by_from: origin(checked, Field::ConsiderKvFreeTokens),
                configured: false.into(),
                configured_from: origin(checked, Field::RequireInputTokens),
            },
        );
    }
    out
}

/// Who set `field` itself: the expression, the base configuration, or
/// nobody (the default).
fn origin(checked: &Checked, field: Field) -> Provenance {
    if checked.set_by_expression.contains(&field) {
        Provenance::Expression
    } else if get(&checked.base.fields, field).is_some() {
        Provenance::Config
    } else {
        Provenance::Default
    }
}
