//! Where the cursor is in a route file or in one expression (a scenario's
//! policy string): which slot of which item, tolerant of text being typed.
//! One pass of a small lexer from the start to the cursor; comments are
//! skipped like the grammar skips them.

use routex::diag::Span;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tok {
    /// A name, keyword or bare token (`pulsar`, `allow`, `queue-time`).
    Ident,
    Number,
    Str,
    Punct(u8),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Token {
    pub tok: Tok,
    pub span: Span,
}

struct Lexer<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Iterator for Lexer<'_> {
    type Item = Token;

    fn next(&mut self) -> Option<Token> {
        let b = self.bytes;
        loop {
            while self.pos < b.len() && b[self.pos].is_ascii_whitespace() {
                self.pos += 1;
            }
            if b.get(self.pos) == Some(&b'#') {
                while self.pos < b.len() && b[self.pos] != b'\n' {
                    self.pos += 1;
                }
                continue;
            }
            break;
        }
        let start = self.pos;
        let c = *b.get(start)?;
        self.pos += 1;
        let word = |c: u8| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.');
        let tok = if c.is_ascii_alphabetic() || c == b'_' {
            while self.pos < b.len() && word(b[self.pos]) {
                self.pos += 1;
            }
            Tok::Ident
        } else if c.is_ascii_digit() || c == b'-' || c == b'+' {
            while self.pos < b.len() && (b[self.pos].is_ascii_digit() || b[self.pos] == b'.') {
                self.pos += 1;
            }
            Tok::Number
        } else if c == b'"' {
            while self.pos < b.len() && !matches!(b[self.pos], b'"' | b'\n') {
                self.pos += if b[self.pos] == b'\\' { 2 } else { 1 };
            }
            if b.get(self.pos) == Some(&b'"') {
                self.pos += 1;
            }
            self.pos = self.pos.min(b.len());
            Tok::Str
        } else {
            // Whole UTF-8 characters, so spans stay on boundaries.
            while self.pos < b.len() && (b[self.pos] & 0xC0) == 0x80 {
                self.pos += 1;
            }
            Tok::Punct(c)
        };
        Some(Token {
            tok,
            span: Span::new(start, self.pos),
        })
    }
}

/// What may be written at the cursor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Slot {
    /// The start of an item: `default`, `allow`, `model` (only `allow`
    /// inside a model block).
    Keyword,
    /// An algorithm name.
    Method,
    /// A model id after `model`.
    ModelId,
    /// A parameter name of `method`'s argument list, which opens at `open`.
    Param {
        method: String,
        open: usize,
    },
    /// The value of `param`.
    Value {
        method: String,
        param: String,
    },
    Nothing,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cursor {
    pub slot: Slot,
    /// The name, number or string the cursor is in or just after.
    pub token: Option<Span>,
    /// The model whose head or block the cursor is in.
    pub model: Option<String>,
    pub in_block: bool,
}

#[derive(Clone, Debug)]
enum State {
    Top,
    AfterDefault,
    AfterModel,
    AfterModelId,
    Method,
    AfterMethod(String),
    ArgName(String, usize),
    AfterArgName(String, usize, String),
    ArgValue(String, usize, String),
    AfterArgValue(String, usize),
}

/// The cursor at `offset` in a route file (`expression` false) or in one
/// expression (`expression` true: the text starts with a method).
pub fn cursor(text: &str, offset: usize, expression: bool) -> Cursor {
    let mut state = if expression {
        State::Method
    } else {
        State::Top
    };
    let mut model: Option<String> = None;
    let mut in_block = false;
    let mut current = None;
    let lexer = Lexer {
        bytes: text.as_bytes(),
        pos: 0,
    };
    for token in lexer {
        let touches = !matches!(token.tok, Tok::Punct(_))
            && token.span.start < offset
            && offset <= token.span.end;
        if touches {
            current = Some(token.span);
            break;
        }
        if token.span.start >= offset {
            break;
        }
        let word = text.get(token.span.start..token.span.end).unwrap_or("");
        state = step(
            state,
            token.tok,
            word,
            token.span,
            &mut model,
            &mut in_block,
        );
    }
    let slot = match state {
        State::Top if !expression => Slot::Keyword,
        State::AfterMethod(_) if !expression && current.is_none() => Slot::Keyword,
        State::AfterMethod(_) if current.is_some() => Slot::Method,
        State::Method => Slot::Method,
        State::AfterModel => Slot::ModelId,
        State::ArgName(method, open) => Slot::Param { method, open },
        State::ArgValue(method, _, param) => Slot::Value { method, param },
        _ => Slot::Nothing,
    };
    Cursor {
        slot,
        token: current,
        model,
        in_block,
    }
}

