//! Scenario files: schema errors point into the JSON text.

use routex::diag::{line_column, Code};
use routex_sim::scenario::{load, DEFAULT_SCENARIO};

fn first_error(text: &str) -> (Code, (usize, usize), String) {
    let report = match load("s.json", text) {
        Ok(_) => panic!("expected an invalid scenario"),
        Err(r) => r,
    };
    let d = report.first_error().expect("an error").clone();
    (d.code, line_column(text, d.span.start), d.message)
}

#[test]
fn unknown_fields_are_rejected_with_their_line() {
    let text =
        DEFAULT_SCENARIO.replacen("\"warmup_s\": 60,", "\"warmup_s\": 60, \"warmpu\": 1,", 1);
    let (code, (line, _), message) = first_error(&text);
    assert_eq!(code, Code::UnknownField);
    assert_eq!(line, 4);
    assert!(message.contains("warmpu"), "{message}");
}

#[test]
fn malformed_json_is_invalid_json() {
    let (code, (line, _), _) = first_error("{\n  \"name\": \"x\",,\n}");
    assert_eq!(code, Code::InvalidJson);
    assert_eq!(line, 2);
}

#[test]
fn wrong_types_and_missing_fields() {
    let text = DEFAULT_SCENARIO.replacen("\"seeds\": [1, 2, 3]", "\"seeds\": \"1\"", 1);
    assert_eq!(first_error(&text).0, Code::InvalidType);
    let text = DEFAULT_SCENARIO.replacen("\"seeds\": [1, 2, 3],", "", 1);
    assert_eq!(first_error(&text).0, Code::MissingField);
}

fn with_policy(policy: &str) -> String {
    let mut v: serde_json::Value = serde_json::from_str(DEFAULT_SCENARIO).expect("json");
    v["policies"] = serde_json::json!({ "p": policy });
    serde_json::to_string_pretty(&v).expect("json")
}

#[test]
fn policy_errors_carry_their_codes_and_point_into_the_string() {
    let text = with_policy("pulsar-wait-and-widen(max_queud=4)");
    let (code, _, message) = first_error(&text);
    assert_eq!(code, Code::UnknownParameter);
    assert!(message.starts_with("policy `p`"), "{message}");
    let report = load("s.json", &text).expect_err("invalid");
    let d = report.first_error().expect("error");
    assert_eq!(&text[d.span.start..d.span.end], "max_queud");

    assert_eq!(
        first_error(&with_policy("fastest(n=1)")).0,
        Code::UnknownMethod
    );
    let legacy = with_policy("legacy-band-walk(max_queued=4, band_widen_interval_ms=3)");
    let report = load("s.json", &legacy).expect_err("invalid");
    let d = report.first_error().expect("error");
    assert_eq!(d.code, Code::UnknownParameter);
    assert_eq!(&legacy[d.span.start..d.span.end], "band_widen_interval_ms");
}

#[test]
fn simulator_only_rejections_and_warnings() {
    // KV-aware policies are simulated: their scenario publishes KV stats.
    let kv = load(
        "s.json",
        &with_policy("pulsar(consider_kv_free_tokens=true)"),
    )
    .expect("valid");
    assert!(kv.settings.publish_kv);
    let plain = load("s.json", &with_policy("pulsar()")).expect("valid");
    assert!(!plain.settings.publish_kv);
    let floor = with_policy(
        "pulsar-wait-and-widen(max_queue_time_floor_ms=500, max_queue_time_ceil_ms=100)",
    );
    assert_eq!(first_error(&floor).0, Code::FloorAboveCeil);
    // Without both bounds the band walk degenerates: a warning, not an error.
    let p = load("s.json", &with_policy("legacy-band-walk(max_queued=4)")).expect("valid");
    assert!(p
        .warnings
        .diagnostics
        .iter()
        .any(|d| d.code == Code::NoQueueSlo && !d.is_error()));
}

#[test]
fn structural_validation() {
    let text = DEFAULT_SCENARIO.replacen("[[0,65,125,100,140],", "[[0,65,125,100],", 1);
    let (code, _, message) = first_error(&text);
    assert_eq!(code, Code::InvalidValue);
    assert!(message.contains("5 x 5"), "{message}");
    let text = DEFAULT_SCENARIO.replacen("\"traffic_weight\": 1.0", "\"traffic_weight\": 0.0", 1);
    assert!(first_error(&text).2.contains("traffic_weight"));
    let text = DEFAULT_SCENARIO.replacen("[200, 220,", "[0, 220,", 1);
    assert!(first_error(&text).2.contains("rates_rps"));
    let text = DEFAULT_SCENARIO.replacen("\"measure_s\": 180", "\"measure_s\": 1e12", 1);
    assert!(first_error(&text).2.contains("must be at most 1000000 s"));
    let text = DEFAULT_SCENARIO.replacen("\"measure_s\": 180", "\"measure_s\": 900000", 1);
    assert!(first_error(&text).2.contains("50 million"));
    let text = DEFAULT_SCENARIO.replacen("\"coalesce_ms\": null", "\"coalesce_ms\": 50", 1);
    let p = load("coalesce.json", &text).expect("change-driven publishing is valid");
    assert_eq!(p.settings.coalesce_us, Some(50_000));
}

