//! Completion: canonical algorithm names where an algorithm goes (never a
//! deprecated alias), the parameters of the algorithm in scope that are not
//! yet written (default as detail), enum values, keywords, and model names
//! from the other open configurations where a model is named. In route
//! files, lb-config.json files and the policy expressions of a scenario.

use super::context::{self, Slot as RouteSlot};
use super::documents::Document;
use super::hover::{
    description, entry_path, field_summary, is_request_algorithms, object_algorithm, recognise,
};
use super::kind::Kind;
use super::scan::{self, Slot, Tok};
use lsp_types::{
    CompletionItem, CompletionItemKind, CompletionTextEdit, Documentation, MarkupContent,
    MarkupKind, TextEdit,
};
use routex::check::schema::{Field, Kind as FieldKind};
use routex::diag::Span;
use routex::ir::{Algorithm, Comparator, RendezvousWeight};

/// The items for the cursor at `offset`; `others` are the other open
/// documents (their model names).
pub fn complete<'a>(
    document: &Document,
    offset: usize,
    others: impl Iterator<Item = &'a Document>,
) -> Vec<CompletionItem> {
    let text = document.text.as_str();
    let raw = match document.kind {
        Kind::Routes => route_items(text, offset, false, others),
        Kind::Config => json_items(text, offset, &document.json_cursor(offset), &[], others),
        Kind::Scenario => scenario_items(text, offset, &document.json_cursor(offset), others),
        Kind::Other => Vec::new(),
    };
    raw.into_iter()
        .map(|item| item.into_lsp(document))
        .collect()
}

/// An item before positions are converted.
struct Item {
    label: String,
    kind: CompletionItemKind,
    detail: Option<String>,
    docs: Option<String>,
    replace: Span,
    insert: String,
}

impl Item {
    fn into_lsp(self, document: &Document) -> CompletionItem {
        let range = document.lines.range(&document.text, self.replace);
        CompletionItem {
            filter_text: Some(self.insert.clone()),
            text_edit: Some(CompletionTextEdit::Edit(TextEdit {
                range,
                new_text: self.insert,
            })),
            label: self.label,
            kind: Some(self.kind),
            detail: self.detail,
            documentation: self.docs.map(|value| {
                Documentation::MarkupContent(MarkupContent {
                    kind: MarkupKind::Markdown,
                    value,
                })
            }),
            ..CompletionItem::default()
        }
    }
}

fn algorithms(replace: Span, quote: bool) -> Vec<Item> {
    Algorithm::ALL
        .into_iter()
        .map(|alg| Item {
            label: alg.name().into(),
            kind: CompletionItemKind::ENUM_MEMBER,
            detail: Some("algorithm".into()),
            docs: Some(description(alg).into()),
            replace,
            insert: quoted(alg.name(), quote),
        })
        .collect()
}

fn quoted(word: &str, quote: bool) -> String {
    if quote {
        format!("\"{word}\"")
    } else {
        word.to_string()
    }
}

/// The fields `alg` takes that are not in `written`; every field when the
/// algorithm is not known yet.
fn fields(
    alg: Option<Algorithm>,
    written: &[String],
    json: bool,
    replace: Span,
    insert: impl Fn(&str) -> String,
) -> Vec<Item> {
    Field::ALL
        .into_iter()
        .filter(|f| {
            let takes = if json {
                f.json_algorithms()
            } else {
                f.route_file_algorithms()
            };
            alg.map_or(!takes.is_empty(), |a| takes.contains(&a))
        })
        .filter(|f| f.accepted_by(crate::target()))
        .filter(|f| !written.iter().any(|w| w == f.name()))
        .map(|f| Item {
            label: f.name().into(),
            kind: CompletionItemKind::FIELD,
            detail: Some(format!("default: {}", f.default_text())),
            docs: Some(field_summary(f, json)),
            replace,
            insert: insert(f.name()),
        })
        .collect()
}

