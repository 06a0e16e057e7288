//! Byte offsets (routex's spans) <-> LSP positions (line, UTF-16 column).
//!
//! LSP counts columns in UTF-16 code units; routex spans are UTF-8 byte
//! offsets. A position past the end of a line clamps to the line's end and
//! one past the last line to the end of the text, as the protocol asks; an
//! offset inside a character clamps back to its start.

use crate::diag::Span;
use line_index::{LineCol, LineIndex, TextSize, WideEncoding, WideLineCol};
use lsp_types::{Position, Range};

/// The line table of one document text, rebuilt on every change.
pub struct Lines {
    index: LineIndex,
}

impl Lines {
    pub fn new(text: &str) -> Self {
        Lines {
            index: LineIndex::new(text),
        }
    }

    /// The LSP position of a byte offset (clamped to `text`).
    pub fn position(&self, text: &str, offset: usize) -> Position {
        let offset = floor_boundary(text, offset);
        let line_col = self.index.line_col(TextSize::new(offset as u32));
        let wide = self
            .index
            .to_wide(WideEncoding::Utf16, line_col)
            .unwrap_or(WideLineCol {
                line: line_col.line,
                col: line_col.col,
            });
        Position::new(wide.line, wide.col)
    }

    pub fn range(&self, text: &str, span: Span) -> Range {
        Range::new(
            self.position(text, span.start),
            self.position(text, span.end.max(span.start)),
        )
    }

    /// The byte offset of an LSP position, clamped into the text.
    pub fn offset(&self, text: &str, position: Position) -> usize {
        let Some(line) = self.index.line(position.line) else {
            return text.len();
        };
        let start = u32::from(line.start()) as usize;
        let end = u32::from(line.end()) as usize;
        let wide = WideLineCol {
            line: position.line,
            col: position.character,
        };
        let col = self
            .index
            .to_utf8(WideEncoding::Utf16, wide)
            .map_or(usize::MAX, |lc: LineCol| lc.col as usize);
        floor_boundary(text, start.saturating_add(col).min(end))
    }

    /// The byte span of an LSP range (start <= end even when the client
    /// sends them reversed).
    pub fn span(&self, text: &str, range: Range) -> Span {
        let (a, b) = (self.offset(text, range.start), self.offset(text, range.end));
        Span::new(a.min(b), a.max(b))
    }
}

/// The largest char boundary at or below `offset`, within the text.
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
    fn utf16_columns_after_multibyte_characters() {
        // é is 2 bytes and 1 UTF-16 unit; 😀 is 4 bytes and 2 units.
        let text = "aé😀b\nx";
        let lines = Lines::new(text);
        assert_eq!(lines.position(text, 0), Position::new(0, 0));
        assert_eq!(lines.position(text, 3), Position::new(0, 2));
        assert_eq!(lines.position(text, 7), Position::new(0, 4));
        assert_eq!(lines.position(text, 9), Position::new(1, 0));
        // Inside 😀 clamps back to its start.
        assert_eq!(lines.position(text, 5), Position::new(0, 2));
        assert_eq!(lines.offset(text, Position::new(0, 4)), 7);
        assert_eq!(lines.offset(text, Position::new(0, 99)), 8);
        assert_eq!(lines.offset(text, Position::new(9, 0)), text.len());
        // A column inside the surrogate pair lands on the character start.
        assert_eq!(lines.offset(text, Position::new(0, 3)), 3);
        assert_eq!(lines.position(text, 999), Position::new(1, 1));
    }
}
