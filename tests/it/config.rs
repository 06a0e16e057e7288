//! Tests for the config layer: lb-config.json start-up rules, spans,
//! warnings, build/import and the published examples.

mod build;
mod docs;
mod generated;
mod load_path;
mod messages;
mod review;
mod robustness;
mod startup;
mod warnings;

use routex::diag::{Code, Diagnostic, Report};
use routex::ir::RouteTable;

/// Loads lb-config.json text: the table (when no error) and the report.
pub fn load(json: &str) -> (Option<RouteTable>, Report) {
    routex::config::check_lb_config("lb-config.json", json)
}

/// The text a diagnostic's span covers.
pub fn spanned<'a>(report: &'a Report, d: &Diagnostic) -> &'a str {
    report
        .text
        .get(d.span.start..d.span.end)
        .unwrap_or("<bad span>")
}

/// (code, message, spanned text) of every diagnostic.
pub fn summary(report: &Report) -> Vec<(Code, String, String)> {
    report
        .diagnostics
        .iter()
        .map(|d| (d.code, d.message.clone(), spanned(report, d).to_string()))
        .collect()
}

/// The single error of a config that must fail, as (code, message, span text).
pub fn only_error(json: &str) -> (Code, String, String) {
    let (table, report) = load(json);
    assert!(table.is_none(), "must fail: {json}");
    let errors: Vec<_> = summary(&report)
        .into_iter()
        .filter(|(c, _, _)| c.default_severity() == routex::diag::Severity::Error)
        .collect();
    assert_eq!(errors.len(), 1, "{json}: {errors:?}");
    errors
        .into_iter()
        .next()
        .unwrap_or((Code::InvalidJson, String::new(), String::new()))
}
