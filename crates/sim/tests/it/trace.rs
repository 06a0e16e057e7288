//! Trace replay: the Mooncake excerpt through the scenario loader, bad
//! traces as diagnostics with line numbers, time compression.

use super::support::run_one;
use routex_sim::scenario::{load_with, LoadOptions, Prepared};
use routex_sim::sweep;
use std::path::{Path, PathBuf};

fn manifest(path: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join(path)
}

fn example() -> String {
    std::fs::read_to_string(manifest(
        "crates/sim/examples/scenario-trace-conversation.json",
    ))
    .expect("example")
}

/// The example scenario with one policy and the given speed-ups.
fn scenario(speedups: &[f64], trace: Option<&Path>) -> Result<Prepared, Vec<String>> {
    let mut v: serde_json::Value = serde_json::from_str(&example()).expect("json");
    v["seeds"] = serde_json::json!([1]);
    v["trace"]["speedups"] = serde_json::json!(speedups);
    let guard = v["policies"]["guard"].clone();
    v["policies"] = serde_json::json!({ "guard": guard });
    let examples = manifest("crates/sim/examples");
    let options = LoadOptions {
        dir: Some(&examples),
        trace,
        ..LoadOptions::default()
    };
    load_with("trace.json", &v.to_string(), options).map_err(|failure| {
        failure
            .reports()
            .iter()
            .flat_map(|r| {
                r.diagnostics.iter().map(|d| {
                    let (line, column) = r.line_column(d.span.start);
                    let file = Path::new(&r.source_name)
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_default();
                    format!("{file}:{line}:{column}: {}: {}", d.code, d.message)
                })
            })
            .collect()
    })
}

/// Token reuse of the excerpt with one infinite cache: each request reuses
/// the longest prefix of its blocks seen in any earlier request.
fn infinite_cache_reuse() -> f64 {
    let text = std::fs::read_to_string(manifest(
        "crates/sim/tests/inputs/mooncake-conversation-excerpt.jsonl",
    ))
    .expect("excerpt");
    let mut seen = std::collections::BTreeSet::new();
    let (mut reused, mut total) = (0u64, 0u64);
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line).expect("line");
        let input = v["input_length"].as_u64().expect("input");
        let ids: Vec<u64> = v["hash_ids"]
            .as_array()
            .expect("ids")
            .iter()
            .filter_map(serde_json::Value::as_u64)
            .collect();
        let run = ids.iter().take_while(|id| seen.contains(*id)).count() as u64;
        reused += (run * 512).min(input);
        total += input;
        seen.extend(ids);
    }
    reused as f64 / total as f64
}

#[test]
fn the_excerpt_replays_at_its_compressed_rates() {
    let p = scenario(&[10.0, 40.0], None).expect("valid");
    let t = p.trace.clone().expect("a trace summary");
    assert_eq!((t.requests, t.span_s), (400, 141.0));
    assert!((t.native_rps - 400.0 / 141.0).abs() < 1e-12);
    assert_eq!(
        p.file.rates_rps,
        vec![10.0 * t.native_rps, 40.0 * t.native_rps]
    );
    let replayed = p.replayed.clone().expect("the trace");
    for (i, rate) in p.file.rates_rps.iter().enumerate() {
        let r = run_one(&p, "guard", *rate, 1);
        let m = &r.metrics;
        // The 60 + 180 s horizon is filled at the offered rate: the trace
        // lasts 14.1 s and 3.5 s at these speed-ups, and is repeated.
        let planned = replayed.replay(*rate, 240.0);
        assert_eq!(r.stats.requests, planned.requests, "run {i}");
        assert!(planned.repetitions > 1, "run {i}");
        assert!(
            (m.offered_rps / rate - 1.0).abs() < 0.05,
            "run {i}: {}",
            m.offered_rps
        );
        assert_eq!(
            m.succeeded + m.no_route + m.retries_exhausted + m.timed_out,
            m.measured
        );
        assert!(r.stats.engines_idle_at_end);
        // Engine v2 reuses block 0 (shared by every request) and earlier
        // turns, never more than one infinite cache shared by all backends.
        let oracle = infinite_cache_reuse();
        assert!(m.token_reuse > 0.02, "{}", m.token_reuse);
        assert!(m.token_reuse <= oracle, "{} > {oracle}", m.token_reuse);
        assert!(m.throughput_rps <= m.offered_rps, "{}", m.throughput_rps);
    }
}

#[test]
fn replay_is_deterministic_across_jobs() {
    let p = scenario(&[20.0, 30.0], None).expect("valid");
    let one = sweep::sweep(&p, 1, &mut |_, _| {});
    let two = sweep::sweep(&p, 2, &mut |_, _| {});
    let json = |runs| routex_sim::report::output::summary_json(&p, "faithful", runs);
    assert_eq!(json(&one), json(&two));
    assert!(json(&one).contains("\"speedup\": 20.0"));
}

