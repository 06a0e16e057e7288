//! Renderers over the one diagnostic model: json, github and sarif (the
//! graphical human report lives with the `routex` command, which owns its
//! terminal dependencies).
//!
//! Every renderer takes the reports of one run (one per source) and returns
//! the text to print; SARIF can also stream into any `io::Write`
//! (`sarif::write_in`), so a large log is never held whole. None of them
//! knows about the command line.

pub mod diff;
pub mod explain;
pub mod github;
mod inert;
pub mod json;
mod location;
mod plain;
mod rules;
pub mod sarif;
mod uri;

pub use inert::{inert_source, inert_text};
pub use location::{locate, Location, Locator};

use crate::diag::Report;

/// The source name of standard input (`routex lint -`) in every format.
pub const STDIN_NAME: &str = "<stdin>";

/// Errors and warnings over every report of a run.
pub fn totals(reports: &[Report]) -> (usize, usize) {
    reports.iter().fold((0, 0), |(errors, warnings), report| {
        (errors + report.errors(), warnings + report.warnings())
    })
}
