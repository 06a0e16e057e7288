//! Faults in scenario files (docs/simulator.md, "Faults"): a backend
//! removed, a Pylon's stats outage, and the diagnostics of bad entries, on
//! the hand-checkable fleet of `fleets.rs` (two backends, one slot each, a
//! request holds its backend exactly 1 s).

use super::fleets::{assert_saturated, fleet, listing, served_by};
use super::support::{prepared, run_one, snapshot_settings};
use routex_sim::scenario::load;
use routex_sim::world::fleet::{Fault, FaultAction, Trigger};
use serde_json::json;

#[test]
fn a_removed_backend_gets_nothing_after_and_finishes_what_it_serves() {
    let mut v = fleet();
    v["faults"] = json!([{"at_s": 3, "backend": "r-b1", "action": "remove"}]);
    let mut p = prepared(&v.to_string());
    assert_eq!(
        p.settings.faults,
        [Fault {
            trigger: Trigger::At(3_000_000),
            backend: 1,
            action: FaultAction::Remove
        }]
    );
    p.settings.keep_detail = true;
    // 1 RPS: round-robin offers each backend one request every 2 s on
    // average, so neither is saturated.
    let r = run_one(&p, "rr", 1.0, 1);
    let d = r.detail.expect("detail");
    assert_eq!(d.removed_at, [None, Some(3_000_000)]);
    let to_b1: Vec<_> = d.requests.iter().filter(|q| q.backend == 1).collect();
    assert!(!to_b1.is_empty());
    // Nothing is sent to it after its removal (no RTT: a request is routed
    // when it is sent), and everything it took completes in its 1 s.
    for q in &to_b1 {
        assert!(q.sent < 3_000_000, "{q:?}");
        assert!(q.succeeded, "{q:?}");
        assert_eq!(q.done, q.sent + 1_000_000, "{q:?}");
    }
    // Everything after goes to r-b0, and every request succeeds.
    assert!(d.requests.iter().all(|q| q.succeeded));
    let after = d.requests.iter().filter(|q| q.sent >= 3_000_000).count();
    assert!(after > 0);
    assert!(d
        .requests
        .iter()
        .filter(|q| q.sent >= 3_000_000)
        .all(|q| q.backend == 0));
}

#[test]
fn a_cluster_fault_applies_to_each_backend_and_triggers_by_request() {
    let mut v = fleet();
    v["topology"]["regions"][0]["backends_per_cluster"] = json!(2);
    v["faults"] = json!([
        {"at_request": 4, "backend": "r-b0", "action": "stats_outage", "duration_s": 2.5},
        {"at_s": 0, "backend": "r-b0-p1", "action": "remove"}
    ]);
    let p = prepared(&v.to_string());
    let outage = FaultAction::StatsOutage(2_500_000);
    assert_eq!(
        p.settings.faults,
        [
            Fault {
                trigger: Trigger::Request(4),
                backend: 0,
                action: outage
            },
            Fault {
                trigger: Trigger::Request(4),
                backend: 1,
                action: outage
            },
            Fault {
                trigger: Trigger::At(0),
                backend: 1,
                action: FaultAction::Remove
            },
        ]
    );
}

#[test]
fn a_stats_outage_delivers_no_report_and_routing_goes_on() {
    // Change-driven publishing every 10 ms: without an outage, the
    // backends publish on every change.
    let mut v = fleet();
    v["pylon"]["coalesce_ms"] = json!(10);
    let base = run_one(&prepared(&v.to_string()), "rr", 1.0, 1);
    assert!(base.stats.publications > 0);
    // Both Pylons silent for the whole run: no publication, no delivery
    // (fewer events by at least one delivery per heartbeat and router),
    // and round-robin, which reads no statistics, routes the same.
    v["faults"] = json!([
        {"at_s": 0, "backend": "r-b0", "action": "stats_outage", "duration_s": 1000},
        {"at_s": 0, "backend": "r-b1", "action": "stats_outage", "duration_s": 1000}
    ]);
    let silent = run_one(&prepared(&v.to_string()), "rr", 1.0, 1);
    assert_eq!(silent.stats.publications, 0);
    // Every change-driven publication of the base run was delivered to
    // two routers at least once: that many delivery events are missing.
    let missing = base.stats.events - silent.stats.events;
    assert!(missing >= 2 * base.stats.publications, "{missing}");
    assert_eq!(silent.diagnostics.served, base.diagnostics.served);
    assert_eq!(silent.metrics, base.metrics);
}

