//! Steady-state measurement (docs/simulator.md, "Steady-state
//! measurement"): traces shorter than the horizon are repeated, every run
//! says whether its window is steady, and a steady window's goodput is
//! bounded by the offered load and the fleet's warm capacity.

use super::support::{input, prepared, run_one};
use routex_sim::scenario::Prepared;
use routex_sim::WaitMode;
use std::path::PathBuf;

/// A generated session trace: one request per second of native time,
/// 20 conversations in turn, each a fixed chain of 13 blocks (6 661
/// tokens), 256 output tokens.
fn write_trace(name: &str, lines: usize) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("routex-steady-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(name);
    let mut text = String::new();
    for i in 0..lines {
        let c = (i % 20) as u64;
        let ids: Vec<String> = (0..13).map(|b| (c * 100 + b).to_string()).collect();
        text.push_str(&format!(
            "{{\"timestamp\": {}, \"input_length\": 6661, \"output_length\": 256, \"hash_ids\": [{}]}}\n",
            i * 1000,
            ids.join(", ")
        ));
    }
    std::fs::write(&path, text).expect("trace");
    path
}

/// small.json (6 backends of 4 slots) replaying a trace of `lines`
/// requests, 10 s warm-up + 40 s window.
fn trace_scenario(lines: usize, repeat: &str) -> Prepared {
    let path = write_trace(&format!("t{lines}.jsonl"), lines);
    let mut v: serde_json::Value = serde_json::from_str(&input("small.json")).expect("json");
    let map = v.as_object_mut().expect("object");
    map.remove("workload");
    map.insert("warmup_s".into(), 10.into());
    map.insert("measure_s".into(), 40.into());
    map.insert(
        "trace".into(),
        serde_json::json!({"path": path.display().to_string(), "repeat": repeat}),
    );
    let mut p = prepared(&v.to_string());
    // Fast mode (parking, not polling): the window's bounds hold in both
    // modes, and polling made these the longest of the simulator's tests.
    p.settings.mode = WaitMode::Fast;
    p
}

/// The fleet's warm capacity: 24 slots over the shortest warm service
/// time (no prefill, no jitter, the fastest decode: 10 ms + 255 / 200 s).
const WARM_CAPACITY: f64 = 24.0 / (0.010 + 255.0 / 200.0);

#[test]
fn short_and_long_traces_are_steady_below_capacity_and_transient_far_above() {
    // 40 requests = 39 s at 1 RPS: at 6 RPS it lasts 6.5 s and is
    // replayed about 8 times; 2 000 requests last 333 s at 6 RPS.
    for lines in [40, 2_000] {
        let p = trace_scenario(lines, "fresh");
        for policy in ["guard", "p2c"] {
            let low = run_one(&p, policy, 6.0, 1).metrics;
            assert!(low.steady, "{lines} lines, {policy} at 6 RPS: {low:?}");
            assert!(
                (low.offered_rps - 6.0).abs() < 0.6,
                "the window is filled at the offered rate: {}",
                low.offered_rps
            );
            assert!(low.goodput_rps <= low.offered_rps);
        }
        // Twice the warm capacity: power-of-two queues everything at the
        // engines, whose queues grow across the window.
        let high = run_one(&p, "p2c", 40.0, 1).metrics;
        assert!(!high.steady, "{lines} lines, p2c at 40 RPS: {high:?}");
        assert!(high.backlog_end > high.backlog_start + 100, "{high:?}");
        assert!(high.late_share > 0.3, "{high:?}");
    }
}

#[test]
fn a_steady_window_never_serves_more_than_offered_or_the_warm_fleet() {
    let p = trace_scenario(40, "fresh");
    let mut steady = 0;
    for policy in ["guard", "legacy", "p2c"] {
        for rate in [4.0, 16.0, 40.0] {
            for seed in [1] {
                let m = run_one(&p, policy, rate, seed).metrics;
                if !m.steady {
                    continue;
                }
                steady += 1;
                assert!(m.goodput_rps <= m.offered_rps, "{policy} {rate}: {m:?}");
                assert!(
                    m.goodput_rps <= WARM_CAPACITY,
                    "{policy} at {rate} RPS, seed {seed}: goodput {} above the warm capacity {WARM_CAPACITY:.1}",
                    m.goodput_rps
                );
            }
        }
    }
    assert!(steady >= 3, "only {steady} steady runs");
}

