//! Fast mode (docs/simulator-model.md A11.2) against faithful polling: the same
//! scenario in both modes must agree within seed noise (goodput +-2 %,
//! token reuse +-0.03) while making far fewer decisions.

use super::support::{input, prepared};
use routex_sim::report::output::{median_min_max, metric};
use routex_sim::scenario::{load, Prepared};
use routex_sim::sweep::{sweep, RunOutput};
use routex_sim::WaitMode;

fn in_mode(p: &Prepared, mode: WaitMode) -> Vec<RunOutput> {
    let mut p = p.clone();
    p.settings.mode = mode;
    sweep(&p, 2, &mut |_, _| {})
}

/// Per policy, Σ of `name` over its runs.
fn pooled(p: &Prepared, runs: &[RunOutput], name: &str) -> Vec<f64> {
    (0..p.policies.len())
        .map(|i| {
            runs.iter()
                .filter(|r| r.key.policy == i)
                .map(|r| metric(&r.result.metrics, name))
                .sum()
        })
        .collect()
}

fn decisions(runs: &[RunOutput]) -> u64 {
    runs.iter().map(|r| r.result.stats.decisions).sum()
}

#[test]
fn fast_matches_faithful_on_a_short_overloaded_scenario() {
    // Two regions, six 4-slot backends (about 15 RPS warm, 9 cold), at 14
    // and 18 RPS, 3 seeds, 5 + 25 s; pooled per policy over its 6 runs to
    // keep seed noise under the tolerance (release figures: goodput within
    // 0.6-0.8 %, reuse within 0.004).
    let p = prepared(&input("fast-check.json"));
    let faithful = in_mode(&p, WaitMode::Faithful);
    let fast = in_mode(&p, WaitMode::Fast);
    let goodput = (
        pooled(&p, &faithful, "goodput_rps"),
        pooled(&p, &fast, "goodput_rps"),
    );
    let reuse = (
        pooled(&p, &faithful, "token_reuse"),
        pooled(&p, &fast, "token_reuse"),
    );
    for (i, policy) in p.policies.iter().enumerate() {
        let (a, b) = (goodput.0[i], goodput.1[i]);
        assert!(
            (b / a - 1.0).abs() <= 0.02,
            "{}: goodput {a} vs {b}",
            policy.name
        );
        let (a, b) = (reuse.0[i] / 6.0, reuse.1[i] / 6.0);
        assert!((b - a).abs() <= 0.03, "{}: reuse {a} vs {b}", policy.name);
    }
    let (slow, quick) = (decisions(&faithful), decisions(&fast));
    assert!(quick * 10 < slow, "{quick} decisions vs {slow}");
}

#[test]
fn quick_runs_default_to_fast_mode_unless_told() {
    use routex_sim::scenario::{load, Overrides, DEFAULT_SCENARIO};
    let mode = |quick, mode: Option<WaitMode>| {
        let mut p = load("default", DEFAULT_SCENARIO).expect("default scenario");
        let overrides = Overrides {
            quick,
            rng_seed: None,
            mode,
        };
        p.apply(&overrides, WaitMode::Faithful);
        p.settings.mode
    };
    let args = |quick, name: Option<&str>| (quick, name.and_then(WaitMode::parse));
    let mode = |(quick, m)| mode(quick, m);
    assert_eq!(mode(args(true, None)), WaitMode::Fast);
    assert_eq!(mode(args(false, None)), WaitMode::Faithful);
    assert_eq!(mode(args(true, Some("faithful"))), WaitMode::Faithful);
    assert_eq!(mode(args(false, Some("fast"))), WaitMode::Fast);
}

/// The A11 validation: legacy-band-walk, guard and wait-and-widen at 240,
/// 280 and 320 RPS, seeds 1-3, 60 + 180 s, median across seeds per cell.
/// About 2 minutes of CPU in release; prints the table of docs/simulator.md:
/// `cargo test --release -p routex-sim --test it fast -- --ignored --nocapture`.
#[test]
#[ignore]
fn a11_validation_matrix() {
    let path = format!(
        "{}/crates/sim/examples/scenario-fast-validation.json",
        concat!(env!("CARGO_MANIFEST_DIR"), "/../..")
    );
    let text = std::fs::read_to_string(&path).expect("scenario");
    let p = load(&path, &text).unwrap_or_else(|r| panic!("{:?}", r.diagnostics));
    let faithful = in_mode(&p, WaitMode::Faithful);
    let fast = in_mode(&p, WaitMode::Fast);
    let median = |runs: &[RunOutput], policy: usize, rate: f64, name: &str| {
        let values: Vec<f64> = runs
            .iter()
            .filter(|r| r.key.policy == policy && r.key.rate_rps == rate)
            .map(|r| metric(&r.result.metrics, name))
            .collect();
        median_min_max(&values).0
    };
    println!("| Policy | RPS | goodput faithful | goodput fast | diff | reuse faithful | reuse fast | diff |");
    println!("| --- | --- | --- | --- | --- | --- | --- | --- |");
    let mut failures = Vec::new();
    for (i, policy) in p.policies.iter().enumerate() {
        for &rate in &p.file.rates_rps {
            let g = (
                median(&faithful, i, rate, "goodput_rps"),
                median(&fast, i, rate, "goodput_rps"),
            );
            let u = (
                median(&faithful, i, rate, "token_reuse"),
                median(&fast, i, rate, "token_reuse"),
            );
            let dg = g.1 / g.0 - 1.0;
            let du = u.1 - u.0;
            println!(
                "| {} | {rate} | {:.1} | {:.1} | {:+.1} % | {:.3} | {:.3} | {du:+.3} |",
                policy.name,
                g.0,
                g.1,
                dg * 100.0,
                u.0,
                u.1
            );
            if dg.abs() > 0.02 || du.abs() > 0.03 {
                failures.push(format!("{} at {rate}", policy.name));
            }
        }
    }
    println!(
        "decisions: faithful {}, fast {}",
        decisions(&faithful),
        decisions(&fast)
    );
    assert!(failures.is_empty(), "outside tolerance: {failures:?}");
}
