//! Small scanners over source text that know where strings and comments
//! are: used to resynchronise after a route-file error and to find comments
//! for the printer (the grammar drops comments).

use crate::diag::Span;

/// The item keywords of a route file.
pub(crate) const KEYWORDS: [&str; 3] = ["default", "allow", "model"];

/// The position after any spaces, newlines and `# comments` from `pos`.
pub(crate) fn skip_trivia(text: &str, mut pos: usize) -> usize {
    let bytes = text.as_bytes();
    while let Some(&b) = bytes.get(pos) {
        match b {
            b' ' | b'\t' | b'\r' | b'\n' => pos += 1,
            b'#' => pos = line_end(text, pos),
            _ => break,
        }
    }
    pos
}

/// The position of the `\n` ending the line of `pos` (or the text length).
pub(crate) fn line_end(text: &str, pos: usize) -> usize {
    text.get(pos..)
        .and_then(|r| r.find('\n'))
        .map_or(text.len(), |n| pos + n)
}

/// The item keyword at `pos`, if a whole word.
pub(crate) fn keyword_at(text: &str, pos: usize) -> Option<&'static str> {
    let rest = text.get(pos..)?;
    KEYWORDS.into_iter().find(|kw| {
        rest.starts_with(kw)
            && !rest[kw.len()..]
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    })
}

/// Where a scan for a resynchronisation point stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Sync {
    /// An item keyword at the start of a line (indentation allowed).
    Keyword(usize, &'static str),
    /// Just after a `}`.
    AfterClose(usize),
    /// At a `{` (a model block whose head failed).
    Open(usize),
    Eof,
}

/// Scans forward from `from` (where an error was found, never the start of
/// the piece that failed), skipping strings and comments, for the next
/// place parsing can resume.
pub(crate) fn next_sync(text: &str, from: usize, stop_at_open: bool) -> Sync {
    let bytes = text.as_bytes();
    let mut pos = from.min(text.len());
    while !text.is_char_boundary(pos) {
        pos += 1;
    }
    // Only spaces and tabs so far on this line: a keyword here starts an item.
    // (Looks back over blanks only, so many errors on one line stay linear.)
    let blank_start = text[..pos].trim_end_matches([' ', '\t']).len();
    let mut line_head = blank_start == 0 || bytes.get(blank_start - 1) == Some(&b'\n');
    while pos < bytes.len() {
        if line_head {
            if let Some(kw) = keyword_at(text, pos) {
                return Sync::Keyword(pos, kw);
            }
        }
        let b = bytes[pos];
        match b {
            b'}' => return Sync::AfterClose(pos + 1),
            b'{' if stop_at_open => return Sync::Open(pos),
            b'#' => pos = line_end(text, pos),
            b'"' => pos = string_end(text, pos),
            _ => pos += 1,
        }
        line_head = match b {
            b'\n' => true,
            b' ' | b'\t' => line_head,
            // A comment or string ends at (or before) a newline.
            _ => false,
        };
        while !text.is_char_boundary(pos.min(text.len())) {
            pos += 1;
        }
    }
    Sync::Eof
}

/// The position after the string opened at `pos` (or the end of its line
/// when unterminated).
fn string_end(text: &str, pos: usize) -> usize {
    let bytes = text.as_bytes();
    let mut i = pos + 1;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'"' => return i + 1,
            b'\\' => i += 2,
            b'\n' => return i,
            _ => i += 1,
        }
    }
    bytes.len()
}

/// Every `# comment` of a text (outside strings), in order.
pub(crate) fn comments(text: &str) -> Vec<Span> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < bytes.len() {
        match bytes[pos] {
            b'#' => {
                let end = line_end(text, pos);
                out.push(Span::new(pos, end));
                pos = end;
            }
            b'"' => pos = string_end(text, pos),
            _ => pos += 1,
        }
    }
    out
}
