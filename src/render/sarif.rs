//! `--format sarif`: SARIF 2.1.0, one run, one rule per code that occurs
//! (in `Code::ALL` order), columns counted in Unicode code points.

use super::Locator;
use crate::diag::{Code, Report, Severity};
use serde_json::{json, Value};

pub const SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";

pub fn to_value(reports: &[Report]) -> Value {
    let used: Vec<Code> = Code::ALL
        .iter()
        .copied()
        .filter(|code| {
            reports
                .iter()
                .any(|r| r.diagnostics.iter().any(|d| d.code == *code))
        })
        .collect();
    let rules: Vec<Value> = used
        .iter()
        .map(|code| {
            json!({
                "id": code.as_str(),
                "name": code.as_str(),
                "shortDescription": {"text": code.summary()},
                "defaultConfiguration": {"level": level(code.default_severity())},
            })
        })
        .collect();
    let results: Vec<Value> = reports
        .iter()
        .flat_map(|report| {
            let used = &used;
            let locator = Locator::new(report);
            report.diagnostics.iter().map(move |d| {
                let at = locator.locate(d.span);
                let mut text = d.message.clone();
                if let Some(help) = &d.help {
                    text.push_str("\nhelp: ");
                    text.push_str(help);
                }
                json!({
                    "ruleId": d.code.as_str(),
                    "ruleIndex": used.iter().position(|c| *c == d.code).unwrap_or(0),
                    "level": level(d.severity),
                    "message": {"text": text},
                    "locations": [{
                        "physicalLocation": {
                            "artifactLocation": {"uri": report.source_name},
                            "region": {
                                "startLine": at.line,
                                "startColumn": at.column,
                                "endLine": at.end_line,
                                "endColumn": at.end_column,
                                "byteOffset": at.span.start,
                                "byteLength": at.span.end - at.span.start,
                            }
                        }
                    }],
                })
            })
        })
        .collect();
    json!({
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "routex",
                "version": env!("CARGO_PKG_VERSION"),
                "rules": rules,
            }},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    })
}

pub fn render(reports: &[Report]) -> String {
    let mut text = serde_json::to_string_pretty(&to_value(reports)).unwrap_or_default();
    text.push('\n');
    text
}

fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
    }
}
