//! Formatting of route files (`routex fmt`) and document symbols for the
//! outline: `default`, top-level `allow` entries and request algorithms,
//! models with their own `allow` entries, a scenario's policies.

use super::documents::Document;
use super::kind::Kind;
use lsp_types::{DocumentSymbol, SymbolKind, TextEdit};
use routex::config::json::{Json, Member, Node};
use routex::diag::Span;
use routex::syntax::ast::{Expr, Item};

/// The edits that make a route file canonical: none when it already is,
/// `None` (leave the text alone) when it does not parse or is not a route
/// file.
pub fn format(document: &Document) -> Option<Vec<TextEdit>> {
    if document.kind != Kind::Routes {
        return None;
    }
    let text = &document.text;
    let formatted = routex::syntax::format_route_file(text).ok()?;
    if formatted == *text {
        return Some(Vec::new());
    }
    Some(vec![TextEdit {
        range: document.lines.range(text, Span::new(0, text.len())),
        new_text: formatted,
    }])
}

pub fn symbols(document: &Document) -> Vec<DocumentSymbol> {
    let analysis = document.analysis();
    let text = &document.text;
    let symbol = |name: String, detail: String, kind, span: Span, name_span: Span| {
        #[allow(deprecated)] // `deprecated` is a required field of the type
        DocumentSymbol {
            name,
            detail: Some(detail).filter(|d| !d.is_empty()),
            kind,
            tags: None,
            deprecated: None,
            range: document.lines.range(text, span),
            selection_range: document.lines.range(text, name_span),
            children: None,
        }
    };
    match document.kind {
        Kind::Routes => {
            let Some(file) = analysis.routes(text) else {
                return Vec::new();
            };
            let allow = |expr: &Expr, span: Span| {
                symbol(
                    format!("allow {}", expr.method.node),
                    String::new(),
                    SymbolKind::FUNCTION,
                    span.join(expr.span),
                    expr.method.span,
                )
            };
            file.items
                .iter()
                .map(|item| match item {
                    Item::Default { expr, span } => symbol(
                        "default".into(),
                        expr.method.node.clone(),
                        SymbolKind::CONSTANT,
                        span.join(expr.span),
                        expr.method.span,
                    ),
                    Item::Allow(a) => allow(&a.expr, a.span),
                    Item::Model {
                        id,
                        expr,
                        allows,
                        span,
                    } => {
                        let mut s = symbol(
                            id.node.clone(),
                            expr.method.node.clone(),
                            SymbolKind::MODULE,
                            *span,
                            id.span,
                        );
                        let children: Vec<_> =
                            allows.iter().map(|a| allow(&a.expr, a.span)).collect();
                        s.children = Some(children).filter(|c| !c.is_empty());
                        s
                    }
                })
                .collect()
        }
        Kind::Config | Kind::Scenario => {
            let Some(Node {
                value: Json::Object(top),
                ..
            }) = analysis.json(text)
            else {
                return Vec::new();
            };
            let entry = |m: &Member, kind| {
                let detail = match &m.value.value {
                    Json::String(s) => s.clone(),
                    Json::Object(fields) => fields
                        .iter()
                        .find(|f| f.key == "algorithm")
                        .and_then(|f| match &f.value.value {
                            Json::String(s) => Some(s.clone()),
                            _ => None,
                        })
                        .unwrap_or_default(),
                    _ => String::new(),
                };
                let whole = m.key_span.join(m.value.span);
                symbol(m.key.clone(), detail, kind, whole, m.key_span)
            };
            let members_of = |node: &Node| match &node.value {
                Json::Object(members) => members.clone(),
                _ => Vec::new(),
            };
            let mut out = Vec::new();
            for m in top {
                match m.key.as_str() {
                    "default" => out.push(entry(m, SymbolKind::CONSTANT)),
                    "request_algorithms" | "policies" => {
                        for r in members_of(&m.value) {
                            out.push(entry(&r, SymbolKind::FUNCTION));
                        }
                    }
                    "models" => {
                        for model in members_of(&m.value) {
                            let mut s = entry(&model, SymbolKind::MODULE);
                            let nested: Vec<_> = members_of(&model.value)
                                .iter()
                                .filter(|f| f.key == "request_algorithms")
                                .flat_map(|f| members_of(&f.value))
                                .map(|r| entry(&r, SymbolKind::FUNCTION))
                                .collect();
                            s.children = Some(nested).filter(|c| !c.is_empty());
                            out.push(s);
                        }
                    }
                    _ => {}
                }
            }
            out
        }
        Kind::Other => Vec::new(),
    }
}