/// Enum values and booleans for a field's value.
fn values(field: Option<Field>, replace: Span, quote: bool) -> Vec<Item> {
    let names: Vec<&str> = match field.map(Field::kind) {
        Some(FieldKind::Comparator) => Comparator::ALL.iter().map(|c| c.name()).collect(),
        Some(FieldKind::Weight) => [
            RendezvousWeight::MaxInputTps,
            RendezvousWeight::LastMeanInputTps,
        ]
        .iter()
        .map(|w| w.name())
        .collect(),
        Some(FieldKind::Boolean) => {
            return ["true", "false"]
                .into_iter()
                .map(|b| Item {
                    label: b.into(),
                    kind: CompletionItemKind::VALUE,
                    detail: None,
                    docs: None,
                    replace,
                    insert: b.into(),
                })
                .collect()
        }
        _ => return Vec::new(),
    };
    names
        .into_iter()
        .map(|n| Item {
            label: n.into(),
            kind: CompletionItemKind::ENUM_MEMBER,
            detail: field.map(|f| f.name().to_string()),
            docs: None,
            replace,
            insert: quoted(n, quote),
        })
        .collect()
}

/// Model ids of the other open configurations and route files (checked
/// without errors), minus `written`.
fn models<'a>(
    others: impl Iterator<Item = &'a Document>,
    written: &[String],
    replace: Span,
    quote: bool,
) -> Vec<Item> {
    let mut ids: Vec<String> = Vec::new();
    for other in others.filter(|d| matches!(d.kind, Kind::Config | Kind::Routes)) {
        if let Some(table) = &other.analysis().table {
            for id in table.models.keys() {
                if !ids.contains(id) && !written.contains(id) {
                    ids.push(id.clone());
                }
            }
        }
    }
    ids.sort();
    ids.into_iter()
        .map(|id| Item {
            insert: quoted(&id, quote),
            label: id,
            kind: CompletionItemKind::MODULE,
            detail: Some("model".into()),
            docs: None,
            replace,
        })
        .collect()
}

/// Route-file (or, with `expression`, one expression's) items.
fn route_items<'a>(
    text: &str,
    offset: usize,
    expression: bool,
    others: impl Iterator<Item = &'a Document>,
) -> Vec<Item> {
    let cursor = context::cursor(text, offset, expression);
    let replace = cursor.token.unwrap_or(Span::new(offset, offset));
    match cursor.slot {
        RouteSlot::Keyword => {
            let words: &[&str] = if cursor.in_block {
                &["allow"]
            } else {
                &["default", "allow", "model"]
            };
            words
                .iter()
                .map(|w| Item {
                    label: (*w).into(),
                    kind: CompletionItemKind::KEYWORD,
                    detail: None,
                    docs: None,
                    replace,
                    insert: match *w {
                        "default" => "default = ".into(),
                        "model" => "model ".into(),
                        _ => "allow ".into(),
                    },
                })
                .collect()
        }
        RouteSlot::Method => algorithms(replace, false),
        RouteSlot::ModelId => models(others, &[], replace, true),
        RouteSlot::Param { method, open } => {
            let alg = recognise(&method, false).map(|(a, _)| a);
            let written = context::written_params(text, open);
            let json_table = false;
            let mut items = fields(alg, &written, json_table, replace, |n| format!("{n}="));
            if expression {
                // A request expression takes the expression table (no
                // rendezvous_weight).
                items.retain(|i| {
                    Field::from_name(&i.label)
                        .is_some_and(|f| !f.expression_algorithms().is_empty())
                });
            }
            items
        }
        RouteSlot::Value { param, .. } => values(Field::from_name(&param), replace, false),
        RouteSlot::Nothing => Vec::new(),
    }
}

/// lb-config.json items; `prefix` is the path of the configuration inside
/// a larger document (a scenario's `base_config`).
fn json_items<'a>(
    text: &str,
    offset: usize,
    cursor: &scan::Cursor,
    prefix: &[&str],
    others: impl Iterator<Item = &'a Document>,
) -> Vec<Item> {
    let Some(path) = strip(&cursor.path, prefix) else {
        return Vec::new();
    };
    json_items_at(text, offset, cursor, &path, others)
}

