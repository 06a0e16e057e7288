//! `routex lint`: route files and lb-config.json files, named or found by
//! searching directories.
//!
//! A directory search takes `*.routes` and `*.json`, sorted, skipping hidden
//! directories and `target/`. A `*.json` found by search that is a non-empty
//! object with none of lb-config.json's keys (`default`, `request_algorithms`,
//! `models`) is some other JSON file (a simulator scenario, a decide input)
//! and is skipped; a file named explicitly is always linted. A file that
//! cannot be read (too large, not UTF-8, refused by the system) is an
//! `unreadable_file` finding for that file, and the others are linted.
//!
//! Each report is finished with the project configuration of its file
//! (`routex.toml`, [`super::project`]); the configuration files' own
//! findings come after the files' reports.

use super::input::{read_text, source_name, UsageError};
use super::output::{emit, status, usage_error, Stream};
use super::project::{ProjectArgs, Projects};
use super::Format;
use clap::Args;
use routex::config::LoadError;
use routex::diag::{Code, Diagnostic, Report, Span};
use std::path::{Path, PathBuf};

#[derive(Debug, Args)]
pub struct LintArgs {
    /// Exit 1 on warnings too.
    #[arg(long)]
    pub deny_warnings: bool,
    /// The output format (default: the project configuration's `format`,
    /// else human).
    #[arg(long, value_enum)]
    pub format: Option<Format>,
    #[command(flatten)]
    pub project: ProjectArgs,
    /// The name standard input (`-`) goes by in diagnostics; a name ending
    /// in `.routes` reads it as a route file, any other as lb-config.json.
    #[arg(long, value_name = "NAME")]
    pub stdin_name: Option<String>,
    /// Files or directories; `-` is standard input.
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
}

/// A file to lint, read before any linting so usage errors come first.
struct Input {
    name: String,
    /// The file, for the project configuration (`None` for stdin).
    path: Option<PathBuf>,
    /// The text, or why it could not be read.
    text: Result<String, String>,
}

pub fn run(args: &LintArgs) -> i32 {
    match lint(args) {
        Ok(code) => code,
        Err(error) => usage_error(error),
    }
}

fn lint(args: &LintArgs) -> Result<i32, UsageError> {
    let mut projects = Projects::new(&args.project)?;
    let inputs = collect(&args.paths, args.stdin_name.clone(), &mut projects)?;
    let mut reports = Vec::with_capacity(inputs.len());
    for input in &inputs {
        let mut report = match &input.text {
            Ok(text) => {
                let target = projects.target_for(input.path.as_deref())?;
                routex::config::load_table_for(&input.name, text, target).1
            }
            Err(why) => unreadable(&input.name, why),
        };
        projects.finish(input.path.as_deref(), &mut report)?;
        reports.push(report);
    }
    reports.extend(projects.reports());
    let first = inputs.first().and_then(|i| i.path.clone());
    let format = projects.format(args.format, first.as_deref())?;
    emit(&reports, format, Stream::Stdout, "file", false);
    Ok(status(&reports, args.deny_warnings))
}

/// The report of a file that could not be read (`why` without the path:
/// the report names the file).
pub fn unreadable(name: &str, why: &str) -> Report {
    let mut report = Report::new(name, "");
    report.diagnostics.push(
        Diagnostic::new(
            Code::UnreadableFile,
            Span::new(0, 0),
            format!("{why}; the file was not linted"),
        )
        .with_help(
            "exclude it in routex.toml (`exclude = [\"GLOB\"]`), or name only the files to lint",
        ),
    );
    report
}

