//! `--format human`: miette's graphical report per diagnostic, the label at
//! the span, the help line and the code, then a one-line summary.
//!
//! [`Style::Fancy`] (unicode and colours) is for terminals; [`Style::Plain`]
//! is ASCII without escape codes, stable enough for snapshots and logs.

use super::inert::{inert_source, inert_text};
use super::locate;
use crate::diag::{Diagnostic, Report, Severity, Span};
use miette::{GraphicalReportHandler, GraphicalTheme, LabeledSpan, NamedSource, SourceSpan};
use std::fmt;
use std::sync::Arc;

/// Width the plain style wraps at: fixed, so output does not depend on the
/// terminal.
pub const PLAIN_WIDTH: usize = 100;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    Plain,
    /// Unicode and colours (colours dropped when `NO_COLOR` is set).
    Fancy {
        width: usize,
    },
}

/// Every diagnostic of every report (the caller adds [`summary`]).
pub fn render(reports: &[Report], style: Style) -> String {
    let mut out = String::new();
    for report in reports {
        let part = render_report(report, style);
        if !out.is_empty() && !part.is_empty() {
            out.push('\n');
        }
        out.push_str(&part);
    }
    out
}

/// The diagnostics of one report, without a summary.
pub fn render_report(report: &Report, style: Style) -> String {
    let handler = handler(style);
    let text: Arc<str> = Arc::from(inert_source(&report.text).as_str());
    let mut out = String::new();
    for diagnostic in &report.diagnostics {
        if !out.is_empty() {
            out.push('\n');
        }
        let at = locate(report, diagnostic.span);
        // miette counts columns in bytes; name the source with our
        // character-based position instead, as in the JSON output.
        let name = format!(
            "{}:{}:{}",
            inert_text(&report.source_name),
            at.line,
            at.column
        );
        let source = NamedSource::new(name, Arc::clone(&text));
        let view = View {
            diagnostic,
            source: &source,
            span: visible_span(&report.text, at.span),
        };
        if handler.render_report(&mut out, &view).is_err() {
            // Rendering into a String only fails on a formatter bug; fall
            // back to one line rather than losing the diagnostic.
            out.push_str(&one_line(report, diagnostic));
        }
        if !out.ends_with('\n') {
            out.push('\n');
        }
    }
    out
}

/// `file:line:column: severity[code]: message`, for fallbacks and logs.
pub fn one_line(report: &Report, diagnostic: &Diagnostic) -> String {
    let at = locate(report, diagnostic.span);
    format!(
        "{}:{}:{}: {}[{}]: {}\n",
        inert_text(&report.source_name),
        at.line,
        at.column,
        severity_name(diagnostic.severity),
        diagnostic.code,
        inert_text(&diagnostic.message)
    )
}

/// `2 errors, 1 warning in 3 files`.
pub fn summary(errors: usize, warnings: usize, sources: usize, noun: &str) -> String {
    let plural = |n: usize, word: &str| {
        if n == 1 {
            format!("{n} {word}")
        } else {
            format!("{n} {word}s")
        }
    };
    format!(
        "{}, {} in {}\n",
        plural(errors, "error"),
        plural(warnings, "warning"),
        plural(sources, noun)
    )
}

/// miette draws no pointer for an empty span after the final newline (an
/// "unexpected end of input"); point at the end of the last line instead.
fn visible_span(text: &str, span: Span) -> SourceSpan {
    let mut start = span.start;
    if span.start == span.end && start == text.len() {
        let trimmed = text.trim_end_matches(['\n', '\r']).len();
        if trimmed < start {
            start = trimmed;
        }
    }
    SourceSpan::new(start.into(), span.end.max(start) - start)
}

fn severity_name(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
    }
}

fn handler(style: Style) -> GraphicalReportHandler {
    let (theme, width) = match style {
        Style::Plain => (GraphicalTheme::none(), PLAIN_WIDTH),
        Style::Fancy { width } => {
            let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
            let theme = if no_color {
                GraphicalTheme::unicode_nocolor()
            } else {
                GraphicalTheme::unicode()
            };
            (theme, width)
        }
    };
    GraphicalReportHandler::new_themed(theme)
        .with_width(width)
        .with_links(false)
        .with_urls(false)
        .without_primary_span_start()
}

/// A diagnostic as miette sees it.
struct View<'a> {
    diagnostic: &'a Diagnostic,
    source: &'a NamedSource<Arc<str>>,
    span: SourceSpan,
}

impl fmt::Debug for View<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.diagnostic, f)
    }
}

impl fmt::Display for View<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&inert_text(&self.diagnostic.message))
    }
}

impl std::error::Error for View<'_> {}

impl miette::Diagnostic for View<'_> {
    fn code<'b>(&'b self) -> Option<Box<dyn fmt::Display + 'b>> {
        Some(Box::new(self.diagnostic.code.as_str()))
    }

    fn severity(&self) -> Option<miette::Severity> {
        Some(match self.diagnostic.severity {
            Severity::Error => miette::Severity::Error,
            Severity::Warning => miette::Severity::Warning,
        })
    }

    fn help<'b>(&'b self) -> Option<Box<dyn fmt::Display + 'b>> {
        self.diagnostic
            .help
            .as_deref()
            .map(|h| Box::new(inert_text(h)) as Box<dyn fmt::Display + 'b>)
    }

    fn source_code(&self) -> Option<&dyn miette::SourceCode> {
        Some(self.source)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        // The message is printed above the source already; without a short
        // label of its own the span is underlined, not captioned twice.
        let label = self.diagnostic.label.as_deref().map(inert_text);
        Some(Box::new(std::iter::once(LabeledSpan::new_with_span(
            label, self.span,
        ))))
    }
}