#[test]
fn the_default_scenario_holds_the_seven_policies_in_order() {
    let p = load("default", DEFAULT_SCENARIO).expect("valid");
    let names: Vec<_> = p.policies.iter().map(|x| x.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "legacy-band-walk",
            "wait-only",
            "gated-no-guard",
            "guard",
            "guard-mq16",
            "wait-and-widen",
            "power-of-two"
        ]
    );
    assert_eq!(p.settings.topology.backends.len(), 20);
    assert!(
        p.warnings.diagnostics.is_empty(),
        "{:?}",
        p.warnings.diagnostics
    );
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

    /// Malformed or mutated scenario text never panics: it loads or reports.
    #[test]
    fn arbitrary_text_never_panics(cut in 0usize..4_000, junk in "[ -~]{0,12}") {
        let cut = cut.min(DEFAULT_SCENARIO.len());
        let mut text = DEFAULT_SCENARIO[..cut].to_string();
        text.push_str(&junk);
        text.push_str(&DEFAULT_SCENARIO[cut..]);
        let _ = load("fuzz.json", &text);
    }
}

/// `client.last_cluster_store` (docs/simulator.md, "The gateway's
/// last-cluster store"): a misspelt key gets a did-you-mean, a zero bound
/// or TTL is refused, and the store reaches the run's settings.
#[test]
fn the_last_cluster_store_key() {
    let with = |store: &str| {
        DEFAULT_SCENARIO.replacen(
            "\"ttft_slo_ms\": 10000",
            &format!("\"ttft_slo_ms\": 10000, {store}"),
            1,
        )
    };
    let report =
        load("s.json", &with("\"last_cluster_stor\": {\"ttl_ms\": 1}")).expect_err("unknown key");
    let d = report.first_error().expect("an error");
    assert_eq!(d.code, Code::UnknownField);
    assert!(
        d.help.iter().any(|h| h.contains("`last_cluster_store`")),
        "{d:?}"
    );
    let (code, _, message) = first_error(&with(
        "\"last_cluster_store\": {\"ttl_ms\": 1, \"max_sesions\": 2}",
    ));
    assert_eq!(code, Code::UnknownField);
    assert!(message.contains("max_sesions"), "{message}");
    let (code, _, message) = first_error(&with(
        "\"last_cluster_store\": {\"ttl_ms\": 1, \"max_sessions\": 0}",
    ));
    assert_eq!(code, Code::InvalidValue);
    assert!(message.contains("`max_sessions` must be > 0"), "{message}");
    let (code, _, message) = first_error(&with("\"last_cluster_store\": {\"ttl_ms\": 0}"));
    assert_eq!(code, Code::InvalidValue);
    assert!(message.contains("`ttl_ms` must be > 0"), "{message}");
    let p = load("s.json", &with("\"last_cluster_store\": {\"ttl_ms\": 2}")).expect("valid");
    let store = p.settings.last_cluster_store.expect("a store");
    assert_eq!((store.ttl_us, store.max_sessions), (2_000, 65_536));
    let p = load("s.json", &with("\"last_cluster_store\": null")).expect("valid");
    assert_eq!(p.settings.last_cluster_store, None);
    assert_eq!(
        load("d.json", DEFAULT_SCENARIO)
            .expect("valid")
            .settings
            .last_cluster_store,
        None
    );
}

/// The synthetic workload draws each key's input size from a size law: a
/// lognormal's median is its `mean`, no key exceeds `p99_cap`, and a bad
/// parameter is reported at its key.
#[test]
fn the_synthetic_workload_takes_a_size_law() {
    let with = |law: &str| {
        DEFAULT_SCENARIO.replacen(
            "\"input_tokens\": [6661, 6661]",
            &format!("\"input_tokens\": {law}"),
            1,
        )
    };
    let mut p = super::support::prepared(&with(
        r#"{"distribution": "lognormal", "mean": 5000, "sigma": 0.5, "p99_cap": 12000}"#,
    ));
    p.set_window(0.0, 20.0);
    p.settings.keep_detail = true;
    let r = super::support::run_one(&p, "power-of-two", 100.0, 1);
    // Each key keeps its size: 768 keys, one size each.
    let mut size_of = std::collections::BTreeMap::new();
    for req in &r.detail.expect("detail").requests {
        assert_eq!(*size_of.entry(req.key).or_insert(req.input), req.input);
    }
    let mut sizes: Vec<u64> = size_of.into_values().collect();
    sizes.sort_unstable();
    assert!(sizes.len() > 700, "{}", sizes.len());
    let median = sizes[sizes.len() / 2] as f64;
    // The sample median of n = 750 draws: sd about 1.25 x 0.5 / sqrt(n).
    assert!((median / 5_000.0 - 1.0).abs() < 0.07, "median {median}");
    assert!(*sizes.last().unwrap_or(&0) <= 12_000);
    assert!(sizes[0] >= 1);
    let (code, at, message) = first_error(&with(
        r#"{"distribution": "lognormal", "mean": 5000, "sigma": -1, "p99_cap": 12000}"#,
    ));
    assert_eq!(code, Code::InvalidValue);
    assert_eq!(at.0, 30, "{message}");
    assert_eq!(message, "`sigma` must be a number >= 0, got -1");
}
