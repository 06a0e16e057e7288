//! `--format human`: miette's graphical report per diagnostic, the label at
//! the span, the help line and the code, then a one-line summary.
//!
//! [`Style::Fancy`] (unicode and colours) is for terminals; [`Style::Plain`]
//! is ASCII without escape codes, stable enough for snapshots and logs.
//!
//! Cost is linear in the input: the line index of a report is built once,
//! miette sees only the few lines around each span (cut around the span when
//! a line is long), and at most [`MAX_SHOWN_PER_SOURCE`] diagnostics of one
//! source are drawn, followed by a count of the rest.

use miette::{
    GraphicalReportHandler, GraphicalTheme, LabeledSpan, MietteError, MietteSpanContents,
    SourceCode, SourceSpan, SpanContents,
};
use routex::diag::{Diagnostic, LineIndex, Report, Severity, Span};
use routex::render::{inert_source, inert_text};
use routex::render::{Location, Locator};
use std::fmt;

/// Width the plain style wraps at: fixed, so output does not depend on the
/// terminal.
pub const PLAIN_WIDTH: usize = 100;

/// Diagnostics drawn per source; the others are counted in one line (the
/// machine formats list every one).
pub const MAX_SHOWN_PER_SOURCE: usize = 100;

/// Characters of a source line shown around a span; longer lines are cut
/// to this window and marked with `...`.
pub const LINE_WINDOW: usize = 120;

/// A span covering more lines than this shows only its first line.
const MAX_SPAN_LINES: usize = 6;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    Plain,
    /// Unicode and colours.
    Fancy {
        width: usize,
    },
    /// Unicode without colours (a terminal under `NO_COLOR` or
    /// `--color never`).
    Unicode {
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
    let locator = Locator::new(report);
    let name = inert_text(&report.source_name);
    let mut out = String::new();
    for diagnostic in report.diagnostics.iter().take(MAX_SHOWN_PER_SOURCE) {
        if !out.is_empty() {
            out.push('\n');
        }
        let at = locator.locate(diagnostic.span);
        let snippet = Snippet::new(&report.text, locator.index(), &at);
        // miette counts columns in bytes; name the source with our
        // character-based position instead, as in the JSON output.
        let source = Source {
            name: format!("{name}:{}:{}", at.line, at.column),
            text: snippet.text,
            first_line: snippet.first_line,
        };
        let view = View {
            diagnostic,
            source: &source,
            span: snippet.span,
        };
        if handler.render_report(&mut out, &view).is_err() {
            // Rendering into a String only fails on a formatter bug; fall
            // back to one line rather than losing the diagnostic.
            out.push_str(&one_line_at(report, diagnostic, &at));
        }
        if !out.ends_with('\n') {
            out.push('\n');
        }
    }
    let hidden = report
        .diagnostics
        .len()
        .saturating_sub(MAX_SHOWN_PER_SOURCE);
    if hidden > 0 {
        let noun = if hidden == 1 {
            "diagnostic"
        } else {
            "diagnostics"
        };
        out.push_str(&format!(
            "\n... and {hidden} more {noun} in {name} not shown \
             (--format json lists every one)\n"
        ));
    }
    out
}

/// `file:line:column: severity[code]: message`, for fallbacks and logs.
pub fn one_line(report: &Report, diagnostic: &Diagnostic) -> String {
    one_line_at(
        report,
        diagnostic,
        &routex::render::locate(report, diagnostic.span),
    )
}

fn one_line_at(report: &Report, diagnostic: &Diagnostic, at: &Location) -> String {
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

fn severity_name(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
    }
}

fn handler(style: Style) -> GraphicalReportHandler {
    let (theme, width) = match style {
        Style::Plain => (GraphicalTheme::none(), PLAIN_WIDTH),
        Style::Fancy { width } => (GraphicalTheme::unicode(), width),
        Style::Unicode { width } => (GraphicalTheme::unicode_nocolor(), width),
    };
    GraphicalReportHandler::new_themed(theme)
        .with_width(width)
        .with_links(false)
        .with_urls(false)
        .without_primary_span_start()
        // Names like `pulsar-wait-and-widen` stay whole when help wraps.
        .with_word_separator(textwrap::WordSeparator::AsciiSpace)
        .with_word_splitter(textwrap::WordSplitter::NoHyphenation)
        .with_break_words(false)
}

/// The lines miette draws for one diagnostic: the span's lines and one line
/// of context either side, each cut to a window around the span's columns.
struct Snippet {
    text: String,
    /// 0-based number of the snippet's first line in the source.
    first_line: usize,
    /// The span inside `text`.
    span: SourceSpan,
}

