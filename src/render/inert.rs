//! Text that echoes user input, made safe for a terminal: control
//! characters (an escape sequence hidden in a method name or a file) must
//! not reach it.

/// Messages echo user input: control characters (an escape sequence in a
/// method name) must not reach the terminal. Newlines and tabs stay.
pub fn inert_text(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_control() && c != '\n' && c != '\t' {
                '\u{fffd}'
            } else {
                c
            }
        })
        .collect()
}

/// Like [`inert_text`] for source text (the graphical renderer's input), byte for byte so spans stay valid:
/// each control character becomes as many `?` as it has bytes.
#[cfg(feature = "cli")]
pub fn inert_source(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() && !matches!(c, '\n' | '\t' | '\r') {
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

    #[cfg(feature = "cli")]
    #[test]
    fn source_offsets_are_kept() {
        let source = "x\u{1b}\u{85}y\r\n";
        assert_eq!(inert_source(source), "x???y\r\n");
        assert_eq!(inert_source(source).len(), source.len());
    }
}
