//! Finding an entry's keys in lb-config.json text again, for diagnostics
//! raised after reading (`routex import`).

use super::json::{parse, Json, Member, Node};
use super::write;
use crate::check::schema::Field;
use crate::diag::{Code, Diagnostic, Span};
use crate::ir::{Algorithm, AlgorithmConfig, RouteTable};
use std::collections::HashMap;

fn members(node: &Node) -> &[Member] {
    match &node.value {
        Json::Object(m) => m,
        _ => &[],
    }
}

fn member<'a>(node: &'a Node, key: &str) -> Option<&'a Member> {
    members(node).iter().rfind(|m| m.key == key)
}

/// The entry of `alg` in a request_algorithms map (the last key naming it).
fn request_entry(map: &Node, alg: Algorithm) -> Option<&Node> {
    members(map)
        .iter()
        .rfind(|m| Algorithm::from_json_name(&m.key).is_some_and(|(a, _)| a == alg))
        .map(|m| &m.value)
}

/// `not_representable_in_route_file` for every value of the table that a
/// strict route file refuses, at its key in `text`.
pub fn inexpressible(table: &RouteTable, text: &str) -> Vec<Diagnostic> {
    let Ok(root) = parse(text) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut report = |config: &AlgorithmConfig, entry: Option<&Node>| {
        for (field, why) in write::inexpressible(config) {
            let span = entry
                .and_then(|e| member(e, field.name()))
                .map_or(Span::new(0, 0), |m| m.key_span);
            out.push(
                Diagnostic::new(Code::NotRepresentableInRouteFile, span, why)
                    .with_help(help(field)),
            );
        }
    };
    let top = member(&root, "request_algorithms").map(|m| &m.value);
    for (alg, d) in &table.request_algorithms {
        report(&d.config, top.and_then(|t| request_entry(t, *alg)));
    }
    // Model ids are looked up in one map built once (the last key wins, as
    // when reading), not by a scan per model.
    let models: HashMap<&str, &Node> = member(&root, "models")
        .map(|m| members(&m.value))
        .unwrap_or_default()
        .iter()
        .map(|m| (m.key.as_str(), &m.value))
        .collect();
    for (id, entry) in &table.models {
        let node = models.get(id.as_str()).copied();
        report(&entry.definition.config, node);
        let own = node
            .and_then(|n| member(n, "request_algorithms"))
            .map(|m| &m.value);
        for (alg, d) in &entry.request_algorithms {
            report(&d.config, own.and_then(|t| request_entry(t, *alg)));
        }
    }
    out
}

fn help(field: Field) -> String {
    match field.expression_range() {
        Some(range) => format!("change the value in lb-config.json ({range})"),
        None => "change the value in lb-config.json".to_string(),
    }
}
