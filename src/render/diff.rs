//! `routex diff`: a [`TableDiff`] as a human report, the version-1 JSON
//! document, or GitHub workflow commands on the new file's entries
//! (docs/cli.md "routex diff").

use super::github::{escape_data, escape_property};
use super::Locator;
use crate::diff::{AlgorithmDiff, Locations, Presence, SetDiff, Side, TableDiff};
use serde_json::{json, Map, Value};
use std::fmt::Write;

/// Version of the JSON document.
const VERSION: u32 = 1;

/// The version-1 document: the full policies (IR and provenance) of every
/// side that differs, the field changes, and the newly rejected classes.
#[derive(serde::Serialize)]
struct Document<'a> {
    version: u32,
    old: &'a str,
    new: &'a str,
    request_algorithms: Each<'a, crate::diff::TopLevelDiff>,
    models: Each<'a, SetDiff>,
    summary: Value,
}

/// A list serialised one element at a time: each element's JSON tree is
/// built, written and dropped, so memory stays at one set's tree however
/// many sets differ.
struct Each<'a, T>(&'a [T], fn(&T) -> Value);

impl<T> serde::Serialize for Each<'_, T> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter().map(self.1))
    }
}

fn document<'a>(diff: &'a TableDiff, old: &'a str, new: &'a str) -> Document<'a> {
    let (changed, added, removed) = diff.counts();
    Document {
        version: VERSION,
        old,
        new,
        request_algorithms: Each(&diff.request_algorithms, top_value),
        models: Each(&diff.sets, set_value),
        summary: json!({
            "changed": changed,
            "added": added,
            "removed": removed,
            "unchanged": diff.unchanged,
            "rejected": diff.rejections(),
        }),
    }
}

/// The document as a JSON value.
pub fn to_value(diff: &TableDiff, old: &str, new: &str) -> Value {
    serde_json::to_value(document(diff, old, new)).unwrap_or(Value::Null)
}

/// The version-1 document pretty-printed, with a trailing newline; `old`
/// and `new` are the compared files' names as the document records them.
pub fn render_json(diff: &TableDiff, old: &str, new: &str) -> String {
    let mut text = serde_json::to_string_pretty(&document(diff, old, new)).unwrap_or_default();
    text.push('\n');
    text
}

fn top_value(top: &crate::diff::TopLevelDiff) -> Value {
    let mut value = algorithm_value(&top.diff);
    value["inherited_by"] = json!({"unlisted": top.unlisted, "models": top.models});
    value
}

fn set_value(set: &SetDiff) -> Value {
    json!({
        "model": set.model,
        "change": set.presence.name(),
        "configured": {"before": set.configured.0, "after": set.configured.1},
        "algorithms": set.algorithms.iter().map(algorithm_value).collect::<Vec<_>>(),
    })
}

fn algorithm_value(a: &AlgorithmDiff) -> Value {
    let side = |r: &Option<Side>| match r {
        None => Value::Null,
        Some(r) => {
            let provenance: Map<String, Value> = r
                .provenance
                .keys()
                .map(|k| (k.clone(), Value::String(r.source(k).name())))
                .collect();
            let follows: Map<String, Value> = r
                .provenance
                .keys()
                .filter_map(|k| Some((k.clone(), r.source(k).follows()?.into())))
                .collect();
            json!({
                "from": r.place.name(),
                "policy": r.definition.policy,
                "provenance": provenance,
                "implied": r.implied,
                "follows": follows,
            })
        }
    };
    let changes: Vec<Value> = a
        .changes
        .iter()
        .map(|c| {
            let end = |(value, source): &(Value, crate::diff::FieldSource)| {
                let mut end = json!({"value": value, "from": source.name()});
                if let Some(of) = source.follows() {
                    end["follows"] = of.into();
                }
                end
            };
            json!({
                "field": c.field,
                "before": end(&c.before),
                "after": end(&c.after),
            })
        })
        .collect();
    let rejected: Vec<Value> = a
        .rejected
        .iter()
        .map(|r| {
            json!({
                "code": r.code(),
                "expressions": r.expressions(),
                "reason": r.reason(),
            })
        })
        .collect();
    json!({
        "algorithm": a.algorithm,
        "before": side(&a.before),
        "after": side(&a.after),
        "changes": changes,
        "rejected": rejected,
    })
}

/// `--- OLD` / `+++ NEW`, one block per difference, then the summary.
pub fn render_human(diff: &TableDiff, old: &str, new: &str) -> String {
    let mut out = format!("--- {old}\n+++ {new}\n");
    for top in &diff.request_algorithms {
        out.push('\n');
        out.push_str(&top_block(top));
    }
    for set in &diff.sets {
        out.push('\n');
        out.push_str(&set_block(set));
    }
    out.push('\n');
    out.push_str(&summary(diff));
    out.push('\n');
    out
}

/// `request_algorithms: N entries changed; models: N changed, N added,
/// N removed, N unchanged; N classes of expressions now rejected`.
pub fn summary(diff: &TableDiff) -> String {
    let (changed, added, removed) = diff.counts();
    let top = diff.request_algorithms.len();
    let rejected = diff.rejections();
    let (entries, classes) = (
        if top == 1 { "entry" } else { "entries" },
        if rejected == 1 { "class" } else { "classes" },
    );
    format!(
        "request_algorithms: {top} {entries} changed; models: {changed} changed, {added} added, \
         {removed} removed, {} unchanged; {rejected} {classes} of expressions now rejected",
        diff.unchanged,
    )
}

