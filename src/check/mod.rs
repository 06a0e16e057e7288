//! Typed checking of expressions and route tables against the field schema;
//! lowering to the policy IR. Reports every problem; the first error of an
//! expression is the one stargate would return.

use crate::diag::{Diagnostic, Report};
use crate::ir::{AlgorithmConfig, Definition, Policy, RouteTable};

/// The start-up builder: resolves defaults and normalisations of a
/// configured algorithm (reference-behaviour.md 4.3). The error message
/// names the offending field.
pub fn build_policy(config: &AlgorithmConfig) -> Result<Policy, String> {
    let _ = config;
    todo!("check: builder")
}

/// The permissive default route table (no configuration file).
pub fn permissive_table() -> RouteTable {
    RouteTable::permissive(|c| build_policy(c).expect("default settings always build"))
}

/// Compiles an `x-routing-method` value (method name or expression, either
/// form) for `model` against `table`, as a stargate router does per request.
/// Err carries the first error: stargate's code and message.
pub fn compile_request_expression(
    table: &RouteTable,
    model: &str,
    value: &str,
) -> Result<Definition, Box<Diagnostic>> {
    let _ = (table, model, value);
    todo!("check: request expression")
}

/// Compiles an expression (either form) with every diagnostic, against
/// `table` and `model` when given, else the permissive default.
pub fn check_expression(
    source_name: &str,
    text: &str,
    table: Option<&RouteTable>,
    model: Option<&str>,
) -> (Option<Definition>, Report) {
    let _ = (source_name, text, table, model);
    todo!("check: expression")
}

/// Where a resolved field's value came from (`routex explain`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Provenance {
    Default,
    Config,
    Expression,
}

/// A resolved policy with the provenance of each field (by IR field name).
#[derive(Clone, Debug)]
pub struct Explanation {
    pub definition: Definition,
    pub provenance: indexmap::IndexMap<String, Provenance>,
}

/// Like [`check_expression`], with provenance for `routex explain`.
pub fn explain_expression(
    source_name: &str,
    text: &str,
    table: Option<&RouteTable>,
    model: Option<&str>,
) -> (Option<Explanation>, Report) {
    let _ = (source_name, text, table, model);
    todo!("check: explain")
}

/// Checks and lowers a route file (`*.routes`).
pub fn check_route_file(source_name: &str, text: &str) -> (Option<RouteTable>, Report) {
    let _ = (source_name, text);
    todo!("check: route file")
}
