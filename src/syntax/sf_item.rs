//! RFC 8941 (not 9651) "Item with Parameters", parsed as the RFC's algorithm
//! describes (section 4.2.3), byte by byte, keeping the offset of every part
//! and of the first failure. Step 5 of stargate's header rules defers to it.
//! Hand-written rather than in pest: the RFC defines parsing as an
//! algorithm (greedy numbers with length limits, base64 content), and a
//! differential test keeps it equal to the `sfv` crate.

use std::ops::Range;

/// A bare item, as written (numbers keep their text; strings are unescaped).
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Bare {
    Integer(String),
    Decimal(String),
    String(String),
    Token(String),
    Boolean(bool),
    ByteSeq(String),
}

#[derive(Clone, Debug)]
pub(crate) struct SfParam {
    pub name: String,
    pub name_at: Range<usize>,
    pub value: Bare,
    pub value_at: Range<usize>,
}

#[derive(Clone, Debug)]
pub(crate) struct SfItem {
    pub bare: Bare,
    pub bare_at: Range<usize>,
    pub params: Vec<SfParam>,
}

/// Where and why the text is not an Item.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct SfError {
    pub at: usize,
    pub why: String,
}

struct Cursor<'a> {
    s: &'a str,
    b: &'a [u8],
    i: usize,
}

type Res<T> = Result<T, SfError>;

impl Cursor<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }
    fn fail<T>(&self, at: usize, why: impl Into<String>) -> Res<T> {
        Err(SfError {
            at,
            why: why.into(),
        })
    }
    fn skip_sp(&mut self) {
        while self.peek() == Some(b' ') {
            self.i += 1;
        }
    }
    fn text(&self, r: Range<usize>) -> String {
        self.s.get(r).unwrap_or("").to_string()
    }
}

/// Parses `text` as one RFC 8941 Item with Parameters (SP allowed around it).
pub(crate) fn parse_item(text: &str) -> Res<SfItem> {
    let mut c = Cursor {
        s: text,
        b: text.as_bytes(),
        i: 0,
    };
    if let Some(at) = text.bytes().position(|b| !b.is_ascii()) {
        return c.fail(at, "a character outside ASCII");
    }
    c.skip_sp();
    let start = c.i;
    let bare = bare_item(&mut c)?;
    let bare_at = start..c.i;
    let params = parameters(&mut c)?;
    let item_end = c.i;
    c.skip_sp();
    if let Some(b) = c.peek() {
        if b == b';' && item_end < c.i {
            return c.fail(item_end, "a space before `;`");
        }
        return c.fail(c.i, format!("`{}` after the end of the item", b as char));
    }
    Ok(SfItem {
        bare,
        bare_at,
        params,
    })
}

fn parameters(c: &mut Cursor<'_>) -> Res<Vec<SfParam>> {
    // Sized once: every parameter follows a `;`.
    let semicolons = c.b[c.i..].iter().filter(|&&b| b == b';').count();
    let mut params: Vec<SfParam> = Vec::with_capacity(semicolons);
    while c.peek() == Some(b';') {
        c.i += 1;
        c.skip_sp();
        let name_start = c.i;
        let name = key(c)?;
        let name_at = name_start..c.i;
        let (value, value_at) = if c.peek() == Some(b'=') {
            c.i += 1;
            let v_start = c.i;
            let v = bare_item(c)?;
            (v, v_start..c.i)
        } else {
            (Bare::Boolean(true), c.i..c.i)
        };
        let param = SfParam {
            name,
            name_at,
            value,
            value_at,
        };
        // RFC 8941: a repeated key overwrites the earlier value in place.
        match params.iter_mut().find(|p| p.name == param.name) {
            Some(old) => *old = param,
            None => params.push(param),
        }
    }
    Ok(params)
}

fn key(c: &mut Cursor<'_>) -> Res<String> {
    let start = c.i;
    match c.peek() {
        Some(b) if b.is_ascii_lowercase() || b == b'*' => {}
        Some(b) => {
            return c.fail(
                start,
                format!("`{}` cannot start a parameter name", b as char),
            )
        }
        None => return c.fail(start, "a missing parameter name"),
    }
    while let Some(b) = c.peek() {
        if b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'_' | b'-' | b'.' | b'*') {
            c.i += 1;
        } else {
            break;
        }
    }
    Ok(c.text(start..c.i))
}

fn bare_item(c: &mut Cursor<'_>) -> Res<Bare> {
    match c.peek() {
        None => c.fail(c.i, "an empty value"),
        Some(b'-') | Some(b'0'..=b'9') => number(c),
        Some(b'"') => string(c),
        Some(b'*') => token(c),
        Some(b) if b.is_ascii_alphabetic() => token(c),
        Some(b':') => byte_seq(c),
        Some(b'?') => boolean(c),
        Some(b' ') => c.fail(c.i, "a space where a value must start"),
        Some(b) => c.fail(c.i, format!("`{}` cannot start a value", b as char)),
    }
}

