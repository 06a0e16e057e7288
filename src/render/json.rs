//! `--format json`: the version-1 diagnostics document (docs/contract.md 5.1).
//!
//! `help` is always present, `null` when a diagnostic has none, so every
//! entry has the same keys. Findings a suppression matched are listed
//! apart, under `suppressed` (each entry with its `suppression`), and
//! counted in `summary.suppressed`; `diagnostics` and the error and
//! warning counts never include them.

use super::Locator;
use crate::diag::{Code, Diagnostic, Report, Severity, Span, SuppressionKind};
use serde::Serialize;

/// Format version printed as `"version"`.
const VERSION: u32 = 1;

#[derive(Serialize)]
struct Document<'a> {
    version: u32,
    diagnostics: Vec<Entry<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    suppressed: Vec<SuppressedEntry<'a>>,
    summary: Summary,
}

#[derive(Serialize)]
struct SuppressedEntry<'a> {
    #[serde(flatten)]
    entry: Entry<'a>,
    suppression: SuppressionEntry<'a>,
}

#[derive(Serialize)]
struct SuppressionEntry<'a> {
    kind: SuppressionKind,
    justification: Option<&'a str>,
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
    #[serde(skip_serializing_if = "is_zero")]
    suppressed: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
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

fn entry<'a>(report: &'a Report, locator: &Locator<'_>, d: &'a Diagnostic) -> Entry<'a> {
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
}

fn document(reports: &[Report]) -> Document<'_> {
    let mut diagnostics = Vec::new();
    let mut suppressed = Vec::new();
    for report in reports {
        if report.diagnostics.is_empty() && report.suppressed.is_empty() {
            continue;
        }
        let locator = Locator::new(report);
        diagnostics.extend(
            report
                .diagnostics
                .iter()
                .map(|d| entry(report, &locator, d)),
        );
        suppressed.extend(report.suppressed.iter().map(|s| SuppressedEntry {
            entry: entry(report, &locator, &s.diagnostic),
            suppression: SuppressionEntry {
                kind: s.suppression.kind,
                justification: s.suppression.justification.as_deref(),
            },
        }));
    }
    let (errors, warnings) = super::totals(reports);
    Document {
        version: VERSION,
        diagnostics,
        summary: Summary {
            errors,
            warnings,
            suppressed: suppressed.len(),
        },
        suppressed,
    }
}
