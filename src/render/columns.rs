//! Character columns to UTF-16 code-unit columns, SARIF's default
//! `columnKind` (and what GitHub's code scanning counts in).
//!
//! Built once per source in one pass; an ASCII line needs no work, a line
//! with other characters gets its prefix sums on first use, so converting
//! every diagnostic of a source costs O(text + diagnostics).

use std::collections::HashMap;

pub struct Utf16Columns<'a> {
    text: &'a str,
    /// Byte offset where each line starts; line N (1-based) is `starts[N-1]`.
    starts: Vec<usize>,
    ascii: Vec<bool>,
    /// Per non-ASCII line: UTF-16 units before each character.
    prefix: HashMap<usize, Vec<usize>>,
}

impl<'a> Utf16Columns<'a> {
    pub fn new(text: &'a str) -> Self {
        let mut starts = vec![0];
        let mut ascii = vec![true];
        for (i, byte) in text.bytes().enumerate() {
            if byte == b'\n' {
                starts.push(i + 1);
                ascii.push(true);
            } else if !byte.is_ascii() {
                if let Some(last) = ascii.last_mut() {
                    *last = false;
                }
            }
        }
        Utf16Columns {
            text,
            starts,
            ascii,
            prefix: HashMap::new(),
        }
    }

    /// The 1-based UTF-16 column of the 1-based character column `column`
    /// on 1-based `line` (clamped to the line's end).
    pub fn column(&mut self, line: usize, column: usize) -> usize {
        let index = line.saturating_sub(1);
        let Some(&start) = self.starts.get(index) else {
            return column;
        };
        if self.ascii.get(index).copied().unwrap_or(true) {
            return column;
        }
        let end = self
            .starts
            .get(index + 1)
            .map_or(self.text.len(), |next| next - 1);
        let text = self.text;
        let prefix = self.prefix.entry(index).or_insert_with(|| {
            let mut units = 0;
            let mut sums = vec![0];
            for c in text[start..end].chars() {
                units += c.len_utf16();
                sums.push(units);
            }
            sums
        });
        let chars = column.saturating_sub(1).min(prefix.len() - 1);
        prefix[chars] + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_astral_characters_as_two_units() {
        let mut columns = Utf16Columns::new("ab\n😀x é\n");
        assert_eq!(columns.column(1, 3), 3);
        // `😀` is one character, two UTF-16 units; `é` one of each.
        assert_eq!(columns.column(2, 2), 3);
        assert_eq!(columns.column(2, 5), 6);
        assert_eq!(columns.column(2, 99), 6);
        assert_eq!(columns.column(3, 1), 1);
        assert_eq!(columns.column(9, 4), 4);
    }
}
