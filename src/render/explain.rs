//! `routex explain`: the resolved policy with the provenance of each field,
//! as a human table or the version-1 JSON document (docs/contract.md 5.2).
//! An implied value (docs/cli.md "routex explain") names what implies it
//! and what the field itself was given.

use crate::check::{default_follows, Explanation, Implication, Provenance};
use serde_json::{json, Value};

/// Version of the JSON document (its `"version"` member).
const VERSION: u32 = 1;

/// `{"version": 1, "policy": IR, "provenance": {field: origin},
/// "implied": {field: implication}, "follows": {field: field}}`.
pub fn to_value(explanation: &Explanation) -> Value {
    json!({
        "version": VERSION,
        "policy": explanation.definition.policy,
        "provenance": explanation.provenance,
        "config_from": config_from(explanation),
        "implied": explanation.implied,
        "follows": follows(explanation),
    })
}

/// The place of the configured definition that the `config` values come
/// from (`model_entry`, ...; one place per explanation), or null when no
/// value is `config`.
fn config_from(explanation: &Explanation) -> Value {
    let implied = explanation
        .implied
        .values()
        .flat_map(|i| [i.by_from, i.configured_from]);
    explanation
        .provenance
        .values()
        .copied()
        .chain(implied)
        .find_map(Provenance::place)
        .map_or(Value::Null, |place| place.name().into())
}

/// The defaulted fields whose default is another field's value, with that
/// field (`band_widen_interval_ms`: `cache_affinity_wait_ms`).
fn follows(explanation: &Explanation) -> serde_json::Map<String, Value> {
    explanation
        .provenance
        .iter()
        .filter(|(_, p)| **p == Provenance::Default)
        .filter_map(|(field, _)| Some((field.clone(), default_follows(field)?.into())))
        .collect()
}

/// [`to_value`]'s document pretty-printed, with a trailing newline.
pub fn render_json(explanation: &Explanation) -> String {
    let mut text = serde_json::to_string_pretty(&to_value(explanation)).unwrap_or_default();
    text.push('\n');
    text
}

/// One row of the human table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    /// The field's IR name.
    pub field: String,
    /// The resolved value as JSON text (`2`, `"ttft"`), or `unset`.
    pub value: String,
    /// `default` (`default, follows FIELD` for a default defined as another
    /// field's value), the place that sets it (`model entry`, ...),
    /// `expression`, or for an implied value `implied by FIELD from ORIGIN;
    /// ORIGIN set VALUE` (docs/cli.md "Provenance").
    pub from: String,
}

/// The admission fields, then the algorithm's settings, in IR order; a
/// field without recorded provenance is a default. IR entries that are no
/// field (what the stargate target implies, such as
/// `no_queue_slo_shortcut`) are left to the JSON form.
pub fn rows(explanation: &Explanation) -> Vec<Row> {
    let policy = serde_json::to_value(&explanation.definition.policy).unwrap_or(Value::Null);
    let mut rows = Vec::new();
    for group in ["admission", "settings"] {
        if let Some(Value::Object(fields)) = policy.get(group) {
            for (field, value) in fields {
                if crate::ir::Field::from_name(field).is_none() {
                    continue;
                }
                let provenance = explanation.provenance.get(field).copied();
                let from = match explanation.implied.get(field) {
                    Some(implication) => implied_by(implication),
                    None => match provenance.unwrap_or(Provenance::Default) {
                        Provenance::Default => match default_follows(field) {
                            Some(of) => format!("default, follows {of}"),
                            None => "default".to_string(),
                        },
                        other => other.label().to_string(),
                    },
                };
                rows.push(Row {
                    field: field.clone(),
                    value: display_value(value),
                    from,
                });
            }
        }
    }
    rows
}

/// `algorithm: NAME` then an aligned `field  value  from` table.
pub fn render_human(source_name: &str, explanation: &Explanation) -> String {
    let rows = rows(explanation);
    let header = Row {
        field: "field".into(),
        value: "value".into(),
        from: "from".into(),
    };
    let field_width = rows.iter().chain([&header]).map(|r| r.field.len()).max();
    let value_width = rows
        .iter()
        .chain([&header])
        .map(|r| r.value.chars().count())
        .max();
    let (field_width, value_width) = (field_width.unwrap_or(0), value_width.unwrap_or(0));
    let mut out = format!(
        "{source_name}: {}\n",
        explanation.definition.policy.algorithm
    );
    for row in std::iter::once(&header).chain(&rows) {
        let line = format!(
            "  {:field_width$}  {:value_width$}  {}",
            row.field, row.value, row.from
        );
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

fn display_value(value: &Value) -> String {
    match value {
        Value::Null => "unset".into(),
        other => other.to_string(),
    }
}

/// `implied by consider_kv_free_tokens from model entry; expression set
/// false` (`default false` when nothing set it).
fn implied_by(implication: &Implication) -> String {
    let given = match implication.configured_from {
        Provenance::Default => format!("default {}", implication.configured),
        other => format!("{} set {}", other.label(), implication.configured),
    };
    format!(
        "implied by {} from {}; {given}",
        implication.by,
        implication.by_from.label()
    )
}
