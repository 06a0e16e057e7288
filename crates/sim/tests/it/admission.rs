//! Queue-mismatch admission per policy (`pylon.mismatch_by_policy`,
//! docs/simulator.md "Scenario files"): a policy's override gives its runs
//! exactly what a scenario with that setting for every policy gives, and
//! bad entries are diagnostics at their keys.

use super::fleets::listing;
use super::support::{input, prepared, snapshot_settings};
use routex_sim::scenario::load;
use routex_sim::sweep;
use serde_json::{json, Value};

/// crates/sim/tests/inputs/small.json, 5 + 10 s, at 20 RPS (above the fleet's
/// capacity, so admission decides), one backend with a profile of its own
/// (so that per-backend Pylons take the policy's admission too), and the
/// given policies and admission.
fn scenario(policies: Value, mismatch: Value, by_policy: Option<Value>) -> Value {
    let mut v: Value = serde_json::from_str(&input("small.json")).expect("json");
    v["warmup_s"] = json!(5);
    v["measure_s"] = json!(10);
    v["rates_rps"] = json!([20]);
    v["seeds"] = json!([1, 2]);
    v["engine"]["backends"] = json!({"near-b0": {"slots": 2}});
    v["policies"] = policies;
    v["pylon"]["mismatch"] = mismatch;
    if let Some(b) = by_policy {
        v["pylon"]["mismatch_by_policy"] = b;
    }
    v
}

const GUARD: &str = "pulsar-wait-and-widen(max_queued=2, cache_affinity_wait_ms=300, band_widen_interval_ms=300, fallback_max_queued=0, max_queue_time_floor_ms=4000, max_queue_time_ceil_ms=4000, seed=\"routesim-v1\")";

/// Every run's results of a scenario, per policy name, in run order.
fn results(v: &Value) -> Vec<(String, Value)> {
    let p = prepared(&v.to_string());
    sweep::sweep(&p, 2, &mut |_, _| {})
        .into_iter()
        .map(|r| {
            let name = p.policies[r.key.policy].name.clone();
            let out = json!({
                "seed": r.key.seed,
                "metrics": r.result.metrics,
                "diagnostics": r.result.diagnostics,
                "series": r.result.series,
                "timeline": r.result.timeline,
            });
            (name, out)
        })
        .collect()
}

#[test]
fn a_policy_override_gives_what_a_scenario_wide_setting_gives() {
    let on = json!({"enabled": true, "min_delta_ms": 25, "tolerance": 1.25});
    let off = json!({"enabled": false, "min_delta_ms": 25, "tolerance": 1.25});
    let tight = json!({"enabled": true, "min_delta_ms": 0, "tolerance": 1.0});
    // Three policies with the same expression: the scenario's admission,
    // admission off, and tighter thresholds (two keys overridden).
    let both = scenario(
        json!({"on": GUARD, "off": GUARD, "tight": GUARD}),
        on.clone(),
        Some(json!({"off": {"enabled": false}, "tight": {"min_delta_ms": 0, "tolerance": 1.0}})),
    );
    let mixed = results(&both);
    assert_eq!(mixed.len(), 6, "3 policies x 2 seeds");
    let alone = |name: &str, mismatch: &Value| {
        let v = scenario(json!({ name: GUARD }), mismatch.clone(), None);
        results(&v)
    };
    let pick = |name: &str| -> Vec<(String, Value)> {
        mixed.iter().filter(|(n, _)| n == name).cloned().collect()
    };
    assert_eq!(pick("on"), alone("on", &on));
    assert_eq!(pick("off"), alone("off", &off));
    assert_eq!(pick("tight"), alone("tight", &tight));
    // And admission matters here: off, no 429 at all; tighter, more.
    let rejections = |name: &str| -> Vec<u64> {
        pick(name)
            .iter()
            .map(|(_, r)| r["metrics"]["mismatch_rejections"].as_u64().unwrap_or(0))
            .collect()
    };
    let (r_on, r_off, r_tight) = (rejections("on"), rejections("off"), rejections("tight"));
    assert_eq!(r_off, [0, 0]);
    assert!(r_on.iter().all(|&n| n > 0), "{r_on:?}");
    assert!(
        r_tight.iter().zip(&r_on).all(|(t, o)| t > o),
        "{r_tight:?} {r_on:?}"
    );
}

#[test]
fn bad_entries_are_diagnostics_at_their_keys() {
    let on = json!({"enabled": true, "min_delta_ms": 25, "tolerance": 1.25});
    let v = scenario(
        json!({"guard": GUARD, "p2c": "power-of-n(sample_count=2)"}),
        on.clone(),
        Some(json!({"gaurd": {"enable": false}, "p2c": {"tolerance": "high"}, "p2c-x": 3})),
    );
    let text = serde_json::to_string_pretty(&v).expect("json");
    let shape = load("s.json", &text).expect_err("shape");
    let mut out = listing(&text, &shape.diagnostics);
    let v = scenario(
        json!({"guard": GUARD, "p2c": "power-of-n(sample_count=2)"}),
        on,
        Some(json!({"gaurd": {"enabled": false}, "random": {},
                    "p2c": {"tolerance": -1, "min_delta_ms": 2000000000}})),
    );
    let text = serde_json::to_string_pretty(&v).expect("json");
    let values = load("s.json", &text).expect_err("values");
    out.push_str("---\n");
    out.push_str(&listing(&text, &values.diagnostics));
    snapshot_settings().bind(|| insta::assert_snapshot!("admission_bad_inputs", out));
}
