//! A small JSON parser that keeps the byte span of every key and value, so
//! lb-config.json diagnostics can point at the offending text (serde_json
//! does not expose spans). Duplicate keys are kept in order; the reader
//! decides what they mean.

use crate::diag::Span;

/// A JSON value; nested values carry their spans ([`Node`]).
#[derive(Clone, Debug, PartialEq)]
pub enum Json {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// The number as written; the reader types it per field.
    Number(String),
    /// A string, escapes decoded.
    String(String),
    /// An array's elements in order.
    Array(Vec<Node>),
    /// An object's members in source order, duplicate keys kept.
    Object(Vec<Member>),
}

/// A value with its span.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    /// The value.
    pub value: Json,
    /// The value's text, byte offsets into the document (quotes and
    /// brackets included).
    pub span: Span,
}

/// `"key": value` with the key's span (quotes included).
#[derive(Clone, Debug, PartialEq)]
pub struct Member {
    /// The key, escapes decoded.
    pub key: String,
    /// The key's text in the document, quotes included.
    pub key_span: Span,
    /// The member's value.
    pub value: Node,
}

impl Json {
    /// How a JSON value is named in messages: its JSON type and, for
    /// scalars, the value as written (not serde's "floating point" or
    /// "sequence").
    pub fn type_name(&self) -> String {
        match self {
            Json::Null => "null".to_string(),
            Json::Bool(b) => format!("boolean `{b}`"),
            Json::Number(n) if is_integer(n) => format!("integer `{n}`"),
            Json::Number(n) => format!("number `{n}`"),
            Json::String(s) => format!("string {s:?}"),
            Json::Array(_) => "array".to_string(),
            Json::Object(_) => "object".to_string(),
        }
    }
}

/// A number literal as serde_json reads it: integers that fit u64 (or, when
/// negative, i64) stay integers; `-0`, integers out of range and anything
/// with a fraction or exponent become f64. The kind decides whether a u64
/// field says `invalid_value` (a negative integer) or `invalid_type` (a
/// float), as stargate's start-up does.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum JsonNumber {
    /// A non-negative integer that fits u64.
    Unsigned(u64),
    /// A negative integer that fits i64 (never `-0`).
    Signed(i64),
    /// Anything else: a fraction, an exponent, `-0`, or an integer out of
    /// range (NaN only for a literal the parser would have refused).
    Float(f64),
}

impl JsonNumber {
    /// `literal` is a valid JSON number (the parser checked it).
    ///
    /// Public for readers of the [`Node`] tree that type numbers
    /// themselves (the simulator's scenario shapes), so they split
    /// integers from floats exactly as `lb-config.json` checking does.
    pub fn read(literal: &str) -> JsonNumber {
        if is_integer(literal) {
            let (negative, digits) = match literal.strip_prefix('-') {
                Some(d) => (true, d),
                None => (false, literal),
            };
            if let Ok(magnitude) = digits.parse::<u64>() {
                if !negative {
                    return JsonNumber::Unsigned(magnitude);
                }
                // serde_json: below i64::MIN, or `-0`, is a float.
                let value = (magnitude as i64).wrapping_neg();
                return if value < 0 {
                    JsonNumber::Signed(value)
                } else {
                    JsonNumber::Float(-(magnitude as f64))
                };
            }
        }
        JsonNumber::Float(literal.parse::<f64>().unwrap_or(f64::NAN))
    }
}

/// Whether a JSON number literal has neither fraction nor exponent.
pub(crate) fn is_integer(number: &str) -> bool {
    !number.contains(['.', 'e', 'E'])
}

/// A syntax error: message and byte offset.
#[derive(Clone, Debug, PartialEq)]
pub struct JsonError {
    /// What is wrong, one sentence for a diagnostic.
    pub message: String,
    /// Byte offset into the document where the error was found.
    pub at: usize,
}

