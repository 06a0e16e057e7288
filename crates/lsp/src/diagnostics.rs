//! routex diagnostics -> LSP diagnostics: code, `source: "routex"`,
//! severity, the UTF-16 range of the span, the help appended to the message
//! (every client shows message text; not every one shows related
//! information), and a link to the code's entry in docs/diagnostics.md.

use super::documents::Document;
use super::kind::MAX_CHECKED_BYTES;
use lsp_types::{
    CodeDescription, Diagnostic, DiagnosticSeverity, NumberOrString, Position, Range, Uri,
};
use routex::diag::{self, Severity};
use std::str::FromStr;

/// Diagnostics published per document at most; past it one more says how
/// many were left out (a 4 MiB file with an error per line would otherwise
/// send hundreds of megabytes to the editor).
pub const MAX_PUBLISHED: usize = 1000;

/// Where docs/diagnostics.md is, unless the client says otherwise
/// (`initializationOptions.diagnosticsDocs`): the page in the repository
/// (Cargo.toml `repository`), the same one SARIF's `helpUri` names.
pub fn default_docs_base() -> String {
    format!(
        "{}/blob/main/docs/diagnostics.md",
        env!("CARGO_PKG_REPOSITORY")
    )
}

/// The LSP diagnostics of a document, at most [`MAX_PUBLISHED`] + 1.
pub fn of_document(document: &Document, docs_base: &str) -> Vec<Diagnostic> {
    let analysis = document.analysis();
    if analysis.too_large {
        return vec![Diagnostic {
            range: Range::new(Position::new(0, 0), Position::new(0, 0)),
            severity: Some(DiagnosticSeverity::WARNING),
            source: Some("routex".into()),
            message: format!(
                "not checked: the file is larger than the {} MiB input limit",
                MAX_CHECKED_BYTES / (1024 * 1024)
            ),
            ..Diagnostic::default()
        }];
    }
    let all = &analysis.report.diagnostics;
    let mut out: Vec<Diagnostic> = all
        .iter()
        .take(MAX_PUBLISHED)
        .map(|d| convert(document, d, docs_base))
        .collect();
    if all.len() > MAX_PUBLISHED {
        out.push(Diagnostic {
            range: Range::new(Position::new(0, 0), Position::new(0, 0)),
            severity: Some(DiagnosticSeverity::INFORMATION),
            source: Some("routex".into()),
            message: format!(
                "{} more diagnostics not shown; run `routex lint` for all of them",
                all.len() - MAX_PUBLISHED
            ),
            ..Diagnostic::default()
        });
    }
    out
}

pub(super) fn convert(document: &Document, d: &diag::Diagnostic, docs_base: &str) -> Diagnostic {
    let mut message = d.message.clone();
    if let Some(help) = &d.help {
        message.push_str("\nhelp: ");
        message.push_str(help);
    }
    let href = Uri::from_str(&format!("{docs_base}#{}", d.code.as_str())).ok();
    Diagnostic {
        range: document.lines.range(&document.text, d.span),
        severity: Some(match d.severity {
            Severity::Error => DiagnosticSeverity::ERROR,
            Severity::Warning => DiagnosticSeverity::WARNING,
        }),
        code: Some(NumberOrString::String(d.code.as_str().into())),
        code_description: href.map(|href| CodeDescription { href }),
        source: Some("routex".into()),
        message,
        ..Diagnostic::default()
    }
}