fn strip(path: &[String], prefix: &[&str]) -> Option<Vec<String>> {
    if path.len() < prefix.len() || path.iter().zip(prefix).any(|(a, b)| a != b) {
        return None;
    }
    Some(path[prefix.len()..].to_vec())
}

fn json_items_at<'a>(
    text: &str,
    offset: usize,
    cursor: &scan::Cursor,
    path: &[String],
    others: impl Iterator<Item = &'a Document>,
) -> Vec<Item> {
    let replace = match cursor.token {
        Some(t) if matches!(t.tok, Tok::Str { .. } | Tok::Word) => t.span,
        _ => Span::new(offset, offset),
    };
    let written: Vec<String> = cursor
        .object
        .map(|open| {
            scan::members(text, open)
                .into_iter()
                .filter(|m| Some(m.key_span) != cursor.token.map(|t| t.span))
                .map(|m| m.key)
                .collect()
        })
        .unwrap_or_default();
    let key = |name: &str| format!("\"{name}\": ");
    match &cursor.slot {
        Slot::Key if path.is_empty() => ["default", "request_algorithms", "models"]
            .into_iter()
            .filter(|k| !written.iter().any(|w| w == k))
            .map(|k| Item {
                label: k.into(),
                kind: CompletionItemKind::PROPERTY,
                detail: None,
                docs: None,
                replace,
                insert: key(k),
            })
            .collect(),
        Slot::Key if matches!(path, [m] if m == "models") => {
            let mut items = models(others, &written, replace, true);
            for item in &mut items {
                item.insert.push_str(": ");
            }
            items
        }
        Slot::Key if is_request_algorithms(path) => {
            let mut items = algorithms(replace, true);
            items.retain(|i| !written.contains(&i.label));
            for item in &mut items {
                item.insert.push_str(": ");
            }
            items
        }
        Slot::Key => {
            let Some((model, keyed)) = entry_path(path) else {
                return Vec::new();
            };
            let alg = object_algorithm(text, cursor.object).or(keyed);
            let mut items = Vec::new();
            let mut structural = vec!["algorithm"];
            if model.is_some() && keyed.is_none() {
                structural.push("request_algorithms");
            }
            for k in structural {
                if !written.iter().any(|w| w == k) {
                    items.push(Item {
                        label: k.into(),
                        kind: CompletionItemKind::PROPERTY,
                        detail: None,
                        docs: None,
                        replace,
                        insert: key(k),
                    });
                }
            }
            items.extend(fields(alg, &written, true, replace, key));
            items
        }
        Slot::Value(k) if k == "default" && path.is_empty() => algorithms(replace, true),
        Slot::Value(_) if is_request_algorithms(path) => algorithms(replace, true),
        Slot::Value(_) if matches!(path, [m] if m == "models") => algorithms(replace, true),
        Slot::Value(k) if k == "algorithm" && entry_path(path).is_some() => {
            algorithms(replace, true)
        }
        Slot::Value(k) if entry_path(path).is_some() => values(Field::from_name(k), replace, true),
        Slot::Value(_) | Slot::Other => Vec::new(),
    }
}

/// A scenario: expressions in `policies`, and `base_config` (an
/// lb-config.json object).
fn scenario_items<'a>(
    text: &str,
    offset: usize,
    cursor: &scan::Cursor,
    others: impl Iterator<Item = &'a Document>,
) -> Vec<Item> {
    if matches!(cursor.path.first(), Some(k) if k == "base_config") {
        return json_items(text, offset, cursor, &["base_config"], others);
    }
    match (cursor.path.as_slice(), &cursor.slot, cursor.token) {
        ([p], Slot::Value(_), Some(token)) if p == "policies" => {
            let Tok::Str { .. } = token.tok else {
                return Vec::new();
            };
            let decoded = scan::Decoded::of(text, token);
            let at = decoded.decoded_offset(offset);
            let mut items = route_items(&decoded.text, at, true, others);
            for item in &mut items {
                item.replace = decoded.document_span(item.replace);
            }
            items
        }
        _ => Vec::new(),
    }
}
