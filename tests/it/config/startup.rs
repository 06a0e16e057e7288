//! Reference-behaviour 7.4: stargate's start-up rules, table-driven.

use super::{load, only_error, summary};
use routex::check::{build_policy, permissive_table};
use routex::diag::Code;
use routex::ir::{Algorithm, AlgorithmConfig, Comparator, FieldSet, RendezvousWeight, Settings};

fn model_entry(object: &str) -> String {
    format!(r#"{{"models": {{"m": {object}}}}}"#)
}

#[test]
fn pulsar_only_settings_are_rejected_for_wait_and_widen() {
    for (field, value) in [
        ("band_widen_interval_ms", "0"),
        ("band_widen_interval_ms", "300"),
        ("fallback_max_queued", "0"),
        ("fallback_max_queued", "2"),
    ] {
        let json = model_entry(&format!(
            r#"{{"algorithm": "wait-and-widen", "{field}": {value}}}"#
        ));
        let (code, message, at) = only_error(&json);
        // stargate's message; the code an expression gets for the same
        // mistake (tests/it/check/both_forms.rs).
        assert_eq!(code, Code::NotApplicable, "{json}");
        assert_eq!(
            message,
            format!("{field} is only supported for pulsar-wait-and-widen, not wait-and-widen")
        );
        assert_eq!(at, format!("\"{field}\""));
    }
    let json = model_entry(r#"{"algorithm": "wait-and-widen", "consider_kv_free_tokens": false}"#);
    assert_eq!(
        only_error(&json),
        (
            Code::UnsupportedField,
            "wait-and-widen config does not support field(s): consider_kv_free_tokens".into(),
            "\"consider_kv_free_tokens\"".into()
        )
    );
    // The builder refuses it too, naming the field.
    let fields = FieldSet {
        consider_kv_free_tokens: Some(true),
        ..FieldSet::default()
    };
    let err = build_policy(&AlgorithmConfig {
        algorithm: Algorithm::WaitAndWiden,
        fields,
    })
    .unwrap_err();
    assert!(
        err[0].message.contains("consider_kv_free_tokens"),
        "{err:?}"
    );
}

#[test]
fn pulsar_wait_and_widen_accepts_affinity_settings() {
    let json = model_entry(
        r#"{"algorithm": "pulsar-wait-and-widen", "seed": "v1",
            "cache_affinity_backend_selection_count": 2, "cache_affinity_wait_ms": 300,
            "cache_affinity_input_tokens_scale": 0.5, "band_widen_interval_ms": 200,
            "fallback_max_queued": 1, "cache_affinity_virtual_nodes": 7,
            "max_queue_time_floor_ms": 100, "max_queue_time_ceil_ms": 400}"#,
    );
    let (table, report) = load(&json);
    // Accepted; the ring's virtual nodes are ignored by PWW (a warning).
    let codes: Vec<_> = report.diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(codes, vec![routex::diag::Code::IgnoredField]);
    let table = table.expect("loads");
    let Settings::PulsarWaitAndWiden(s) = &table.models["m"].definition.policy.settings else {
        panic!("pww settings");
    };
    assert_eq!(s.seed, "v1");
    assert_eq!(s.cache_affinity_backend_selection_count, 2);
    assert_eq!(s.cache_affinity_wait_ms, 300);
    assert_eq!(s.cache_affinity_input_tokens_scale, 0.5);
    assert_eq!(s.band_widen_interval_ms, 200);
    assert_eq!(s.fallback_max_queued, 1);
    assert_eq!(s.bucket.max_queue_time_floor_ms, Some(100));
    assert_eq!(s.bucket.max_queue_time_ceil_ms, Some(400));
    // Virtual nodes are accepted and ignored: kept in the config only.
    assert_eq!(
        table.models["m"]
            .definition
            .config
            .fields
            .cache_affinity_virtual_nodes,
        Some(7)
    );
}

#[test]
fn pulsar_wait_and_widen_rejects_explicit_comparator() {
    for value in ["\"ttft\"", "\"queue-time\""] {
        let json = model_entry(&format!(
            r#"{{"algorithm": "pulsar-wait-and-widen", "comparator": {value}}}"#
        ));
        assert_eq!(
            only_error(&json),
            (
                Code::NotApplicable,
                "comparator is not supported for pulsar-wait-and-widen".into(),
                "\"comparator\"".into()
            )
        );
    }
    for alg in ["pulsar-wait-and-widen", "power-of-n", "wait-and-widen"] {
        let json = model_entry(&format!(r#"{{"algorithm": "{alg}", "comparator": null}}"#));
        let (code, message, at) = only_error(&json);
        assert_eq!(code, Code::InvalidType);
        assert!(message.starts_with("invalid type: null"), "{message}");
        assert_eq!(at, "null");
    }
}

#[test]
fn wait_and_widen_validates_cache_affinity_input_tokens_scale() {
    // ±∞ cannot come from JSON: serde_json refuses `1e400` (see
    // config::review); the builder's own check is pinned below.
    for (value, shown) in [("-0.1", "-0.1"), ("1.1", "1.1")] {
        let json = model_entry(&format!(
            r#"{{"algorithm": "wait-and-widen", "cache_affinity_input_tokens_scale": {value}}}"#
        ));
        let (code, message, at) = only_error(&json);
        assert_eq!(code, Code::InvalidValue);
        assert_eq!(
            message,
            format!("cache_affinity_input_tokens_scale must be between 0.0 and 1.0, got {shown}")
        );
        assert_eq!(at, "\"cache_affinity_input_tokens_scale\"");
    }
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let fields = FieldSet {
            cache_affinity_input_tokens_scale: Some(bad),
            ..FieldSet::default()
        };
        for algorithm in [Algorithm::WaitAndWiden, Algorithm::PulsarWaitAndWiden] {
            let err = build_policy(&AlgorithmConfig {
                algorithm,
                fields: fields.clone(),
            })
            .unwrap_err();
            assert!(err[0]
                .message
                .starts_with("cache_affinity_input_tokens_scale must be between 0.0 and 1.0"));
        }
    }
    for ok in ["0.0", "1.0", "0", "1"] {
        let json = model_entry(&format!(
            r#"{{"algorithm": "wait-and-widen", "cache_affinity_input_tokens_scale": {ok}}}"#
        ));
        assert!(load(&json).0.is_some(), "{ok}");
    }
}

#[test]
fn invalid_power_of_n_sample_counts_are_rejected_with_field_context() {
    for n in [0u64, 65, 1000] {
        let json = model_entry(&format!(
            r#"{{"algorithm": "power-of-n", "sample_count": {n}}}"#
        ));
        assert_eq!(
            only_error(&json),
            (
                Code::InvalidValue,
                format!("power-of-n sample_count must be between 1 and 64, got {n}"),
                "\"sample_count\"".into()
            )
        );
    }
    let (code, message, at) = only_error(&model_entry(
        r#"{"algorithm": "power-of-n", "sample_count": -1}"#,
    ));
    assert_eq!((code, at.as_str()), (Code::InvalidValue, "-1"));
    assert_eq!(
        message,
        "invalid value: integer `-1` is negative, expected an integer from 0 to 2^64-1"
    );
    let (code, message, _) = only_error(&model_entry(
        r#"{"algorithm": "power-of-n", "sample_count": 2.5}"#,
    ));
    assert_eq!(code, Code::InvalidType);
    assert_eq!(
        message,
        "invalid type: number `2.5`, expected an integer from 0 to 2^64-1"
    );
    for n in [1u64, 2, 64] {
        let json = model_entry(&format!(
            r#"{{"algorithm": "power-of-n", "sample_count": {n}}}"#
        ));
        let table = load(&json).0.expect("valid sample count");
        let Settings::PowerOfN(s) = &table.models["m"].definition.policy.settings else {
            panic!("power-of-n");
        };
        assert_eq!(s.sample_count, n);
    }
}

#[test]
fn algorithm_specific_load_balancer_fields_are_rejected_for_other_algorithms() {
    let cases = [
        ("round-robin", r#""seed": "x""#, "seed"),
        ("random", r#""seed": "x""#, "seed"),
        ("power-of-n", r#""seed": "x""#, "seed"),
        (
            "power-of-n",
            r#""consider_kv_free_tokens": true"#,
            "consider_kv_free_tokens",
        ),
        (
            "wait-and-widen",
            r#""rendezvous_weight": "max-input-tps""#,
            "rendezvous_weight",
        ),
        ("wait-and-widen", r#""sample_count": 2"#, "sample_count"),
        ("pulsar", r#""comparator": "ttft""#, "comparator"),
        ("pulsar", r#""n": 2"#, "n"),
        (
            "round-robin",
            r#""cache_affinity_wait_ms": 1"#,
            "cache_affinity_wait_ms",
        ),
        (
            "pulsar-wait-and-widen",
            r#""sample_count": 2"#,
            "sample_count",
        ),
    ];
    for (alg, field_json, field) in cases {
        let json = model_entry(&format!(r#"{{"algorithm": "{alg}", {field_json}}}"#));
        assert_eq!(
            only_error(&json),
            (
                Code::UnsupportedField,
                format!("{alg} config does not support field(s): {field}"),
                format!("\"{field}\"")
            ),
            "{json}"
        );
    }
    // Several fields: one diagnostic per key; stargate's sorted list in
    // the first, only its own key in each other.
    let json = model_entry(r#"{"algorithm": "random", "seed": "x", "n": 2, "widen": 1}"#);
    let (table, report) = load(&json);
    assert!(table.is_none());
    let message = |keys: &str| format!("random config does not support field(s): {keys}");
    assert_eq!(
        summary(&report),
        vec![
            (
                Code::UnsupportedField,
                message("n, seed, widen"),
                "\"seed\"".into()
            ),
            (Code::UnsupportedField, message("n"), "\"n\"".into()),
            (Code::UnknownField, message("widen"), "\"widen\"".into()),
        ]
    );
}

#[test]
fn unknown_load_balancer_config_fields_are_rejected() {
    let (code, message, at) = only_error(r#"{"default": "random", "fallback": "pulsar"}"#);
    assert_eq!((code, at.as_str()), (Code::UnknownField, "\"fallback\""));
    assert_eq!(
        message,
        "unknown field `fallback`, expected one of `default`, `request_algorithms`, `models`"
    );
    for field in ["widen", "Seed"] {
        let json = model_entry(&format!(r#"{{"algorithm": "pulsar", "{field}": 1}}"#));
        assert_eq!(
            only_error(&json),
            (
                Code::UnknownField,
                format!("pulsar config does not support field(s): {field}"),
                format!("\"{field}\"")
            )
        );
    }
}

#[test]
fn request_algorithm_key_must_match_configured_algorithm() {
    let json = r#"{"request_algorithms": {"pulsar": {"algorithm": "random"}}}"#;
    assert_eq!(
        only_error(json),
        (
            Code::RequestAlgorithmMismatch,
            "request_algorithms key pulsar does not match configured algorithm random".into(),
            "\"pulsar\"".into()
        )
    );
    let json = r#"{"request_algorithms": {"power-of-two": "random"}}"#;
    let (table, report) = load(json);
    assert!(table.is_none());
    assert!(summary(&report).contains(&(
        Code::RequestAlgorithmMismatch,
        "request_algorithms key power-of-two does not match configured algorithm random".into(),
        "\"power-of-two\"".into()
    )));
    // An alias key naming its value's algorithm matches.
    let (table, _) = load(r#"{"request_algorithms": {"powerOf2": "power-of-n"}}"#);
    assert!(table
        .expect("matches")
        .request_algorithms
        .contains_key(&Algorithm::PowerOfN));
}

#[test]
fn model_request_algorithms_override_top_level_request_algorithms() {
    let json = r#"{
      "default": "random",
      "request_algorithms": {
        "pulsar": {"algorithm": "pulsar", "seed": "top"},
        "round-robin": "round-robin"
      },
      "models": {
        "m": {"algorithm": "power-of-n",
              "request_algorithms": {"pulsar": {"algorithm": "pulsar", "seed": "model"}}}
      }
    }"#;
    let (table, report) = load(json);
    assert!(report.diagnostics.is_empty(), "{:?}", report.diagnostics);
    let table = table.expect("loads");
    let seed = |model: &str| match table.resolve(model, Algorithm::Pulsar) {
        Some(r) => match &r.definition.policy.settings {
            Settings::Pulsar(p) => p.seed.clone(),
            _ => "not pulsar".into(),
        },
        None => "unavailable".into(),
    };
    assert_eq!(seed("m"), "model");
    assert_eq!(seed("other"), "top");
    // The model falls back to top-level entries, never to `default`.
    assert!(table.resolve("m", Algorithm::RoundRobin).is_some());
    assert!(table.resolve("m", Algorithm::Random).is_none());
    assert!(table.resolve("other", Algorithm::Random).is_some());
}

#[test]
fn permissive_default_resolves_every_builtin_algorithm() {
    let table = permissive_table();
    assert_eq!(table.default.config.algorithm, Algorithm::PowerOfN);
    for alg in Algorithm::ALL {
        let r = table.resolve("any-model", alg).expect("available");
        assert_eq!(r.definition.config, AlgorithmConfig::named(alg));
        assert_eq!(r.definition.policy.algorithm, alg);
    }
}

#[test]
fn explicit_config_stays_restrictive() {
    let (table, _) = load(r#"{"default": "pulsar"}"#);
    let table = table.expect("loads");
    assert!(table.resolve("m", Algorithm::Pulsar).is_some());
    for alg in Algorithm::ALL
        .into_iter()
        .filter(|a| *a != Algorithm::Pulsar)
    {
        assert!(table.resolve("m", alg).is_none(), "{alg}");
    }
    let (table, _) = load(r#"{}"#);
    let table = table.expect("empty config loads");
    assert_eq!(table.default.config.algorithm, Algorithm::PowerOfN);
    assert!(table.resolve("m", Algorithm::Random).is_none());
}

#[test]
fn wait_and_widen_config_resolves_internal_defaults() {
    let json = model_entry(
        r#"{"algorithm": "wait-and-widen", "n": 0, "cache_affinity_virtual_nodes": 0,
            "cache_affinity_backend_selection_count": 0,
            "max_queue_time_floor_ms": 100, "max_queue_time_ceil_ms": 300}"#,
    );
    let table = load(&json).0.expect("loads with warnings");
    let Settings::WaitAndWiden(s) = &table.models["m"].definition.policy.settings else {
        panic!("ww");
    };
    assert_eq!(s.bucket.n, 1);
    assert_eq!(s.cache_affinity_virtual_nodes, 1);
    assert_eq!(s.cache_affinity_backend_selection_count, None);
    assert_eq!(s.bucket.ttft_bucket_size_ms, 20);
    assert_eq!(s.bucket.next_bucket_unlock_factor, 0.25);
    assert_eq!(s.bucket.max_queued, 0);
    assert_eq!(s.comparator, Comparator::Ttft);
    assert_eq!(s.cache_affinity_input_tokens_scale, 1.0);
    assert_eq!(s.seed, "");
    let slo = s.bucket.queue_slo().expect("both bounds: SLO on");
    assert_eq!((slo.floor_ms, slo.ceil_ms), (100, 300));
    // The static zeros stay in the configuration an expression merges onto.
    let config = &table.models["m"].definition.config.fields;
    assert_eq!(config.n, Some(0));
    // A name-only entry gets every default.
    let named = build_policy(&AlgorithmConfig::named(Algorithm::WaitAndWiden)).unwrap();
    let Settings::WaitAndWiden(d) = named.settings else {
        panic!("ww");
    };
    assert_eq!((d.bucket.n, d.cache_affinity_virtual_nodes), (2, 150));
    assert_eq!(d.bucket.queue_slo(), None);
}

#[test]
fn pulsar_rendezvous_weight_parses_for_both_pulsar_variants() {
    for alg in ["pulsar", "pulsar-wait-and-widen"] {
        for (name, weight) in [
            ("max-input-tps", RendezvousWeight::MaxInputTps),
            ("last-mean-input-tps", RendezvousWeight::LastMeanInputTps),
        ] {
            let json = model_entry(&format!(
                r#"{{"algorithm": "{alg}", "rendezvous_weight": "{name}"}}"#
            ));
            let table = load(&json).0.expect("loads");
            let got = match &table.models["m"].definition.policy.settings {
                Settings::Pulsar(p) => p.rendezvous_weight,
                Settings::PulsarWaitAndWiden(p) => p.rendezvous_weight,
                _ => panic!("pulsar family"),
            };
            assert_eq!(got, weight);
        }
        let json = model_entry(&format!(
            r#"{{"algorithm": "{alg}", "rendezvous_weight": "mean"}}"#
        ));
        let (code, message, at) = only_error(&json);
        assert_eq!((code, at.as_str()), (Code::InvalidValue, "\"mean\""));
        assert_eq!(message, "invalid value: unknown rendezvous_weight `mean`");
    }
    // Name-only entries get the maximum-TPS weight.
    let table = load(r#"{"default": "pulsar"}"#).0.expect("loads");
    let Settings::Pulsar(p) = &table.default.policy.settings else {
        panic!("pulsar");
    };
    assert_eq!(p.rendezvous_weight, RendezvousWeight::MaxInputTps);
}

#[test]
fn consider_kv_free_tokens_implies_require_input_tokens() {
    let json = model_entry(r#"{"algorithm": "pulsar", "consider_kv_free_tokens": true}"#);
    let table = load(&json).0.expect("loads");
    assert!(
        table.models["m"]
            .definition
            .policy
            .admission
            .require_input_tokens
    );
    let json = model_entry(r#"{"algorithm": "pulsar", "max_input_work_seconds": -1}"#);
    let table = load(&json).0.expect("unchecked in JSON");
    assert_eq!(
        table.models["m"]
            .definition
            .policy
            .admission
            .max_input_work_seconds,
        Some(-1.0)
    );
}

#[test]
fn file_structure_rules() {
    let cases: &[(&str, Code, &str, &str)] = &[
        (
            r#"[1]"#,
            Code::InvalidType,
            "invalid type: array, expected an lb-config.json object",
            "[1]",
        ),
        (
            r#"{"default": {"algorithm": "pulsar"}}"#,
            Code::InvalidType,
            "invalid type: object, expected an algorithm name: `default` is a name only",
            r#"{"algorithm": "pulsar"}"#,
        ),
        (
            r#"{"models": {"m": 3}}"#,
            Code::InvalidType,
            "invalid type: integer `3`, expected algorithm name or detailed config object",
            "3",
        ),
        (
            r#"{"models": {"m": ["pulsar"]}}"#,
            Code::InvalidType,
            "invalid type: array, expected algorithm name or detailed config object",
            r#"["pulsar"]"#,
        ),
        (
            r#"{"models": {"m": {"seed": "x"}}}"#,
            Code::MissingField,
            "missing field `algorithm`",
            "{",
        ),
        (
            r#"{"models": {"m": "Pulsar"}}"#,
            Code::UnknownMethod,
            "unknown algorithm \"Pulsar\"",
            "\"Pulsar\"",
        ),
        (
            r#"{"models": {"m": "round_robin"}}"#,
            Code::UnknownMethod,
            "unknown algorithm \"round_robin\"",
            "\"round_robin\"",
        ),
        (
            r#"{"models": []}"#,
            Code::InvalidType,
            "invalid type: array, expected an object for models",
            "[]",
        ),
        (
            r#"{"default": "random", "default": "pulsar"}"#,
            Code::InvalidJson,
            "duplicate field `default`",
            "\"default\"",
        ),
        (
            r#"{"models": {"m": {"algorithm": "pulsar", "seed": 1}}}"#,
            Code::InvalidType,
            "invalid type: integer `1`, expected a string",
            "1",
        ),
        (
            r#"{"models": {"m": {"algorithm": "pulsar", "consider_kv_free_tokens": "true"}}}"#,
            Code::InvalidType,
            "invalid type: string \"true\", expected a boolean",
            "\"true\"",
        ),
    ];
    for (json, code, message, at) in cases {
        assert_eq!(
            only_error(json),
            (*code, message.to_string(), at.to_string()),
            "{json}"
        );
    }
    let (table, report) = load("{\n  \"default\": \"pulsar\",\n}");
    assert!(table.is_none());
    let d = &report.diagnostics[0];
    assert_eq!(d.code, Code::InvalidJson);
    assert_eq!(d.message, "invalid JSON: expected a string key, found `}`");
    assert_eq!(report.line_column(d.span.start), (3, 1));
}

#[test]
fn json_names_are_exact_and_aliases_warn() {
    let (table, report) = load(r#"{"default": "powerOf2", "models": {"m": "groq-multiregion"}}"#);
    let table = table.expect("aliases load");
    assert_eq!(table.default.config.algorithm, Algorithm::PowerOfN);
    assert_eq!(
        table.models["m"].definition.config.algorithm,
        Algorithm::WaitAndWiden
    );
    assert_eq!(
        summary(&report),
        vec![
            (
                Code::DeprecatedAlias,
                "\"powerOf2\" is a deprecated alias of power-of-n".into(),
                "\"powerOf2\"".into()
            ),
            (
                Code::DeprecatedAlias,
                "\"groq-multiregion\" is a deprecated alias of wait-and-widen".into(),
                "\"groq-multiregion\"".into()
            ),
        ]
    );
    assert_eq!(
        report.diagnostics[0].help.as_deref(),
        Some("write \"power-of-n\"")
    );
    let (_, report) = load(r#"{"default": "Pulsar"}"#);
    assert_eq!(
        report.diagnostics[0].help.as_deref(),
        Some("did you mean \"pulsar\"? (names are exact and case-sensitive)")
    );
}

/// The builder's `Err` is every refusal (stargate stops at the first,
/// which comes first), each naming its field, with an empty span: a
/// configuration built in code has no text.
#[test]
fn build_policy_returns_every_refusal_first_stargates() {
    let fields = FieldSet {
        band_widen_interval_ms: Some(5),
        fallback_max_queued: Some(0),
        ..FieldSet::default()
    };
    let errors = build_policy(&AlgorithmConfig {
        algorithm: Algorithm::WaitAndWiden,
        fields,
    })
    .unwrap_err();
    let messages: Vec<&str> = errors.iter().map(|e| e.message.as_str()).collect();
    assert_eq!(
        messages,
        [
            "band_widen_interval_ms is only supported for pulsar-wait-and-widen, not wait-and-widen",
            "fallback_max_queued is only supported for pulsar-wait-and-widen, not wait-and-widen",
        ]
    );
    for e in &errors {
        assert_eq!(e.code, Code::InvalidValue);
        assert_eq!((e.span.start, e.span.end), (0, 0));
    }
}
