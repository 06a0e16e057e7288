//! Bad input never panics: arbitrary text, and JSON built from the real
//! vocabulary so the deep paths of the reader run too.

use proptest::prelude::*;
use routex::diag::Code;

const WORDS: &[&str] = &[
    "default",
    "request_algorithms",
    "models",
    "algorithm",
    "pulsar",
    "random",
    "power-of-n",
    "powerOf2",
    "wait-and-widen",
    "pulsar-wait-and-widen",
    "round-robin",
    "seed",
    "n",
    "comparator",
    "sample_count",
    "max_queue_time_floor_ms",
    "max_queue_time_ceil_ms",
    "cache_affinity_input_tokens_scale",
    "band_widen_interval_ms",
    "rendezvous_weight",
    "consider_kv_free_tokens",
    "ttft",
    "m",
    "é",
];

fn json_value() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just("null".to_string()),
        Just("true".to_string()),
        Just("-1".to_string()),
        Just("0".to_string()),
        Just("1e400".to_string()),
        Just("2.5".to_string()),
        Just("18446744073709551616".to_string()),
        prop::sample::select(WORDS).prop_map(|w| format!("\"{w}\"")),
    ];
    leaf.prop_recursive(4, 32, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(|v| format!("[{}]", v.join(","))),
            prop::collection::vec((prop::sample::select(WORDS), inner), 0..5).prop_map(|v| {
                let members: Vec<String> = v
                    .into_iter()
                    .map(|(k, v)| format!("\"{k}\": {v}"))
                    .collect();
                format!("{{{}}}", members.join(", "))
            }),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn arbitrary_text_never_panics(text in "\\PC{0,64}") {
        let _ = routex::config::check_lb_config("x.json", &text);
        let _ = routex::config::import("x.json", &text);
        let _ = routex::check::check_expression("arg:1", &text, None, None);
        let _ = routex::check::compile_request_expression(&routex::check::permissive_table(), "m", &text);
        let _ = routex::check::check_route_file("x.routes", &text);
        let _ = routex::config::build("x.routes", &text);
    }

    #[test]
    fn vocabulary_json_never_panics_and_errors_point_inside(text in json_value()) {
        let (table, report) = routex::config::check_lb_config("x.json", &text);
        for d in &report.diagnostics {
            prop_assert!(d.span.end <= text.len() && d.span.start <= d.span.end, "{:?}", d);
        }
        prop_assert_eq!(table.is_some(), !report.has_errors());
    }
}

/// serde_json reads `-0` and integers beyond u64/i64 as floats, so a u64
/// field says invalid_type for them and invalid_value only for a negative
/// integer (stargate's codes); the messages say what the number is, as
/// written, without serde's type names.
#[test]
fn unsigned_fields_classify_numbers_as_serde_json_does_in_plain_words() {
    let cases = [
        (
            "-0",
            Code::InvalidType,
            "invalid type: `-0` reads as a floating-point number, expected an integer from 0 to 2^64-1",
        ),
        (
            "18446744073709551616",
            Code::InvalidType,
            "invalid type: integer `18446744073709551616` is too large, expected an integer from 0 to 2^64-1",
        ),
        (
            "-3",
            Code::InvalidValue,
            "invalid value: integer `-3` is negative, expected an integer from 0 to 2^64-1",
        ),
        (
            "-9223372036854775808",
            Code::InvalidValue,
            "invalid value: integer `-9223372036854775808` is negative, expected an integer from 0 to 2^64-1",
        ),
        (
            "-9223372036854775809",
            Code::InvalidType,
            "invalid type: integer `-9223372036854775809` is negative, expected an integer from 0 to 2^64-1",
        ),
        (
            "1e2",
            Code::InvalidType,
            "invalid type: number `1e2`, expected an integer from 0 to 2^64-1",
        ),
        (
            "1.50",
            Code::InvalidType,
            "invalid type: number `1.50`, expected an integer from 0 to 2^64-1",
        ),
        ("1e400", Code::InvalidJson, "number out of range: `1e400`"),
    ];
    for (literal, code, message) in cases {
        let json =
            format!(r#"{{"models": {{"m": {{"algorithm": "wait-and-widen", "n": {literal}}}}}}}"#);
        let (c, m, span) = super::only_error(&json);
        assert_eq!(
            (c, m.as_str(), span.as_str()),
            (code, message, literal),
            "{literal}"
        );
    }
    // The largest u64 is accepted.
    let json =
        r#"{"models": {"m": {"algorithm": "wait-and-widen", "max_queued": 18446744073709551615}}}"#;
    assert!(super::load(json).0.is_some());
}
