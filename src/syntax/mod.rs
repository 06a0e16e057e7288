//! Source text -> AST with spans. Never panics; errors are diagnostics that
//! speak the user's words and point at the byte where things went wrong.
//!
//! - call form (`method(name=value, ...)`): `grammar/routex.pest`, built into
//!   the AST by `build` (the only reader of pest pairs);
//! - header form (`method;name=value`): stargate's ordered rules in `header`,
//!   with the RFC 8941 item parser in `sf_item`;
//! - route files: `route_file`, which recovers after errors;
//! - `print`: the `routex fmt` printer.

pub mod ast;
mod build;
mod errors;
mod grammar;
mod header;
mod lexical;
mod names;
mod print;
mod quoting;
mod route_file;
mod sf_item;

pub use header::{is_param_name, MAX_HEADER_BYTES, MAX_HEADER_PARAMS};

use crate::diag::{Code, Diagnostic};
use ast::{Expr, Form, RouteFile};
use grammar::{RoutexParser, Rule};
use pest::Parser;

/// Parses an expression in call form: `method(name=value, ...)`.
pub fn parse_call(text: &str) -> Result<Expr, Vec<Diagnostic>> {
    let mut pairs = RoutexParser::parse(Rule::call_expression, text)
        .map_err(|e| vec![errors::from_pest(&e, text, 0, Code::MalformedExpression)])?;
    let expr = pairs
        .next()
        .and_then(|entry| entry.into_inner().find(|p| p.as_rule() == Rule::expr))
        .map(|p| build::expr(p, 0))
        .ok_or_else(|| {
            vec![errors::at(
                text,
                0,
                &[Rule::method],
                Code::MalformedExpression,
            )]
        })?;
    let diags = names::check(&expr);
    if diags.is_empty() {
        Ok(expr)
    } else {
        Err(diags)
    }
}

/// Parses an `x-routing-method` value in header form with stargate's ordered
/// rules (docs/stargate.md 5.1); the error is the one stargate returns.
/// A value without `;` is a method name only and always parses (stargate
/// looks it up without syntax checks; an unknown one is `unknown_method`).
/// stargate stops at the first error, so `Err` holds exactly one.
pub fn parse_header(text: &str) -> Result<Expr, Vec<Diagnostic>> {
    header::parse(text).map_err(|d| vec![d])
}

/// Whether `text` is an RFC 8941 Item with Parameters (step 5 of the header
/// rules, without stargate's extra restrictions).
pub fn is_rfc8941_item(text: &str) -> bool {
    sf_item::parse_item(text).is_ok()
}

/// Which form [`parse_expression`] reads `text` in: the call form when a
/// `(` comes before any `;`, else the header form.
pub fn detect_form(text: &str) -> Form {
    match (text.find('('), text.find(';')) {
        (Some(paren), Some(semi)) if paren < semi => Form::Call,
        (Some(_), None) => Form::Call,
        _ => Form::Header,
    }
}

/// Parses an expression in either form (see [`detect_form`]).
pub fn parse_expression(text: &str) -> Result<Expr, Vec<Diagnostic>> {
    match detect_form(text) {
        Form::Call => parse_call(text),
        Form::Header => parse_header(text),
    }
}

/// Parses a route file, reporting every syntax error it can.
pub fn parse_route_file(text: &str) -> (RouteFile, Vec<Diagnostic>) {
    route_file::parse(text)
}

/// `routex fmt` of one expression (either form in): the canonical call form,
/// or the header form when `header` is set (an error when the expression
/// cannot be written in header form).
pub fn format_expression(text: &str, header: bool) -> Result<String, Vec<Diagnostic>> {
    let expr = parse_expression(text)?;
    // A method-only value is not syntax-checked when routing (stargate looks
    // it up), but fmt must not print text that is no expression at all.
    if expr.args.is_empty() {
        header::check_method_token(text, &expr.method.node, expr.method.span.start)
            .map_err(|d| vec![d])?;
    }
    if header {
        print::header(&expr).map_err(|d| vec![d])
    } else {
        Ok(print::call(&expr))
    }
}

/// `routex fmt` of a route file: canonical layout, comments kept.
pub fn format_route_file(text: &str) -> Result<String, Vec<Diagnostic>> {
    let (file, diags) = parse_route_file(text);
    if diags.iter().any(Diagnostic::is_error) {
        return Err(diags);
    }
    Ok(print::route_file(text, &file))
}

/// The canonical call form of a parsed expression.
pub fn print_call(expr: &Expr) -> String {
    print::call(expr)
}

/// The header form of a parsed expression, or `not_representable_in_header`.
pub fn print_header(expr: &Expr) -> Result<String, Diagnostic> {
    print::header(expr)
}
