//! `routex check` and `routex explain`: expressions against the permissive
//! default or a configuration (`--config`, route file or lb-config.json).

use super::input::read_text;
use super::output::{self, emit, status, usage_error, Stream};
use super::Format;
use crate::config::load_table;
use crate::diag::Report;
use crate::ir::RouteTable;
use crate::render::explain;
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Route file (`*.routes`) or lb-config.json the expressions override.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Model the expressions are sent for (an unlisted model when absent).
    #[arg(long, value_name = "ID")]
    pub model: Option<String>,
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
    /// Exit 1 on warnings too.
    #[arg(long)]
    pub deny_warnings: bool,
    /// Expressions in call form or header form.
    #[arg(required = true, value_name = "EXPR")]
    pub exprs: Vec<String>,
}

#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// Route file (`*.routes`) or lb-config.json the expression overrides.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Model the expression is sent for (an unlisted model when absent).
    #[arg(long, value_name = "ID")]
    pub model: Option<String>,
    /// `human` or `json` (the explanation; diagnostics go to stderr).
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
    /// One expression in call form or header form.
    #[arg(value_name = "EXPR")]
    pub expr: String,
}

pub fn run_check(args: &CheckArgs) -> i32 {
    let table = match load_config(args.config.as_ref(), args.format, Stream::Stdout) {
        Ok(table) => table,
        Err(code) => return code,
    };
    let reports: Vec<Report> = args
        .exprs
        .iter()
        .enumerate()
        .map(|(i, expr)| {
            let name = format!("arg:{}", i + 1);
            crate::check::check_expression(&name, expr, table.as_ref(), args.model.as_deref()).1
        })
        .collect();
    emit(&reports, args.format, Stream::Stdout, "expression", false);
    status(&reports, args.deny_warnings)
}

pub fn run_explain(args: &ExplainArgs) -> i32 {
    if !matches!(args.format, Format::Human | Format::Json) {
        return usage_error("explain prints --format human or json");
    }
    let table = match load_config(args.config.as_ref(), args.format, Stream::Stderr) {
        Ok(table) => table,
        Err(code) => return code,
    };
    let (explanation, report) = crate::check::explain_expression(
        "arg:1",
        &args.expr,
        table.as_ref(),
        args.model.as_deref(),
    );
    let reports = [report];
    if !reports[0].diagnostics.is_empty() {
        emit(&reports, args.format, Stream::Stderr, "expression", true);
    }
    match explanation {
        Some(explanation) if !reports[0].has_errors() => {
            let text = match args.format {
                Format::Json => explain::render_json(&explanation),
                _ => explain::render_human(&reports[0].source_name, &explanation),
            };
            output::stdout(&text);
            output::OK
        }
        _ => output::FAILED,
    }
}

/// The `--config` table. A configuration with errors is reported (in
/// `format`, on the command's diagnostics stream) and fails the run:
/// overriding it means nothing.
fn load_config(
    path: Option<&PathBuf>,
    format: Format,
    stream: Stream,
) -> Result<Option<RouteTable>, i32> {
    let Some(path) = path else {
        return Ok(None);
    };
    let text = read_text(path).map_err(usage_error)?;
    let name = super::input::source_name(path);
    let (table, report) = load_table(&name, &text);
    match table {
        Some(table) if !report.has_errors() => Ok(Some(table)),
        _ => {
            emit(&[report], format, stream, "file", false);
            Err(output::FAILED)
        }
    }
}
