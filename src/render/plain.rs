//! `Display` for diagnostics and reports: plain text an embedder can log,
//! one line per diagnostic in the conventional `file:line:col: ` shape that
//! editors and terminals link, help on an indented line below. User input in
//! messages is made inert as in every other renderer.

use std::fmt;

use super::inert::inert_text;
use super::locate;
use crate::diag::{Diagnostic, Report, Severity};

fn severity_word(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
    }
}

/// `error[code]: message`, then `  help: ...` when there is help. Without
/// its report a diagnostic has no text to place its span in.
impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}[{}]: {}",
            severity_word(self.severity),
            self.code,
            inert_text(&self.message)
        )?;
        if let Some(help) = &self.help {
            write!(f, "\n  help: {}", inert_text(help))?;
        }
        Ok(())
    }
}

/// One `source:line:column: error[code]: message` line per diagnostic (help
/// indented below), lines separated by newlines, no trailing newline.
impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let source = inert_text(&self.source_name);
        for (i, diagnostic) in self.diagnostics.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            let at = locate(self, diagnostic.span);
            write!(f, "{source}:{}:{}: {diagnostic}", at.line, at.column)?;
        }
        Ok(())
    }
}
