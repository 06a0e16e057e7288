//! The peers' routers as baselines, on whole runs: they load from scenario
//! files, run to the end with every dispatch released (checked in debug
//! builds), never meet a 429, are deterministic, and use their caches.

use super::support::{input, prepared, run_one};
use routex_sim::scenario::{load, Prepared};
use routex_sim::sweep;
use routex_sim::world::engine::V2;

const BASELINES: &[(&str, &str)] = &[
    ("dynamo", "dynamo-kv"),
    ("dynamo-t1", "dynamo-kv(temperature=1.0)"),
    ("gie", "gie-default"),
    ("sglang-cli", "sglang-cache-aware"),
    ("sglang-lib", "sglang-cache-aware(defaults=library)"),
    ("chwbl", "consistent-hash-bounded"),
    ("p2c", "power-of-n(sample_count=2, comparator=\"ttft\")"),
];

/// small.json on engine v2: 24 keys, each a chain of 13 blocks of 512.
fn small_v2(policies: &[(&str, &str)]) -> Prepared {
    let mut v: serde_json::Value = serde_json::from_str(&input("small.json")).expect("json");
    v["engine"]["model"] = V2.into();
    v["workload"]["input_tokens"] = serde_json::json!([6_656, 6_656]);
    v["workload"]["block_tokens"] = 512.into();
    v["policies"] = policies
        .iter()
        .map(|(k, p)| (k.to_string(), serde_json::Value::from(*p)))
        .collect::<serde_json::Map<_, _>>()
        .into();
    prepared(&v.to_string())
}

#[test]
fn every_baseline_runs_without_429s_and_uses_the_cache() {
    let p = small_v2(BASELINES);
    for &(name, _) in BASELINES {
        let m = run_one(&p, name, 8.0, 1).metrics;
        assert_eq!(
            m.measured,
            m.succeeded + m.no_route + m.retries_exhausted + m.timed_out
        );
        if name == "p2c" {
            // The reference: a core policy sends its expected queue time.
            assert!(m.mismatch_rejections > 0);
            assert!(m.token_reuse < 0.5, "p2c: reuse {}", m.token_reuse);
            continue;
        }
        assert_eq!(
            m.mismatch_rejections, 0,
            "{name}: no expected queue is sent"
        );
        assert_eq!(m.no_route, 0, "{name}: a baseline never waits");
        // At 8 RPS (a third of capacity) the cache-aware rules keep most
        // keys where their blocks are (p2c: 0.20); softmax sampling at
        // temperature 1 over costs scaled to [0, 1] is close to uniform.
        let floor = if name == "dynamo-t1" { 0.2 } else { 0.5 };
        assert!(m.token_reuse > floor, "{name}: reuse {}", m.token_reuse);
    }
}

#[test]
fn bounded_hashing_keeps_keys_on_their_owner_at_low_load() {
    let p = small_v2(&[("chwbl", "consistent-hash-bounded")]);
    let m = run_one(&p, "chwbl", 4.0, 2).metrics;
    // rank_depth 2 = served off the ring owner because it was over its bound.
    assert!(m.off_primary < 0.2, "off_primary {}", m.off_primary);
    assert!(m.token_reuse > 0.8, "reuse {}", m.token_reuse);
}

#[test]
fn baselines_are_deterministic_across_jobs() {
    let mut p = small_v2(BASELINES);
    p.set_window(5.0, 10.0);
    let summary = |jobs| {
        let runs = sweep::sweep(&p, jobs, &mut |_, _| {});
        routex_sim::report::output::summary_json(&p, "faithful", &runs)
    };
    let one = summary(1);
    assert_eq!(one, summary(2));
    assert_eq!(one, summary(1));
}

#[test]
fn tiny_router_indexes_stay_correct() {
    let p = small_v2(&[
        ("gie", "gie-default(lru_capacity_blocks=1)"),
        ("sglang", "sglang-cache-aware(max_tree_blocks=2)"),
    ]);
    for name in ["gie", "sglang"] {
        let m = run_one(&p, name, 8.0, 1).metrics;
        assert_eq!(m.measured, m.succeeded + m.timed_out, "{name}");
    }
}

#[test]
fn bad_baseline_arguments_are_diagnostics_in_the_file() {
    let mut v: serde_json::Value = serde_json::from_str(&input("small.json")).expect("json");
    v["policies"] = serde_json::json!({
        "d": "dynamo-kv(temperature=hot)",
        "c": "consistent-hash-bounded(hash_balance_factor=50, x=1)"
    });
    let text = serde_json::to_string_pretty(&v).expect("json");
    let Err(report) = load("bad.json", &text) else {
        panic!("invalid scenario accepted")
    };
    let found: Vec<(&str, &str)> = report
        .diagnostics
        .iter()
        .map(|d| (d.code.as_str(), &text[d.span.start..d.span.end]))
        .collect();
    assert_eq!(
        found,
        vec![
            ("invalid_value", "hot"),
            ("invalid_value", "50"),
            ("unknown_parameter", "x")
        ]
    );
}

/// The comparison's scenario files (docs/simulator.md "Comparison") load
/// and hold every policy of the default scenario, then every baseline.
#[test]
fn the_comparison_scenarios_load() {
    use routex_sim::scenario::{load_with, LoadOptions, DEFAULT_SCENARIO};
    let root = std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    let examples = root.join("examples");
    let default = super::support::prepared(DEFAULT_SCENARIO);
    let mut want: Vec<String> = default.policies.iter().map(|p| p.text.clone()).collect();
    want.extend(
        [
            "dynamo-kv(overlap_score_weight=1.0, temperature=0.0)",
            "gie-default(queue_weight=2, kv_cache_weight=2, prefix_weight=3)",
            "sglang-cache-aware(defaults=cli)",
            "sglang-cache-aware(defaults=library)",
            "consistent-hash-bounded(hash_balance_factor=150)",
        ]
        .map(String::from),
    );
    use routex_sim::world::engine::{V2, V3};
    for (file, rates, engine) in [
        ("scenario-compare-trace.json", 6, V2),
        ("scenario-compare-zipf-v2.json", 5, V2),
        ("scenario-compare-zipf-v3.json", 5, V3),
    ] {
        let text = std::fs::read_to_string(examples.join(file)).expect(file);
        let options = LoadOptions {
            dir: Some(&examples),
            trace: None,
            ..LoadOptions::default()
        };
        let p = load_with(file, &text, options).unwrap_or_else(|r| panic!("{file}: {r:?}"));
        let got: Vec<String> = p.policies.iter().map(|p| p.text.clone()).collect();
        assert_eq!(got, want, "{file}");
        assert_eq!(p.file.rates_rps.len(), rates, "{file}");
        assert_eq!(p.file.seeds, vec![1, 2, 3], "{file}");
        assert_eq!(p.settings.engine.model, engine, "{file}");
    }
    // The v3 comparison is the v2 one with the batched engine and its
    // Pylon's initial rate (20 000 per worker) only.
    let strip = |file: &str| {
        let text = std::fs::read_to_string(examples.join(file)).expect(file);
        let mut v: serde_json::Value = serde_json::from_str(&text).expect(file);
        let o = v.as_object_mut().expect("object");
        o.remove("name");
        o.remove("engine");
        o["pylon"]
            .as_object_mut()
            .expect("pylon")
            .remove("input_tps");
        v
    };
    assert_eq!(
        strip("scenario-compare-zipf-v2.json"),
        strip("scenario-compare-zipf-v3.json")
    );
}