#[test]
fn malformed_lines_are_diagnostics_with_their_line_numbers() {
    let dir = std::env::temp_dir().join(format!("routex-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("tmp");
    let bad = dir.join("bad.jsonl");
    let good = r#"{"timestamp": 0, "input_length": 600, "output_length": 9, "hash_ids": [0, 1]}"#;
    std::fs::write(
        &bad,
        format!(
            "{good}\n{good}\n{{\"timestamp\": 5, \"input_length\": \"x\"}}\n\n{good}\n[1, 2]\n"
        ),
    )
    .expect("write");
    let errors = scenario(&[1.0], Some(&bad)).unwrap_err();
    // Named once in the scenario, then each line in the trace's own
    // report, at its line and column, in user words (no `u64`, no serde
    // `sequence`).
    assert_eq!(errors.len(), 3, "{errors:?}");
    assert!(
        errors[0].starts_with("trace.json:")
            && errors[0].contains(&format!(
                "invalid_trace: trace {} cannot be read as format \"mooncake\": 2 problems (the first at line 3)",
                bad.display()
            )),
        "{}",
        errors[0]
    );
    assert_eq!(
        errors[1],
        "bad.jsonl:3:34: invalid_trace: invalid type: string \"x\", expected an integer from 0 to 2^64-1"
    );
    assert_eq!(
        errors[2],
        "bad.jsonl:6:1: invalid_trace: invalid type: array, expected an object"
    );
    let missing = dir.join("missing.jsonl");
    let errors = scenario(&[1.0], Some(&missing)).unwrap_err();
    assert!(errors[0].contains("cannot read trace"), "{errors:?}");
    // Every request at one instant: no rate can be compressed.
    let flat = dir.join("flat.jsonl");
    std::fs::write(&flat, format!("{good}\n{good}\n")).expect("write");
    let errors = scenario(&[1.0], Some(&flat)).unwrap_err();
    assert!(errors[0].contains("spans no time"), "{errors:?}");
}

#[test]
fn settings_are_validated_before_reading() {
    let mut v: serde_json::Value = serde_json::from_str(&example()).expect("json");
    v["rates_rps"] = serde_json::json!([5]);
    v["trace"]["format"] = "sharegpt".into();
    v["trace"]["block_tokens"] = 0.into();
    v["workload"] =
        serde_json::json!({"keys": 1, "zipf_s": 0, "input_tokens": [1, 1], "output_tokens": 1});
    let examples = manifest("crates/sim/examples");
    let options = LoadOptions {
        dir: Some(&examples),
        trace: None,
        ..LoadOptions::default()
    };
    let errors: Vec<String> = load_with("t.json", &v.to_string(), options)
        .unwrap_err()
        .scenario
        .diagnostics
        .into_iter()
        .map(|d| d.message)
        .collect();
    assert!(errors.iter().any(|e| e.contains("not both")), "{errors:?}");
    assert!(
        errors.iter().any(|e| e.contains("`workload` or `trace`")),
        "{errors:?}"
    );
    v.as_object_mut().expect("object").remove("workload");
    let errors: Vec<String> = load_with("t.json", &v.to_string(), options)
        .unwrap_err()
        .scenario
        .diagnostics
        .into_iter()
        .map(|d| d.message)
        .collect();
    assert!(
        errors
            .iter()
            .any(|e| e.contains("trace format \"sharegpt\" is not supported")),
        "{errors:?}"
    );
    assert!(
        errors.iter().any(|e| e.contains("`block_tokens` must be")),
        "{errors:?}"
    );
}

#[test]
fn the_command_line_replaces_the_trace_path() {
    let dir = std::env::temp_dir().join(format!("routex-trace-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("tmp");
    let short = dir.join("short.jsonl");
    let excerpt = std::fs::read_to_string(manifest(
        "crates/sim/tests/inputs/mooncake-conversation-excerpt.jsonl",
    ))
    .expect("excerpt");
    let first: Vec<&str> = excerpt.lines().take(50).collect();
    std::fs::write(&short, first.join("\n")).expect("write");
    let scenario = manifest("crates/sim/examples/scenario-trace-conversation.json");
    let text = std::fs::read_to_string(&scenario).expect("scenario");
    let examples = manifest("crates/sim/examples");
    let prepare = |trace: Option<&Path>| {
        let options = LoadOptions {
            dir: Some(&examples),
            trace,
            ..LoadOptions::default()
        };
        load_with("scenario-trace-conversation.json", &text, options)
    };
    let full = prepare(None).expect("bundled excerpt");
    assert_eq!(full.trace.map(|t| t.requests), Some(400));
    let cut = prepare(Some(&short)).expect("override");
    assert_eq!(cut.trace.map(|t| t.requests), Some(50));
}