impl Snippet {
    fn new(source: &str, index: &LineIndex, at: &Location) -> Snippet {
        let mut span = at.span;
        let mut last = at.end_line;
        if last > at.line + MAX_SPAN_LINES {
            last = at.line;
        }
        let line_of = |n: usize| index.line_span(n).unwrap_or(Span::new(0, 0));
        let primary = line_of(at.line);
        if last == at.line {
            span.end = span.end.min(primary.end);
        }
        // The window, in characters of the span's first line.
        let span_chars = if last == at.line {
            source[span.start..span.end].chars().count()
        } else {
            0
        };
        let before = LINE_WINDOW.saturating_sub(span_chars.min(LINE_WINDOW)) / 2;
        let from = (at.column - 1).saturating_sub(before);
        let to = from + LINE_WINDOW.max(span_chars);
        let first = at.line.saturating_sub(1).max(1);
        // The empty "line" after a final newline is no context.
        let end = if index
            .line_span(last + 1)
            .is_some_and(|next| next.start < source.len())
        {
            last + 1
        } else {
            last
        };
        let mut text = String::new();
        let (mut start_in, mut end_in) = (0, 0);
        for n in first..=end {
            let line = line_of(n);
            let body = &source[line.start..line.end];
            let cut = Cut::new(body, from, to);
            let base = text.len();
            text.push_str(&cut.render(body));
            text.push('\n');
            let map = |offset: usize| base + cut.map(offset - line.start);
            if n == at.line {
                start_in = map(span.start.clamp(line.start, line.end));
            }
            if n == last {
                end_in = map(span.end.clamp(line.start, line.end)).max(start_in);
            }
        }
        Snippet {
            text: inert_source(&text),
            first_line: first - 1,
            span: SourceSpan::new(start_in.into(), end_in.max(start_in) - start_in),
        }
    }
}

/// The part of one source line inside a character window.
struct Cut {
    /// Byte range of the line that is kept.
    keep: Span,
    cut_start: bool,
    cut_end: bool,
}

const MARK: &str = "...";

impl Cut {
    fn new(body: &str, from: usize, to: usize) -> Cut {
        if body.len() <= LINE_WINDOW {
            return Cut {
                keep: Span::new(0, body.len()),
                cut_start: false,
                cut_end: false,
            };
        }
        let start = byte_at(body, from);
        let end = start + byte_at(&body[start..], to - from);
        Cut {
            keep: Span::new(start, end),
            cut_start: start > 0,
            cut_end: end < body.len(),
        }
    }

    fn render(&self, body: &str) -> String {
        let mut out = String::new();
        if self.cut_start {
            out.push_str(MARK);
        }
        out.push_str(&body[self.keep.start..self.keep.end]);
        if self.cut_end {
            out.push_str(MARK);
        }
        out
    }

    /// Where a byte offset of the line lands in the rendered cut.
    fn map(&self, offset: usize) -> usize {
        let mark = if self.cut_start { MARK.len() } else { 0 };
        mark + offset.clamp(self.keep.start, self.keep.end) - self.keep.start
    }
}

/// The byte offset of the `chars`-th character of `text` (its length when
/// shorter).
fn byte_at(text: &str, chars: usize) -> usize {
    text.char_indices()
        .nth(chars)
        .map_or(text.len(), |(i, _)| i)
}

/// A snippet as miette reads it: line numbers are those of the source.
struct Source {
    name: String,
    text: String,
    first_line: usize,
}

impl SourceCode for Source {
    fn read_span<'a>(
        &'a self,
        span: &SourceSpan,
        context_lines_before: usize,
        context_lines_after: usize,
    ) -> Result<Box<dyn SpanContents<'a> + 'a>, MietteError> {
        let inner =
            self.text
                .as_str()
                .read_span(span, context_lines_before, context_lines_after)?;
        Ok(Box::new(MietteSpanContents::new_named(
            self.name.clone(),
            inner.data(),
            *inner.span(),
            inner.line() + self.first_line,
            inner.column(),
            inner.line_count(),
        )))
    }
}

/// A diagnostic as miette sees it.
struct View<'a> {
    diagnostic: &'a Diagnostic,
    source: &'a Source,
    span: SourceSpan,
}

impl fmt::Debug for View<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.diagnostic, f)
    }
}

impl fmt::Display for View<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&shorten(&inert_text(&self.diagnostic.message)))
    }
}

/// Messages longer than this many characters (one that echoes a 1,100-byte
/// header value) lose their middle in human output; the machine formats
/// keep the whole text.
pub const MAX_MESSAGE_CHARS: usize = 240;

fn shorten(message: &str) -> String {
    let chars = message.chars().count();
    if chars <= MAX_MESSAGE_CHARS {
        return message.to_string();
    }
    let (head, tail) = (160, 40);
    let start_of_tail = byte_at(message, chars - tail);
    format!(
        "{} ... ({} characters omitted) ... {}",
        &message[..byte_at(message, head)],
        chars - head - tail,
        &message[start_of_tail..]
    )
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
