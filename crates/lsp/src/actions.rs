//! Quick fixes from the checker's own knowledge: the replacement a
//! diagnostic carries (did-you-mean, an alias's canonical name), and the
//! removal of a field the algorithm does not take, of a field the
//! algorithm ignores, or of an `allow` entry that is never used.

use super::documents::Document;
use super::kind::Kind;
use lsp_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, Range, TextEdit, Uri, WorkspaceEdit,
};
use routex::config::json::{Json, Node};
use routex::diag::{Code, Diagnostic, Span};
use routex::syntax::ast::{Expr, Item, RouteFile};
use std::collections::HashMap;

/// The fixes for every routex diagnostic that overlaps `range`.
pub fn code_actions(
    document: &Document,
    uri: &Uri,
    range: Range,
    docs_base: &str,
) -> Vec<CodeActionOrCommand> {
    let analysis = document.analysis();
    let text = &document.text;
    let wanted = document.lines.span(text, range);
    let overlaps = |s: Span| s.start <= wanted.end && wanted.start <= s.end;
    let mut out = Vec::new();
    for d in analysis
        .report
        .diagnostics
        .iter()
        .filter(|d| overlaps(d.span))
    {
        let Some((title, span, new_text)) = fix(document, d) else {
            continue;
        };
        let edit = TextEdit {
            range: document.lines.range(text, span),
            new_text,
        };
        let lsp_diagnostic = super::diagnostics::convert(document, d, docs_base);
        out.push(CodeActionOrCommand::CodeAction(CodeAction {
            title,
            kind: Some(CodeActionKind::QUICKFIX),
            diagnostics: Some(vec![lsp_diagnostic]),
            edit: Some(WorkspaceEdit {
                changes: Some(HashMap::from([(uri.clone(), vec![edit])])),
                ..WorkspaceEdit::default()
            }),
            is_preferred: Some(true),
            ..CodeAction::default()
        }));
    }
    out
}

/// Title, span to replace and replacement text.
fn fix(document: &Document, d: &Diagnostic) -> Option<(String, Span, String)> {
    let text = &document.text;
    if let Some(replacement) = &d.suggestion {
        let old = text.get(d.span.start..d.span.end)?;
        return Some((
            format!("Replace {old} with {replacement}"),
            d.span,
            replacement.clone(),
        ));
    }
    let removable = matches!(
        d.code,
        Code::NotApplicable | Code::UnsupportedField | Code::IgnoredField | Code::ShadowedAllow
    );
    if !removable {
        return None;
    }
    let analysis = document.analysis();
    let span = match document.kind {
        Kind::Config => member_removal(analysis.json(text)?, d.span)?,
        Kind::Routes => route_removal(text, analysis.routes(text)?, d)?,
        Kind::Scenario | Kind::Other => return None,
    };
    let what = text.get(d.span.start..d.span.end)?.trim();
    let what = what.lines().next().unwrap_or(what);
    Some((format!("Remove {what}"), span, String::new()))
}

/// The text to delete to remove the member whose key is at `key`: through
/// the next member's key, or from the previous member's value when it is
/// the last, so the object stays valid JSON.
fn member_removal(root: &Node, key: Span) -> Option<Span> {
    let mut pending = vec![root];
    while let Some(node) = pending.pop() {
        match &node.value {
            Json::Object(members) => {
                if let Some(i) = members.iter().position(|m| m.key_span == key) {
                    let this = &members[i];
                    return Some(match (i.checked_sub(1), members.get(i + 1)) {
                        (_, Some(next)) => Span::new(this.key_span.start, next.key_span.start),
                        (Some(prev), None) => {
                            Span::new(members[prev].value.span.end, this.value.span.end)
                        }
                        (None, None) => Span::new(this.key_span.start, this.value.span.end),
                    });
                }
                pending.extend(members.iter().map(|m| &m.value));
            }
            Json::Array(items) => pending.extend(items.iter()),
            _ => {}
        }
    }
    None
}

fn route_removal(text: &str, file: &RouteFile, d: &Diagnostic) -> Option<Span> {
    let exprs = file.items.iter().flat_map(|item| -> Vec<&Expr> {
        match item {
            Item::Default { expr, .. } => vec![expr],
            Item::Allow(a) => vec![&a.expr],
            Item::Model { expr, allows, .. } => std::iter::once(expr)
                .chain(allows.iter().map(|a| &a.expr))
                .collect(),
        }
    });
    if d.code == Code::ShadowedAllow {
        let allows = file.items.iter().flat_map(|item| match item {
            Item::Model { allows, .. } => allows.as_slice(),
            Item::Allow(a) => std::slice::from_ref(a),
            Item::Default { .. } => &[],
        });
        let allow = allows.into_iter().find(|a| a.span.start == d.span.start)?;
        return Some(whole_lines(text, Span::new(allow.span.start, d.span.end)));
    }
    for expr in exprs {
        if let Some(i) = expr.args.iter().position(|a| a.name.span == d.span) {
            let args = &expr.args;
            return Some(match (i.checked_sub(1), args.get(i + 1)) {
                (_, Some(next)) => Span::new(args[i].span.start, next.span.start),
                (Some(prev), None) => Span::new(args[prev].span.end, args[i].span.end),
                // The only argument: the parentheses go too.
                (None, None) => Span::new(expr.method.span.end, expr.span.end),
            });
        }
    }
    None
}

/// `span` widened to whole lines when nothing but blanks and a comment
/// share them, so removing an entry leaves no empty line.
fn whole_lines(text: &str, span: Span) -> Span {
    let line_start = text[..span.start].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[span.end..]
        .find('\n')
        .map_or(text.len(), |i| span.end + i + 1);
    let before_blank = text[line_start..span.start].trim().is_empty();
    let after = text[span.end..line_end].trim();
    if before_blank && (after.is_empty() || after.starts_with('#')) {
        Span::new(line_start, line_end)
    } else {
        span
    }
}
