//! pest pairs -> AST. The only module that reads pairs. `offset` is where the
//! parsed slice starts in the whole source, so every span is a byte offset
//! into the text the user gave.

use super::ast::{Allow, Arg, Expr, Form, Item, Spanned, Value};
use super::grammar::Rule;
use crate::diag::Span;
use pest::iterators::Pair;

fn span_of(pair: &Pair<'_, Rule>, offset: usize) -> Span {
    let s = pair.as_span();
    Span::new(s.start() + offset, s.end() + offset)
}

/// `expr` pair -> call-form expression.
pub(crate) fn expr(pair: Pair<'_, Rule>, offset: usize) -> Expr {
    let span = span_of(&pair, offset);
    let mut method = Spanned::new(String::new(), span);
    let mut args = Vec::new();
    for part in pair.into_inner() {
        match part.as_rule() {
            Rule::method => method = method_of(&part, offset),
            // `method_only` wraps the method of an expression without arguments.
            Rule::method_only => {
                if let Some(m) = part.into_inner().next() {
                    method = method_of(&m, offset);
                }
            }
            Rule::arg_list => args = part.into_inner().filter_map(|a| arg(a, offset)).collect(),
            _ => {}
        }
    }
    Expr {
        form: Form::Call,
        method,
        args,
        span,
    }
}

fn method_of(pair: &Pair<'_, Rule>, offset: usize) -> Spanned<String> {
    Spanned::new(pair.as_str().to_string(), span_of(pair, offset))
}

fn arg(pair: Pair<'_, Rule>, offset: usize) -> Option<Arg> {
    if pair.as_rule() != Rule::arg {
        return None; // punctuation
    }
    let span = span_of(&pair, offset);
    let mut name = None;
    let mut value = None;
    for part in pair.into_inner() {
        let part_span = span_of(&part, offset);
        let text = part.as_str();
        match part.as_rule() {
            Rule::param_name => name = Some(Spanned::new(text.to_string(), part_span)),
            Rule::number => value = Some(Spanned::new(number(text), part_span)),
            Rule::token => value = Some(Spanned::new(Value::Token(text.to_string()), part_span)),
            Rule::string => value = Some(Spanned::new(Value::String(string(part)), part_span)),
            _ => {}
        }
    }
    Some(Arg {
        name: name?,
        value: value?,
        span,
    })
}

/// The grammar's one number rule: a `.` makes it a decimal.
fn number(text: &str) -> Value {
    if text.contains('.') {
        Value::Decimal(text.to_string())
    } else {
        Value::Integer(text.to_string())
    }
}

/// `string` pair -> its unescaped text.
fn string(pair: Pair<'_, Rule>) -> String {
    let raw = pair
        .into_inner()
        .find(|p| p.as_rule() == Rule::string_text)
        .map_or("", |p| p.as_str());
    unescape(raw)
}

/// Undoes `\"` and `\\` (the grammar admits no other escape).
pub(crate) fn unescape(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(next) = chars.next() {
                out.push(next);
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// `allow_item` pair.
pub(crate) fn allow(pair: Pair<'_, Rule>, offset: usize) -> Option<Allow> {
    let span = span_of(&pair, offset);
    let e = pair.into_inner().find(|p| p.as_rule() == Rule::expr)?;
    Some(Allow {
        expr: expr(e, offset),
        span,
    })
}

/// `default_item` pair.
pub(crate) fn default_item(pair: Pair<'_, Rule>, offset: usize) -> Option<Item> {
    let span = span_of(&pair, offset);
    let e = pair.into_inner().find(|p| p.as_rule() == Rule::expr)?;
    Some(Item::Default {
        expr: expr(e, offset),
        span,
    })
}

/// `model_head` pair -> (id, expression); the block is added by the caller.
pub(crate) fn model_head(pair: Pair<'_, Rule>, offset: usize) -> Option<(Spanned<String>, Expr)> {
    let mut id = None;
    let mut e = None;
    for part in pair.into_inner() {
        match part.as_rule() {
            Rule::model_id => {
                let id_span = span_of(&part, offset);
                let text = string(part);
                id = Some(Spanned::new(text, id_span));
            }
            Rule::expr => e = Some(expr(part, offset)),
            _ => {}
        }
    }
    Some((id?, e?))
}

/// `model_item` pair (head and optional block).
fn model_item(pair: Pair<'_, Rule>, offset: usize) -> Option<Item> {
    let span = span_of(&pair, offset);
    let mut head = None;
    let mut allows = Vec::new();
    for part in pair.into_inner() {
        match part.as_rule() {
            Rule::model_head => head = model_head(part, offset),
            Rule::block => {
                allows = part
                    .into_inner()
                    .filter(|p| p.as_rule() == Rule::allow_item)
                    .filter_map(|p| allow(p, offset))
                    .collect()
            }
            _ => {}
        }
    }
    let (id, expr) = head?;
    Some(Item::Model {
        id,
        expr,
        allows,
        span,
    })
}

/// Any top-level item pair.
pub(crate) fn item(pair: Pair<'_, Rule>, offset: usize) -> Option<Item> {
    match pair.as_rule() {
        Rule::default_item => default_item(pair, offset),
        Rule::allow_item => allow(pair, offset).map(Item::Allow),
        Rule::model_item => model_item(pair, offset),
        _ => None,
    }
}
