//! A tolerant JSON scanner for the cursor: where in the document (which
//! keys lead to the object), in which slot (a key or the value of a key),
//! on which string. Unlike `config::json` it never fails: a document being
//! typed (`{"models": {"m": {"alg`) still has a context. One pass from the
//! start to the cursor (or from the nearest [`Checkpoint`]), nesting kept
//! up to [`MAX_DEPTH`].

use routex::diag::Span;

/// Deeper containers are scanned but not remembered (the configuration
/// parser refuses them anyway).
const MAX_DEPTH: usize = 128;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tok {
    Open(u8),
    Close(u8),
    Colon,
    Comma,
    /// A string; `closed` is false when the line ended first.
    Str {
        closed: bool,
    },
    /// A number, literal or stray text.
    Word,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Token {
    pub tok: Tok,
    pub span: Span,
}

/// The tokens of `text` from `pos`.
pub struct Lexer<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Lexer<'a> {
    pub fn new(text: &'a str, pos: usize) -> Self {
        Lexer {
            bytes: text.as_bytes(),
            pos,
        }
    }
}

impl Iterator for Lexer<'_> {
    type Item = Token;

    fn next(&mut self) -> Option<Token> {
        let b = self.bytes;
        while self.pos < b.len() && b[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
        let start = self.pos;
        let c = *b.get(start)?;
        self.pos += 1;
        let tok = match c {
            b'{' | b'[' => Tok::Open(c),
            b'}' | b']' => Tok::Close(c),
            b':' => Tok::Colon,
            b',' => Tok::Comma,
            b'"' => {
                let mut closed = false;
                while self.pos < b.len() {
                    match b[self.pos] {
                        b'\\' => self.pos += 2,
                        b'"' => {
                            self.pos += 1;
                            closed = true;
                            break;
                        }
                        b'\n' => break,
                        _ => self.pos += 1,
                    }
                }
                self.pos = self.pos.min(b.len());
                Tok::Str { closed }
            }
            _ => {
                while self.pos < b.len()
                    && !b[self.pos].is_ascii_whitespace()
                    && !b"{}[]:,\"".contains(&b[self.pos])
                {
                    self.pos += 1;
                }
                Tok::Word
            }
        };
        Some(Token {
            tok,
            span: Span::new(start, self.pos),
        })
    }
}

/// The text of a string token without its quotes (escapes left as
/// written; routex names have none).
pub fn string_text(text: &str, token: Token) -> &str {
    let inner = Span::new(token.span.start + 1, token.span.end);
    let end = match token.tok {
        Tok::Str { closed: true } => inner.end.saturating_sub(1).max(inner.start),
        _ => inner.end,
    };
    text.get(inner.start..end).unwrap_or("")
}

/// A JSON string's content decoded, with the offset in the document of
/// every decoded byte (and one past the end), so positions in the decoded
/// text (a policy expression) map back to the document.
pub struct Decoded {
    pub text: String,
    offsets: Vec<usize>,
}

impl Decoded {
    /// Decodes the content of a string token.
    pub fn of(document: &str, token: Token) -> Decoded {
        let start = token.span.start + 1;
        let raw = string_text(document, token);
        let mut text = String::with_capacity(raw.len());
        let mut offsets = Vec::with_capacity(raw.len() + 1);
        let mut chars = raw.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            let decoded = if c == '\\' {
                match chars.next().map(|(_, e)| e) {
                    Some('n') => '\n',
                    Some('t') => '\t',
                    Some('r') => '\r',
                    Some('b') => '\u{8}',
                    Some('f') => '\u{c}',
                    Some('u') => {
                        let hex: String = (0..4)
                            .filter_map(|_| chars.next().map(|(_, h)| h))
                            .collect();
                        u32::from_str_radix(&hex, 16)
                            .ok()
                            .and_then(char::from_u32)
                            .unwrap_or('\u{fffd}')
                    }
                    Some(other) => other,
                    None => '\\',
                }
            } else {
                c
            };
            offsets.extend(std::iter::repeat_n(start + i, decoded.len_utf8()));
            text.push(decoded);
        }
        offsets.push(start + raw.len());
        Decoded { text, offsets }
    }

    /// The decoded offset of a document offset inside the string.
    pub fn decoded_offset(&self, offset: usize) -> usize {
        self.offsets.partition_point(|o| *o < offset)
    }

    /// The document span of a decoded span.
    pub fn document_span(&self, span: Span) -> Span {
        let at = |i: usize| self.offsets[i.min(self.offsets.len() - 1)];
        Span::new(at(span.start), at(span.end))
    }
}

