//! The header form (`x-routing-method`), checked exactly as stargate checks
//! it (docs/stargate.md 5.1): ordered pre-checks on the raw text, then
//! RFC 8941 item validity, then stargate's restrictions on the parsed item.
//! Every failure is `malformed_expression`, its message starts with the rule
//! tag and echoes the raw value, and its span points at the offending bytes.

use super::ast::{Arg, Expr, Form, Spanned, Value};
use super::sf_item::{self, Bare};
use crate::diag::{Code, Diagnostic, Span};

/// Longest accepted value in bytes (P7).
pub const MAX_HEADER_BYTES: usize = 1024;
/// Most parameters accepted (P11).
pub const MAX_HEADER_PARAMS: usize = 32;

/// The tag of the step-5 failures.
const RFC_TAG: &str = "RFC 8941 (P1/P2/P4/P8)";

fn fail(raw: &str, tag: &str, span: Span, what: impl AsRef<str>) -> Diagnostic {
    let message = format!("{tag}: {} in routing expression '{raw}'", what.as_ref());
    Diagnostic::new(Code::MalformedExpression, span, message)
}

pub(crate) fn parse(raw: &str) -> Result<Expr, Diagnostic> {
    if !raw.contains(';') {
        return Ok(method_only(raw));
    }
    pre_checks(raw)?;
    let item = sf_item::parse_item(raw).map_err(|e| {
        let end = (e.at + 1).min(raw.len()).max(e.at);
        let why = format!("not a valid structured-field item: {} at byte {}", e.why, e.at);
        let d = fail(raw, RFC_TAG, Span::new(e.at, end), why);
        if e.why.contains("digits") {
            d.with_help("quote a long number: numeric fields accept a quoted plain number, e.g. next_bucket_unlock_factor=\"0.0625\"")
        } else if let Some(help) = super::quoting::header_help(raw, e.at) {
            d.with_help(help)
        } else if e.why.contains("space") {
            d.with_help("remove the space: the header form allows spaces only around the whole value and after `;`")
        } else {
            d
        }
    })?;
    let span_of = |r: &std::ops::Range<usize>| Span::new(r.start, r.end);
    let bare_span = span_of(&item.bare_at);
    let method = match item.bare {
        Bare::Token(t) => t,
        other => {
            return Err(fail(
                raw,
                "P1",
                bare_span,
                format!("the method must be a token, not {}", kind_name(&other)),
            )
            .with_help("write the algorithm name bare, e.g. `pulsar;seed=x`"))
        }
    };
    check_method_token(raw, &method, item.bare_at.start)?;
    let mut args = Vec::with_capacity(item.params.len());
    for p in item.params {
        let value = match p.value {
            Bare::Integer(t) => Value::Integer(t),
            Bare::Decimal(t) => Value::Decimal(t),
            Bare::String(t) => Value::String(t),
            Bare::Token(t) => Value::Token(t),
            Bare::Boolean(b) => {
                let written = if b { "?1" } else { "?0" };
                let why = format!(
                    "boolean {written} for parameter '{}' is not accepted; write {}",
                    p.name,
                    if b { "true" } else { "false" }
                );
                let help = "stargate reads booleans as the names true and false";
                return Err(fail(raw, "P4", span_of(&p.value_at), why).with_help(help));
            }
            Bare::ByteSeq(_) => {
                let why = format!(
                    "parameter '{}' has a byte sequence; values are integers, decimals, tokens or strings",
                    p.name
                );
                return Err(fail(raw, "P2", span_of(&p.value_at), why));
            }
        };
        let name_span = span_of(&p.name_at);
        let value_span = span_of(&p.value_at);
        args.push(Arg {
            name: Spanned::new(p.name, name_span),
            value: Spanned::new(value, value_span),
            span: name_span.join(value_span),
        });
    }
    let trimmed_end = raw.trim_end_matches(' ').len();
    Ok(Expr {
        form: Form::Header,
        method: Spanned::new(method, bare_span),
        args,
        span: Span::new(item.bare_at.start, trimmed_end),
    })
}

fn kind_name(b: &Bare) -> &'static str {
    match b {
        Bare::Integer(_) => "an integer",
        Bare::Decimal(_) => "a decimal",
        Bare::String(_) => "a string",
        Bare::Token(_) => "a token",
        Bare::Boolean(_) => "a boolean",
        Bare::ByteSeq(_) => "a byte sequence",
    }
}

/// P10: a method token starts with an ASCII letter and holds only letters,
/// digits, `_` and `-`. `start` is the method's offset in `raw`.
pub(crate) fn check_method_token(raw: &str, method: &str, start: usize) -> Result<(), Diagnostic> {
    let Some((i, c)) = method.char_indices().find(|&(i, c)| {
        !(c.is_ascii_alphanumeric() || c == '_' || c == '-') || (i == 0 && !c.is_ascii_alphabetic())
    }) else {
        return Ok(());
    };
    let at = start + i;
    let why = if i == 0 {
        format!("the method '{method}' must start with an ASCII letter")
    } else {
        format!(
            "the method '{method}' contains `{c}`; only letters, digits, `_` and `-` are allowed"
        )
    };
    let help = "algorithm names are ASCII letters, digits, `_` and `-`";
    Err(fail(raw, "P10", Span::new(at, at + c.len_utf8()), why).with_help(help))
}

