//! `routex check` and `routex explain`: expressions against the permissive
//! default or a configuration (`--config`, route file or lb-config.json).

use super::input::read_text;
use super::output::{self, emit, emit_counting, status, usage_error, Stream};
use super::Format;
use clap::{Args, ValueEnum};
use routex::config::load_table_for;
use routex::diag::Report;
use routex::ir::RouteTable;
use routex::render::explain;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Route file (`*.routes`) or lb-config.json the expressions override.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Model the expressions are sent for: one `--config` lists (an
    /// unlisted model when absent).
    #[arg(long, value_name = "ID")]
    pub model: Option<String>,
    /// The output format (default: the project configuration's `format`,
    /// else human).
    #[arg(long, value_enum)]
    pub format: Option<Format>,
    /// Exit 1 on warnings too.
    #[arg(long)]
    pub deny_warnings: bool,
    #[command(flatten)]
    pub project: super::project::ProjectArgs,
    /// Expressions in call form or header form.
    #[arg(required = true, value_name = "EXPR")]
    pub exprs: Vec<String>,
}

#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// Route file (`*.routes`) or lb-config.json the expression overrides.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Model the expression is sent for: one `--config` lists (an unlisted
    /// model when absent).
    #[arg(long, value_name = "ID")]
    pub model: Option<String>,
    /// The explanation's format; diagnostics go to stderr in the same one.
    #[arg(long, value_enum, default_value_t)]
    pub format: ExplainFormat,
    #[command(flatten)]
    pub project: super::project::ProjectArgs,
    /// One expression in call form or header form.
    #[arg(value_name = "EXPR")]
    pub expr: String,
}

/// What `explain` prints: an explanation is not a list of findings, so
/// github and sarif are not offered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum ExplainFormat {
    /// The field table.
    #[default]
    Human,
    /// The version-1 explanation document.
    Json,
}

impl From<ExplainFormat> for Format {
    fn from(format: ExplainFormat) -> Format {
        match format {
            ExplainFormat::Human => Format::Human,
            ExplainFormat::Json => Format::Json,
        }
    }
}

pub fn run_check(args: &CheckArgs) -> i32 {
    let mut projects = match super::project::Projects::new(&args.project) {
        Ok(projects) => projects,
        Err(error) => return usage_error(error),
    };
    let format = match projects.format(args.format, None) {
        Ok(format) => format,
        Err(error) => return usage_error(error),
    };
    let target = match projects.target_for(None) {
        Ok(target) => target,
        Err(error) => return usage_error(error),
    };
    let table = match load_config(args.config.as_ref(), format, Stream::Stdout, target) {
        Ok(table) => table,
        Err(code) => return code,
    };
    if let Err(error) = check_model(table.as_ref(), args.model.as_deref(), args.config.as_ref()) {
        return usage_error(error);
    }
    let mut reports: Vec<Report> = Vec::with_capacity(args.exprs.len());
    for (i, expr) in args.exprs.iter().enumerate() {
        let name = format!("arg:{}", i + 1);
        let mut report = routex::check::check_expression_for(
            &name,
            expr,
            table.as_ref(),
            args.model.as_deref(),
            target,
        )
        .1;
        if let Err(error) = projects.finish(None, &mut report) {
            return usage_error(error);
        }
        reports.push(report);
    }
    // The project file's report is shown, but the summary counts only the
    // expressions given.
    reports.extend(projects.reports());
    let given = args.exprs.len();
    emit_counting(&reports, given, format, Stream::Stdout, "expression", false);
    status(&reports, args.deny_warnings)
}

pub fn run_explain(args: &ExplainArgs) -> i32 {
    let format = Format::from(args.format);
    let mut projects = match super::project::Projects::new(&args.project) {
        Ok(projects) => projects,
        Err(error) => return usage_error(error),
    };
    let target = match projects.target_for(None) {
        Ok(target) => target,
        Err(error) => return usage_error(error),
    };
    let table = match load_config(args.config.as_ref(), format, Stream::Stderr, target) {
        Ok(table) => table,
        Err(code) => return code,
    };
    if let Err(error) = check_model(table.as_ref(), args.model.as_deref(), args.config.as_ref()) {
        return usage_error(error);
    }
    let (explanation, mut report) = routex::check::explain_expression_for(
        "arg:1",
        &args.expr,
        table.as_ref(),
        args.model.as_deref(),
        target,
    );
    if let Err(error) = projects.finish(None, &mut report) {
        return usage_error(error);
    }
    let mut reports = vec![report];
    reports.extend(projects.config_reports());
    if reports.iter().any(|r| !r.diagnostics.is_empty()) {
        emit_counting(&reports, 1, format, Stream::Stderr, "expression", true);
    }
    match explanation {
        Some(explanation) if !reports.iter().any(Report::has_errors) => {
            let text = match args.format {
                ExplainFormat::Json => explain::render_json(&explanation),
                ExplainFormat::Human => {
                    explain::render_human(&reports[0].source_name, &explanation)
                }
            };
            output::stdout(&text);
            output::OK
        }
        _ => output::FAILED,
    }
}

/// `--model` must name a model the configuration lists: an unlisted model
/// is what no `--model` means already, so an unlisted name is a typo (with
/// a did-you-mean when one listed name is close), and without `--config`
/// every model is alike.
fn check_model(
    table: Option<&RouteTable>,
    model: Option<&str>,
    config: Option<&PathBuf>,
) -> Result<(), String> {
    let Some(model) = model else {
        return Ok(());
    };
    let (Some(table), Some(config)) = (table, config) else {
        return Err(format!(
            "--model {model} needs --config: without a configuration every model gets the permissive default"
        ));
    };
    if table.models.contains_key(model) {
        return Ok(());
    }
    let config = super::input::source_name(config);
    let hint = unlisted_model_hint(table, model);
    Err(format!(
        "model '{model}' is not listed in {config}{hint} (omit --model for an unlisted model)"
    ))
}

/// The most models an "is not listed" message names.
const FEW_MODELS: usize = 8;

/// What follows "model 'X' is not listed in FILE": a did-you-mean when
/// one listed name is close, else the listed models when there are few.
pub(crate) fn unlisted_model_hint(table: &RouteTable, model: &str) -> String {
    // Bounded: the edit distance is quadratic in the name's length.
    let near = (model.len() <= 256)
        .then(|| routex::check::did_you_mean(model, table.models.keys().map(String::as_str)))
        .flatten();
    match near {
        Some(name) => format!("; did you mean '{name}'?"),
        None if table.models.len() <= FEW_MODELS => {
            let names: Vec<String> = table.models.keys().map(|m| format!("'{m}'")).collect();
            format!("; it lists {}", names.join(", "))
        }
        None => format!("; it lists {} models", table.models.len()),
    }
}

/// The `--config` table. A configuration with errors is reported (in
/// `format`, on the command's diagnostics stream) and fails the run:
/// overriding it means nothing.
fn load_config(
    path: Option<&PathBuf>,
    format: Format,
    stream: Stream,
    target: routex::ir::Target,
) -> Result<Option<RouteTable>, i32> {
    let Some(path) = path else {
        return Ok(None);
    };
    let text = read_text(path).map_err(usage_error)?;
    let name = super::input::source_name(path);
    let (table, report) = load_table_for(&name, &text, target);
    match table {
        Some(table) if !report.has_errors() => Ok(Some(table)),
        _ => {
            emit(&[report], format, stream, "file", false);
            Err(output::FAILED)
        }
    }
}