/// Which part of a member the cursor is in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Slot {
    /// A key of the innermost object.
    Key,
    /// The value of this key of the innermost object.
    Value(String),
    /// An array element, or somewhere no key or value fits.
    Other,
}

/// Where the cursor is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cursor {
    /// The keys from the root to the innermost object (an array adds "[]").
    pub path: Vec<String>,
    /// The offset of the innermost object's `{`, when the cursor is in one.
    pub object: Option<usize>,
    pub slot: Slot,
    /// The string or word the cursor is in or just after.
    pub token: Option<Token>,
}

/// A key as the string token it was read from: the scan copies no text, so
/// a checkpoint costs its depth (at most [`MAX_DEPTH`] frames), not the
/// length of the keys above it.
#[derive(Clone, Copy, Debug)]
enum Key {
    /// The root container.
    Root,
    /// An element of an array: "[]" in a path.
    Element,
    Str(Token),
}

impl Key {
    fn text(self, text: &str) -> &str {
        match self {
            Key::Root => "",
            Key::Element => "[]",
            Key::Str(token) => string_text(text, token),
        }
    }
}

#[derive(Clone, Copy, Debug)]
enum State {
    ExpectKey,
    AfterKey(Token),
    ExpectValue(Token),
    AfterValue,
}

#[derive(Clone, Copy, Debug)]
struct Frame {
    /// The key this container is the value of.
    key: Key,
    open: usize,
    is_object: bool,
    state: State,
}

/// The scanner's nesting after some prefix of the tokens.
#[derive(Clone, Debug, Default)]
struct Walk {
    stack: Vec<Frame>,
    /// Containers open beyond [`MAX_DEPTH`].
    too_deep: usize,
}

/// Where a scan may resume: the nesting after every token that ends at or
/// before `pos` (a token boundary, so the lexer restarts there exactly).
#[derive(Clone, Debug)]
pub struct Checkpoint {
    pos: usize,
    walk: Walk,
}

/// Bytes between checkpoints: a cursor scans at most this much (plus one
/// token) instead of the whole text before it.
pub const CHECKPOINT_SPACING: usize = 32 * 1024;

/// Checkpoints over the whole text, about one per [`CHECKPOINT_SPACING`]
/// bytes: one pass, kept with the document until it changes, so hover and
/// completion at the end of a 4 MiB file do not rescan it.
pub fn checkpoints(text: &str) -> Vec<Checkpoint> {
    checkpoints_every(text, CHECKPOINT_SPACING)
}

fn checkpoints_every(text: &str, spacing: usize) -> Vec<Checkpoint> {
    let mut out = Vec::with_capacity(text.len() / spacing.max(1) + 1);
    let mut walk = Walk::default();
    let mut next = spacing;
    for token in Lexer::new(text, 0) {
        walk.step(token);
        if token.span.end >= next {
            out.push(Checkpoint {
                pos: token.span.end,
                walk: walk.clone(),
            });
            next = token.span.end.saturating_add(spacing);
        }
    }
    out
}

impl Walk {
    fn step(&mut self, token: Token) {
        let stack = &mut self.stack;
        match token.tok {
            Tok::Open(c) => {
                let key = match stack.last().map(|f| f.state) {
                    Some(State::ExpectValue(k)) => Key::Str(k),
                    Some(_) if stack.last().is_some_and(|f| !f.is_object) => Key::Element,
                    _ => Key::Root,
                };
                if stack.len() >= MAX_DEPTH {
                    self.too_deep += 1;
                } else {
                    stack.push(Frame {
                        key,
                        open: token.span.start,
                        is_object: c == b'{',
                        state: if c == b'{' {
                            State::ExpectKey
                        } else {
                            State::AfterValue
                        },
                    });
                }
            }
            Tok::Close(_) => {
                if self.too_deep > 0 {
                    self.too_deep -= 1;
                } else {
                    stack.pop();
                    if let Some(f) = stack.last_mut() {
                        f.state = State::AfterValue;
                    }
                }
            }
            _ if self.too_deep > 0 => {}
            Tok::Colon => {
                if let Some(f) = stack.last_mut() {
                    if let State::AfterKey(k) = f.state {
                        f.state = State::ExpectValue(k);
                    }
                }
            }
            Tok::Comma => {
                if let Some(f) = stack.last_mut() {
                    f.state = if f.is_object {
                        State::ExpectKey
                    } else {
                        State::AfterValue
                    };
                }
            }
            Tok::Str { .. } | Tok::Word => {
                if let Some(f) = stack.last_mut() {
                    f.state = match (f.state, token.tok) {
                        (State::ExpectKey, Tok::Str { .. }) => State::AfterKey(token),
                        _ => State::AfterValue,
                    };
                }
            }
        }
    }