#[test]
fn fresh_repetition_invents_no_reuse_and_same_ids_do() {
    // 40 requests over 20 conversations: each conversation comes back once
    // within a pass. At 4 RPS the 50 s horizon replays the trace 5 times.
    let fresh = run_one(&trace_scenario(40, "fresh"), "guard", 4.0, 1).metrics;
    let same = run_one(&trace_scenario(40, "same"), "guard", 4.0, 1).metrics;
    // Within a pass at most half the requests can hit (the second turn of
    // each conversation); with the same ids every later pass is warm too.
    assert!(fresh.cache_hit_rate <= 0.5 + 1e-9, "{fresh:?}");
    assert!(same.cache_hit_rate > 0.8, "{same:?}");
}

#[test]
fn cut_warnings_say_how_many_of_how_many() {
    let p = trace_scenario(2_000, "fresh");
    let w = p.cut_warnings();
    // 8 and 20 RPS over 50 s: 400 and 1 000 of the 2 000 requests.
    assert_eq!(w.len(), 2, "{w:?}");
    assert!(
        w[0].contains("replays 400 of the trace's 2000 requests"),
        "{}",
        w[0]
    );
    let p = trace_scenario(40, "fresh");
    let w = p.cut_warnings();
    assert!(w[0].contains("replayed 10 times"), "{}", w[0]);
    assert!(w[0].contains("fresh block ids"), "{}", w[0]);
    let mut q = super::support::small();
    q.quick();
    let w = q.cut_warnings();
    assert_eq!(w.len(), 1);
    assert!(
        w[0].starts_with(
            "--quick: 30 s warm-up + 90 s measured instead of the scenario's 10 s + 20 s"
        ),
        "{}",
        w[0]
    );
}

/// A cell whose every request timed out can keep a level backlog (each
/// request leaves at its timeout), so its window reads steady; the table
/// says `0 goodput` instead, and a warning says how its requests ended.
/// `steady` in the metrics keeps its meaning (the backlog stayed level).
#[test]
fn a_cell_without_goodput_is_flagged_not_steady() {
    use routex_sim::{report::output, sweep};
    let with = |client: serde_json::Value| {
        let mut v: serde_json::Value = serde_json::from_str(&input("small.json")).expect("json");
        v["warmup_s"] = 5.into();
        v["measure_s"] = 10.into();
        v["rates_rps"] = serde_json::json!([8]);
        v["policies"] =
            serde_json::json!({"p2c": "power-of-n(sample_count=2, comparator=\"ttft\")"});
        v["client"] = client;
        let p = prepared(&v.to_string());
        let runs = sweep::sweep(&p, 1, &mut |_, _| {});
        (
            output::table(&p, &runs),
            output::table_per_seed(&p, &runs),
            output::run_warnings(&p, &runs),
            runs,
        )
    };
    // A 5 ms client timeout: no first token comes that soon.
    let (table, per_seed, warnings, runs) = with(serde_json::json!({"request_slo_ms": 10000,
        "max_wait_ms": 10000, "timeout_ms": 5, "ttft_slo_ms": 10000}));
    let m = &runs[0].result.metrics;
    assert!(
        m.steady && m.measured > 50 && m.timed_out == m.measured,
        "{m:?}"
    );
    let row = table.lines().nth(2).expect("row");
    assert!(
        row.starts_with("p2c                      8     1 0 goodput      0.0 "),
        "{row}"
    );
    assert!(
        per_seed
            .lines()
            .nth(1)
            .is_some_and(|l| l.contains(" 0 goodput ")),
        "{per_seed}"
    );
    assert_eq!(
        warnings,
        ["1 of 1 cells had no goodput (`0 goodput` in the table; `steady` in summary.json says only \
          that the backlog stayed level): p2c at 8 (every request timed out)"]
    );
    // A 1 ms TTFT SLO: requests succeed, none within it.
    let (table, _, warnings, runs) = with(serde_json::json!({"request_slo_ms": 10000,
        "max_wait_ms": 10000, "timeout_ms": 30000, "ttft_slo_ms": 1}));
    assert!(runs[0].result.metrics.succeeded > 50);
    assert!(
        table
            .lines()
            .nth(2)
            .is_some_and(|l| l.contains(" 0 goodput ")),
        "{table}"
    );
    assert!(
        warnings[0].ends_with("p2c at 8 (no request met the TTFT SLO; 0.0% timed out)"),
        "{warnings:?}"
    );
    // With goodput, the state is the steadiness as before.
    let (table, _, warnings, _) = with(serde_json::json!({"request_slo_ms": 10000,
        "max_wait_ms": 10000, "timeout_ms": 30000, "ttft_slo_ms": 10000}));
    assert!(
        table.lines().nth(2).is_some_and(|l| l.contains(" steady ")),
        "{table}"
    );
    assert!(warnings.is_empty(), "{warnings:?}");
}
