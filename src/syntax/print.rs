//! The `routex fmt` printer: the canonical call form, the header form, and
//! route files in the layout of docs/contract.md (long argument lists one per
//! line, 4-space indent, trailing commas; comments kept).
//!
//! Canonical spelling: a known method is printed by its canonical name
//! (case, `_` and aliases normalised: same IR, no `deprecated_alias`);
//! unknown methods, numbers and names are printed as written; a method
//! without arguments has no parentheses.

use super::ast::{Expr, Item, RouteFile, Value};
use super::header::{is_param_name, MAX_HEADER_BYTES, MAX_HEADER_PARAMS};
use super::lexical::{comments, skip_trivia};
use super::route_file::item_span;
use crate::diag::{Code, Diagnostic, Span};
use crate::ir::Algorithm;

/// Route-file lines longer than this break their argument list.
const MAX_WIDTH: usize = 80;
const INDENT: &str = "    ";

fn method_name(raw: &str) -> &str {
    Algorithm::from_header_name(raw).map_or(raw, |(a, _)| a.name())
}

fn quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

/// A token the call-form grammar reads back as a token.
fn is_call_token(t: &str) -> bool {
    let mut chars = t.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

fn call_value(v: &Value) -> String {
    match v {
        Value::Integer(t) | Value::Decimal(t) | Value::Unsupported(t) => t.clone(),
        Value::Token(t) if is_call_token(t) => t.clone(),
        // Header tokens such as `a/b` have no call-form token spelling; the
        // checker treats a token and a string of the same text alike.
        Value::Token(t) | Value::String(t) => quote(t),
    }
}

/// `method` or `method(a=1, b="x")`.
pub(crate) fn call(expr: &Expr) -> String {
    let method = method_name(&expr.method.node);
    if expr.args.is_empty() {
        return method.to_string();
    }
    let args: Vec<String> = expr
        .args
        .iter()
        .map(|a| format!("{}={}", a.name.node, call_value(&a.value.node)))
        .collect();
    format!("{method}({})", args.join(", "))
}

fn not_representable(span: Span, why: String) -> Diagnostic {
    Diagnostic::new(Code::NotRepresentableInHeader, span, why)
        .with_help("keep the call form (`method(name=value)`) for this expression")
}

/// `-?D{1,15}` or `-?D{1,12}.D{1,3}`: what a bare header number may be.
fn is_bare_number(t: &str, decimal: bool) -> bool {
    let digits = t.strip_prefix('-').unwrap_or(t);
    let all_digits = |s: &str, max: usize| {
        !s.is_empty() && s.len() <= max && s.bytes().all(|b| b.is_ascii_digit())
    };
    if decimal {
        digits
            .split_once('.')
            .is_some_and(|(i, f)| all_digits(i, 12) && all_digits(f, 3))
    } else {
        all_digits(digits, 15)
    }
}

/// The header form: `method;name=value;...`.
pub(crate) fn header(expr: &Expr) -> Result<String, Diagnostic> {
    let method = method_name(&expr.method.node);
    let mut chars = method.chars();
    let valid_method = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if !valid_method {
        let why = format!("the method '{method}' is not a header token");
        return Err(not_representable(expr.method.span, why));
    }
    if expr.args.len() > MAX_HEADER_PARAMS {
        let why = format!(
            "{} parameters, more than the {MAX_HEADER_PARAMS} a header value may have",
            expr.args.len()
        );
        return Err(not_representable(expr.span, why));
    }
    let mut out = method.to_string();
    for arg in &expr.args {
        if !is_param_name(&arg.name.node) {
            let why = format!("'{}' is not a header parameter name", arg.name.node);
            return Err(not_representable(arg.name.span, why));
        }
        let value = match &arg.value.node {
            Value::Integer(t) if is_bare_number(t, false) => t.clone(),
            Value::Decimal(t) if is_bare_number(t, true) => t.clone(),
            // Too long (or signed with `+`) for a bare item: numeric fields
            // accept a quoted plain number.
            Value::Integer(t) | Value::Decimal(t) => quote(t),
            Value::Token(t) => t.clone(),
            Value::String(t) => {
                if let Some(c) = t
                    .chars()
                    .find(|&c| c == ';' || c == ',' || !(' '..='~').contains(&c))
                {
                    let why = format!(
                        "the value of '{}' contains {}, which a header value cannot carry",
                        arg.name.node,
                        if c == ';' || c == ',' {
                            format!("`{c}`")
                        } else {
                            format!("{c:?}")
                        }
                    );
                    return Err(not_representable(arg.value.span, why));
                }
                quote(t)
            }
            Value::Unsupported(t) => {
                let why = format!(
                    "the value {t} of '{}' has no header spelling",
                    arg.name.node
                );
                return Err(not_representable(arg.value.span, why));
            }
        };
        out.push(';');
        out.push_str(&arg.name.node);
        out.push('=');
        out.push_str(&value);
    }
    if out.len() > MAX_HEADER_BYTES {
        let why = format!(
            "the header form is {} bytes, more than the {MAX_HEADER_BYTES} allowed",
            out.len()
        );
        return Err(not_representable(expr.span, why));
    }
    Ok(out)
}

/// A route file in canonical layout, every comment kept.
pub(crate) fn route_file(text: &str, file: &RouteFile) -> String {
    let mut p = FilePrinter {
        text,
        comments: comments(text),
        used: Vec::new(),
        out: Vec::new(),
        cursor: None,
    };
    p.used = vec![false; p.comments.len()];
    for (i, item) in file.items.iter().enumerate() {
        let span = item_span(item);
        let next = file
            .items
            .get(i + 1)
            .map_or(text.len(), |n| item_span(n).start);
        for c in p.take_between(0, span.start) {
            p.chunk(c.start, c.end, vec![p.comment_text(c)]);
        }
        let mut lines = p.item(item);
        let mut end = span.end;
        if let Some(c) = p.take_trailing(span.end, next) {
            p.append_comment(&mut lines, c);
            end = c.end;
        }
        let hoisted: Vec<String> = p
            .take_between(span.start, span.end)
            .into_iter()
            .map(|c| p.comment_text(c))
            .collect();
        p.chunk(span.start, end, hoisted.into_iter().chain(lines).collect());
    }
    for c in p.take_between(0, text.len()) {
        p.chunk(c.start, c.end, vec![p.comment_text(c)]);
    }
    let mut s = p.out.join("\n");
    if !s.is_empty() {
        s.push('\n');
    }
    s
}

struct FilePrinter<'a> {
    text: &'a str,
    comments: Vec<Span>,
    used: Vec<bool>,
    out: Vec<String>,
    /// End of the last chunk written, in the source.
    cursor: Option<usize>,
}

