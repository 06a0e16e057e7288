//! Adversarial spec-compliance review of the semantic checker
//! (docs/stargate.md 4, 5.2-5.5, 6, 7.2, 7.4).

use super::table;
use routex::check::{compile_request_expression, permissive_table};
use routex::diag::Code;
use routex::ir::{RouteTable, Settings};

fn first(table: &RouteTable, model: &str, value: &str) -> (Code, String) {
    match compile_request_expression(table, model, value) {
        Ok(_) => panic!("{value} must be rejected"),
        Err(d) => (d[0].code, d[0].message.clone()),
    }
}

fn code(table: &RouteTable, model: &str, value: &str) -> Code {
    first(table, model, value).0
}

fn accepted(table: &RouteTable, model: &str, value: &str) -> routex::ir::Definition {
    match compile_request_expression(table, model, value) {
        Ok(d) => d,
        Err(d) => panic!("{value} must be accepted: {d:?}"),
    }
}

#[test]
fn precedence_of_multi_error_expressions() {
    let t = permissive_table();
    let m = "any";
    use Code::*;
    let cases: &[(&str, Code)] = &[
        ("fastest;widen=1", UnknownMethod),
        ("pulsar;seed=1;widen=1", InvalidValue),
        ("pulsar;widen=1;seed=1", UnknownParameter),
        ("pulsar;n=1;seed=1", NotApplicable),
        ("wait-and-widen;n=0;max_queued=-1", InertValue),
        ("wait-and-widen;max_queued=-1;n=0", InvalidValue),
        ("wait-and-widen;max_queue_time_floor_ms=1;n=0", InertValue),
        (
            "wait-and-widen;max_queue_time_floor_ms=1;rendezvous_weight=x",
            UnknownParameter,
        ),
        ("power-of-n;sample_count=0", InvalidValue),
        ("power-of-n;sample_count=65", InvalidValue),
        (
            "wait-and-widen;cache_affinity_virtual_nodes=1025",
            InvalidValue,
        ),
        ("wait-and-widen;cache_affinity_virtual_nodes=0", InertValue),
        (
            "pulsar-wait-and-widen;cache_affinity_virtual_nodes=1",
            NotApplicable,
        ),
        ("pulsar-wait-and-widen;comparator=ttft", NotApplicable),
        ("wait-and-widen;band_widen_interval_ms=1", NotApplicable),
        ("wait-and-widen;fallback_max_queued=1", NotApplicable),
        (
            "wait-and-widen;consider_kv_free_tokens=false",
            NotApplicable,
        ),
        ("round-robin;seed=x", NotApplicable),
        ("pulsar;rendezvous_weight=max-input-tps", UnknownParameter),
        ("wait-and-widen;max_queue_time_ceil_ms=5", InertCombination),
        ("random;max_input_work_seconds=0", InertValue),
        ("random;max_input_work_seconds=-1.5", InertValue),
        ("wait-and-widen;ttft_bucket_size_ms=0", InertValue),
        (
            "wait-and-widen;cache_affinity_backend_selection_count=0",
            InertValue,
        ),
        ("pulsar-wait-and-widen;n=0", InertValue),
        (
            "wait-and-widen;cache_affinity_input_tokens_scale=1.5",
            InvalidValue,
        ),
        (
            "wait-and-widen;cache_affinity_input_tokens_scale=-0.001",
            InvalidValue,
        ),
        ("power-of-n;comparator=fastest", InvalidValue),
        ("pulsar;consider_kv_free_tokens=True", InvalidValue),
        ("pulsar;consider_kv_free_tokens=1", InvalidValue),
        ("pulsar;seed=1", InvalidValue),
        ("pulsar;seed=1.5", InvalidValue),
        ("wait-and-widen;n=\"1.0\"", InvalidValue),
        ("wait-and-widen;n=1.0", InvalidValue),
        ("wait-and-widen;n=two", InvalidValue),
        (
            "wait-and-widen;next_bucket_unlock_factor=\"1e3\"",
            InvalidValue,
        ),
        (
            "wait-and-widen;next_bucket_unlock_factor=\".5\"",
            InvalidValue,
        ),
        (
            "wait-and-widen;next_bucket_unlock_factor=\"1.\"",
            InvalidValue,
        ),
        (
            "wait-and-widen;next_bucket_unlock_factor=\"inf\"",
            InvalidValue,
        ),
        (
            "wait-and-widen;next_bucket_unlock_factor=\"NaN\"",
            InvalidValue,
        ),
        (
            "wait-and-widen;next_bucket_unlock_factor=\" 1\"",
            InvalidValue,
        ),
        (
            "wait-and-widen;next_bucket_unlock_factor=\"\"",
            InvalidValue,
        ),
        (
            "wait-and-widen;next_bucket_unlock_factor=\"1.2.3\"",
            InvalidValue,
        ),
        (
            "wait-and-widen;next_bucket_unlock_factor=\"0x10\"",
            InvalidValue,
        ),
        ("wait-and-widen;next_bucket_unlock_factor=abc", InvalidValue),
        ("wait-and-widen;ignore_queue_time=\"TRUE\"", InvalidValue),
        ("wait-and-widen;max_queued=\"-1\"", InvalidValue),
    ];
    let mut wrong = Vec::new();
    for (value, want) in cases {
        match compile_request_expression(&t, m, value) {
            Ok(_) => wrong.push(format!("{value}: accepted, want {want:?}")),
            Err(d) if d[0].code != *want => wrong.push(format!(
                "{value}: {:?} {}, want {want:?}",
                d[0].code, d[0].message
            )),
            Err(_) => {}
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn quoted_400_digit_number_is_infinite_and_invalid() {
    let t = permissive_table();
    let big = "9".repeat(400);
    for field in ["next_bucket_unlock_factor", "max_queued"] {
        let v = format!("wait-and-widen;{field}=\"{big}\"");
        assert_eq!(code(&t, "m", &v), Code::InvalidValue, "{field}");
    }
    let v = format!("random;max_input_work_seconds=\"{big}\"");
    assert_eq!(code(&t, "m", &v), Code::InvalidValue);
}

#[test]
fn accepted_value_kinds() {
    let t = permissive_table();
    for v in [
        "wait-and-widen;ignore_queue_time=\"true\"",
        "wait-and-widen;max_queued=\"100\"",
        "wait-and-widen;next_bucket_unlock_factor=-2.5",
        "wait-and-widen;next_bucket_unlock_factor=\"-0.0625\"",
        "wait-and-widen;next_bucket_unlock_factor=3",
        "wait-and-widen;cache_affinity_virtual_nodes=1024",
        "wait-and-widen;cache_affinity_input_tokens_scale=0",
        "wait-and-widen;cache_affinity_input_tokens_scale=1",
        "pulsar;seed=\"1\"",
        "pulsar;seed=abc",
        "power-of-n;comparator=queue-time",
        "power-of-n;comparator=\"ttft\"",
        "power-of-two;sample_count=64",
        "pulsar-wait-and-widen;band_widen_interval_ms=0",
        "random;max_input_work_seconds=\"0.5\"",
        "wait-and-widen;max_queue_time_floor_ms=1;max_queue_time_ceil_ms=2",
    ] {
        accepted(&t, "m", v);
    }
}

#[test]
fn fixed_messages() {
    let t = permissive_table();
    assert_eq!(
        first(&t, "m", "fastest;seed=x").1,
        "unknown routing method 'fastest'"
    );
    assert_eq!(
        first(&t, "m", "fastest").1,
        "unknown routing method 'fastest'"
    );
    assert_eq!(
        first(&t, "m", "pulsar;widen=1").1,
        "unknown parameter 'widen' for algorithm pulsar"
    );
    assert_eq!(
        first(&t, "m", "round-robin;seed=x").1,
        "seed is not applicable to round-robin"
    );
    let r = table(r#"{"default": "pulsar"}"#);
    assert_eq!(
        first(&r, "m", "round-robin;seed=x"),
        (
            Code::Unavailable,
            "routing method round-robin is not configured for this model".into()
        )
    );
    assert_eq!(
        first(&r, "m", "power_of_two"),
        (
            Code::Unavailable,
            "routing method power-of-n is not configured for this model".into()
        )
    );
}

#[test]
fn resolution_for_a_model_with_an_entry_has_no_default_fallback() {
    let t = table(
        r#"{"default": "pulsar",
            "request_algorithms": {"random": "random"},
            "models": {"m": {"algorithm": "round-robin",
                             "request_algorithms": {"wait-and-widen": {"algorithm": "wait-and-widen", "n": 0, "max_queue_time_ceil_ms": 9}}}}}"#,
    );
    assert_eq!(code(&t, "m", "pulsar;seed=x"), Code::Unavailable);
    assert_eq!(code(&t, "m", "pulsar"), Code::Unavailable);
    accepted(&t, "m", "random;max_input_work_seconds=1");
    accepted(&t, "other", "pulsar;seed=x");
    assert_eq!(code(&t, "other", "round-robin"), Code::Unavailable);
    // Merge: static n = 0 is kept and normalised; the ceiling completes the pair.
    let d = accepted(&t, "m", "wait-and-widen;max_queue_time_floor_ms=3");
    assert_eq!(d.config.fields.n, Some(0));
    match d.policy.settings {
        Settings::WaitAndWiden(s) => {
            assert_eq!(s.bucket.n, 1);
            assert_eq!(s.bucket.max_queue_time_floor_ms, Some(3));
            assert_eq!(s.bucket.max_queue_time_ceil_ms, Some(9));
        }
        other => panic!("{other:?}"),
    }
    // The unmerged model wait-and-widen lacks a floor for other models.
    assert_eq!(
        code(&t, "other", "wait-and-widen;max_queue_time_ceil_ms=3"),
        Code::Unavailable
    );
}

/// A value without `;` is method-only (5 intro, 4.4): the 5.1 syntax rules
/// do not apply, so anything that is not an algorithm name is unknown_method.
#[test]
fn method_only_values_are_never_malformed() {
    let t = permissive_table();
    let long = "a".repeat(2000);
    for value in [
        "pul/sar",
        "*pulsar",
        "\"pulsar\"",
        "pulsar,random",
        "?1",
        "123",
        long.as_str(),
    ] {
        assert_eq!(code(&t, "m", value), Code::UnknownMethod, "{value}");
    }
    accepted(&t, "m", " PULSAR_WAIT_AND_WIDEN ");
    accepted(&t, "m", "groq_multiregion");
}

/// stargate reads `x-routing-method` in header form only (5, 5.1): a value
/// without `;` is a method name, so `pulsar(seed=x)` is an unknown method;
/// with `;` the RFC 8941 rules reject it. `compile_request_expression` also
/// takes the call form (for `routex check`/`decide`), so a router that
/// wants stargate's answers uses `compile_header_value`.
#[test]
fn header_compiler_rejects_the_call_form_as_stargate_does() {
    use routex::check::compile_header_value;
    let t = permissive_table();
    for (value, want) in [
        ("pulsar(seed=x)", Code::UnknownMethod),
        ("round-robin()", Code::UnknownMethod),
        ("pulsar(seed=x);n=1", Code::MalformedExpression),
    ] {
        match compile_header_value(&t, "m", value) {
            Ok(_) => panic!("{value} must be rejected"),
            Err(d) => assert_eq!(d[0].code, want, "{value}: {}", d[0].message),
        }
    }
    assert_eq!(
        compile_header_value(&t, "m", "pulsar(seed=x)")
            .err()
            .map(|d| d[0].message.clone()),
        Some("unknown routing method 'pulsar(seed=x)'".to_string())
    );
    for value in [
        "pulsar;seed=x",
        " pulsar; seed=x ",
        "round-robin",
        "powerOf2;sample_count=2",
    ] {
        assert!(compile_header_value(&t, "m", value).is_ok(), "{value}");
    }
    // The either-form compiler keeps accepting the call form.
    assert!(compile_request_expression(&t, "m", "pulsar(seed=x)").is_ok());
}
