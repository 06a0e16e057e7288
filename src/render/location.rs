//! Where a span lands in its source, made safe for every renderer: spans from
//! a buggy producer (past the end, inside a character) are clamped, never
//! trusted, so rendering cannot panic. An offset after the last line (the
//! "end of input" of a file ending in a newline) is placed at the end of the
//! last line, so that every format points at a line that exists.

use crate::diag::{LineIndex, Report, Span};

/// A span clamped to its source, with 1-based start and end positions
/// (columns in characters; the end is exclusive, as in SARIF).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Location {
    /// The clamped span: within the text, on character boundaries, and
    /// `start <= end`.
    pub span: Span,
    /// 1-based line of the start.
    pub line: usize,
    /// 1-based column of the start, in characters.
    pub column: usize,
    /// 1-based line of the end.
    pub end_line: usize,
    /// 1-based column of the end, in characters, exclusive.
    pub end_column: usize,
}

/// Positions in one report's text: the line index is built once, each
/// [`Locator::locate`] is a binary search.
pub struct Locator<'a> {
    text: &'a str,
    index: LineIndex,
    /// The text without its trailing line breaks: offsets beyond it clamp
    /// to it.
    content_end: usize,
}

impl<'a> Locator<'a> {
    /// Positions in the report's text (indexes it once).
    pub fn new(report: &'a Report) -> Self {
        Self::of_text(&report.text)
    }

    /// Positions in `text` (indexes it once, linear in its length).
    pub fn of_text(text: &'a str) -> Self {
        Locator {
            text,
            index: LineIndex::new(text),
            content_end: text.trim_end_matches(['\n', '\r']).len(),
        }
    }

    /// The line index of the text (line spans for snippets).
    pub fn index(&self) -> &LineIndex {
        &self.index
    }

    /// Clamps `span` to the text and computes its line/column range.
    pub fn locate(&self, span: Span) -> Location {
        let clamp = |offset: usize| floor_boundary(self.text, offset.min(self.content_end));
        let start = clamp(span.start);
        let end = clamp(span.end.max(start));
        let from = self.index.position(start);
        let to = self.index.position(end);
        Location {
            span: Span::new(start, end),
            line: from.line,
            column: from.column,
            end_line: to.line,
            end_column: to.column,
        }
    }
}

/// One span of one report. Builds the line index each call: renderers of
/// many diagnostics use one [`Locator`] per report.
pub fn locate(report: &Report, span: Span) -> Location {
    Locator::new(report).locate(span)
}

fn floor_boundary(text: &str, offset: usize) -> usize {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clamps_spans_past_the_end_and_inside_characters() {
        let report = Report::new("x", "aé\nb");
        let l = locate(&report, Span::new(2, 99));
        assert_eq!(l.span, Span::new(1, 5));
        assert_eq!((l.line, l.column, l.end_line, l.end_column), (1, 2, 2, 2));
        let reversed = locate(&report, Span::new(4, 1));
        assert_eq!(reversed.span, Span::new(4, 4));
    }

    #[test]
    fn end_of_input_is_the_end_of_the_last_line() {
        let report = Report::new("x", "ab\ncd\n\n");
        let l = locate(&report, Span::new(7, 7));
        assert_eq!(l.span, Span::new(5, 5));
        assert_eq!((l.line, l.column, l.end_line, l.end_column), (2, 3, 2, 3));
        let whole = locate(&report, Span::new(3, 7));
        assert_eq!(
            (whole.line, whole.column, whole.end_line, whole.end_column),
            (2, 1, 2, 3)
        );
        let without_newline = locate(&Report::new("x", "ab"), Span::new(2, 2));
        assert_eq!((without_newline.line, without_newline.column), (1, 3));
        let crlf = locate(&Report::new("x", "ab\r\n"), Span::new(4, 4));
        assert_eq!((crlf.line, crlf.column), (1, 3));
        let empty = locate(&Report::new("x", ""), Span::new(0, 0));
        assert_eq!((empty.line, empty.column), (1, 1));
    }
}
