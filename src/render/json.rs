//! `--format json`: the version-1 diagnostics document (docs/contract.md 5.1).
//!
//! `help` is always present, `null` when a diagnostic has none, so every
//! entry has the same keys.

use super::Locator;
use crate::diag::{Code, Report, Severity, Span};
use serde::Serialize;

/// Format version printed as `"version"`.
pub const VERSION: u32 = 1;

#[derive(Serialize)]
struct Document<'a> {
    version: u32,
    diagnostics: Vec<Entry<'a>>,
    summary: Summary,
}

#[derive(Serialize)]
struct Entry<'a> {
    code: Code,
    severity: Severity,
    message: &'a str,
    source: &'a str,
    span: Span,
    line: usize,
    column: usize,
    /// Where the span ends (exclusive), like `line` and `column`.
    end_line: usize,
    end_column: usize,
    help: Option<&'a str>,
}

#[derive(Serialize)]
struct Summary {
    errors: usize,
    warnings: usize,
}

/// The document as a JSON value (also used by `explain` for its warnings).
pub fn to_value(reports: &[Report]) -> serde_json::Value {
    serde_json::to_value(document(reports)).unwrap_or(serde_json::Value::Null)
}

/// Pretty-printed document with a trailing newline, serialised straight
/// from the borrowed entries (no intermediate `Value` tree).
pub fn render(reports: &[Report]) -> String {
    let mut text = serde_json::to_string_pretty(&document(reports)).unwrap_or_default();
    text.push('\n');
    text
}

fn document(reports: &[Report]) -> Document<'_> {
    let diagnostics = reports
        .iter()
        .flat_map(|report| {
            let locator = Locator::new(report);
            report.diagnostics.iter().map(move |d| {
                let at = locator.locate(d.span);
                Entry {
                    code: d.code,
                    severity: d.severity,
                    message: &d.message,
                    source: &report.source_name,
                    span: at.span,
                    line: at.line,
                    column: at.column,
                    end_line: at.end_line,
                    end_column: at.end_column,
                    help: d.help.as_deref(),
                }
            })
        })
        .collect();
    let (errors, warnings) = super::totals(reports);
    Document {
        version: VERSION,
        diagnostics,
        summary: Summary { errors, warnings },
    }
}
