//! Each backend's timeline (`backends.csv`, docs/simulator.md "Command
//! line and outputs"): on crates/sim/examples/scenario-fault-slow-down.json in quick
//! form (seed 1, 30 s warmup, 90 s measured, fast mode, guard at 280 RPS),
//! a removal, a slow-down and a stats outage of `usw2-b0` show in its bins
//! and in the other backends'.

use super::support::{prepared, run_one};
use routex_sim::measure::timeline::Cell;
use routex_sim::run::RunResult;
use serde_json::{json, Value};

/// The example in quick form with `faults` replaced.
fn example(faults: Value) -> routex_sim::scenario::Prepared {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../crates/sim/examples/scenario-fault-slow-down.json"
    );
    let mut v: Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("example")).expect("json");
    v["seeds"] = json!([1]);
    v["warmup_s"] = json!(30);
    v["measure_s"] = json!(90);
    v["faults"] = faults;
    let mut p = prepared(&v.to_string());
    p.settings.mode = routex_sim::WaitMode::Fast;
    p
}

/// Column `f` of backend `b`, bin by bin.
fn column<T>(r: &RunResult, b: usize, f: impl Fn(&Cell) -> T) -> Vec<T> {
    r.timeline.bins().map(|bin| f(&bin[b])).collect()
}

/// The mean of bins `from..to` of a column.
fn mean(v: &[u64], bins: std::ops::Range<usize>) -> f64 {
    let n = bins.len() as f64;
    v[bins].iter().sum::<u64>() as f64 / n
}

/// Completions per bin of every backend but `usw2-b0`.
fn others_completed(r: &RunResult) -> Vec<u64> {
    r.timeline
        .bins()
        .map(|bin| bin[1..].iter().map(|c| c.completed).sum())
        .collect()
}

/// `usw2-b0` removed at 60 s, at 200 RPS (the fleet has room): no router
/// sends it anything from the bin of its removal on, it finishes what it
/// held in that bin, its state reads unregistered, and the 19 others
/// complete per bin what the whole fleet completed before.
#[test]
fn a_removed_backend_gets_nothing_and_the_others_absorb_its_share() {
    let p = example(json!([{"at_s": 60, "backend": "usw2-b0", "action": "remove"}]));
    for policy in ["guard", "wait-and-widen"] {
        let r = run_one(&p, policy, 200.0, 1);
        assert_eq!(r.timeline.bins().count(), 12, "120 s in 10 s bins");
        assert_eq!(r.timeline.backends, 20);
        let routed = column(&r, 0, |c| c.routed);
        let completed = column(&r, 0, |c| c.completed);
        assert!(routed[..6].iter().all(|&n| n > 60), "{policy}: {routed:?}");
        assert_eq!(routed[6..], [0; 6], "{policy}");
        assert!(completed[6] > 0, "{policy}: finishes what it held");
        assert_eq!(completed[7..], [0; 5], "{policy}");
        assert_eq!(column(&r, 0, |c| c.in_flight)[6..], [0; 6], "{policy}");
        let registered = column(&r, 0, |c| c.registered);
        assert_eq!(registered, [[true; 6], [false; 6]].concat(), "{policy}");
        // Before: the whole fleet per bin (30-60 s); after: the others
        // alone (70-120 s) carry as much, where b0 alone did 80 to 100.
        let total: Vec<u64> = r
            .timeline
            .bins()
            .map(|bin| bin.iter().map(|c| c.completed).sum())
            .collect();
        let (before, after) = (mean(&total, 3..6), mean(&others_completed(&r), 7..12));
        let b0_before = mean(&completed, 3..6);
        assert!(b0_before > 80.0, "{policy}: {b0_before}");
        assert!(
            after > 0.98 * before,
            "{policy}: the others complete {after} per bin, the fleet did {before}"
        );
    }
}

