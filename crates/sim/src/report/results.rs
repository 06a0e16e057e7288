//! The files `sim run` and `sim merge` write into `--out` (docs/simulator.md,
//! "Command line and outputs"): one list of their names, and their
//! contents in that order, so the writer and the tests that compare merged
//! shards with an unsharded run agree on what a result is.

use crate::scenario::Prepared;
use crate::sweep::RunOutput;
use crate::{report::output, report::plot, report::timeline_plot};

/// The result files, in the order [`contents`] gives them.
pub const FILES: [&str; 6] = [
    "summary.json",
    "summary.csv",
    "timeseries.csv",
    "plot.svg",
    "backends.csv",
    "backends.svg",
];

/// Each of [`FILES`]' contents for `runs`; `incomplete` (an interrupted
/// sweep) is recorded in summary.json.
pub fn contents(p: &Prepared, mode: &str, runs: &[RunOutput], incomplete: bool) -> [String; 6] {
    let summary = if incomplete {
        output::summary_json_incomplete(p, mode, runs)
    } else {
        output::summary_json(p, mode, runs)
    };
    [
        summary,
        output::summary_csv(p, runs),
        output::timeseries_csv(p, runs),
        plot::svg(p, runs),
        output::backends_csv(p, runs),
        timeline_plot::svg(p, runs),
    ]
}