impl FilePrinter<'_> {
    fn comment_text(&self, c: Span) -> String {
        self.text
            .get(c.start..c.end)
            .unwrap_or("")
            .trim_end()
            .to_string()
    }

    fn append_comment(&self, lines: &mut [String], c: Span) {
        if let Some(last) = lines.last_mut() {
            last.push_str("  ");
            last.push_str(&self.comment_text(c));
        }
    }

    /// Unused comments starting in `lo..hi`, now used.
    fn take_between(&mut self, lo: usize, hi: usize) -> Vec<Span> {
        let mut out = Vec::new();
        for (i, c) in self.comments.iter().enumerate() {
            if !self.used[i] && c.start >= lo && c.start < hi {
                self.used[i] = true;
                out.push(*c);
            }
        }
        out
    }

    /// The unused comment on the same source line as `pos`, before `hi`.
    fn take_trailing(&mut self, pos: usize, hi: usize) -> Option<Span> {
        let text = self.text;
        let i = self.comments.iter().enumerate().position(|(i, c)| {
            !self.used[i]
                && c.start >= pos
                && c.start < hi
                && !text.get(pos..c.start).unwrap_or("\n").contains('\n')
        })?;
        self.used[i] = true;
        Some(self.comments[i])
    }

    fn has_inner_comment(&self, lo: usize, hi: usize) -> bool {
        self.comments
            .iter()
            .enumerate()
            .any(|(i, c)| !self.used[i] && c.start >= lo && c.start < hi)
    }

    /// Writes lines that came from `start..end` of the source, keeping one
    /// blank line where the source had at least one.
    fn chunk(&mut self, start: usize, end: usize, lines: Vec<String>) {
        if let Some(prev) = self.cursor {
            if blank_line_between(self.text, prev, start) {
                self.out.push(String::new());
            }
        }
        self.out.extend(lines);
        self.cursor = Some(end);
    }

    fn item(&mut self, item: &Item) -> Vec<String> {
        match item {
            Item::Default { expr, .. } => self.expr("", "default = ", expr, ""),
            Item::Allow(a) => self.expr("", "allow ", &a.expr, ""),
            Item::Model {
                id,
                expr,
                allows,
                span,
            } => {
                let prefix = format!("model {} = ", quote(&id.node));
                if allows.is_empty() {
                    return self.expr("", &prefix, expr, "");
                }
                let mut lines = self.expr("", &prefix, expr, " {");
                let open = skip_trivia(self.text, expr.span.end);
                let first = allows.first().map_or(span.end, |a| a.span.start);
                if let Some(c) = self.take_trailing(open + 1, first) {
                    self.append_comment(&mut lines, c);
                }
                let mut prev = open + 1;
                for (i, allow) in allows.iter().enumerate() {
                    let next = allows.get(i + 1).map_or(span.end, |n| n.span.start);
                    for c in self.take_between(prev, allow.span.start) {
                        self.block_blank(&mut lines, prev, c.start);
                        lines.push(format!("{INDENT}{}", self.comment_text(c)));
                        prev = c.end;
                    }
                    self.block_blank(&mut lines, prev, allow.span.start);
                    let mut allow_lines = self.expr(INDENT, "allow ", &allow.expr, "");
                    prev = allow.span.end;
                    if let Some(c) = self.take_trailing(allow.span.end, next) {
                        self.append_comment(&mut allow_lines, c);
                        prev = c.end;
                    }
                    lines.extend(allow_lines);
                }
                for c in self.take_between(prev, span.end) {
                    self.block_blank(&mut lines, prev, c.start);
                    lines.push(format!("{INDENT}{}", self.comment_text(c)));
                    prev = c.end;
                }
                lines.push("}".to_string());
                lines
            }
        }
    }

    fn block_blank(&self, lines: &mut Vec<String>, prev: usize, next: usize) {
        if blank_line_between(self.text, prev, next) {
            lines.push(String::new());
        }
    }

    /// One expression: on one line when it fits and holds no comment, else
    /// one argument per line.
    fn expr(&mut self, indent: &str, prefix: &str, expr: &Expr, suffix: &str) -> Vec<String> {
        let single = format!("{indent}{prefix}{}{suffix}", call(expr));
        let inner = self.has_inner_comment(expr.method.span.end, expr.span.end);
        if !inner && single.chars().count() <= MAX_WIDTH {
            return vec![single];
        }
        let arg_indent = format!("{indent}{INDENT}");
        let mut lines = vec![format!(
            "{indent}{prefix}{}(",
            method_name(&expr.method.node)
        )];
        let mut prev = expr.method.span.end;
        for (i, arg) in expr.args.iter().enumerate() {
            let next = expr.args.get(i + 1).map_or(expr.span.end, |n| n.span.start);
            if let Some(c) = self.take_trailing(prev, arg.span.start) {
                self.append_comment(&mut lines, c);
            }
            // A comment between an argument's name and its value (the
            // line broken after the name) goes on its own line before the
            // argument: left out here, it would be hoisted above the whole
            // item and the next fmt would print the list on one line.
            for c in self.take_between(prev, arg.span.end) {
                lines.push(format!("{arg_indent}{}", self.comment_text(c)));
            }
            lines.push(format!(
                "{arg_indent}{} = {},",
                arg.name.node,
                call_value(&arg.value.node)
            ));
            if let Some(c) = self.take_trailing(arg.span.end, next) {
                self.append_comment(&mut lines, c);
            }
            prev = arg.span.end;
        }
        if let Some(c) = self.take_trailing(prev, expr.span.end) {
            self.append_comment(&mut lines, c);
        }
        for c in self.take_between(prev, expr.span.end) {
            lines.push(format!("{arg_indent}{}", self.comment_text(c)));
        }
        lines.push(format!("{indent}){suffix}"));
        lines
    }
}

/// Whether `text[from..to]` contains a line holding only whitespace.
fn blank_line_between(text: &str, from: usize, to: usize) -> bool {
    let Some(gap) = text.get(from.min(to)..to) else {
        return false;
    };
    let pieces: Vec<&str> = gap.split('\n').collect();
    pieces.len() > 2
        && pieces[1..pieces.len() - 1]
            .iter()
            .any(|l| l.trim().is_empty())
}
