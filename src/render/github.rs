//! `--format github`: GitHub Actions workflow commands, one per diagnostic:
//! `::error file=F,line=L,col=C,endLine=L,endColumn=C,title=CODE::MESSAGE`.
//! A finding a suppression matched is a `::notice` titled `CODE
//! (suppressed)`, its message followed by the suppression's reason.

use super::Locator;
use crate::diag::{Report, Severity};
use std::fmt::Write;

/// Every diagnostic of every report as one workflow command per line,
/// positions from each report's own text.
pub fn render(reports: &[Report]) -> String {
    let mut out = String::new();
    for report in reports {
        let locator = Locator::new(report);
        for d in &report.diagnostics {
            let at = locator.locate(d.span);
            let command = match d.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
            };
            let mut message = d.message.clone();
            if let Some(help) = &d.help {
                message.push_str("\nhelp: ");
                message.push_str(help);
            }
            let _ = writeln!(
                out,
                "::{command} file={},line={},col={},endLine={},endColumn={},title={}::{}",
                escape_property(&report.source_name),
                at.line,
                at.column,
                at.end_line,
                at.end_column,
                escape_property(d.code.as_str()),
                escape_data(&message),
            );
        }
        for s in &report.suppressed {
            let d = &s.diagnostic;
            let at = locator.locate(d.span);
            let how = match s.suppression.kind {
                crate::diag::SuppressionKind::InSource => "a comment",
                crate::diag::SuppressionKind::External => "the project configuration",
            };
            let mut message = format!("{}\nsuppressed by {how}", d.message);
            if let Some(reason) = &s.suppression.justification {
                message.push_str(": ");
                message.push_str(reason);
            }
            let _ = writeln!(
                out,
                "::notice file={},line={},col={},endLine={},endColumn={},title={}::{}",
                escape_property(&report.source_name),
                at.line,
                at.column,
                at.end_line,
                at.end_column,
                escape_property(&format!("{} (suppressed)", d.code.as_str())),
                escape_data(&message),
            );
        }
    }
    out
}

/// Escaping of a command's message (after `::`).
pub fn escape_data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escaping of a property value (`file=`, `title=`): also `:` and `,`.
pub fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_percent_first_then_newlines_and_separators() {
        assert_eq!(escape_data("50%\r\nx"), "50%25%0D%0Ax");
        assert_eq!(escape_property("arg:1,a%"), "arg%3A1%2Ca%25");
    }
}