fn step(
    state: State,
    tok: Tok,
    word: &str,
    span: Span,
    model: &mut Option<String>,
    in_block: &mut bool,
) -> State {
    match (state, tok) {
        (State::Top | State::AfterMethod(_), Tok::Ident) if word == "default" => {
            State::AfterDefault
        }
        (State::Top | State::AfterMethod(_), Tok::Ident) if word == "allow" => State::Method,
        (State::Top | State::AfterMethod(_), Tok::Ident) if word == "model" => {
            *in_block = false;
            *model = None;
            State::AfterModel
        }
        (State::AfterDefault, Tok::Punct(b'=')) | (State::AfterModelId, Tok::Punct(b'=')) => {
            State::Method
        }
        (State::AfterModel, Tok::Str) => {
            let id = word.trim_start_matches('"').trim_end_matches('"');
            *model = Some(id.to_string());
            State::AfterModelId
        }
        (State::Method, Tok::Ident) => State::AfterMethod(word.to_string()),
        (State::AfterMethod(m), Tok::Punct(b'(' | b';')) => State::ArgName(m, span.start),
        (State::ArgName(m, o), Tok::Ident) => State::AfterArgName(m, o, word.to_string()),
        (State::AfterArgName(m, o, p), Tok::Punct(b'=')) => State::ArgValue(m, o, p),
        (State::ArgValue(m, o, _), Tok::Ident | Tok::Number | Tok::Str) => {
            State::AfterArgValue(m, o)
        }
        (
            State::AfterArgValue(m, o) | State::ArgName(m, o) | State::ArgValue(m, o, _),
            Tok::Punct(b',' | b';'),
        ) => State::ArgName(m, o),
        (State::AfterArgValue(..) | State::ArgName(..) | State::ArgValue(..), Tok::Punct(b')')) => {
            State::Top
        }
        (State::Top | State::AfterMethod(_), Tok::Punct(b'{')) => {
            *in_block = model.is_some();
            State::Top
        }
        (_, Tok::Punct(b'}')) => {
            *in_block = false;
            *model = None;
            State::Top
        }
        (State::AfterMethod(_), _) => State::Top,
        // Inside an argument list stray text keeps the list open.
        (s @ (State::ArgName(..) | State::AfterArgName(..) | State::AfterArgValue(..)), _) => s,
        (s, _) => s,
    }
}

/// The parameter names already written in the argument list that opens at
/// `open`, up to its `)` or the next item.
pub fn written_params(text: &str, open: usize) -> Vec<String> {
    let lexer = Lexer {
        bytes: text.as_bytes(),
        pos: open + 1,
    };
    let mut out = Vec::new();
    let mut last_ident: Option<&str> = None;
    for token in lexer {
        let word = text.get(token.span.start..token.span.end).unwrap_or("");
        match token.tok {
            Tok::Punct(b')' | b'{' | b'}') => break,
            Tok::Ident if matches!(word, "allow" | "model" | "default") => break,
            Tok::Ident => last_ident = Some(word),
            Tok::Punct(b'=') => {
                if let Some(name) = last_ident.take() {
                    out.push(name.to_string());
                }
            }
            _ => last_ident = None,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str, expression: bool) -> Cursor {
        let offset = text.find('|').unwrap();
        cursor(&text.replacen('|', "", 1), offset, expression)
    }

    #[test]
    fn slots_of_a_route_file() {
        assert_eq!(at("default = pul|", false).slot, Slot::Method);
        assert_eq!(at("default = |", false).slot, Slot::Method);
        assert_eq!(at("allow random\n|", false).slot, Slot::Keyword);
        let c = at("model \"m\" = pulsar(seed=\"a\", |)", false);
        assert_eq!(
            c.slot,
            Slot::Param {
                method: "pulsar".into(),
                open: 18
            }
        );
        assert_eq!(c.model.as_deref(), Some("m"));
        let c = at("model \"m\" = power-of-n(comparator = q|", false);
        assert_eq!(
            c.slot,
            Slot::Value {
                method: "power-of-n".into(),
                param: "comparator".into()
            }
        );
        assert_eq!(c.token, Some(Span::new(36, 37)));
        let c = at("model \"m\" = random {\n  allow |\n}", false);
        assert_eq!((c.slot, c.in_block), (Slot::Method, true));
        assert_eq!(at("# allow |", false).slot, Slot::Keyword);
        assert_eq!(at("model \"|", false).slot, Slot::ModelId);
        assert_eq!(
            at("pulsar(|", true).slot,
            Slot::Param {
                method: "pulsar".into(),
                open: 6
            }
        );
    }

    #[test]
    fn written_params_stop_at_the_list_end() {
        let text = "pulsar(seed=\"a\", consider_kv_free_tokens = true, x) allow y(n=1)";
        assert_eq!(written_params(text, 6), ["seed", "consider_kv_free_tokens"]);
    }
}
