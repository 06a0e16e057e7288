//! Provenance of each resolved field for `routex explain`: the expression,
//! the configuration it overrides, or the built-in default.

use super::expr::Checked;
use super::schema::{get, Field};
use super::Provenance;
use crate::ir::Policy;
use indexmap::IndexMap;

/// Provenance of every admission and settings field of `policy`, by IR name.
pub fn provenance(policy: &Policy, checked: &Checked) -> IndexMap<String, Provenance> {
    let of = |field: Field| {
        if checked.set_by_expression.contains(&field) {
            Provenance::Expression
        } else if get(&checked.base.fields, field).is_some() {
            Provenance::Config
        } else {
            Provenance::Default
        }
    };
    // Derived values take the provenance of what they derive from.
    let derived = |field: Field| match field {
        Field::RequireInputTokens if of(field) == Provenance::Default => {
            of(Field::ConsiderKvFreeTokens)
        }
        Field::BandWidenIntervalMs if of(field) == Provenance::Default => {
            of(Field::CacheAffinityWaitMs)
        }
        _ => of(field),
    };
    let mut out = IndexMap::new();
    let json = serde_json::to_value(policy).unwrap_or_default();
    for section in ["admission", "settings"] {
        if let Some(map) = json.get(section).and_then(|v| v.as_object()) {
            for key in map.keys() {
                if let Some(field) = Field::from_name(key) {
                    out.insert(key.clone(), derived(field));
                }
            }
        }
    }
    out
}
