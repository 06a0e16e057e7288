//! The one diagnostic model under every renderer (human, json, github, sarif).
//!
//! Lowest layer: syntax, check and config produce these values; the CLI renders
//! them. Nothing here knows about pest, JSON or the terminal.

use serde::Serialize;

mod codes;
mod levels;

pub use codes::{Code, CodeInfo, Level, Origin, CODES};
pub use levels::{
    suppress, FixedLevel, Levels, Suppressed, Suppression, SuppressionKind, SuppressionRule,
};

/// A byte range into one source text.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub struct Span {
    /// Byte offset of the first byte.
    pub start: usize,
    /// Byte offset just past the last byte (exclusive); equal to `start`
    /// for an empty span (a point, such as "end of input").
    pub end: usize,
}

impl Span {
    /// The bytes `start..end`; not checked against any text (renderers
    /// clamp spans to their source).
    pub const fn new(start: usize, end: usize) -> Self {
        Span { start, end }
    }

    /// Shifts a span that was computed on a slice starting at `offset`.
    pub const fn offset(self, offset: usize) -> Self {
        Span::new(self.start + offset, self.end + offset)
    }

    /// The smallest span covering both.
    pub fn join(self, other: Span) -> Self {
        Span::new(self.start.min(other.start), self.end.max(other.end))
    }
}

/// How serious a diagnostic is; each [`Code`] has a default, which
/// [`Levels`] may change. Serialised in lower case. `Error` sorts first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The input is refused (what stargate refuses, or a routex rule at
    /// level deny): `routex lint` exits 1.
    Error,
    /// Reported without refusing the input (exit 1 only under
    /// `--deny-warnings`).
    Warning,
}

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Code {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// One problem in one source.
#[derive(Clone, Debug, PartialEq)]
pub struct Diagnostic {
    /// What kind of problem this is (docs/diagnostics.md lists every code).
    pub code: Code,
    /// The code's default severity unless levels or the producer changed it.
    pub severity: Severity,
    /// Names the offending input; for stargate codes, stargate's message.
    pub message: String,
    /// The offending text in the report's source (a point for a missing
    /// item, such as the end of input).
    pub span: Span,
    /// Short text shown at the span (defaults to the message when absent).
    pub label: Option<String>,
    /// How to fix it: did-you-mean, accepted range, applicable algorithms.
    pub help: Option<String>,
    /// The text that should replace the span, when the checker knows it (a
    /// did-you-mean, an alias's canonical name); the editor server offers
    /// it as a quick fix. For lb-config.json spans it includes the quotes.
    pub suggestion: Option<String>,
}

impl Diagnostic {
    /// A diagnostic with the code's default severity and no label, help or
    /// suggestion.
    pub fn new(code: Code, span: Span, message: impl Into<String>) -> Self {
        Diagnostic {
            code,
            severity: code.default_severity(),
            message: message.into(),
            span,
            label: None,
            help: None,
            suggestion: None,
        }
    }

    /// Sets the help text (replacing any earlier one).
    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// Sets the replacement text for the span (the editor server's quick
    /// fix), replacing any earlier one.
    pub fn with_suggestion(mut self, replacement: impl Into<String>) -> Self {
        self.suggestion = Some(replacement.into());
        self
    }

    /// Sets the short text shown at the span (replacing any earlier one).
    pub fn with_label(mut self, label: impl Into<String>) -> Self {
        self.label = Some(label.into());
        self
    }

    /// Overrides the code's default severity.
    pub fn with_severity(mut self, severity: Severity) -> Self {
        self.severity = severity;
        self
    }

    /// Whether the severity is [`Severity::Error`].
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// Shifts the span of a diagnostic computed on an embedded slice.
    pub fn offset(mut self, offset: usize) -> Self {
        self.span = self.span.offset(offset);
        self
    }
}

/// Every diagnostic of one source, with the source text they point into.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// File path as given, or `arg:N`.
    pub source_name: String,
    /// The whole source text; every span of `diagnostics` is a byte range
    /// into it.
    pub text: String,
    /// The findings, in the order they were produced (for an expression,
    /// the first error is stargate's).
    pub diagnostics: Vec<Diagnostic>,
    /// Findings a suppression matched ([`suppress`]): out of every count,
    /// reported by the formats that say what was suppressed.
    pub suppressed: Vec<Suppressed>,
}

impl Report {
    /// An empty report (no diagnostics) for one source.
    pub fn new(source_name: impl Into<String>, text: impl Into<String>) -> Self {
        Report {
            source_name: source_name.into(),
            text: text.into(),
            diagnostics: Vec::new(),
            suppressed: Vec::new(),
        }
    }

    /// How many diagnostics are errors (suppressed findings not counted).
    pub fn errors(&self) -> usize {
        self.diagnostics.iter().filter(|d| d.is_error()).count()
    }

    /// How many diagnostics are warnings (suppressed findings not counted).
    pub fn warnings(&self) -> usize {
        self.diagnostics.len() - self.errors()
    }

    /// Whether any diagnostic is an error: the source is refused.
    pub fn has_errors(&self) -> bool {
        self.errors() > 0
    }

    /// The first error: for an expression, the one stargate would return.
    pub fn first_error(&self) -> Option<&Diagnostic> {
        self.diagnostics.iter().find(|d| d.is_error())
    }

