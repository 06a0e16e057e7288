//! Byte offsets (routex's spans) <-> LSP positions (line, UTF-16 column).
//!
//! LSP counts columns in UTF-16 code units; routex spans are UTF-8 byte
//! offsets. A position past the end of a line clamps to the line's end and
//! one past the last line to the end of the text, as the protocol asks; an
//! offset inside a character clamps back to its start.

use lsp_types::{Position, Range};
use routex::diag::{LineIndex, Span};

/// The line table of one document text (`diag::LineIndex`, shared with
/// the renderers), rebuilt on every change.
pub struct Lines {
    index: LineIndex,
}

impl Lines {
    pub fn new(text: &str) -> Self {
        Lines {
            index: LineIndex::new(text),
        }
    }

    /// The LSP position of a byte offset (clamped to the text).
    pub fn position(&self, _text: &str, offset: usize) -> Position {
        let p = self.index.position(offset);
        Position::new(to_u32(p.line - 1), to_u32(p.utf16_column - 1))
    }

    pub fn range(&self, text: &str, span: Span) -> Range {
        Range::new(
            self.position(text, span.start),
            self.position(text, span.end.max(span.start)),
        )
    }

    /// The byte offset of an LSP position, clamped into the text: a column
    /// inside a surrogate pair lands on the character's start, one past
    /// the line's end (or its `\r`) on the end.
    pub fn offset(&self, text: &str, position: Position) -> usize {
        let Some(line) = self.index.line_span(position.line as usize + 1) else {
            return text.len();
        };
        let body = text.get(line.start..line.end).unwrap_or("");
        let body = body.strip_suffix('\r').unwrap_or(body);
        let mut units = 0usize;
        for (i, c) in body.char_indices() {
            units += c.len_utf16();
            if units > position.character as usize {
                return line.start + i;
            }
        }
        line.start + body.len()
    }

    /// The byte span of an LSP range (start <= end even when the client
    /// sends them reversed).
    pub fn span(&self, text: &str, range: Range) -> Span {
        let (a, b) = (self.offset(text, range.start), self.offset(text, range.end));
        Span::new(a.min(b), a.max(b))
    }
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
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
