//! `routex build` (route file -> lb-config.json) and `routex import`
//! (lb-config.json -> route file). The converted text goes to `-o OUT` or
//! stdout; diagnostics go to stderr so they never mix with it.

use super::input::{read_text, write_output, UsageError};
use super::output::{self, emit, status, usage_error, Stream};
use super::Format;
use clap::Args;
use routex::diag::Report;
use routex::ir::Target;
use std::path::{Path, PathBuf};

#[derive(Debug, Args)]
pub struct BuildArgs {
    /// The route file to convert.
    #[arg(value_name = "FILE.routes")]
    pub file: PathBuf,
    /// Where to write lb-config.json (stdout when absent).
    #[arg(short, long, value_name = "OUT")]
    pub output: Option<PathBuf>,
    /// The diagnostics' format (default: the project configuration's
    /// `format`, else human).
    #[arg(long, value_enum)]
    pub format: Option<Format>,
    #[command(flatten)]
    pub project: super::project::ProjectArgs,
}

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The lb-config.json to convert.
    #[arg(value_name = "FILE.json")]
    pub file: PathBuf,
    /// Where to write the route file (stdout when absent).
    #[arg(short, long, value_name = "OUT")]
    pub output: Option<PathBuf>,
    /// The diagnostics' format (default: the project configuration's
    /// `format`, else human).
    #[arg(long, value_enum)]
    pub format: Option<Format>,
    #[command(flatten)]
    pub project: super::project::ProjectArgs,
}

pub fn run_build(args: &BuildArgs) -> i32 {
    let name = super::input::source_name(&args.file);
    if name.ends_with(".json") {
        return usage_error(format!(
            "{name}: build reads a route file (*.routes) and this is an lb-config.json: run `routex import {name}` for its route file"
        ));
    }
    convert(
        &args.file,
        args.output.as_deref(),
        args.format,
        &args.project,
        routex::config::build_for,
    )
}

pub fn run_import(args: &ImportArgs) -> i32 {
    let name = super::input::source_name(&args.file);
    if name.ends_with(".routes") {
        return usage_error(format!(
            "{name}: import reads an lb-config.json and this is a route file: run `routex build {name}` for its lb-config.json"
        ));
    }
    convert(
        &args.file,
        args.output.as_deref(),
        args.format,
        &args.project,
        routex::config::import_for,
    )
}

fn convert(
    file: &Path,
    out: Option<&Path>,
    format: Option<Format>,
    project: &super::project::ProjectArgs,
    converter: fn(&str, &str, Target) -> (Option<String>, Report),
) -> i32 {
    match converted(file, out, format, project, converter) {
        Ok(code) => code,
        Err(error) => usage_error(error),
    }
}

/// The conversion under the file's project configuration: its target, its
/// levels and suppressions on the diagnostics, its format.
fn converted(
    file: &Path,
    out: Option<&Path>,
    format: Option<Format>,
    project: &super::project::ProjectArgs,
    converter: fn(&str, &str, Target) -> (Option<String>, Report),
) -> Result<i32, UsageError> {
    let mut projects = super::project::Projects::new(project)?;
    let text = read_text(file)?;
    let path = (!super::input::is_stdin(file)).then_some(file);
    let target = projects.target_for(path)?;
    let format = projects.format(format, path)?;
    let (converted, mut report) = converter(&super::input::source_name(file), &text, target);
    projects.finish(path, &mut report)?;
    let mut reports = vec![report];
    reports.extend(projects.config_reports());
    if reports.iter().any(|r| !r.diagnostics.is_empty()) {
        emit(&reports, format, Stream::Stderr, "file", true);
    }
    Ok(match converted {
        Some(converted) if !reports.iter().any(Report::has_errors) => {
            write_output(out, &converted)?;
            status(&reports, false)
        }
        _ => output::FAILED,
    })
}