/// `usw2-b0` four times slower from 60 s to 90 s at 280 RPS, where it is
/// busy: its completions per bin fall by about the factor (3.4 and 3.6:
/// before, its slots were not quite always full), its state shows the
/// factor for exactly those bins, and it is back afterwards.
#[test]
fn a_slowed_backend_completes_about_factor_times_less_then_recovers() {
    let p = example(
        json!([{"at_s": 60, "backend": "usw2-b0", "action": "slow_down", "factor": 4, "duration_s": 30}]),
    );
    for (policy, expected) in [("guard", 3.39), ("wait-and-widen", 3.58)] {
        let r = run_one(&p, policy, 280.0, 1);
        let slow = column(&r, 0, |c| c.slow_factor);
        assert_eq!(
            slow,
            [&[1.0; 6][..], &[4.0; 3], &[1.0; 3]].concat(),
            "{policy}"
        );
        assert!(column(&r, 1, |c| c.slow_factor).iter().all(|&f| f == 1.0));
        let completed = column(&r, 0, |c| c.completed);
        let (before, during) = (mean(&completed, 3..6), mean(&completed, 6..9));
        let fall = before / during;
        assert!(
            (fall - expected).abs() < 0.01,
            "{policy}: {completed:?}, {fall}"
        );
        // Its backend TTFT rises with the slow-down, and both recover.
        let ttft = column(&r, 0, |c| c.ttft_sum_us / c.first_tokens.max(1));
        assert!(ttft[7] > 2 * ttft[5], "{policy}: {ttft:?}");
        assert!(
            mean(&completed, 10..12) > 0.9 * before,
            "{policy}: {completed:?}"
        );
    }
}

/// A 20 s stats outage of `usw2-b0` from 65 s at 200 RPS: the outage's
/// share of each bin, and what it does to routing. The routers keep the
/// last report and their own reservations on it, which no report
/// releases any more: once those fill its admission, nothing is sent to
/// it, so the bin wholly inside the outage routes it nothing (guard) or
/// one request (wait-and-widen), and routing resumes after.
#[test]
fn a_stats_outage_shows_its_share_of_each_bin_and_stalls_routing() {
    let p = example(
        json!([{"at_s": 65, "backend": "usw2-b0", "action": "stats_outage", "duration_s": 20}]),
    );
    for (policy, in_outage) in [("guard", 0), ("wait-and-widen", 1)] {
        let r = run_one(&p, policy, 200.0, 1);
        let out = column(&r, 0, |c| c.stats_out_us);
        assert_eq!(
            out,
            [0, 0, 0, 0, 0, 0, 5_000_000, 10_000_000, 5_000_000, 0, 0, 0],
            "{policy}"
        );
        let routed = column(&r, 0, |c| c.routed);
        assert_eq!(routed[7], in_outage, "{policy}: {routed:?}");
        assert!(routed[9..].iter().all(|&n| n > 60), "{policy}: {routed:?}");
        // The published input TPS stays at its last report's value.
        let tps = column(&r, 0, |c| c.input_tps);
        assert_eq!(tps[6], tps[7], "{policy}: {tps:?}");
    }
}

/// A run whose timeline was too long to keep has no rows in
/// `backends.csv`, and a warning names it; the other runs keep theirs.
#[test]
fn a_run_without_a_timeline_has_no_rows_and_a_warning() {
    use routex_sim::{report::output, sweep};
    let mut p = super::support::small();
    p.set_window(5.0, 10.0);
    let mut runs = sweep::sweep(&p, 1, &mut |_, _| {});
    assert_eq!(runs.len(), 6);
    let csv = output::backends_csv(&p, &runs);
    assert_eq!(csv.lines().count(), 1 + 6 * 2 * 6, "runs x bins x backends");
    let before = output::run_warnings(&p, &runs);
    assert!(!before.iter().any(|w| w.contains("backends.csv")));
    runs[1].result.timeline = routex_sim::measure::timeline::Timeline {
        backends: 6,
        cells: Vec::new(),
        too_long: true,
    };
    let csv = output::backends_csv(&p, &runs);
    assert_eq!(csv.lines().count(), 1 + 5 * 2 * 6);
    assert!(!csv.contains("guard,20,"));
    let after = output::run_warnings(&p, &runs);
    assert_eq!(after.len(), before.len() + 1);
    assert!(after.contains(
        &"backends.csv has no rows for guard at 20 seed 1: their 10 s bins x 6 backends \
          pass the 166666 cells a run of this sweep keeps (1000000 over its 6 runs, at most \
          200000 a run)"
            .to_string()
    ));
}

