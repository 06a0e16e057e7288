//! insta snapshots (crates/sim/tests/snapshots/) of what a user reads: the printed result
//! table (less its wall-clock column) in both waiting modes, and the
//! summary.json of one tiny run. Every figure is deterministic, so a
//! changed snapshot means changed simulator behaviour.

use super::support::{small, snapshot_settings};
use routex_sim::scenario::Prepared;
use routex_sim::WaitMode;
use routex_sim::{report::output, sweep};

fn short(mode: WaitMode) -> Prepared {
    let mut p = small();
    p.set_window(5.0, 10.0);
    p.settings.mode = mode;
    p
}

/// The printed table (one row per cell; nothing in it depends on the
/// machine).
fn table(p: &Prepared) -> String {
    let runs = sweep::sweep(p, 1, &mut |_, _| {});
    output::table(p, &runs)
}

#[test]
fn result_table_faithful() {
    let t = table(&short(WaitMode::Faithful));
    snapshot_settings().bind(|| insta::assert_snapshot!("table_faithful", t));
}

#[test]
fn result_table_fast() {
    let t = table(&short(WaitMode::Fast));
    snapshot_settings().bind(|| insta::assert_snapshot!("table_fast", t));
}

#[test]
fn summary_json_of_one_guard_run() {
    let mut p = short(WaitMode::Faithful);
    p.policies.retain(|x| x.name == "guard");
    p.file.rates_rps = vec![8.0];
    let runs = sweep::sweep(&p, 1, &mut |_, _| {});
    let json = output::summary_json(&p, p.settings.mode.name(), &runs);
    snapshot_settings().bind(|| insta::assert_snapshot!("summary_guard_8rps", json));
}
