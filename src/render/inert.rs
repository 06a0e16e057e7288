//! Text that echoes user input, made safe for a terminal: control
//! characters (an escape sequence hidden in a method name or a file) must
//! not reach it.

/// Messages echo user input: control characters (an escape sequence in a
/// method name) must not reach the terminal. Newlines and tabs stay.
pub fn inert_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if is_invisible(c) {
            // Named, so a byte order mark or a bidi override is seen.
            out.push_str(&format!("<U+{:04X}>", c as u32));
        } else if c.is_control() && c != '\n' && c != '\t' {
            out.push('\u{fffd}');
        } else {
            out.push(c);
        }
    }
    out
}

/// Format characters that draw nothing (a byte order mark, zero-width
/// spaces and joiners, bidirectional controls): shown, never passed on.
fn is_invisible(c: char) -> bool {
    matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{2064}' | '\u{2066}'..='\u{2069}' | '\u{feff}')
}

/// Like [`inert_text`] for source text (the graphical renderer's input), byte for byte so spans stay valid:
/// each control character becomes as many `?` as it has bytes.
pub fn inert_source(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if is_invisible(c) {
            // Every invisible character is 3 bytes, as U+FFFD is.
            out.push('\u{fffd}');
        } else if c.is_control() && !matches!(c, '\n' | '\t' | '\r') {
            out.extend(std::iter::repeat_n('?', c.len_utf8()));
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_are_replaced() {
        assert_eq!(inert_text("a\u{1b}[31m\nb\tc"), "a\u{fffd}[31m\nb\tc");
    }

    #[test]
    fn source_offsets_are_kept() {
        let source = "x\u{1b}\u{85}y\r\n";
        assert_eq!(inert_source(source), "x???y\r\n");
        assert_eq!(inert_source(source).len(), source.len());
    }

    #[test]
    fn invisible_characters_are_named_in_text() {
        assert_eq!(inert_text("\u{feff}model"), "<U+FEFF>model");
        assert_eq!(inert_text("a\u{202e}b"), "a<U+202E>b");
    }

    #[test]
    fn invisible_characters_are_replaced_in_source() {
        let source = "\u{feff}x\u{200b}";
        assert_eq!(inert_source(source), "\u{fffd}x\u{fffd}");
        assert_eq!(inert_source(source).len(), source.len());
    }
}