    fn into_cursor(self, text: &str, current: Option<Token>) -> Cursor {
        let stack = self.stack;
        let slot = match stack.last() {
            _ if self.too_deep > 0 => Slot::Other,
            Some(f) if f.is_object => match &f.state {
                State::ExpectKey | State::AfterKey(_) => Slot::Key,
                State::ExpectValue(k) => Slot::Value(string_text(text, *k).to_string()),
                State::AfterValue => Slot::Other,
            },
            _ => Slot::Other,
        };
        // The path to the innermost object: the root's key is empty.
        let object_frames = stack.iter().rposition(|f| f.is_object);
        let path = match object_frames {
            Some(i) => stack[1..=i]
                .iter()
                .map(|f| f.key.text(text).to_string())
                .collect(),
            None => Vec::new(),
        };
        Cursor {
            path,
            object: object_frames.map(|i| stack[i].open),
            slot,
            token: current,
        }
    }
}

/// The context of the cursor at byte `offset`, scanning from the start
/// (the reference [`cursor_from`] is checked against).
#[cfg(test)]
fn cursor(text: &str, offset: usize) -> Cursor {
    cursor_from(text, &[], offset)
}

/// The context of the cursor at byte `offset`, scanning from the last of
/// `checkpoints` (made by [`checkpoints`] for this text) before it.
pub fn cursor_from(text: &str, checkpoints: &[Checkpoint], offset: usize) -> Cursor {
    // Every token before a checkpoint ends at or before its `pos`, so with
    // `pos < offset` none of them touches the cursor: resuming there gives
    // the state a scan from the start would have.
    let before = checkpoints.partition_point(|c| c.pos < offset);
    let (mut walk, from) = match before.checked_sub(1).map(|i| &checkpoints[i]) {
        Some(c) => (c.walk.clone(), c.pos),
        None => (Walk::default(), 0),
    };
    let mut current = None;
    for token in Lexer::new(text, from) {
        let touches = match token.tok {
            Tok::Str { .. } | Tok::Word => token.span.start < offset && offset <= token.span.end,
            _ => false,
        };
        if touches {
            current = Some(token);
            break;
        }
        if token.span.start >= offset {
            break;
        }
        walk.step(token);
    }
    walk.into_cursor(text, current)
}

/// A member of one object, as far as the scanner can tell.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Member {
    pub key: String,
    pub key_span: Span,
    /// The value when it is a string (its text without quotes).
    pub string_value: Option<String>,
}

