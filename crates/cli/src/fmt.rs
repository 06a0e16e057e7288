//! `routex fmt`: canonical call form (or header form) of expressions, and
//! canonical layout of route files.
//!
//! An argument naming an existing path is a file (only `*.routes` can be
//! formatted); anything else is an expression. Formatted text goes to stdout;
//! with `--check` nothing is printed but the inputs that are not formatted,
//! one `NAME: not formatted` line each, and the exit status is 1 if any.
//! Diagnostics go to stderr.

use super::input::read_text;
use super::output::{self, emit, status, usage_error, Stream};
use super::Format;
use clap::Args;
use routex::diag::{Diagnostic, Report};
use std::path::Path;

#[derive(Debug, Args)]
pub struct FmtArgs {
    /// Exit 1 if an input is not already in canonical form: one
    /// `NAME: not formatted` line each on stdout, a unified diff on stderr.
    #[arg(long, conflicts_with = "write")]
    pub check: bool,
    /// Rewrite route files in place (only those that change).
    #[arg(long)]
    pub write: bool,
    /// Print expressions in header form (`x-routing-method` value).
    #[arg(long)]
    pub header: bool,
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
    /// Expressions or `*.routes` files.
    #[arg(required = true, value_name = "EXPR|FILE")]
    pub inputs: Vec<String>,
}

/// One input, read and named.
struct Source {
    name: String,
    text: String,
    is_file: bool,
    /// The path as given, for `--write`.
    path: std::path::PathBuf,
}

pub fn run(args: &FmtArgs) -> i32 {
    let mut sources = Vec::new();
    for (i, input) in args.inputs.iter().enumerate() {
        match classify(i, input, args.header) {
            Ok(source) => sources.push(source),
            Err(code) => return code,
        }
    }
    if args.write {
        if let Some(expr) = sources.iter().find(|s| !s.is_file) {
            return usage_error(format!(
                "{}: --write rewrites route files; an expression has no file to write",
                expr.name
            ));
        }
    }
    let mut diffs = String::new();
    let mut reports = Vec::new();
    let mut out = String::new();
    let mut unformatted = false;
    for source in &sources {
        let formatted = if source.is_file {
            routex::syntax::format_route_file(&source.text)
        } else {
            routex::syntax::format_expression(&source.text, args.header)
        };
        match formatted {
            Ok(formatted) if args.check => {
                if formatted != source.text {
                    unformatted = true;
                    out.push_str(&format!("{}: not formatted\n", source.name));
                    diffs.push_str(&unified_diff(&source.name, &source.text, &formatted));
                }
            }
            Ok(formatted) if args.write => {
                if formatted != source.text {
                    if let Err(e) = std::fs::write(&source.path, &formatted) {
                        return usage_error(format!("{}: cannot write: {e}", source.name));
                    }
                }
            }
            Ok(formatted) => {
                out.push_str(&formatted);
                // An empty route file is canonical as it is (`--check`
                // agrees): nothing, not a blank line.
                if !formatted.is_empty() && !formatted.ends_with('\n') {
                    out.push('\n');
                }
            }
            Err(diagnostics) => reports.push(report(source, diagnostics)),
        }
    }
    output::stdout(&out);
    output::stderr(&diffs);
    if !reports.is_empty() {
        emit(&reports, args.format, Stream::Stderr, "input", true);
    }
    match status(&reports, false) {
        output::OK if unformatted => output::FAILED,
        code => code,
    }
}

fn classify(index: usize, input: &str, header: bool) -> Result<Source, i32> {
    let path = Path::new(input);
    let looks_like_file = input.ends_with(".routes") && !input.contains(['(', ';']);
    if !path.exists() && !looks_like_file {
        return Ok(Source {
            name: format!("arg:{}", index + 1),
            text: input.to_string(),
            is_file: false,
            path: path.to_path_buf(),
        });
    }
    if !input.ends_with(".routes") {
        return Err(usage_error(format!(
            "{input}: fmt formats *.routes files and expressions"
        )));
    }
    if header {
        return Err(usage_error(format!(
            "{input}: --header applies to expressions, not route files"
        )));
    }
    let text = read_text(path).map_err(usage_error)?;
    Ok(Source {
        name: super::input::source_name(path),
        text,
        is_file: true,
        path: path.to_path_buf(),
    })
}

fn report(source: &Source, diagnostics: Vec<Diagnostic>) -> Report {
    let mut report = Report::new(&source.name, &source.text);
    report.diagnostics = diagnostics;
    report
}

/// `--- NAME` / `+++ NAME (formatted)` and the hunks with 3 lines of
/// context. The diff gives up refining after a second (a 4 MiB file with
/// every line changed), which only makes the hunks coarser.
fn unified_diff(name: &str, old: &str, new: &str) -> String {
    let diff = similar::TextDiff::configure()
        .timeout(std::time::Duration::from_secs(1))
        .diff_lines(old, new);
    let mut text = diff
        .unified_diff()
        .context_radius(3)
        .header(name, &format!("{name} (formatted)"))
        .to_string();
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text
}