    /// 1-based line and column (column in characters) of a byte offset.
    /// Rescans the text: for many offsets build [`Report::line_index`].
    pub fn line_column(&self, offset: usize) -> (usize, usize) {
        line_column(&self.text, offset)
    }

    /// The line index of the text, built in one pass.
    pub fn line_index(&self) -> LineIndex {
        LineIndex::new(&self.text)
    }
}

/// 1-based line and column (column counted in characters) of a byte offset;
/// offsets past the end or inside a character clamp to the nearest boundary.
/// Builds a [`LineIndex`] per call: for one offset only.
pub fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let p = LineIndex::new(text).position(offset);
    (p.line, p.column)
}

/// A position in a text; every field is 1-based.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Position {
    /// The line, counting lines ended by `\n`.
    pub line: usize,
    /// In characters (Unicode scalar values), as SARIF's `unicodeCodePoints`.
    pub column: usize,
    /// In UTF-16 code units, as the Language Server Protocol counts.
    pub utf16_column: usize,
}

/// The line starts and non-ASCII characters of one text, found in one pass
/// (rust-analyzer's `line-index`), so that a position costs a binary search
/// instead of a rescan from the start. Lines end at `\n`.
#[derive(Clone, Debug)]
pub struct LineIndex {
    inner: line_index::LineIndex,
    len: usize,
}

impl LineIndex {
    /// `line-index` counts in `u32`: a text of 4 GiB or more is indexed up
    /// to that size and later offsets clamp to it (inputs are far smaller:
    /// docs/cli.md's 4 MiB limit).
    pub fn new(text: &str) -> Self {
        let mut len = text.len().min(u32::MAX as usize - 1);
        while !text.is_char_boundary(len) {
            len -= 1;
        }
        LineIndex {
            inner: line_index::LineIndex::new(&text[..len]),
            len,
        }
    }

    /// The indexed length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the indexed text is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The position of a byte offset; an offset past the end or inside a
    /// character moves back to the nearest character boundary.
    pub fn position(&self, offset: usize) -> Position {
        let mut offset = offset.min(self.len) as u32;
        let line_col = loop {
            // Only an offset inside a character (at most 3 bytes in) fails.
            match self.inner.try_line_col(offset.into()) {
                Some(lc) => break lc,
                None if offset > 0 => offset -= 1,
                None => break line_index::LineCol { line: 0, col: 0 },
            }
        };
        let wide = |enc| {
            self.inner
                .to_wide(enc, line_col)
                .map_or(line_col.col, |w| w.col) as usize
        };
        Position {
            line: line_col.line as usize + 1,
            column: wide(line_index::WideEncoding::Utf32) + 1,
            utf16_column: wide(line_index::WideEncoding::Utf16) + 1,
        }
    }

    /// The byte range of a 1-based line without its `\n`, if it exists.
    pub fn line_span(&self, line: usize) -> Option<Span> {
        let line = u32::try_from(line.checked_sub(1)?).ok()?;
        let range = self.inner.line(line)?;
        let (start, mut end) = (usize::from(range.start()), usize::from(range.end()));
        // Every line but the last ends with its `\n`.
        if self.inner.line(line + 1).is_some() {
            end -= 1;
        }
        Some(Span::new(start, end))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_column_counts_characters() {
        assert_eq!(line_column("ab\ncé d", 7), (2, 4));
        assert_eq!(line_column("abc", 0), (1, 1));
        assert_eq!(line_column("abc", 99), (1, 4));
        assert_eq!(line_column("é", 1), (1, 1));
    }

    #[test]
    fn line_index_positions_in_characters_and_utf16() {
        let text = "a😀b\nxé\n";
        let index = LineIndex::new(text);
        let at = |o| {
            let p = index.position(o);
            (p.line, p.column, p.utf16_column)
        };
        assert_eq!(at(0), (1, 1, 1));
        assert_eq!(at(5), (1, 3, 4));
        assert_eq!(at(3), (1, 2, 2), "inside the emoji: back to its start");
        assert_eq!(at(7), (2, 1, 1));
        assert_eq!(at(8), (2, 2, 2));
        assert_eq!(at(10), (2, 3, 3));
        assert_eq!(at(11), (3, 1, 1));
        assert_eq!(at(999), (3, 1, 1));
        assert_eq!(index.line_span(1), Some(Span::new(0, 6)));
        assert_eq!(index.line_span(2), Some(Span::new(7, 10)));
        assert_eq!(index.line_span(4), None);
    }

    #[test]
    fn rows_follow_the_enum() {
        for (i, code) in Code::ALL.iter().enumerate() {
            assert_eq!(CODES[i].code, *code);
            assert_eq!(Code::from_name(code.as_str()), Some(*code));
        }
        assert_eq!(Code::from_name("no_such_code"), None);
    }

    #[test]
    fn only_errors_are_fixed() {
        for row in CODES.iter().filter(|row| row.fixed.is_some()) {
            assert_eq!(row.level, Level::Deny, "{}", row.name);
        }
    }

    #[test]
    fn codes_are_unique_snake_case() {
        let mut names: Vec<_> = Code::ALL.iter().map(|c| c.as_str()).collect();
        assert!(names
            .iter()
            .all(|n| n.chars().all(|c| c.is_ascii_lowercase() || c == '_')));
        names.sort();
        names.dedup();
        assert_eq!(names.len(), Code::ALL.len());
    }
}
