//! Source text -> AST with spans. Never panics; errors are diagnostics that
//! speak the user's words and point at the byte where things went wrong.

pub mod ast;

use crate::diag::Diagnostic;
use ast::{Expr, RouteFile};

/// Parses an expression in call form: `method(name=value, ...)`.
pub fn parse_call(text: &str) -> Result<Expr, Vec<Diagnostic>> {
    let _ = text;
    todo!("syntax: call form")
}

/// Parses an `x-routing-method` value in header form with stargate's ordered
/// rules (reference-behaviour.md 5.1); the error is the one stargate returns.
pub fn parse_header(text: &str) -> Result<Expr, Diagnostic> {
    let _ = text;
    todo!("syntax: header form")
}

/// Parses an expression in either form (call form when it contains `(`).
pub fn parse_expression(text: &str) -> Result<Expr, Vec<Diagnostic>> {
    let _ = text;
    todo!("syntax: either form")
}

/// Parses a route file, reporting every syntax error it can.
pub fn parse_route_file(text: &str) -> (RouteFile, Vec<Diagnostic>) {
    let _ = text;
    todo!("syntax: route file")
}

/// `routex fmt` of one expression (either form in): the canonical call form,
/// or the header form when `header` is set (an error when the expression
/// cannot be written in header form).
pub fn format_expression(text: &str, header: bool) -> Result<String, Vec<Diagnostic>> {
    let _ = (text, header);
    todo!("syntax: fmt expression")
}

/// `routex fmt` of a route file: canonical layout, comments kept.
pub fn format_route_file(text: &str) -> Result<String, Vec<Diagnostic>> {
    let _ = text;
    todo!("syntax: fmt route file")
}
