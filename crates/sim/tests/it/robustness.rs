//! Scenario robustness: user values that would overflow, wrap or ask for
//! unbounded memory are rejected, and every diagnostic points at the value
//! it is about (spans from the parsed JSON tree).

use routex::diag::Code;
use routex_sim::scenario::{load, DEFAULT_SCENARIO};

/// Every error: (code, the text its span covers, message).
fn errors(text: &str) -> Vec<(Code, String, String)> {
    let report = load("s.json", text).expect_err("invalid");
    report
        .diagnostics
        .iter()
        .filter(|d| d.is_error())
        .map(|d| {
            (
                d.code,
                text[d.span.start..d.span.end].to_string(),
                d.message.clone(),
            )
        })
        .collect()
}

fn edit(f: impl FnOnce(&mut serde_json::Value)) -> String {
    let mut v: serde_json::Value = serde_json::from_str(DEFAULT_SCENARIO).expect("json");
    f(&mut v);
    serde_json::to_string_pretty(&v).expect("json")
}

#[test]
fn a_wrapping_heartbeat_is_rejected_at_its_value() {
    // 18446744073709552 ms x 1000 wraps u64 to 384 us.
    let text = DEFAULT_SCENARIO.replacen(
        "\"heartbeat_ms\": 1000",
        "\"heartbeat_ms\": 18446744073709552",
        1,
    );
    let e = errors(&text);
    assert_eq!(e.len(), 1, "{e:?}");
    assert_eq!(e[0].0, Code::InvalidValue);
    assert_eq!(e[0].1, "18446744073709552");
    assert!(e[0].2.contains("at most 1000000000 ms"), "{}", e[0].2);
    for key in ["timeout_ms", "max_wait_ms", "request_slo_ms", "ttft_slo_ms"] {
        let text = edit(|v| v["client"][key] = u64::MAX.into());
        let e = errors(&text);
        assert_eq!(
            (e.len(), e[0].1.as_str()),
            (1, "18446744073709551615"),
            "{key}: {e:?}"
        );
    }
}

#[test]
fn a_huge_horizon_at_a_tiny_rate_is_rejected() {
    // 1e12 s at 1e-6 RPS plans one request but would ask for 10^11 bins.
    let text = edit(|v| {
        v["warmup_s"] = 1e12.into();
        v["rates_rps"] = serde_json::json!([1e-6]);
    });
    let e = errors(&text);
    assert_eq!(e.len(), 1, "{e:?}");
    assert_eq!(e[0].1, "1000000000000.0");
    assert!(e[0].2.contains("at most 1000000 s"));
}

#[test]
fn fleet_sizes_that_overflow_u32_are_rejected_without_panicking() {
    let text = edit(|v| {
        v["topology"]["regions"][0]["backends"] = u32::MAX.into();
        v["topology"]["regions"][1]["backends"] = 2.into();
    });
    let e = errors(&text);
    assert!(
        e.iter().any(|x| x.2.contains("at most 10 000 backends")),
        "{e:?}"
    );
}

#[test]
fn delays_and_rates_that_would_overflow_time_are_rejected() {
    type Edit = Box<dyn Fn(&mut serde_json::Value)>;
    let cases: [(&str, Edit, &str); 5] = [
        (
            "rtt",
            Box::new(|v| v["topology"]["rtt_ms"][0][1] = 1e300.into()),
            "\"rtt_ms\"",
        ),
        (
            "prefill",
            Box::new(|v| v["engine"]["prefill_tps"] = 1e-300.into()),
            "1e-300",
        ),
        (
            "speed",
            Box::new(|v| v["engine"]["backend_speed"] = 1e9.into()),
            "1000000000.0",
        ),
        (
            "decode",
            Box::new(|v| v["engine"]["decode_tps"] = serde_json::json!([1e-9, 1])),
            "\"decode_tps\"",
        ),
        (
            "window",
            Box::new(|v| v["pylon"]["input_tps"]["window"] = u64::MAX.into()),
            "\"input_tps\"",
        ),
    ];
    for (name, f, at) in cases {
        let mut v: serde_json::Value = serde_json::from_str(DEFAULT_SCENARIO).expect("json");
        f(&mut v);
        let e = errors(&serde_json::to_string_pretty(&v).expect("json"));
        assert_eq!(e.len(), 1, "{name}: {e:?}");
        assert_eq!(e[0].1, at, "{name}");
    }
}

#[test]
fn diagnostics_point_at_their_key_not_the_first_mention_of_its_name() {
    // The scenario's name mentions `slots` before the engine does.
    let text = DEFAULT_SCENARIO
        .replacen("\"repro-five-region-parity\"", "\"slots\"", 1)
        .replacen("\"slots\": 25", "\"slots\": 0", 1);
    let e = errors(&text);
    assert_eq!(e.len(), 1, "{e:?}");
    let at = text.find("\"slots\": 0").expect("slots") + "\"slots\": ".len();
    let report = load("s.json", &text).expect_err("invalid");
    assert_eq!(report.diagnostics[0].span.start, at);
    // A traffic weight points at the region that has it.
    let text = edit(|v| v["topology"]["regions"][3]["traffic_weight"] = (-1.0).into());
    let e = errors(&text);
    assert_eq!(e[0].1, "-1.0");
}

#[test]
fn base_config_errors_point_inside_base_config() {
    let text = edit(|v| {
        v["base_config"] = serde_json::json!({"models": {"m": {"bogus_field": 1}}});
    });
    let report = load("s.json", &text).expect_err("invalid");
    let d = report.first_error().expect("error");
    assert!(d.message.starts_with("base_config: "), "{}", d.message);
    let covered = &text[d.span.start..d.span.end];
    let base = text.find("\"base_config\"").expect("key");
    assert!(d.span.start > base, "{covered}");
    assert!(
        covered.contains("bogus_field") || covered.contains("models") || covered.contains('{'),
        "{covered}"
    );
    assert_ne!(covered, "\"base_config\"");
}

#[test]
fn legacy_band_walk_values_are_checked_on_the_tree() {
    let text = edit(|v| {
        v["policies"] = serde_json::json!({
            "l": "legacy-band-walk(max_queued=4, n=0, max_queue_time_floor_ms=4000, max_queue_time_ceil_ms=4000, initial_wait_ms=x)"
        });
    });
    let e = errors(&text);
    assert_eq!(e[0].0, Code::InvalidValue);
    assert_eq!(e[0].1, "x", "{e:?}");
    let text = edit(|v| {
        v["policies"] = serde_json::json!({
            "l": "legacy-band-walk(max_queued=4, n=0, max_queue_time_floor_ms=4000, max_queue_time_ceil_ms=4000, seed=\"a\\\"b\")"
        });
    });
    let e = errors(&text);
    // Spans survive the JSON escapes and the method's renaming.
    assert!(e.iter().any(|x| x.1 == "0" || x.1 == "n=0"), "{e:?}");
    assert!(e[0].2.starts_with("policy `l`: "), "{e:?}");
}
