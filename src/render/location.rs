//! Where a span lands in its source, made safe for every renderer: spans from
//! a buggy producer (past the end, inside a character) are clamped, never
//! trusted, so rendering cannot panic.

use crate::diag::{line_column, Report, Span};

/// A span clamped to its source, with 1-based start and end positions
/// (columns in characters; the end is exclusive, as in SARIF).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Location {
    pub span: Span,
    pub line: usize,
    pub column: usize,
    pub end_line: usize,
    pub end_column: usize,
}

/// Clamps `span` to `report.text` and computes its line/column range.
pub fn locate(report: &Report, span: Span) -> Location {
    let text = report.text.as_str();
    let start = floor_boundary(text, span.start);
    let end = floor_boundary(text, span.end.max(start));
    let (line, column) = line_column(text, start);
    let (end_line, end_column) = line_column(text, end);
    Location {
        span: Span::new(start, end),
        line,
        column,
        end_line,
        end_column,
    }
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
}
