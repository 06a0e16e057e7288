//! `routex build` (route file -> lb-config.json) and `routex import`
//! (lb-config.json -> route file). The converted text goes to `-o OUT` or
//! stdout; diagnostics go to stderr so they never mix with it.

use super::input::{read_text, write_output};
use super::output::{self, emit, status, usage_error, Stream};
use super::Format;
use clap::Args;
use routex::diag::Report;
use std::path::{Path, PathBuf};

#[derive(Debug, Args)]
pub struct BuildArgs {
    /// The route file to convert.
    #[arg(value_name = "FILE.routes")]
    pub file: PathBuf,
    /// Where to write lb-config.json (stdout when absent).
    #[arg(short, long, value_name = "OUT")]
    pub output: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
}

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The lb-config.json to convert.
    #[arg(value_name = "FILE.json")]
    pub file: PathBuf,
    /// Where to write the route file (stdout when absent).
    #[arg(short, long, value_name = "OUT")]
    pub output: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
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
        |name, text| routex::config::build_for(name, text, super::target::get()),
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
        |name, text| routex::config::import_for(name, text, super::target::get()),
    )
}

fn convert(
    file: &Path,
    out: Option<&Path>,
    format: Format,
    converter: fn(&str, &str) -> (Option<String>, Report),
) -> i32 {
    let text = match read_text(file) {
        Ok(text) => text,
        Err(error) => return usage_error(error),
    };
    let (converted, report) = converter(&super::input::source_name(file), &text);
    let reports = [report];
    if !reports[0].diagnostics.is_empty() {
        emit(&reports, format, Stream::Stderr, "file", true);
    }
    match converted {
        Some(converted) if !reports[0].has_errors() => match write_output(out, &converted) {
            Ok(()) => status(&reports, false),
            Err(error) => usage_error(error),
        },
        _ => output::FAILED,
    }
}
