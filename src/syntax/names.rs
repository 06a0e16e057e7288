//! Parameter-name rules shared by both forms: `[a-z][a-z0-9_]*`, each name
//! at most once. The header form checks them in stargate's order (header.rs);
//! the call form checks them here, after parsing, so one pass reports every
//! bad name.

use super::ast::Expr;
use super::header::is_param_name;
use crate::diag::{Code, Diagnostic};

pub(crate) fn check(expr: &Expr) -> Vec<Diagnostic> {
    let mut diags = Vec::new();
    for (i, arg) in expr.args.iter().enumerate() {
        let name = &arg.name.node;
        if !is_param_name(name) {
            let d = Diagnostic::new(
                Code::MalformedExpression,
                arg.name.span,
                format!("invalid parameter name '{name}'"),
            )
            .with_help(format!(
                "parameter names are lower-case letters, digits and `_`, starting with a letter{}",
                suggestion(name)
            ));
            diags.push(d);
        } else if expr.args[..i].iter().any(|a| a.name.node == *name) {
            let d = Diagnostic::new(
                Code::MalformedExpression,
                arg.name.span,
                format!("repeated parameter '{name}'"),
            )
            .with_help("give each parameter once");
            diags.push(d);
        }
    }
    diags
}

/// ": did you mean `x`?" when lower-casing and `-` -> `_` gives a valid name.
fn suggestion(name: &str) -> String {
    let fixed: String = name
        .chars()
        .map(|c| {
            if c == '-' {
                '_'
            } else {
                c.to_ascii_lowercase()
            }
        })
        .collect();
    if is_param_name(&fixed) {
        format!(" (did you mean `{fixed}`?)")
    } else {
        String::new()
    }
}