/// Parses a whole JSON document.
pub fn parse(text: &str) -> Result<Node, JsonError> {
    let mut p = Parser {
        text,
        bytes: text.as_bytes(),
        pos: 0,
        depth: 0,
    };
    if text.starts_with('\u{feff}') {
        return Err(JsonError {
            message: "the file starts with a UTF-8 byte order mark (U+FEFF), which stargate's \
                      JSON reader refuses; save it as UTF-8 without a byte order mark"
                .to_string(),
            at: 0,
        });
    }
    p.skip_ws();
    let node = p.value()?;
    p.skip_ws();
    if p.pos < p.bytes.len() {
        return Err(p.error("trailing characters after the JSON value"));
    }
    Ok(node)
}

struct Parser<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    depth: usize,
}

/// Deep nesting is refused rather than risking the stack.
const MAX_DEPTH: usize = 128;

impl Parser<'_> {
    fn error(&self, message: impl Into<String>) -> JsonError {
        JsonError {
            message: message.into(),
            at: self.pos,
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    fn expect(&mut self, byte: u8) -> Result<(), JsonError> {
        if self.peek() == Some(byte) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.unexpected(&format!("`{}`", byte as char)))
        }
    }

    fn unexpected(&self, wanted: &str) -> JsonError {
        match self.text.get(self.pos..).and_then(|s| s.chars().next()) {
            Some(c) => self.error(format!("expected {wanted}, found `{c}`")),
            None => self.error(format!("expected {wanted}, found the end of the file")),
        }
    }

    fn value(&mut self) -> Result<Node, JsonError> {
        let start = self.pos;
        let value = match self.peek() {
            Some(b'{') => self.nested(Self::object)?,
            Some(b'[') => self.nested(Self::array)?,
            Some(b'"') => Json::String(self.string()?),
            Some(b't') => self.literal("true", Json::Bool(true))?,
            Some(b'f') => self.literal("false", Json::Bool(false))?,
            Some(b'n') => self.literal("null", Json::Null)?,
            Some(b'-' | b'0'..=b'9') => Json::Number(self.number()?),
            _ => return Err(self.unexpected("a JSON value")),
        };
        Ok(Node {
            value,
            span: Span::new(start, self.pos),
        })
    }

    fn nested(&mut self, f: fn(&mut Self) -> Result<Json, JsonError>) -> Result<Json, JsonError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.error("nesting too deep"));
        }
        let v = f(self);
        self.depth -= 1;
        v
    }

    fn literal(&mut self, word: &str, value: Json) -> Result<Json, JsonError> {
        if self.bytes[self.pos..].starts_with(word.as_bytes()) {
            self.pos += word.len();
            Ok(value)
        } else {
            Err(self.unexpected("a JSON value"))
        }
    }

    fn number(&mut self) -> Result<String, JsonError> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        let digits = |p: &mut Self| {
            let s = p.pos;
            while matches!(p.peek(), Some(b'0'..=b'9')) {
                p.pos += 1;
            }
            p.pos - s
        };
        let int_start = self.pos;
        let n = digits(self);
        if n == 0 {
            return Err(self.unexpected("a digit"));
        }
        if n > 1 && self.bytes[int_start] == b'0' {
            return Err(JsonError {
                message: "a number must not have leading zeros".to_string(),
                at: int_start,
            });
        }
        if self.peek() == Some(b'.') {
            self.pos += 1;
            if digits(self) == 0 {
                return Err(self.unexpected("a digit after `.`"));
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.pos += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            if digits(self) == 0 {
                return Err(self.unexpected("a digit in the exponent"));
            }
        }
        Ok(self.text[start..self.pos].to_string())
    }

    fn string(&mut self) -> Result<String, JsonError> {
        self.expect(b'"')?;
        let mut out = String::new();
        loop {
            let rest = &self.text[self.pos..];
            let Some(c) = rest.chars().next() else {
                return Err(self.error("unterminated string"));
            };
            match c {
                '"' => {
                    self.pos += 1;
                    return Ok(out);
                }
                '\\' => {
                    self.pos += 1;
                    out.push(self.escape()?);
                }
                c if (c as u32) < 0x20 => {
                    return Err(self.error("control character in a string"));
                }
                c => {
                    out.push(c);
                    self.pos += c.len_utf8();
                }
            }
        }
    }

    fn escape(&mut self) -> Result<char, JsonError> {
        let c = self
            .peek()
            .ok_or_else(|| self.error("unterminated string"))?;
        self.pos += 1;
        Ok(match c {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let high = self.hex4()?;
                if (0xD800..0xDC00).contains(&high) {
                    if !self.bytes[self.pos..].starts_with(b"\\u") {
                        return Err(self.error("unpaired surrogate in \\u escape"));
                    }
                    self.pos += 2;
                    let low = self.hex4()?;
                    if !(0xDC00..0xE000).contains(&low) {
                        return Err(self.error("invalid low surrogate in \\u escape"));
                    }
                    let code = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00);
                    char::from_u32(code).ok_or_else(|| self.error("invalid \\u escape"))?
                } else {
                    char::from_u32(high).ok_or_else(|| self.error("invalid \\u escape"))?
                }
            }
            _ => {
                self.pos -= 1;
                return Err(self.error("invalid escape in a string"));
            }
        })
    }

    fn hex4(&mut self) -> Result<u32, JsonError> {
        let digits = self
            .text
            .get(self.pos..self.pos + 4)
            .filter(|h| h.bytes().all(|b| b.is_ascii_hexdigit()))
            .ok_or_else(|| self.error("expected four hex digits after \\u"))?;
        let v = u32::from_str_radix(digits, 16).map_err(|_| self.error("invalid \\u escape"))?;
        self.pos += 4;
        Ok(v)
    }

    fn array(&mut self) -> Result<Json, JsonError> {
        self.expect(b'[')?;
        let mut items = Vec::new();
        self.skip_ws();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(Json::Array(items));
        }
        loop {
            self.skip_ws();
            items.push(self.value()?);
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(Json::Array(items));
                }
                _ => return Err(self.unexpected("`,` or `]`")),
            }
        }
    }

    fn object(&mut self) -> Result<Json, JsonError> {
        self.expect(b'{')?;
        let mut members = Vec::new();
        self.skip_ws();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(Json::Object(members));
        }
        loop {
            self.skip_ws();
            if self.peek() != Some(b'"') {
                return Err(self.unexpected("a string key"));
            }
            let key_start = self.pos;
            let key = self.string()?;
            let key_span = Span::new(key_start, self.pos);
            self.skip_ws();
            self.expect(b':')?;
            self.skip_ws();
            let value = self.value()?;
            members.push(Member {
                key,
                key_span,
                value,
            });
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(Json::Object(members));
                }
                _ => return Err(self.unexpected("`,` or `}`")),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_cover_keys_and_values() {
        let text = r#"{"a": [1, -2.5e3], "b\u00e9": {"c": null}}"#;
        let node = parse(text).unwrap();
        let Json::Object(members) = node.value else {
            panic!("object")
        };
        assert_eq!(
            &text[members[0].key_span.start..members[0].key_span.end],
            "\"a\""
        );
        assert_eq!(
            &text[members[0].value.span.start..members[0].value.span.end],
            "[1, -2.5e3]"
        );
        assert_eq!(members[1].key, "bé");
    }

    #[test]
    fn errors_have_positions() {
        assert_eq!(parse("{\"a\" 1}").unwrap_err().at, 5);
        assert_eq!(parse("[1,]").unwrap_err().at, 3);
        assert!(parse("01").is_err());
        assert!(parse("\"\\ud800\"").is_err());
        assert!(parse("{} x").is_err());
        assert!(parse(&"[".repeat(1000)).is_err());
        assert!(parse("").is_err());
    }
}