/// A file's text, or why it cannot be read (its path left out: the
/// report names the file). A file that does not exist is a usage error.
pub fn read_file(path: &Path) -> Result<Result<String, String>, UsageError> {
    match routex::config::read_source(path) {
        Ok(text) => Ok(Ok(text)),
        Err(LoadError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            Err(UsageError::new(format!(
                "{}: {}",
                path.display(),
                routex::config::file_io_reason(&source)
            )))
        }
        Err(LoadError::Io { source, .. }) => Ok(Err(format!(
            "cannot be read: {}",
            routex::config::file_io_reason(&source)
        ))),
        Err(LoadError::TooLarge { .. }) => Ok(Err(format!(
            "the file is larger than the {} MiB input limit",
            super::input::MAX_INPUT_BYTES / (1024 * 1024)
        ))),
        Err(LoadError::NotUtf8 { byte, .. }) => Ok(Err(format!("not valid UTF-8 (byte {byte})"))),
        Err(other) => Ok(Err(other.to_string())),
    }
}

fn collect(
    paths: &[PathBuf],
    stdin_name: Option<String>,
    projects: &mut Projects,
) -> Result<Vec<Input>, UsageError> {
    let mut inputs = Vec::new();
    for path in paths {
        if path.is_dir() {
            let found = search(path)?;
            let before = inputs.len();
            for file in found {
                if projects.is_excluded(&file)? {
                    continue;
                }
                let text = read_file(&file)?;
                let lintable = match &text {
                    Ok(text) => is_lintable_json_or_routes(&file, text),
                    Err(_) => true,
                };
                if lintable {
                    inputs.push(Input {
                        name: source_name(&file),
                        path: Some(file),
                        text,
                    });
                }
            }
            if inputs.len() == before {
                return Err(UsageError::new(format!(
                    "{}: no *.routes or lb-config *.json files found",
                    path.display()
                )));
            }
        } else {
            let name = match (&stdin_name, super::input::is_stdin(path)) {
                (Some(given), true) => given.clone(),
                _ => source_name(path),
            };
            let stdin = super::input::is_stdin(path);
            let text = if stdin {
                Ok(read_text(path)?)
            } else {
                read_file(path)?
            };
            if let Ok(text) = &text {
                if !name.ends_with(".routes") && is_scenario(text) {
                    return Err(UsageError::new(format!(
                        "{name} is a simulator scenario, not an lb-config.json: `routex sim check {name}` checks it and `routex sim run {name}` runs it"
                    )));
                }
            }
            inputs.push(Input {
                name,
                path: (!stdin).then(|| path.clone()),
                text,
            });
        }
    }
    Ok(inputs)
}

/// Every `*.routes` and `*.json` under `dir`, sorted.
fn search(dir: &Path) -> Result<Vec<PathBuf>, UsageError> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let entries = std::fs::read_dir(&dir)
            .map_err(|e| UsageError::new(format!("{}: {e}", dir.display())))?;
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name();
            let name = name.to_string_lossy();
            // `is_dir` follows symlinks; a symlink loop would recurse forever.
            let is_link = entry.file_type().map(|t| t.is_symlink()).unwrap_or(true);
            if path.is_dir() {
                if !is_link && !name.starts_with('.') && name != "target" {
                    pending.push(path);
                }
            } else if name.ends_with(".routes") || name.ends_with(".json") {
                found.push(path);
            }
        }
    }
    found.sort();
    Ok(found)
}

/// Whether a JSON text is a simulator scenario (docs/simulator.md): an
/// object with a scenario's sections and none of lb-config.json's keys. The
/// substring test keeps a second parse off every ordinary lb-config.json.
fn is_scenario(text: &str) -> bool {
    if !(text.contains("\"policies\"") || text.contains("\"topology\"")) {
        return false;
    }
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(serde_json::Value::Object(map)) => {
            !LB_CONFIG_KEYS.iter().any(|key| map.contains_key(*key))
                && ["policies", "topology"]
                    .iter()
                    .any(|key| map.contains_key(*key))
        }
        _ => false,
    }
}

/// The top-level keys of lb-config.json.
const LB_CONFIG_KEYS: [&str; 3] = ["default", "request_algorithms", "models"];

/// Whether a file found by search is a route file or an lb-config.json.
fn is_lintable_json_or_routes(path: &Path, text: &str) -> bool {
    if path.extension().is_some_and(|e| e == "routes") {
        return true;
    }
    routex::config::looks_like_lb_config(text)
}