#[test]
fn a_slowed_backend_takes_factor_times_as_long_then_recovers() {
    // At 10 RPS both backends are busy from their first request on (see
    // `fleets.rs`): a request holds r-b1 2 s at factor 2 (1 000 prefill
    // tokens at 500 tokens/s; no settle, one output token).
    let end = 10_000_000;
    let mut v = fleet();
    v["faults"] = json!([{"at_s": 0, "backend": "r-b1", "action": "slow_down", "factor": 2}]);
    assert_saturated(served_by(&v, end), [1_000_000, 2_000_000], end);
    // For 4 s only: the requests started before 4 s take 2 s (the one in
    // progress at 4 s keeps its time), those started after 1 s again.
    v["faults"][0]["duration_s"] = json!(4);
    let [b0, (n, first)] = served_by(&v, end);
    assert_saturated([b0, b0], [1_000_000, 1_000_000], end);
    assert!(first > 0 && first < 1_000_000, "{first}");
    // Starts at first, first + 2 s, first + 4 s (after the end: 1 s).
    assert_eq!(n, 2 + (end - first - 4_000_000) / 1_000_000);
    // A slow-down started mid-run changes nothing before it.
    let mut v = fleet();
    v["faults"] = json!([{"at_s": 9.9, "backend": "r-b1", "action": "slow_down", "factor": 3}]);
    assert_eq!(served_by(&v, 9_000_000), served_by(&fleet(), 9_000_000));
}

#[test]
fn bad_faults_are_diagnostics_at_their_keys() {
    let mut v = fleet();
    v["faults"] = json!([
        {"at_s": 1, "backend": "r-b0", "action": "remove", "atr": 1},
        {"at_s": 1, "backend": "r-b0", "action": "slow", "factr": 2}
    ]);
    let text = serde_json::to_string_pretty(&v).expect("json");
    let shape = load("fleet.json", &text).expect_err("shape");
    let mut out = listing(&text, &shape.diagnostics);
    v["faults"] = json!([
        {"backend": "r-b0", "action": "remove"},
        {"at_s": 1, "at_request": 2, "backend": "r-b0", "action": "remove"},
        {"at_s": -1, "backend": "r-b1", "action": "remove"},
        {"at_s": 11, "backend": "r-b1", "action": "remove"},
        {"at_s": 1, "backend": "r-b2", "action": "remove"},
        {"at_s": 1, "backend": "x", "action": "remove"},
        {"at_s": 1, "backend": "r-b1", "action": "stats_outage"},
        {"at_s": 1, "backend": "r-b1", "action": "stats_outage", "duration_s": 0},
        {"at_s": 1, "backend": "r-b1", "action": "remove", "duration_s": 2},
        {"at_s": 1, "backend": "r-b1", "action": "slow_down"},
        {"at_s": 1, "backend": "r-b1", "action": "slow_down", "factor": 0},
        {"at_s": 1, "backend": "r-b1", "action": "stats_outage", "duration_s": 1, "factor": 2}
    ]);
    let text = serde_json::to_string_pretty(&v).expect("json");
    let values = load("fleet.json", &text).expect_err("values");
    out.push_str("---\n");
    out.push_str(&listing(&text, &values.diagnostics));
    snapshot_settings().bind(|| insta::assert_snapshot!("fault_bad_inputs", out));
}

/// crates/sim/examples/scenario-fault-slow-down.json in quick form (seed 1, 30 s
/// warmup, 90 s measured, fast mode): usw2-b0 serves 4x slower from 60 s
/// to 90 s. Every policy sends it less than each of the other usw2
/// backends over the measured window, and every run ends.
#[test]
fn the_slow_down_example_runs_in_quick_form() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../crates/sim/examples/scenario-fault-slow-down.json"
    );
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("example")).expect("json");
    v["seeds"] = json!([1]);
    v["warmup_s"] = json!(30);
    v["measure_s"] = json!(90);
    let mut p = prepared(&v.to_string());
    p.settings.mode = routex_sim::WaitMode::Fast;
    assert_eq!(p.settings.faults.len(), 1);
    for policy in ["round-robin", "guard", "wait-and-widen"] {
        let r = run_one(&p, policy, 280.0, 1);
        let served = &r.diagnostics.served;
        let others = served[1..4].iter().min().copied().unwrap_or(0);
        eprintln!("{policy}: {served:?} goodput {}", r.metrics.goodput_rps);
        assert!(served[0] < others, "{policy}: {served:?}");
    }
}
