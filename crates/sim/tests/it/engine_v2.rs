//! Engine v2 (`block-cache-v2`) on whole runs and in the closed loop.

use super::support::{input, prepared, run_one};
use routex_sim::world::calibrate::closed_loop;
use routex_sim::world::engine::{EngineParams, V2};

/// small.json with engine v2 and one chain of `block_tokens` blocks per key.
fn small_v2(input_tokens: u64, block_tokens: u64, capacity: u64) -> routex_sim::scenario::Prepared {
    let mut v: serde_json::Value = serde_json::from_str(&input("small.json")).expect("json");
    v["engine"]["model"] = V2.into();
    v["engine"]["kv_capacity_tokens"] = capacity.into();
    v["workload"]["input_tokens"] = serde_json::json!([input_tokens, input_tokens]);
    v["workload"]["block_tokens"] = block_tokens.into();
    prepared(&v.to_string())
}

#[test]
fn whole_chains_per_key_reproduce_engine_v1_exactly() {
    // 6 656 = 13 blocks of 512 and the cache holds exactly 6 keys either way:
    // a key's chain is touched and evicted as a unit, so the block LRU makes
    // the same choices as v1's per-key LRU.
    let v2 = small_v2(6_656, 512, 6 * 6_656);
    let mut v: serde_json::Value = serde_json::from_str(&input("small.json")).expect("json");
    v["engine"]["kv_capacity_tokens"] = (6 * 6_656).into();
    v["workload"]["input_tokens"] = serde_json::json!([6_656, 6_656]);
    let v1 = prepared(&v.to_string());
    for policy in ["guard", "legacy", "p2c"] {
        let a = run_one(&v1, policy, 20.0, 1);
        let b = run_one(&v2, policy, 20.0, 1);
        assert_eq!(a.metrics, b.metrics, "{policy}");
        assert!(
            a.metrics.token_reuse > 0.1,
            "{policy}: {}",
            a.metrics.token_reuse
        );
    }
}

#[test]
fn a_smaller_cache_reuses_less_and_a_larger_one_more() {
    let reuse = |capacity| {
        run_one(&small_v2(6_661, 512, capacity), "guard", 8.0, 1)
            .metrics
            .token_reuse
    };
    let (none, small, large) = (reuse(0), reuse(20_000), reuse(400_000));
    assert_eq!(none, 0.0);
    assert!(small < large, "{small} vs {large}");
    // 24 keys over 3 usw2 backends fit easily in 400 000 tokens: after the
    // first miss of each key, every prefill is a hit of 14 blocks, capped at
    // the input.
    assert!(large > 0.9, "{large}");
}

#[test]
fn v2_calibrates_like_v1_in_the_closed_loop() {
    // A4.1's closed loop under v2: a warm client's chain stays cached, a cold
    // request's chain is new, so the throughputs are v1's within 1 %.
    let v1 = EngineParams::profile_a();
    let v2 = EngineParams {
        model: V2.into(),
        ..EngineParams::profile_a()
    };
    let t_w = 0.020 + 255.0 * (200.0f64 / 128.0).ln() / 72.0;
    let t_c = t_w + 6_661.0 / 7_000.0;
    for (warm, service) in [(true, t_w), (false, t_c)] {
        let a = closed_loop(&v1, 25, 6_661, 256, warm, 3_000.0, 1);
        let b = closed_loop(&v2, 25, 6_661, 256, warm, 3_000.0, 1);
        assert!((b / a - 1.0).abs() < 0.01, "warm {warm}: v1 {a}, v2 {b}");
        assert!(
            (b / (25.0 / service) - 1.0).abs() < 0.01,
            "warm {warm}: {b}"
        );
    }
}
