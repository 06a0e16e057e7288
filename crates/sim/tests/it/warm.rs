//! `warm_start` (docs/simulator.md, "Warm start"): each key starts cached
//! where its policy places it on an idle fleet, so the first window's
//! reuse is the warm fleet's, not the cold start's; without the key runs
//! are what they were.

use super::support::{prepared, run_one};
use routex_sim::scenario::{load, Prepared, DEFAULT_SCENARIO};
use routex_sim::WaitMode;

/// `text` with `"warm_start": true` as its first key.
fn warm(text: &str) -> String {
    text.replacen('{', "{\"warm_start\": true,", 1)
}

/// The first `measure_s` seconds, no warm-up, faithful mode.
fn first_window(text: &str, measure_s: f64) -> Prepared {
    let mut p = prepared(text);
    p.set_window(0.0, measure_s);
    p.settings.mode = WaitMode::Faithful;
    p
}

fn parity() -> String {
    std::fs::read_to_string(super::repo().join("examples/scenario-parity-v3.json"))
        .expect("example")
}

#[test]
fn the_parity_scenario_starts_warm_on_engine_v3() {
    // 80 RPS, the first 4 s (311 requests over 768 keys): cold, most
    // requests are the first of their key and miss, and the misses' 409 ms
    // prefills queue (TTFT p99 4-5.6 s); warm, each key is cached where
    // its policy sends it and every request of the key-affine policies
    // reuses its whole prompt (TTFT p99 under 150 ms). Power of two warms
    // the backend it happened to pick on the idle fleet and samples two
    // at random each time: 8 % reuse.
    let cases = [
        ("waw-deployed", 0.103, 1.000, 5_431.0, 148.0),
        ("pulsar-waw-deployed", 0.119, 1.000, 4_025.0, 149.0),
        ("power-of-2-baseline", 0.010, 0.080, 5_597.0, 4_999.0),
    ];
    for (policy, cold_reuse, warm_reuse, cold_p99, warm_p99) in cases {
        let cold = run_one(&first_window(&parity(), 4.0), policy, 80.0, 1).metrics;
        let hot = run_one(&first_window(&warm(&parity()), 4.0), policy, 80.0, 1).metrics;
        assert_eq!((cold.measured, hot.measured), (311, 311), "{policy}");
        let near = |a: f64, b: f64, tol: f64| (a - b).abs() < tol;
        assert!(
            near(cold.token_reuse, cold_reuse, 0.001),
            "{policy}: cold {}",
            cold.token_reuse
        );
        assert!(
            near(hot.token_reuse, warm_reuse, 0.001),
            "{policy}: warm {}",
            hot.token_reuse
        );
        assert!(
            near(cold.ttft_p99_ms, cold_p99, 1.0),
            "{policy}: cold {}",
            cold.ttft_p99_ms
        );
        assert!(
            near(hot.ttft_p99_ms, warm_p99, 1.0),
            "{policy}: warm {}",
            hot.ttft_p99_ms
        );
    }
}

#[test]
fn engines_v1_and_v2_start_warm_too() {
    // The default scenario at 200 RPS, the first 4 s (786 requests):
    // 0.191 of the tokens reused cold, 0.983 warm (wait-and-widen sends a
    // few requests off their primary), on both slot engines.
    let v2 = DEFAULT_SCENARIO
        .replacen("\"mockdynamo-v1\"", "\"block-cache-v2\"", 1)
        .replacen(
            "\"output_tokens\": 256",
            "\"output_tokens\": 256, \"block_tokens\": 512",
            1,
        );
    for (model, text) in [
        ("mockdynamo-v1", DEFAULT_SCENARIO.to_string()),
        ("block-cache-v2", v2),
    ] {
        let p = first_window(&warm(&text), 4.0);
        assert_eq!(p.settings.engine.model, model);
        let cold = run_one(&first_window(&text, 4.0), "wait-and-widen", 200.0, 1).metrics;
        let hot = run_one(&p, "wait-and-widen", 200.0, 1).metrics;
        assert_eq!((cold.measured, hot.measured), (786, 786), "{model}");
        assert!(
            (cold.token_reuse - 0.191).abs() < 0.001,
            "{model}: cold {}",
            cold.token_reuse
        );
        assert!(
            (hot.token_reuse - 0.983).abs() < 0.001,
            "{model}: warm {}",
            hot.token_reuse
        );
    }
}

#[test]
fn without_the_key_runs_are_unchanged_and_conversations_refuse_it() {
    let off = DEFAULT_SCENARIO.replacen('{', "{\"warm_start\": false,", 1);
    let a = run_one(&first_window(DEFAULT_SCENARIO, 4.0), "guard", 200.0, 1).metrics;
    let b = run_one(&first_window(&off, 4.0), "guard", 200.0, 1).metrics;
    assert_eq!(format!("{a:?}"), format!("{b:?}"));
    let conversations = super::support::input("conversations.json");
    let report = load("c.json", &warm(&conversations)).expect_err("refused");
    let d = report.first_error().expect("an error");
    assert!(
        d.message.starts_with("`warm_start` pre-fills"),
        "{}",
        d.message
    );
    assert_eq!(
        routex::diag::line_column(&warm(&conversations), d.span.start),
        (1, 16),
        "at the value"
    );
}
