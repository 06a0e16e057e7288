//! Tests for the check layer: one helper per phase, table-driven cases.

mod expressions;
mod lowering;
mod routes;

use routex::check::expr::{check_expr, Checked, Context};
use routex::check::{permissive_table, resolve_base};
use routex::diag::{Code, Diagnostic};
use routex::ir::{Algorithm, RouteTable};

/// Compiles one expression (either form) for `model` against `table`
/// (permissive when `None`), returning what the checker produced and every
/// diagnostic.
pub fn compile(
    table: Option<&RouteTable>,
    model: Option<&str>,
    text: &str,
) -> (Option<Checked>, Vec<Diagnostic>) {
    let permissive = permissive_table();
    let table = table.unwrap_or(&permissive);
    let mut diags = Vec::new();
    let expr = match parse(text) {
        Ok(expr) => expr,
        Err(errors) => return (None, errors),
    };
    let base_of = |a: Algorithm| resolve_base(table, model, a).map(|d| d.config.clone());
    let checked = check_expr(&expr, Context::Request, &base_of, &mut diags);
    (checked, diags)
}

/// The codes of the error diagnostics, in order.
pub fn error_codes(diags: &[Diagnostic]) -> Vec<Code> {
    diags
        .iter()
        .filter(|d| d.is_error())
        .map(|d| d.code)
        .collect()
}

/// A route table from lb-config.json text that must load.
pub fn table(json: &str) -> RouteTable {
    let (table, report) = routex::config::check_lb_config("test.json", json);
    match table {
        Some(t) => t,
        None => panic!("config must load: {:?}", report.diagnostics),
    }
}

/// Temporary stand-in for `syntax::parse_expression` (header form only,
/// no validation) until the syntax layer lands.
fn parse(text: &str) -> Result<routex::syntax::ast::Expr, Vec<Diagnostic>> {
    use routex::diag::Span;
    use routex::syntax::ast::{Arg, Expr, Form, Spanned, Value};
    let mut segments = Vec::new();
    let mut start = 0;
    let mut quoted = false;
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if quoted => i += 1,
            b'"' => quoted = !quoted,
            b';' if !quoted => {
                segments.push((start, i));
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    segments.push((start, text.len()));
    let (ms, me) = segments[0];
    let method = &text[ms..me];
    let lead = method.len() - method.trim_start().len();
    let method = Spanned::new(
        method.trim().to_string(),
        Span::new(ms + lead, ms + lead + method.trim().len()),
    );
    let mut args = Vec::new();
    for &(s, e) in &segments[1..] {
        let seg = &text[s..e];
        let lead = seg.len() - seg.trim_start().len();
        let s = s + lead;
        let seg = seg.trim();
        let Some(eq) = seg.find('=') else {
            return Err(vec![Diagnostic::new(
                Code::MalformedExpression,
                Span::new(s, e),
                "P4",
            )]);
        };
        let raw = &seg[eq + 1..];
        let value = if let Some(inner) = raw.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
            Value::String(inner.replace("\\\"", "\"").replace("\\\\", "\\"))
        } else if raw.starts_with(['-', '+', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9']) {
            if raw.contains('.') {
                Value::Decimal(raw.to_string())
            } else {
                Value::Integer(raw.to_string())
            }
        } else {
            Value::Token(raw.to_string())
        };
        args.push(Arg {
            name: Spanned::new(seg[..eq].to_string(), Span::new(s, s + eq)),
            value: Spanned::new(value, Span::new(s + eq + 1, s + seg.len())),
            span: Span::new(s, s + seg.len()),
        });
    }
    Ok(Expr {
        form: Form::Header,
        method,
        args,
        span: Span::new(0, text.len()),
    })
}
