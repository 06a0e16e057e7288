//! pest errors -> diagnostics in the user's words. pest names the rules it
//! tried; users should read "expected `=` after the parameter name", never a
//! rule name, and the span must point at the byte where things went wrong.

use super::grammar::Rule;
use crate::diag::{Code, Diagnostic, Span};
use pest::error::{ErrorVariant, InputLocation};

/// A syntax error at byte `pos` of `text` (the slice handed to pest);
/// `offset` shifts the span into the whole source.
pub(crate) fn from_pest(
    err: &pest::error::Error<Rule>,
    text: &str,
    offset: usize,
    code: Code,
) -> Diagnostic {
    let pos = match err.location {
        InputLocation::Pos(p) => p,
        InputLocation::Span((s, _)) => s,
    }
    .min(text.len());
    let expected = match &err.variant {
        ErrorVariant::ParsingError { positives, .. } => positives.clone(),
        ErrorVariant::CustomError { .. } => Vec::new(),
    };
    at(text, pos, &expected, code).offset(offset)
}

/// Builds the diagnostic for a failure at `pos` where `expected` were tried.
pub(crate) fn at(text: &str, pos: usize, expected: &[Rule], code: Code) -> Diagnostic {
    if let Some(d) = string_problem(text, pos, code) {
        return d;
    }
    let (found, span) = found_at(text, pos);
    let wanted = describe_expected(text, pos, expected);
    let message = match wanted {
        Some(w) => format!("expected {w}, found {found}"),
        None => format!("unexpected {found}"),
    };
    let d = Diagnostic::new(code, span, message);
    match super::quoting::call_help(text, pos) {
        Some(help) => d.with_help(help),
        None => d,
    }
}

/// A string that starts at `pos` and is the reason the value failed:
/// unterminated, an unknown escape, or a control character inside.
fn string_problem(text: &str, pos: usize, code: Code) -> Option<Diagnostic> {
    let rest = text.get(pos..)?;
    if !rest.starts_with('"') {
        return None;
    }
    let mut iter = rest.char_indices().skip(1);
    while let Some((i, c)) = iter.next() {
        let at = pos + i;
        match c {
            '"' => return None,
            '\\' => match iter.next() {
                Some((_, '"' | '\\')) => {}
                Some((j, e)) if e != '\n' => {
                    let span = Span::new(at, pos + j + e.len_utf8());
                    let msg = format!(
                        "unknown escape `\\{e}` in a string: only `\\\"` and `\\\\` are allowed"
                    );
                    return Some(Diagnostic::new(code, span, msg));
                }
                _ => break,
            },
            '\n' => break,
            c if c.is_control() => {
                let msg = format!("control character {:?} inside a string is not allowed", c);
                return Some(Diagnostic::new(code, Span::new(at, at + c.len_utf8()), msg));
            }
            _ => {}
        }
    }
    let end = rest.find('\n').map_or(text.len(), |n| pos + n);
    Some(
        Diagnostic::new(code, Span::new(pos, end), "unterminated string")
            .with_label("this string has no closing `\"`")
            .with_help("close the string with `\"`; write `\\\"` for a quote inside it"),
    )
}

/// What stands at `pos`, in words, and its span (a whole word, one
/// character, or an empty span at the end).
fn found_at(text: &str, pos: usize) -> (String, Span) {
    let rest = text.get(pos..).unwrap_or("");
    let Some(c) = rest.chars().next() else {
        return ("end of input".to_string(), Span::new(pos, pos));
    };
    if c == '\n' || c == '\r' {
        return ("end of line".to_string(), Span::new(pos, pos + 1));
    }
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.';
    if is_word(c) {
        let len = rest.find(|c| !is_word(c)).unwrap_or(rest.len());
        return (format!("`{}`", &rest[..len]), Span::new(pos, pos + len));
    }
    let shown = if c.is_control() {
        format!("{c:?}")
    } else {
        format!("`{c}`")
    };
    (shown, Span::new(pos, pos + c.len_utf8()))
}

fn describe_expected(text: &str, pos: usize, expected: &[Rule]) -> Option<String> {
    let has = |r: Rule| expected.contains(&r);
    if expected.len() == 1 && has(Rule::eq) {
        let before = text.get(..pos).unwrap_or("").trim_end();
        let after = if before.ends_with("default") {
            "after `default`"
        } else if before.ends_with('"') {
            "after the model id"
        } else {
            "after the parameter name"
        };
        return Some(format!("`=` {after}"));
    }
    let is_value = |r: &Rule| matches!(r, Rule::number | Rule::string | Rule::token);
    if !expected.is_empty() && expected.iter().all(is_value) {
        return Some("a value: a number, `\"string\"` or a name".to_string());
    }
    let mut words: Vec<&str> = Vec::new();
    for rule in expected {
        let word = match rule {
            Rule::method | Rule::expr => "an algorithm name",
            Rule::lparen => "`(`",
            Rule::rparen => "`)`",
            Rule::comma => "`,`",
            Rule::eq => "`=`",
            Rule::param_name | Rule::arg => "a parameter name",
            Rule::number | Rule::string | Rule::token => "a value",
            Rule::kw_default | Rule::default_item => "`default`",
            Rule::kw_allow | Rule::allow_item => "`allow`",
            Rule::kw_model | Rule::model_item | Rule::model_head => "`model`",
            Rule::model_id => "a quoted model id such as `\"llama-3-70b\"`",
            Rule::lbrace | Rule::block => "`{`",
            Rule::rbrace => "`}`",
            Rule::EOI => "end of input",
            _ => continue,
        };
        if !words.contains(&word) {
            words.push(word);
        }
    }
    // A stable reading order, whatever order pest tried the rules in.
    words.sort_by_key(|w| WORD_ORDER.iter().position(|o| o == w));
    join_or(&words)
}

const WORD_ORDER: &[&str] = &[
    "an algorithm name",
    "a parameter name",
    "a value",
    "`=`",
    "`(`",
    "`,`",
    "`)`",
    "`default`",
    "`allow`",
    "`model`",
    "a quoted model id such as `\"llama-3-70b\"`",
    "`{`",
    "`}`",
    "end of input",
];

/// "a", "a or b", "a, b or c".
pub(crate) fn join_or(words: &[&str]) -> Option<String> {
    match words {
        [] => None,
        [one] => Some((*one).to_string()),
        [init @ .., last] => Some(format!("{} or {last}", init.join(", "))),
    }
}
