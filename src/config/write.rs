//! Writing: route table -> lb-config.json (`routex build`) and
//! route table -> route-file text (`routex import`).

use crate::check::schema::{configured, get, Field, Typed};
use crate::ir::{Algorithm, AlgorithmConfig, Definition, RouteTable};
use indexmap::IndexMap;
use serde_json::{Map, Value};
use std::sync::Arc;

/// One algorithm configuration as the value of an lb-config.json entry
/// (a model's, the default's or a `request_algorithms` entry's): the
/// algorithm's name when no field is configured, else a detailed object
/// with `algorithm` first and the fields in schema order. `routex build`
/// writes entries this way; `sim tune` prints its winner this way.
pub fn entry_json(config: &AlgorithmConfig) -> Value {
    let fields = configured(&config.fields);
    if fields.is_empty() {
        return Value::String(config.algorithm.name().to_string());
    }
    let mut map = Map::new();
    map.insert("algorithm".into(), config.algorithm.name().into());
    for field in fields {
        let value = match get(&config.fields, field) {
            Some(Typed::Bool(b)) => Value::Bool(b),
            Some(Typed::Text(s)) => Value::String(s),
            Some(Typed::Unsigned(u)) => Value::from(u),
            Some(Typed::Decimal(d)) => Value::from(d),
            Some(Typed::Comparator(c)) => c.name().into(),
            Some(Typed::Weight(w)) => w.name().into(),
            None => continue,
        };
        map.insert(field.name().into(), value);
    }
    Value::Object(map)
}

fn algorithms_json(map: &IndexMap<Algorithm, Arc<Definition>>) -> Map<String, Value> {
    map.iter()
        .map(|(a, d)| (a.name().to_string(), entry_json(&d.config)))
        .collect()
}

/// The lb-config.json of a table whose `default` has no arguments.
pub fn table_json(table: &RouteTable) -> String {
    let mut root = Map::new();
    root.insert(
        "default".into(),
        table.default.config.algorithm.name().into(),
    );
    root.insert(
        "request_algorithms".into(),
        Value::Object(algorithms_json(&table.request_algorithms)),
    );
    let models: Map<String, Value> = table
        .models
        .iter()
        .map(|(id, entry)| {
            let mut value = entry_json(&entry.definition.config);
            if !entry.request_algorithms.is_empty() {
                if let Value::String(name) = value {
                    let mut map = Map::new();
                    map.insert("algorithm".into(), Value::String(name));
                    value = Value::Object(map);
                }
                if let Value::Object(map) = &mut value {
                    map.insert(
                        "request_algorithms".into(),
                        Value::Object(algorithms_json(&entry.request_algorithms)),
                    );
                }
            }
            (id.clone(), value)
        })
        .collect();
    root.insert("models".into(), Value::Object(models));
    let mut text = serde_json::to_string_pretty(&Value::Object(root)).unwrap_or_default();
    text.push('\n');
    text
}

/// A value in call-form syntax.
fn value_text(value: &Typed) -> String {
    match value {
        Typed::Bool(b) => b.to_string(),
        Typed::Text(s) => quote(s),
        Typed::Unsigned(u) => u.to_string(),
        // Display never uses an exponent; integral values print as "1".
        Typed::Decimal(d) => d.to_string(),
        Typed::Comparator(c) => c.name().to_string(),
        Typed::Weight(w) => w.name().to_string(),
    }
}

fn quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

/// Configured values lb-config.json accepts but a strict route-file
/// expression refuses, with the reason.
pub fn inexpressible(config: &AlgorithmConfig) -> Vec<(Field, String)> {
    let alg = config.algorithm;
    configured(&config.fields)
        .into_iter()
        .filter(|f| f.route_file_algorithms().contains(&alg))
        .filter_map(|field| {
            let why = match (field, get(&config.fields, field)?) {
                (Field::TtftBucketSizeMs, Typed::Unsigned(0)) => {
                    "ttft_bucket_size_ms 0 is accepted in lb-config.json but inert in a route file"
                        .to_string()
                }
                (Field::CacheAffinityVirtualNodes, Typed::Unsigned(v)) if v > 1024 => format!(
                    "cache_affinity_virtual_nodes {v} is above the route-file maximum of 1024"
                ),
                (Field::MaxInputWorkSeconds, Typed::Decimal(v)) if !(v > 0.0 && v.is_finite()) => {
                    format!("max_input_work_seconds {v} must be finite and above 0 in a route file")
                }
                (Field::NextBucketUnlockFactor, Typed::Decimal(v)) if !v.is_finite() => {
                    format!("next_bucket_unlock_factor {v} must be finite in a route file")
                }
                _ => return None,
            };
            Some((field, why))
        })
        .collect()
}

/// One algorithm configuration as an expression in canonical call form,
/// as `routex import` writes route files: `alg(name=value, ...)`, or the
/// bare name when nothing is set. Values a strict expression refuses but
/// lb-config.json normalises are written as what they mean.
pub fn expression_text(config: &AlgorithmConfig) -> String {
    let alg = config.algorithm;
    let f = &config.fields;
    // One bound alone means no queue SLO; a route file cannot say it.
    let lone_bound = f.max_queue_time_floor_ms.is_some() != f.max_queue_time_ceil_ms.is_some();
    let args: Vec<String> = configured(&config.fields)
        .into_iter()
        .filter(|f| f.route_file_algorithms().contains(&alg))
        .filter(|f| {
            !(lone_bound && matches!(f, Field::MaxQueueTimeFloorMs | Field::MaxQueueTimeCeilMs))
        })
        .filter_map(|field| {
            let value = match (field, get(&config.fields, field)?) {
                (Field::N | Field::CacheAffinityVirtualNodes, Typed::Unsigned(0)) => {
                    Typed::Unsigned(1)
                }
                (Field::CacheAffinityBackendSelectionCount, Typed::Unsigned(0)) => {
                    if alg == Algorithm::PulsarWaitAndWiden {
                        Typed::Unsigned(1)
                    } else {
                        return None;
                    }
                }
                (_, v) => v,
            };
            Some(format!("{}={}", field.name(), value_text(&value)))
        })
        .collect();
    if args.is_empty() {
        alg.name().to_string()
    } else {
        format!("{}({})", alg.name(), args.join(", "))
    }
}

/// The route file of a table, in canonical layout.
pub fn table_routes(table: &RouteTable) -> String {
    let mut out = format!("default = {}\n", expression_text(&table.default.config));
    if !table.request_algorithms.is_empty() {
        out.push('\n');
        for d in table.request_algorithms.values() {
            out.push_str(&format!("allow {}\n", expression_text(&d.config)));
        }
    }
    for (id, entry) in &table.models {
        out.push('\n');
        out.push_str(&format!(
            "model {} = {}",
            quote(id),
            expression_text(&entry.definition.config)
        ));
        if entry.request_algorithms.is_empty() {
            out.push('\n');
        } else {
            out.push_str(" {\n");
            for d in entry.request_algorithms.values() {
                out.push_str(&format!("    allow {}\n", expression_text(&d.config)));
            }
            out.push_str("}\n");
        }
    }
    out
}
