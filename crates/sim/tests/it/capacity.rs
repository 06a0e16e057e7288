//! `sim capacity`'s bisection (docs/simulator.md, "Capacity at an SLO"):
//! its answer checked against runs at rates around it.

use super::support::small;
use routex_sim::scenario::Prepared;
use routex_sim::search::capacity::{probe, search, CapacitySpec};
use routex_sim::WaitMode;
use std::sync::atomic::AtomicBool;

/// crates/sim/tests/inputs/small.json with its `guard` policy only, `seeds`, and
/// a `warmup_s` + `measure_s` window.
fn guard_only(seeds: &[u64], warmup_s: f64, measure_s: f64) -> Prepared {
    let mut p = small();
    // Fast mode (parking, not polling): these tests are about the search,
    // which treats both modes alike, and polling made them the longest of
    // the simulator's tests.
    p.settings.mode = WaitMode::Fast;
    p.file.seeds = seeds.to_vec();
    p.set_window(warmup_s, measure_s);
    p.policies.retain(|x| x.name == "guard");
    p
}

/// A search of policy 0 for 95 % of requests within `ttft_ms`.
fn spec(ttft_ms: f64, lo_rps: f64, hi_rps: f64, precision: f64) -> CapacitySpec {
    CapacitySpec {
        ttft_ms,
        attainment: 0.95,
        lo_rps,
        hi_rps,
        precision,
        policies: vec![0],
    }
}

#[test]
fn the_bisection_answer_is_sustained_and_a_rate_above_it_is_not() {
    let p = guard_only(&[1, 2], 10.0, 30.0);
    let spec = spec(4000.0, 2.0, 40.0, 0.05);
    let found = search(&p, &spec, 2, &AtomicBool::new(false), &mut |_, _| {});
    assert_eq!(found.len(), 1);
    let f = &found[0];
    assert_eq!(f.seeds.len(), 2);
    assert!(f.min_rps > 0.0);
    for s in &f.seeds {
        let c = s.capacity_rps.expect("2 RPS is sustained");
        let failed = s.failed_at_rps.expect("40 RPS is not");
        assert!(
            failed / c <= 1.05 + 1e-9,
            "the bracket is narrow: {c} - {failed}"
        );
        assert!(c > 2.0 && c < 40.0);
        // Every probe at or below the answer that the search ran was
        // sustained, every probe above it was not.
        for pr in &s.probes {
            assert_eq!(pr.sustained, pr.rate_rps <= c, "{pr:?}");
        }
        // Runs around the answer: 10 % below holds, 25 % above does not.
        let below = probe(&p, 0, c * 0.9, s.seed, 4_000_000, 0.95);
        assert!(below.sustained, "{below:?} at {c} x 0.9");
        let above = probe(&p, 0, c * 1.25, s.seed, 4_000_000, 0.95);
        assert!(!above.sustained, "{above:?} at {c} x 1.25");
    }
    let (lo, hi) = (f.min_rps, f.max_rps);
    assert!(lo <= f.median_rps && f.median_rps <= hi);
}

#[test]
fn the_bracket_ends_are_reported() {
    let p = guard_only(&[1], 5.0, 20.0);
    let spec = spec(4000.0, 1.0, 2.0, 0.05);
    let found = search(&p, &spec, 1, &AtomicBool::new(false), &mut |_, _| {});
    assert_eq!(found[0].seeds[0].capacity_rps, Some(2.0));
    assert!(found[0].above_bracket);
    let table = routex_sim::search::capacity::table(&spec, &found);
    assert!(table.contains(">=2.0"), "{table}");
}

/// The seeds' bisections share the threads probe by probe: the answer,
/// every probe included, is the same on one thread as on three (one per
/// seed, the most interleaved; two threads would add a slow search and
/// no case).
#[test]
fn the_answer_does_not_depend_on_the_thread_count() {
    let p = guard_only(&[1, 2, 3], 5.0, 15.0);
    let spec = spec(4000.0, 2.0, 40.0, 0.1);
    let mut calls = Vec::new();
    let one = search(&p, &spec, 1, &AtomicBool::new(false), &mut |d, t| {
        calls.push((d, t))
    });
    assert_eq!(calls, [(1, 3), (2, 3), (3, 3)]);
    let three = search(&p, &spec, 3, &AtomicBool::new(false), &mut |_, _| {});
    assert_eq!(three, one, "3 threads");
    assert!(one[0].seeds.iter().all(|s| s.probes.len() >= 4));
}

#[test]
fn a_fleet_that_fails_the_lowest_rate_has_no_capacity() {
    let p = guard_only(&[1], 5.0, 15.0);
    let spec = spec(1.0, 2.0, 40.0, 0.05);
    let found = search(&p, &spec, 2, &AtomicBool::new(false), &mut |_, _| {});
    let seed = &found[0].seeds[0];
    assert_eq!(seed.capacity_rps, None);
    assert_eq!(seed.failed_at_rps, Some(2.0));
    assert_eq!(seed.probes.len(), 1, "nothing above a failed lower end");
    assert!(!found[0].above_bracket);
}