fn number(c: &mut Cursor<'_>) -> Res<Bare> {
    let start = c.i;
    if c.peek() == Some(b'-') {
        c.i += 1;
    }
    if !matches!(c.peek(), Some(b'0'..=b'9')) {
        return c.fail(c.i, "a sign without digits");
    }
    let digits_start = c.i;
    let mut dot = None;
    while let Some(b) = c.peek() {
        let len = c.i - digits_start;
        if b.is_ascii_digit() {
            c.i += 1;
        } else if b == b'.' && dot.is_none() {
            if len > 12 {
                return c.fail(c.i, "a decimal with more than 12 integer digits");
            }
            dot = Some(c.i);
            c.i += 1;
        } else {
            break;
        }
        let len = c.i - digits_start;
        if dot.is_none() && len > 15 {
            return c.fail(c.i - 1, "an integer with more than 15 digits");
        }
        if dot.is_some() && len > 16 {
            return c.fail(c.i - 1, "a decimal longer than 16 characters");
        }
    }
    let text = c.text(start..c.i);
    match dot {
        None => Ok(Bare::Integer(text)),
        Some(d) => match c.i - d - 1 {
            0 => c.fail(d, "a decimal ending in `.`"),
            1..=3 => Ok(Bare::Decimal(text)),
            _ => c.fail(d + 4, "a decimal with more than 3 fraction digits"),
        },
    }
}

fn string(c: &mut Cursor<'_>) -> Res<Bare> {
    let open = c.i;
    c.i += 1;
    // The whole input is ASCII (checked first), so bytes are chars.
    let mut out = String::with_capacity(c.b[c.i..].iter().position(|&b| b == b'"').unwrap_or(0));
    while let Some(b) = c.peek() {
        c.i += 1;
        match b {
            b'"' => return Ok(Bare::String(out)),
            b'\\' => match c.peek() {
                Some(e @ (b'"' | b'\\')) => {
                    out.push(e as char);
                    c.i += 1;
                }
                _ => return c.fail(c.i - 1, "a `\\` not followed by `\"` or `\\`"),
            },
            0x00..=0x1f | 0x7f.. => return c.fail(c.i - 1, "a control character in a string"),
            _ => out.push(b as char),
        }
    }
    c.fail(open, "an unterminated string")
}

fn token(c: &mut Cursor<'_>) -> Res<Bare> {
    let start = c.i;
    c.i += 1;
    while let Some(b) = c.peek() {
        // RFC 8941 tchar, `:` and `/` (a `match`: slice `contains` is a memchr call).
        if b.is_ascii_alphanumeric()
            || matches!(
                b,
                b'!' | b'#'
                    | b'$'
                    | b'%'
                    | b'&'
                    | b'\''
                    | b'*'
                    | b'+'
                    | b'-'
                    | b'.'
                    | b'^'
                    | b'_'
                    | b'`'
                    | b'|'
                    | b'~'
                    | b':'
                    | b'/'
            )
        {
            c.i += 1;
        } else {
            break;
        }
    }
    Ok(Bare::Token(c.text(start..c.i)))
}

fn byte_seq(c: &mut Cursor<'_>) -> Res<Bare> {
    let open = c.i;
    c.i += 1;
    let content_start = c.i;
    let Some(len) = c.b[content_start..].iter().position(|&b| b == b':') else {
        return c.fail(open, "a byte sequence without its closing `:`");
    };
    let content = &c.b[content_start..content_start + len];
    if let Some(bad) = content
        .iter()
        .position(|&b| !(b.is_ascii_alphanumeric() || b"+/=".contains(&b)))
    {
        return c.fail(
            content_start + bad,
            "a character that is not base64 in a byte sequence",
        );
    }
    if !base64_decodes(content) {
        return c.fail(content_start, "a byte sequence that is not valid base64");
    }
    c.i = content_start + len + 1;
    Ok(Bare::ByteSeq(c.text(open..c.i)))
}

/// Standard-alphabet base64 as sfv 0.10 decodes it: padding optional and
/// never more than the data needs (`AA`, `AA=`, `AA==`; `AAA`, `AAA=`),
/// trailing bits allowed, no `=` before the data ends.
fn base64_decodes(content: &[u8]) -> bool {
    let data_len = content
        .iter()
        .position(|&b| b == b'=')
        .unwrap_or(content.len());
    let (data, pad) = content.split_at(data_len);
    if pad.iter().any(|&b| b != b'=') {
        return false;
    }
    match data.len() % 4 {
        1 => false,
        rem => pad.len() <= (4 - rem) % 4,
    }
}

fn boolean(c: &mut Cursor<'_>) -> Res<Bare> {
    c.i += 1;
    match c.peek() {
        Some(b'0') => {
            c.i += 1;
            Ok(Bare::Boolean(false))
        }
        Some(b'1') => {
            c.i += 1;
            Ok(Bare::Boolean(true))
        }
        _ => c.fail(c.i, "a `?` not followed by `0` or `1`"),
    }
}
