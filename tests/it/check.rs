//! Tests for the check layer: one helper per phase, table-driven cases.

mod api;
mod both_forms;
mod diagnostics;
mod expressions;
mod lowering;
mod review;
mod routes;

use routex::check::permissive_table;
use routex::check::{check_request_ast, Checked};
use routex::diag::{Code, Diagnostic};
use routex::ir::RouteTable;

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
    match routex::syntax::parse_expression(text) {
        Ok(expr) => check_request_ast(table, model, &expr),
        Err(errors) => (None, errors),
    }
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