/// A value without `;` names a method only; stargate looks it up trimmed
/// (4.2) without any syntax check, so every text is a method here and an
/// unknown one is the checker's `unknown_method`.
fn method_only(raw: &str) -> Expr {
    let start = raw.len() - raw.trim_start().len();
    let end = raw.trim_end().len().max(start);
    let span = Span::new(start, end);
    Expr {
        form: Form::Header,
        method: Spanned::new(raw[start..end].to_string(), span),
        args: Vec::new(),
        span,
    }
}

/// Steps 1 to 4, on the raw text, in stargate's order.
fn pre_checks(raw: &str) -> Result<(), Diagnostic> {
    if raw.len() > MAX_HEADER_BYTES {
        let span = Span::new(MAX_HEADER_BYTES, raw.len());
        let why = format!(
            "{} bytes, more than the {MAX_HEADER_BYTES} allowed,",
            raw.len()
        );
        let help = "stargate reads at most 1024 bytes; drop parameters that keep their default";
        return Err(fail(raw, "P7", span, why).with_help(help));
    }
    // P3 is checked over the whole text before P9; one pass finds both.
    let (comma, quoted_semicolon) = scan_commas_and_quotes(raw);
    if let Some(at) = comma {
        return Err(fail(
            raw,
            "P3",
            Span::new(at, at + 1),
            "a comma (never allowed, even quoted)",
        )
        .with_help("header parameters are separated by `;`: write `pulsar;seed=a;consider_kv_free_tokens=true`"));
    }
    if let Some(at) = quoted_semicolon {
        let d = fail(
            raw,
            "P9",
            Span::new(at, at + 1),
            "a `;` inside a quoted string",
        );
        let help = "a header string cannot contain `;`; choose a value without one";
        return Err(d.with_help(help));
    }
    // At most MAX_HEADER_PARAMS names are kept: the 33rd fails P11 first.
    let mut seen: [&str; MAX_HEADER_PARAMS] = [""; MAX_HEADER_PARAMS];
    let mut seen_len = 0;
    let mut seg_start = 0;
    for (n, segment) in raw.split(';').enumerate() {
        let start = seg_start;
        seg_start += segment.len() + 1;
        if n == 0 {
            continue;
        }
        let seg_span = Span::new(start, start + segment.len());
        if seen_len >= MAX_HEADER_PARAMS {
            let why = format!("more than {MAX_HEADER_PARAMS} parameters");
            let help = "a header value takes at most 32 parameters";
            return Err(fail(raw, "P11", seg_span, why).with_help(help));
        }
        let lead = segment.len() - segment.trim_start_matches(' ').len();
        let body = &segment[lead..];
        let Some(eq) = body.find('=') else {
            let shown = body.trim_end();
            let why = format!("parameter '{shown}' requires an explicit value (`name=value`)");
            let help = "write `name=value`; a flag is `name=true`";
            return Err(fail(raw, "P4", seg_span, why).with_help(help));
        };
        let name = &body[..eq];
        let name_span = Span::new(start + lead, start + lead + eq);
        if !is_param_name(name) {
            let why = format!("invalid parameter name '{name}' (names match [a-z][a-z0-9_]*)");
            let help = "parameter names are lower-case letters, digits and `_`, starting with a letter, with no space before `=`";
            return Err(fail(raw, "P6", name_span, why).with_help(help));
        }
        if seen[..seen_len].contains(&name) {
            return Err(fail(
                raw,
                "P5",
                name_span,
                format!("repeated parameter '{name}'"),
            ));
        }
        seen[seen_len] = name;
        seen_len += 1;
    }
    Ok(())
}

/// The first comma anywhere (P3) and the first `;` inside quotes (P9):
/// `"` toggles the quote state, `\\` inside quotes escapes the next byte.
fn scan_commas_and_quotes(raw: &str) -> (Option<usize>, Option<usize>) {
    let mut quoted_semicolon = None;
    let mut quoted = false;
    let mut escaped = false;
    for (i, &b) in raw.as_bytes().iter().enumerate() {
        // A comma counts even when escaped or quoted.
        if b == b',' {
            return (Some(i), quoted_semicolon);
        }
        if escaped {
            escaped = false;
            continue;
        }
        match b {
            b'"' => quoted = !quoted,
            b'\\' if quoted => escaped = true,
            b';' if quoted && quoted_semicolon.is_none() => quoted_semicolon = Some(i),
            _ => {}
        }
    }
    (None, quoted_semicolon)
}

/// `[a-z][a-z0-9_]*` (P6).
pub fn is_param_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    matches!(bytes.next(), Some(b'a'..=b'z'))
        && bytes.all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}
