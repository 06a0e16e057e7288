//! `routex lint`: route files and lb-config.json files, named or found by
//! searching directories.
//!
//! A directory search takes `*.routes` and `*.json`, sorted, skipping hidden
//! directories and `target/`. A `*.json` found by search that is a non-empty
//! object with none of lb-config.json's keys (`default`, `request_algorithms`,
//! `models`) is some other JSON file (a simulator scenario, a decide input)
//! and is skipped; a file named explicitly is always linted.

use super::input::{read_text, source_name, UsageError};
use super::output::{emit, status, usage_error, Stream};
use super::Format;
use clap::Args;
use routex::diag::Report;
use std::path::{Path, PathBuf};

#[derive(Debug, Args)]
pub struct LintArgs {
    /// Exit 1 on warnings too.
    #[arg(long)]
    pub deny_warnings: bool,
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
    /// The name standard input (`-`) goes by in diagnostics; a name ending
    /// in `.routes` reads it as a route file, any other as lb-config.json.
    #[arg(long, value_name = "NAME")]
    pub stdin_name: Option<String>,
    /// Files or directories; `-` is standard input.
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
}

/// A file to lint, read before any linting so I/O errors come first.
struct Input {
    name: String,
    text: String,
}

pub fn run(args: &LintArgs) -> i32 {
    let inputs = match collect(&args.paths, args.stdin_name.clone()) {
        Ok(inputs) => inputs,
        Err(error) => return usage_error(error),
    };
    let reports: Vec<Report> = inputs
        .iter()
        .map(|input| routex::config::load_table(&input.name, &input.text).1)
        .collect();
    emit(&reports, args.format, Stream::Stdout, "file", false);
    status(&reports, args.deny_warnings)
}

fn collect(paths: &[PathBuf], stdin_name: Option<String>) -> Result<Vec<Input>, UsageError> {
    let mut inputs = Vec::new();
    for path in paths {
        if path.is_dir() {
            let found = search(path)?;
            let before = inputs.len();
            for file in found {
                let text = read_text(&file)?;
                if is_lintable_json_or_routes(&file, &text) {
                    inputs.push(Input {
                        name: source_name(&file),
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
            let text = read_text(path)?;
            if !name.ends_with(".routes") && is_scenario(&text) {
                return Err(UsageError::new(format!(
                    "{name} is a simulator scenario, not an lb-config.json: run `routex sim run {name}`"
                )));
            }
            inputs.push(Input { name, text });
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
