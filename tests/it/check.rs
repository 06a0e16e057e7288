//! Tests for the check layer: one helper per phase, table-driven cases.

mod api;
mod diagnostics;
mod expressions;
mod lowering;
mod review;
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
    let expr = match routex::syntax::parse_expression(text) {
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