/// `backends.svg`: one panel per (policy, rate) cell (its first seed), a
/// grey line per backend no fault touches, a coloured line and a legend
/// entry per backend one does, and a strip mark per bin a fault holds it.
#[test]
fn the_timeline_plot_has_a_panel_per_cell_and_colours_the_faulted_backends() {
    use routex_sim::{report::timeline_plot, sweep};
    let mut v: Value = serde_json::from_str(&super::support::input("small.json")).expect("json");
    v["warmup_s"] = json!(5);
    v["measure_s"] = json!(25);
    v["faults"] = json!([
        {"at_s": 10, "backend": "near-b0", "action": "remove"},
        {"at_s": 10, "backend": "near-b1", "action": "stats_outage", "duration_s": 5}
    ]);
    let p = prepared(&v.to_string());
    let runs = sweep::sweep(&p, 1, &mut |_, _| {});
    let svg = timeline_plot::svg(&p, &runs);
    let count = |needle: &str| svg.matches(needle).count();
    assert!(svg.contains(
        r#"class="title">small-two-region: completions per second of each backend, seed 1, faithful mode</text>"#
    ));
    // 3 policies x 2 rates; 6 backends, 2 of them touched by a fault.
    assert_eq!(count(r#"class="panel-title""#), 6);
    assert!(svg.contains(r#"class="panel-title">guard at 20 RPS</text>"#));
    assert_eq!(count(r#"class="backend""#), 6 * 4);
    assert_eq!(count(r#"class="faulted""#), 6 * 2);
    assert_eq!(count(r#"class="legend">near-b0 "#), 1);
    assert_eq!(count(r#"class="legend">near-b1 "#), 1);
    // Three bins (0-30 s): near-b0 is removed at the end of bins 1 and 2,
    // near-b1 silent during bin 1 only.
    assert_eq!(count(r#"class="fault-state""#), 6 * 3);
    // Each line has a point per bin.
    let first = svg
        .lines()
        .find(|l| l.contains(r#"class="faulted""#))
        .expect("a faulted line");
    assert_eq!(first.matches(',').count(), 3, "{first}");
}

#[test]
fn a_sweep_of_many_runs_shares_one_cell_budget() {
    // Two backends, 125 010 s: 12 501 bins x 2 = 25 002 cells a run.
    // Four runs may keep 200 000 each; 40 runs share 1 000 000, 25 000
    // each, so none keeps its timeline and the warning says why.
    let timelines = |seeds: u64| {
        let mut v = super::fleets::fleet();
        v["seeds"] = json!((1..=seeds).collect::<Vec<u64>>());
        v["warmup_s"] = json!(10);
        v["measure_s"] = json!(125_000);
        v["rates_rps"] = json!([0.001]);
        // Few reports: the runs' cost is their bins.
        v["pylon"]["heartbeat_ms"] = json!(600_000);
        let p = prepared(&v.to_string());
        let runs = routex_sim::sweep::sweep(&p, 2, &mut |_, _| {});
        let warnings = routex_sim::report::output::run_warnings(&p, &runs);
        let kept: Vec<usize> = runs.iter().map(|r| r.result.timeline.cells.len()).collect();
        (
            kept,
            runs.iter().all(|r| r.result.timeline.too_long),
            warnings,
        )
    };
    let (kept, too_long, warnings) = timelines(4);
    assert_eq!(kept, [25_002; 4]);
    assert!(!too_long && warnings.iter().all(|w| !w.contains("backends.csv")));
    let (kept, too_long, warnings) = timelines(40);
    assert!(too_long && kept.iter().all(|&n| n == 0));
    let w = warnings
        .iter()
        .find(|w| w.starts_with("backends.csv has no rows"))
        .expect("a warning");
    assert!(
        w.ends_with("pass the 25000 cells a run of this sweep keeps (1000000 over its 40 runs, at most 200000 a run)"),
        "{w}"
    );
}
