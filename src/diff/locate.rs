//! Where a configuration writes each set, so that a diff can point at the
//! new file (`--format github` annotates those lines). One parse of the
//! text, every entry keyed in a hash map.

use crate::config::json::{self, Json, Member};
use crate::diag::Span;
use crate::ir::Algorithm;
use crate::syntax::ast::Item;
use std::collections::HashMap;

/// The spans of a file's entries: `default`, each top-level
/// `request_algorithms` entry (route file: top-level `allow`) and each
/// model entry (its key or its `model "ID"` id). The last of duplicates
/// wins, as it does when the file is read.
#[derive(Clone, Debug, Default)]
pub struct Locations {
    /// The `default` entry (route file: the `default = EXPR` item); `None`
    /// when the file has none.
    pub default: Option<Span>,
    /// The `request_algorithms` key itself (the first `allow` of a route
    /// file), for a removed entry.
    pub request_algorithms_key: Option<Span>,
    /// Each top-level `request_algorithms` entry (route file: top-level
    /// `allow`), by the algorithm it names.
    pub request_algorithms: HashMap<Algorithm, Span>,
    /// Each model entry's key (route file: its `model "ID"` id), by model
    /// name.
    pub models: HashMap<String, Span>,
}

/// The entries of `text`, a route file when `source_name` ends in
/// `.routes` and an lb-config.json otherwise (the rule of
/// [`crate::config::load_table`]). A text that does not parse has none.
pub fn locate(source_name: &str, text: &str) -> Locations {
    if source_name.ends_with(".routes") {
        route_file(text)
    } else {
        lb_config(text)
    }
}

fn route_file(text: &str) -> Locations {
    let (file, _) = crate::syntax::parse_route_file(text);
    let mut out = Locations::default();
    for item in &file.items {
        match item {
            Item::Default { span, .. } => out.default = Some(*span),
            Item::Allow(allow) => {
                out.request_algorithms_key.get_or_insert(allow.span);
                if let Some((alg, _)) = Algorithm::from_header_name(&allow.expr.method.node) {
                    out.request_algorithms.insert(alg, allow.span);
                }
            }
            Item::Model { id, .. } => {
                out.models.insert(id.node.clone(), id.span);
            }
        }
    }
    out
}

fn lb_config(text: &str) -> Locations {
    let mut out = Locations::default();
    let Ok(root) = json::parse(text) else {
        return out;
    };
    let Json::Object(members) = &root.value else {
        return out;
    };
    for member in members {
        match member.key.as_str() {
            "default" => out.default = Some(member.key_span),
            "request_algorithms" => {
                out.request_algorithms_key = Some(member.key_span);
                for entry in object(member) {
                    if let Some((alg, _)) = Algorithm::from_json_name(&entry.key) {
                        out.request_algorithms.insert(alg, entry.key_span);
                    }
                }
            }
            "models" => {
                for entry in object(member) {
                    out.models.insert(entry.key.clone(), entry.key_span);
                }
            }
            _ => {}
        }
    }
    out
}

fn object(member: &Member) -> &[Member] {
    match &member.value.value {
        Json::Object(members) => members,
        _ => &[],
    }
}
