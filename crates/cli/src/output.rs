//! Printing a run's reports in the chosen format, and the exit status.
//!
//! Writes ignore errors (a closed pipe such as `routex lint | head` must not
//! panic the way `print!` does).

use super::Format;
use crate::human;
use routex::diag::Report;
use routex::render::{github, json, sarif, totals};
use std::io::{IsTerminal, Write};

/// Exit status: no error (and no error-promoted warning).
pub const OK: i32 = 0;
/// Exit status: an error diagnostic, or a warning under `--deny-warnings`.
pub const FAILED: i32 = 1;
/// Exit status: usage or I/O error.
pub const USAGE: i32 = 2;

/// Which stream diagnostics go to: stdout when they are the command's
/// product (check, lint), stderr when stdout carries something else (fmt,
/// build, import, explain).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stream {
    Stdout,
    Stderr,
}

pub fn stdout(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

pub fn stderr(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(text.as_bytes());
    let _ = err.flush();
}

/// Prints a one-line usage or I/O error and returns [`USAGE`].
pub fn usage_error(message: impl std::fmt::Display) -> i32 {
    // File names are user input: keep control characters off the terminal.
    let line: String = format!("routex: {message}")
        .chars()
        .map(|c| if c.is_control() { '\u{fffd}' } else { c })
        .collect();
    stderr(&(line + "\n"));
    USAGE
}

/// Renders `reports` in `format` to `stream`. The human format ends with a
/// summary line counting `noun`s (e.g. "file", "expression"), one per
/// report, unless `quiet` is set and there is nothing to report.
pub fn emit(reports: &[Report], format: Format, stream: Stream, noun: &str, quiet: bool) {
    emit_counting(reports, reports.len(), format, stream, noun, quiet);
}

/// [`emit`] with the summary counting `inputs` `noun`s: the expressions
/// the user gave, when the project file's own report comes along but is
/// no expression.
pub fn emit_counting(
    reports: &[Report],
    inputs: usize,
    format: Format,
    stream: Stream,
    noun: &str,
    quiet: bool,
) {
    let text = match format {
        Format::Human => {
            let mut text = human::render(reports, human_style(stream));
            let (errors, warnings) = totals(reports);
            if !(quiet && errors + warnings == 0) {
                if !text.is_empty() {
                    text.push('\n');
                }
                text.push_str(&human::summary(errors, warnings, inputs, noun));
            }
            text
        }
        Format::Json => json::render(reports),
        Format::Github => github::render(reports),
        Format::Sarif => {
            // Streamed as it is serialised: a log of 40,000 results is
            // never held whole.
            let cwd = std::env::current_dir().ok();
            let cwd = cwd.as_deref().and_then(|d| d.to_str());
            let _ = match stream {
                Stream::Stdout => write_sarif(std::io::stdout().lock(), reports, cwd),
                Stream::Stderr => write_sarif(std::io::stderr().lock(), reports, cwd),
            };
            return;
        }
    };
    match stream {
        Stream::Stdout => stdout(&text),
        Stream::Stderr => stderr(&text),
    }
}

fn write_sarif(out: impl Write, reports: &[Report], cwd: Option<&str>) -> std::io::Result<()> {
    let mut out = std::io::BufWriter::with_capacity(64 * 1024, out);
    sarif::write_in(&mut out, reports, cwd)?;
    out.flush()
}

/// [`OK`] or [`FAILED`] for a run's reports.
pub fn status(reports: &[Report], deny_warnings: bool) -> i32 {
    let (errors, warnings) = totals(reports);
    if errors > 0 || (deny_warnings && warnings > 0) {
        FAILED
    } else {
        OK
    }
}

/// `--color`: when the human format uses colours.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    /// Colours on a terminal, unless `NO_COLOR` is set; also when piped if
    /// `CLICOLOR_FORCE` is set (and not `0`).
    #[default]
    Auto,
    /// Colours (and unicode) even when piped.
    Always,
    /// No colours, even on a terminal.
    Never,
}

static COLOR: std::sync::OnceLock<ColorChoice> = std::sync::OnceLock::new();

/// Sets the run's `--color` (once, before any output).
pub fn set_color(choice: ColorChoice) {
    let _ = COLOR.set(choice);
}

/// The human format's style on `stream`: unicode on a terminal (or when
/// colours are forced), plain ASCII otherwise; colours as `--color`,
/// `NO_COLOR` and `CLICOLOR_FORCE` decide (docs/cli.md "human").
pub fn human_style(stream: Stream) -> human::Style {
    let terminal = match stream {
        Stream::Stdout => std::io::stdout().is_terminal(),
        Stream::Stderr => std::io::stderr().is_terminal(),
    };
    let env = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    let choice = COLOR.get().copied().unwrap_or_default();
    style_for(
        choice,
        terminal,
        env("NO_COLOR").is_some(),
        env("CLICOLOR_FORCE").is_some_and(|v| v != "0"),
        terminal_width().unwrap_or(human::PLAIN_WIDTH),
    )
}

/// The decision of [`human_style`], on its inputs.
pub fn style_for(
    choice: ColorChoice,
    terminal: bool,
    no_color: bool,
    force: bool,
    width: usize,
) -> human::Style {
    let color = match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => !no_color && (terminal || force),
    };
    match (color, terminal) {
        (true, _) => human::Style::Fancy { width },
        (false, true) => human::Style::Unicode { width },
        (false, false) => human::Style::Plain,
    }
}

fn terminal_width() -> Option<usize> {
    std::env::var("COLUMNS")
        .ok()?
        .parse()
        .ok()
        .filter(|w| *w >= 40)
}