/// The members of the object whose `{` is at `open`, up to its `}` (or the
/// end of the text); keys of nested objects are not included.
pub fn members(text: &str, open: usize) -> Vec<Member> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut expect_key = false;
    let mut after_colon = false;
    for token in Lexer::new(text, open) {
        match token.tok {
            Tok::Open(_) => {
                depth += 1;
                if depth == 1 {
                    expect_key = true;
                }
                after_colon = false;
            }
            Tok::Close(_) => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    break;
                }
            }
            _ if depth != 1 => {}
            Tok::Comma => {
                expect_key = true;
                after_colon = false;
            }
            Tok::Colon => after_colon = true,
            Tok::Str { .. } if expect_key => {
                let member = Member {
                    key: string_text(text, token).to_string(),
                    key_span: token.span,
                    string_value: None,
                };
                out.push(member);
                expect_key = false;
                after_colon = false;
            }
            Tok::Str { .. } if after_colon => {
                if let Some(last) = out.last_mut() {
                    last.string_value = Some(string_text(text, token).to_string());
                }
                after_colon = false;
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> (Cursor, usize) {
        let offset = text.find('|').unwrap();
        let text = text.replacen('|', "", 1);
        (cursor(&text, offset), offset)
    }

    #[test]
    fn cursor_in_keys_values_and_unterminated_strings() {
        let (c, _) = at(r#"{"models": {"m": {"algorithm": "pul|"}}}"#);
        assert_eq!(c.path, ["models", "m"]);
        assert_eq!(c.slot, Slot::Value("algorithm".into()));
        assert_eq!(c.token.map(|t| t.span), Some(Span::new(31, 36)));
        let (c, _) = at("{\"models\": {\"m\": {\"algorithm\": \"pulsar\", \"se|\n");
        assert_eq!(c.path, ["models", "m"]);
        assert_eq!(c.slot, Slot::Key);
        assert_eq!(c.token.map(|t| t.tok), Some(Tok::Str { closed: false }));
        let (c, _) = at(r#"{"default": |}"#);
        assert_eq!(c.path, Vec::<String>::new());
        assert_eq!(c.slot, Slot::Value("default".into()));
        assert_eq!(c.token, None);
        let (c, _) = at(r#"{"a": [1, |]}"#);
        assert_eq!(c.slot, Slot::Other);
    }

    #[test]
    fn checkpoints_resume_exactly_where_a_full_scan_would_be() {
        let text = concat!(
            "{\"default\": \"pulsar\", \"models\": {\"m\": {\"algorithm\": \"pulsar\",",
            " \"seed\": \"a\"}, \"n\": [1, {\"x\": \"y\"}], \"o\": \"power-of-n\"},",
            " \"request_algorithms\": [\"pulsar\", {\"algorithm\": \"random\"}], \"z\": \"un"
        );
        for spacing in [1, 2, 7, 16] {
            let points = checkpoints_every(text, spacing);
            assert!(
                points.len() > text.len() / (spacing + 16),
                "spacing {spacing}"
            );
            for offset in 0..=text.len() {
                assert_eq!(
                    cursor_from(text, &points, offset),
                    cursor(text, offset),
                    "spacing {spacing}, offset {offset}"
                );
            }
        }
    }

    #[test]
    fn checkpoints_are_spaced_and_bounded() {
        let entry = "\"m\": {\"algorithm\": \"pulsar\"}, ";
        let text = format!("{{\"models\": {{{}}}}}", entry.repeat(10_000));
        let points = checkpoints(&text);
        let expected = text.len() / CHECKPOINT_SPACING;
        assert!((expected..=expected + 1).contains(&points.len()));
        assert!(points
            .windows(2)
            .all(|w| w[1].pos - w[0].pos >= CHECKPOINT_SPACING));
        let c = cursor_from(&text, &points, text.len() - 20);
        assert_eq!(c.path, ["models", "m"]);
    }

    #[test]
    fn checkpoints_under_long_nested_keys_hold_no_text() {
        // Each frame is a few words whatever its key's length, so a
        // checkpoint is at most MAX_DEPTH of them: memory linear in the
        // text even when every key above the cursor is 32 KiB long.
        assert!(std::mem::size_of::<Frame>() <= 96);
        let key = "k".repeat(CHECKPOINT_SPACING);
        let depth = 40;
        let mut text = String::new();
        for _ in 0..depth {
            text.push_str(&format!("{{\"{key}\": "));
        }
        text.push_str("{\"x\": 1}");
        let points = checkpoints(&text);
        assert!(points.len() >= depth - 1, "{}", points.len());
        assert!(points.iter().all(|c| c.walk.stack.len() <= depth + 1));
        let c = cursor_from(&text, &points, text.len() - 3);
        assert_eq!(c.path.len(), depth);
        assert!(c.path.iter().all(|k| k == &key));
        assert_eq!(c, cursor(&text, text.len() - 3));
    }

    #[test]
    fn decoded_strings_map_offsets_back() {
        let text = r#"{"p": "a(s=\"x\")"}"#;
        let token = Lexer::new(text, 0).nth(3).unwrap();
        let d = Decoded::of(text, token);
        assert_eq!(d.text, "a(s=\"x\")");
        // `x` is decoded byte 5, document byte 13.
        assert_eq!(d.decoded_offset(13), 5);
        assert_eq!(d.document_span(Span::new(4, 7)), Span::new(11, 16));
    }

    #[test]
    fn members_of_an_unfinished_object() {
        let text = r#"{"algorithm": "pulsar", "x": {"seed": "no"}, "seed": "a", "n"#;
        let m = members(text, 0);
        let keys: Vec<_> = m.iter().map(|m| m.key.as_str()).collect();
        assert_eq!(keys, ["algorithm", "x", "seed", "n"]);
        assert_eq!(m[0].string_value.as_deref(), Some("pulsar"));
    }
}