fn top_block(top: &crate::diff::TopLevelDiff) -> String {
    let mut who = Vec::new();
    if top.unlisted {
        who.push("models without an entry".to_string());
    }
    if top.models > 0 {
        let s = if top.models == 1 { "" } else { "s" };
        who.push(format!("{} listed model{s}", top.models));
    }
    let who = if who.is_empty() {
        "no model resolves it here".to_string()
    } else {
        format!("for {}", who.join(" and "))
    };
    let mut out = format!("request_algorithms ({who})\n");
    algorithm_block(&mut out, &top.diff);
    out
}

fn set_block(set: &SetDiff) -> String {
    let mut out = match &set.model {
        None => "models without an entry".to_string(),
        Some(id) => format!("model \"{id}\""),
    };
    match set.presence {
        Presence::Changed => out.push_str(": changed"),
        Presence::Added => out.push_str(": added (it used the default set)"),
        Presence::Removed => out.push_str(": removed (it now uses the default set)"),
    }
    let (before, after) = set.configured;
    if before == after {
        let _ = writeln!(out, "\n  configured: {after}");
    } else {
        let _ = writeln!(out, "\n  configured: {before} -> {after}");
    }
    for a in &set.algorithms {
        algorithm_block(&mut out, a);
    }
    out
}

/// `  ALG: how it changed`, the field table, the rejected classes.
fn algorithm_block(out: &mut String, a: &AlgorithmDiff) {
    let alg = a.algorithm;
    let place = |r: &Side| r.place.label();
    let _ = match (&a.before, &a.after) {
        (Some(b), Some(n)) if b.place == n.place => writeln!(out, "  {alg} ({})", place(n)),
        (Some(b), Some(n)) => writeln!(out, "  {alg}: {} -> {}", place(b), place(n)),
        (None, Some(n)) => writeln!(out, "  {alg}: added ({})", place(n)),
        (Some(b), None) => writeln!(out, "  {alg}: removed (was {})", place(b)),
        (None, None) => Ok(()),
    };
    match (&a.before, &a.after) {
        (Some(_), Some(_)) => {
            let mut rows = vec![["field", "before", "from", "after", "from"].map(String::from)];
            rows.extend(a.changes.iter().map(|c| {
                [
                    c.field.clone(),
                    display(&c.before.0),
                    c.before.1.label(),
                    display(&c.after.0),
                    c.after.1.label(),
                ]
            }));
            if rows.len() > 1 {
                table(out, &rows);
            }
        }
        (Some(side), None) | (None, Some(side)) => {
            // The fields the entry sets or implies; the rest are defaults.
            let mut rows = vec![["field", "value", "from"].map(String::from)];
            rows.extend(
                side.fields
                    .iter()
                    .filter(|(field, _)| {
                        !matches!(
                            side.source(field),
                            crate::diff::FieldSource::Explain(_)
                                | crate::diff::FieldSource::Follows { .. }
                        )
                    })
                    .map(|(field, value)| {
                        [field.clone(), display(value), side.source(field).label()]
                    }),
            );
            if rows.len() > 1 {
                table(out, &rows);
            }
        }
        (None, None) => {}
    }
    for r in &a.rejected {
        let _ = writeln!(
            out,
            "    now rejected: {} ({}: {})",
            r.expressions(),
            r.code().as_str(),
            r.reason()
        );
    }
}

/// Aligned columns, four spaces in, trailing spaces trimmed.
fn table<const N: usize>(out: &mut String, rows: &[[String; N]]) {
    let mut widths = [0usize; N];
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    for row in rows {
        let mut line = String::from("   ");
        for (cell, w) in row.iter().zip(widths) {
            let _ = write!(line, " {cell:w$} ");
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
}

fn display(value: &Value) -> String {
    match value {
        Value::Null => "unset".into(),
        other => other.to_string(),
    }
}

/// One workflow command per difference, on the new file's line for it:
/// `::warning` when expressions are now rejected, `::notice` otherwise.
/// A removed entry has no line in the new file: the command names the
/// file only.
pub fn render_github(diff: &TableDiff, file: &str, new_text: &str, at: &Locations) -> String {
    let locator = Locator::of_text(new_text);
    let mut out = String::new();
    let mut emit = |span: Option<crate::diag::Span>, title: String, body: String, warn: bool| {
        let command = if warn { "warning" } else { "notice" };
        let position = span.map_or(String::new(), |span| {
            let at = locator.locate(span);
            format!(",line={},col={}", at.line, at.column)
        });
        let _ = writeln!(
            out,
            "::{command} file={}{position},title={}::{}",
            escape_property(file),
            escape_property(&title),
            escape_data(body.trim_end()),
        );
    };
    for top in &diff.request_algorithms {
        let alg = top.diff.algorithm;
        let span = at
            .request_algorithms
            .get(&alg)
            .or(at.request_algorithms_key.as_ref())
            .copied();
        let warn = !top.diff.rejected.is_empty();
        emit(
            span,
            format!("request_algorithms {alg} changed"),
            top_block(top),
            warn,
        );
    }
    for set in &diff.sets {
        let (span, title) = match &set.model {
            None => (at.default, "models without an entry changed".to_string()),
            Some(id) => {
                let span = match set.presence {
                    Presence::Removed => None,
                    _ => at.models.get(id).copied(),
                };
                (span, format!("model {id} {}", set.presence.name()))
            }
        };
        let warn = set.algorithms.iter().any(|a| !a.rejected.is_empty());
        emit(span, title, set_block(set), warn);
    }
    out
}
