//! Reference-behaviour 7.2: request expressions against a base configuration.

use super::{compile, error_codes, table};
use routex::check::schema::{get, set, Field, Typed};
use routex::diag::Code;
use routex::ir::{Algorithm, AlgorithmConfig, Comparator, RendezvousWeight, Settings};

/// A base and an expression value per field, both valid and non-default.
fn values(field: Field) -> (Typed, Typed) {
    use Typed::*;
    match field {
        Field::RequireCacheAffinityKey
        | Field::RequireInputTokens
        | Field::ConsiderKvFreeTokens
        | Field::IgnoreQueueTime
        | Field::IgnoreInputProcessingTime => (Bool(true), Bool(false)),
        Field::MaxInputWorkSeconds => (Decimal(2.5), Decimal(7.25)),
        Field::SampleCount => (Unsigned(3), Unsigned(5)),
        Field::Comparator => (
            Comparator(routex::ir::Comparator::QueueTime),
            Comparator(routex::ir::Comparator::Utilization),
        ),
        Field::Seed => (Text("base".into()), Text("expr".into())),
        Field::RendezvousWeight => (
            Weight(RendezvousWeight::LastMeanInputTps),
            Weight(RendezvousWeight::MaxInputTps),
        ),
        Field::N => (Unsigned(3), Unsigned(4)),
        Field::MaxQueued => (Unsigned(1), Unsigned(2)),
        Field::MaxQueueTimeFloorMs => (Unsigned(100), Unsigned(150)),
        Field::MaxQueueTimeCeilMs => (Unsigned(300), Unsigned(350)),
        Field::TtftBucketSizeMs => (Unsigned(30), Unsigned(40)),
        Field::NextBucketUnlockFactor => (Decimal(0.5), Decimal(-0.125)),
        Field::CacheAffinityVirtualNodes => (Unsigned(10), Unsigned(1024)),
        Field::CacheAffinityBackendSelectionCount => (Unsigned(2), Unsigned(3)),
        Field::CacheAffinityInputTokensScale => (Decimal(0.5), Decimal(0.25)),
        Field::CacheAffinityWaitMs => (Unsigned(100), Unsigned(200)),
        Field::BandWidenIntervalMs => (Unsigned(50), Unsigned(0)),
        Field::FallbackMaxQueued => (Unsigned(1), Unsigned(2)),
        Field::LastClusterAffinity => (Bool(true), Bool(false)),
    }
}

fn header_value(value: &Typed) -> String {
    match value {
        Typed::Bool(b) => b.to_string(),
        Typed::Text(s) => format!("\"{s}\""),
        Typed::Unsigned(u) => u.to_string(),
        Typed::Decimal(d) => d.to_string(),
        Typed::Comparator(c) => c.name().to_string(),
        Typed::Weight(w) => w.name().to_string(),
    }
}

fn json_value(value: &Typed) -> serde_json::Value {
    match value {
        Typed::Bool(b) => (*b).into(),
        Typed::Text(s) => s.clone().into(),
        Typed::Unsigned(u) => (*u).into(),
        Typed::Decimal(d) => (*d).into(),
        Typed::Comparator(c) => c.name().into(),
        Typed::Weight(w) => w.name().into(),
    }
}

/// Every field the configuration of `alg` can hold and still build.
fn base_config(alg: Algorithm) -> AlgorithmConfig {
    let mut config = AlgorithmConfig::named(alg);
    for field in Field::ALL {
        let builds = match (alg, field) {
            (Algorithm::PulsarWaitAndWiden, Field::Comparator) => false,
            (Algorithm::WaitAndWiden, Field::BandWidenIntervalMs | Field::FallbackMaxQueued) => {
                false
            }
            _ => field.json_algorithms().contains(&alg),
        };
        if builds {
            set(&mut config.fields, field, values(field).0).unwrap();
        }
    }
    config
}

fn config_json(config: &AlgorithmConfig) -> String {
    let mut object = serde_json::Map::new();
    object.insert("algorithm".into(), config.algorithm.name().into());
    for field in Field::ALL {
        if let Some(v) = get(&config.fields, field) {
            object.insert(field.name().into(), json_value(&v));
        }
    }
    serde_json::json!({"models": {"m": object}}).to_string()
}

#[test]
fn test_overlay_preserves_omitted_fields_for_every_algorithm() {
    for alg in Algorithm::ALL {
        let base = base_config(alg);
        let table = table(&config_json(&base));
        for field in Field::ALL
            .into_iter()
            .filter(|f| f.expression_algorithms().contains(&alg))
        {
            let value = values(field).1;
            let text = format!("{alg};{}={}", field.name(), header_value(&value));
            let (checked, diags) = compile(Some(&table), Some("m"), &text);
            assert_eq!(error_codes(&diags), vec![], "{text}: {diags:?}");
            let checked = checked.expect("known method");
            let mut expected = base.clone();
            set(&mut expected.fields, field, value.clone()).unwrap();
            assert_eq!(checked.config, expected, "{text}");
            assert_eq!(checked.set_by_expression, vec![field]);
            // The value lands in the IR field of the same name.
            let policy = serde_json::to_value(checked.policy.expect("builds")).unwrap();
            let ir = policy["admission"]
                .get(field.name())
                .or_else(|| policy["settings"].get(field.name()))
                .cloned();
            let implied = field == Field::RequireInputTokens && alg.is_pulsar_family();
            if !implied {
                assert_eq!(ir, Some(json_value(&value)), "{text}");
            }
        }
        // An unnamed field such as max_input_work_seconds survives.
        let (checked, _) = compile(
            Some(&table),
            Some("m"),
            &format!("{alg};require_input_tokens=false"),
        );
        assert_eq!(
            checked.unwrap().config.fields.max_input_work_seconds,
            Some(2.5)
        );
    }
}

#[test]
fn test_compile_classifies_semantic_rejections() {
    let restrictive = table(r#"{"default": "pulsar", "models": {"m": "random"}}"#);
    let cases: &[(&str, Option<Code>)] = &[
        ("fastest", Some(Code::UnknownMethod)),
        ("", Some(Code::UnknownMethod)),
        ("   ", Some(Code::UnknownMethod)),
        ("fastest;seed=x", Some(Code::UnknownMethod)),
        ("pulsar;widen=1", Some(Code::UnknownParameter)),
        (
            "pulsar;rendezvous_weight=max-input-tps",
            Some(Code::UnknownParameter),
        ),
        (
            "wait-and-widen;last_cluster_affinity=true",
            Some(Code::UnknownParameter),
        ),
        ("round-robin;seed=x", Some(Code::NotApplicable)),
        ("random;n=2", Some(Code::NotApplicable)),
        (
            "pulsar-wait-and-widen;comparator=ttft",
            Some(Code::NotApplicable),
        ),
        (
            "pulsar-wait-and-widen;cache_affinity_virtual_nodes=1",
            Some(Code::NotApplicable),
        ),
        (
            "wait-and-widen;band_widen_interval_ms=1",
            Some(Code::NotApplicable),
        ),
        (
            "wait-and-widen;fallback_max_queued=1",
            Some(Code::NotApplicable),
        ),
        (
            "wait-and-widen;consider_kv_free_tokens=false",
            Some(Code::NotApplicable),
        ),
        ("power-of-n;seed=x", Some(Code::NotApplicable)),
        ("pulsar;comparator=ttft", Some(Code::NotApplicable)),
        ("power-of-n;sample_count=0", Some(Code::InvalidValue)),
        ("power-of-n;sample_count=65", Some(Code::InvalidValue)),
        ("power-of-n;comparator=fastest", Some(Code::InvalidValue)),
        ("pulsar;seed=1", Some(Code::InvalidValue)),
        ("pulsar;consider_kv_free_tokens=1", Some(Code::InvalidValue)),
        (
            "wait-and-widen;ignore_queue_time=True",
            Some(Code::InvalidValue),
        ),
        (
            "wait-and-widen;cache_affinity_virtual_nodes=1025",
            Some(Code::InvalidValue),
        ),
        (
            "wait-and-widen;cache_affinity_input_tokens_scale=1.5",
            Some(Code::InvalidValue),
        ),
        (
            "wait-and-widen;cache_affinity_input_tokens_scale=-0.001",
            Some(Code::InvalidValue),
        ),
        ("wait-and-widen;max_queued=-1", Some(Code::InvalidValue)),
        ("wait-and-widen;n=1.5", Some(Code::InvalidValue)),
        ("wait-and-widen;n=two", Some(Code::InvalidValue)),
        ("wait-and-widen;n=\"1.0\"", Some(Code::InvalidValue)),
        ("wait-and-widen;n=0", Some(Code::InertValue)),
        (
            "wait-and-widen;ttft_bucket_size_ms=0",
            Some(Code::InertValue),
        ),
        (
            "wait-and-widen;cache_affinity_virtual_nodes=0",
            Some(Code::InertValue),
        ),
        (
            "pulsar-wait-and-widen;cache_affinity_backend_selection_count=0",
            Some(Code::InertValue),
        ),
        ("random;max_input_work_seconds=0", Some(Code::InertValue)),
        ("random;max_input_work_seconds=-1.5", Some(Code::InertValue)),
        (
            "wait-and-widen;max_queue_time_floor_ms=100",
            Some(Code::InertCombination),
        ),
        (
            "pulsar-wait-and-widen;max_queue_time_ceil_ms=100",
            Some(Code::InertCombination),
        ),
        // Accepted.
        ("wait-and-widen;cache_affinity_virtual_nodes=1024", None),
        (
            "wait-and-widen;max_queue_time_floor_ms=100;max_queue_time_ceil_ms=50",
            None,
        ),
        ("pulsar-wait-and-widen;band_widen_interval_ms=0", None),
        ("wait-and-widen;next_bucket_unlock_factor=-3", None),
        ("wait-and-widen;max_queued=\"18446744073709551615\"", None),
        ("wait-and-widen(max_queued=18446744073709551615)", None),
        (
            "wait-and-widen(max_queued=18446744073709551616)",
            Some(Code::InvalidValue),
        ),
        ("pulsar(seed=\"v1\", consider_kv_free_tokens=true,)", None),
        ("round-robin()", None),
        ("pulsar(widen=1)", Some(Code::UnknownParameter)),
        (
            "power-of-n;sample_count=64;comparator=num-requests-queued",
            None,
        ),
    ];
    for (text, expected) in cases {
        let (_, diags) = compile(None, None, text);
        assert_eq!(
            error_codes(&diags).first().copied(),
            *expected,
            "{text}: {diags:?}"
        );
    }
    for (model, text, expected) in [
        ("m", "pulsar", Some(Code::Unavailable)),
        ("m", "random", None),
        ("other", "pulsar", None),
        ("other", "random;seed=x", Some(Code::Unavailable)),
        ("m", "PULSAR_WAIT_AND_WIDEN;seed=x", Some(Code::Unavailable)),
    ] {
        let (_, diags) = compile(Some(&restrictive), Some(model), text);
        assert_eq!(
            error_codes(&diags).first().copied(),
            expected,
            "{model} {text}"
        );
    }
}

#[test]
fn every_problem_is_reported_in_stargate_order() {
    let (_, diags) = compile(
        None,
        None,
        "pulsar;widen=1;seed=1;n=2;consider_kv_free_tokens=yes",
    );
    assert_eq!(
        error_codes(&diags),
        vec![
            Code::UnknownParameter,
            Code::InvalidValue,
            Code::NotApplicable,
            Code::InvalidValue
        ]
    );
    let (_, diags) = compile(
        None,
        None,
        "wait-and-widen;n=0;max_queue_time_floor_ms=5;seed=x",
    );
    assert_eq!(
        error_codes(&diags),
        vec![Code::InertValue, Code::InertCombination]
    );
    let restrictive = table(r#"{"default": "pulsar"}"#);
    let (_, diags) = compile(Some(&restrictive), None, "random;seed=x");
    assert_eq!(
        error_codes(&diags),
        vec![Code::Unavailable, Code::NotApplicable]
    );
}

#[test]
fn test_compile_rejection_messages_name_the_offending_input() {
    let restrictive = table(r#"{"default": "pulsar"}"#);
    let cases: &[(&str, &str, &str)] = &[
        ("fastest", "unknown routing method 'fastest'", "fastest"),
        (
            "pulsar;widen=1",
            "unknown parameter 'widen' for algorithm pulsar",
            "widen",
        ),
        (
            "random",
            "routing method random is not configured for this model",
            "random",
        ),
        (
            "round-robin;seed=x",
            "routing method round-robin is not configured for this model",
            "round-robin",
        ),
        (
            "pulsar;comparator=ttft",
            "comparator is not applicable to pulsar",
            "comparator",
        ),
        (
            "pulsar;seed=1",
            "invalid value 1 for seed: expected a token or a quoted string",
            "1",
        ),
        (
            "pulsar;consider_kv_free_tokens=\"yes\"",
            "invalid value \"yes\" for consider_kv_free_tokens: expected true or false",
            "\"yes\"",
        ),
    ];
    for (text, message, at) in cases {
        let (_, diags) = compile(Some(&restrictive), None, text);
        let first = diags.iter().find(|d| d.is_error()).expect("an error");
        assert_eq!(first.message, *message, "{text}");
        assert_eq!(&text[first.span.start..first.span.end], *at, "{text}");
    }
    let cases: &[(&str, &str, &str)] = &[
        (
            "power-of-n;sample_count=0",
            "sample_count must be between 1 and 64, got 0",
            "0",
        ),
        (
            "power-of-n;comparator=fastest",
            "unknown comparator 'fastest'",
            "fastest",
        ),
        (
            "wait-and-widen;n=0",
            "n must be at least 1, got 0 (0 would disable it)",
            "0",
        ),
        (
            "wait-and-widen;cache_affinity_virtual_nodes=2000",
            "cache_affinity_virtual_nodes must be at most 1024, got 2000",
            "2000",
        ),
        (
            "wait-and-widen;cache_affinity_input_tokens_scale=1.5",
            "cache_affinity_input_tokens_scale must be between 0.0 and 1.0, got 1.5",
            "1.5",
        ),
        (
            "random;max_input_work_seconds=-2",
            "max_input_work_seconds must be greater than 0, got -2",
            "-2",
        ),
        (
            "wait-and-widen;max_queue_time_ceil_ms=9",
            "max_queue_time_floor_ms and max_queue_time_ceil_ms must both be configured",
            "max_queue_time_ceil_ms=9",
        ),
    ];
    for (text, message, at) in cases {
        let (_, diags) = compile(None, None, text);
        let first = diags.iter().find(|d| d.is_error()).expect("an error");
        assert_eq!(first.message, *message, "{text}");
        assert_eq!(&text[first.span.start..first.span.end], *at, "{text}");
    }
}

#[test]
fn help_lines_suggest_names_ranges_and_algorithms() {
    let help = |text: &str| {
        let (_, diags) = compile(None, None, text);
        diags
            .into_iter()
            .find(|d| d.is_error())
            .and_then(|d| d.help)
    };
    assert_eq!(help("pulsr").as_deref(), Some("did you mean `pulsar`?"));
    assert_eq!(
        help("pulsar;sed=x").as_deref(),
        Some("did you mean `seed`?")
    );
    assert_eq!(
        help("fastest").as_deref(),
        Some("routing methods: power-of-n, wait-and-widen, round-robin, random, pulsar, pulsar-wait-and-widen")
    );
    assert_eq!(help("pulsar;zzz=1"), None);
    assert_eq!(
        help("wait-and-widen;band_widen_interval_ms=1").as_deref(),
        Some("band_widen_interval_ms applies to: pulsar-wait-and-widen")
    );
    assert_eq!(
        help("power-of-n;sample_count=99").as_deref(),
        Some("accepted: 1..=64")
    );
}

#[test]
fn aliases_warn_and_name_the_canonical_spelling() {
    for (text, alg) in [
        ("power_of_two", Algorithm::PowerOfN),
        ("powerOf2;sample_count=2", Algorithm::PowerOfN),
        ("GROQ_MULTIREGION", Algorithm::WaitAndWiden),
        ("pulsar-multiregion;seed=x", Algorithm::PulsarWaitAndWiden),
    ] {
        let (checked, diags) = compile(None, None, text);
        assert_eq!(checked.unwrap().config.algorithm, alg);
        assert_eq!(diags.len(), 1, "{text}");
        assert_eq!(diags[0].code, Code::DeprecatedAlias);
        assert_eq!(diags[0].help, Some(format!("write `{alg}`")));
    }
}

#[test]
fn test_quoted_numbers_require_plain_finite_content() {
    let factor = |v: &str| {
        let (checked, diags) = compile(
            None,
            None,
            &format!("wait-and-widen;next_bucket_unlock_factor={v}"),
        );
        match error_codes(&diags).first() {
            Some(code) => Err(*code),
            None => Ok(checked
                .unwrap()
                .config
                .fields
                .next_bucket_unlock_factor
                .unwrap()),
        }
    };
    for (v, expected) in [
        ("\"0.0625\"", 0.0625),
        ("\"+1\"", 1.0),
        ("\"-2.5\"", -2.5),
        ("\"007\"", 7.0),
        ("0.125", 0.125),
        ("3", 3.0),
    ] {
        assert_eq!(factor(v), Ok(expected), "{v}");
    }
    let huge = format!("\"{}\"", "9".repeat(400));
    for v in [
        "\"1e3\"",
        "\"0x10\"",
        "\"inf\"",
        "\"NaN\"",
        "\".5\"",
        "\"1.\"",
        "\" 1\"",
        "\"1.2.3\"",
        "\"\"",
        "\"+-1\"",
        "\"1 \"",
        "nan",
        huge.as_str(),
    ] {
        assert_eq!(factor(v), Err(Code::InvalidValue), "{v}");
    }
    let n = |v: &str| {
        let (checked, diags) = compile(None, None, &format!("wait-and-widen;max_queued={v}"));
        match error_codes(&diags).first() {
            Some(code) => Err(*code),
            None => Ok(checked.unwrap().config.fields.max_queued.unwrap()),
        }
    };
    assert_eq!(n("\"100\""), Ok(100));
    assert_eq!(n("\"+7\""), Ok(7));
    assert_eq!(n("\"1.0\""), Err(Code::InvalidValue));
    assert_eq!(n("\"-1\""), Err(Code::InvalidValue));
    assert_eq!(n("\"18446744073709551616\""), Err(Code::InvalidValue));
    assert_eq!(n("1.0"), Err(Code::InvalidValue));
}

#[test]
fn test_overlay_uses_resolved_base_and_completes_bounds() {
    let table = table(
        r#"{"default": "random",
            "request_algorithms": {"wait-and-widen": {"algorithm": "wait-and-widen",
                "seed": "top", "max_queue_time_ceil_ms": 300, "n": 0, "comparator": "queue-time"}},
            "models": {"m": {"algorithm": "pulsar", "request_algorithms": {
                "wait-and-widen": {"algorithm": "wait-and-widen", "seed": "model"}}}}}"#,
    );
    let text = r#"wait-and-widen;max_queue_time_floor_ms="100";ignore_queue_time="true""#;
    let (checked, diags) = compile(Some(&table), Some("other"), text);
    assert!(diags.is_empty(), "{diags:?}");
    let checked = checked.unwrap();
    let f = &checked.config.fields;
    assert_eq!(f.seed.as_deref(), Some("top"));
    assert_eq!(
        (f.max_queue_time_floor_ms, f.max_queue_time_ceil_ms),
        (Some(100), Some(300))
    );
    assert_eq!(f.ignore_queue_time, Some(true));
    assert_eq!(f.n, Some(0), "static n = 0 kept");
    assert_eq!(f.comparator, Some(Comparator::QueueTime));
    let Some(Settings::WaitAndWiden(s)) = checked.policy.map(|p| p.settings) else {
        panic!("ww");
    };
    assert_eq!(s.bucket.n, 1);
    assert!(s.bucket.queue_slo().is_some());
    // The model's own request_algorithms entry is the base: no ceiling there.
    let (checked, diags) = compile(Some(&table), Some("m"), text);
    assert_eq!(error_codes(&diags), vec![Code::InertCombination]);
    assert_eq!(
        checked.unwrap().config.fields.seed.as_deref(),
        Some("model")
    );
    // Naming both bounds in the expression completes the pair anywhere.
    let (_, diags) = compile(
        Some(&table),
        Some("m"),
        "wait-and-widen;max_queue_time_floor_ms=1;max_queue_time_ceil_ms=2",
    );
    assert!(diags.is_empty());
}

#[test]
fn builder_rejection_of_a_merged_base_is_invalid_value_last() {
    use routex::ir::{Definition, FieldSet};
    use std::sync::Arc;
    let mut table = routex::check::permissive_table();
    let fields = FieldSet {
        sample_count: Some(100),
        ..FieldSet::default()
    };
    let good = table.request_algorithms[&Algorithm::PowerOfN]
        .policy
        .clone();
    table.request_algorithms.insert(
        Algorithm::PowerOfN,
        Arc::new(Definition {
            config: AlgorithmConfig {
                algorithm: Algorithm::PowerOfN,
                fields,
            },
            policy: good,
        }),
    );
    table.default = table.request_algorithms[&Algorithm::PowerOfN].clone();
    let (_, diags) = compile(Some(&table), None, "power-of-n;comparator=ttft");
    assert_eq!(error_codes(&diags), vec![Code::InvalidValue]);
    assert_eq!(
        diags[0].message,
        "power-of-n sample_count must be between 1 and 64, got 100"
    );
}

#[test]
fn pww_wait_fields_without_queue_slo_warn() {
    // The warning's premise (the no-queue-SLO shortcut) holds only for the
    // `widening` target (docs/stargate.md 3.10).
    let widening = routex::check::permissive_table_for(routex::ir::Target::Widening);
    let (_, diags) = compile(
        Some(&widening),
        None,
        "pulsar-wait-and-widen;seed=a;cache_affinity_wait_ms=300",
    );
    assert_eq!(diags.len(), 1);
    assert_eq!(diags[0].code, Code::NoQueueSlo);
    let (_, diags) = compile(
        None,
        None,
        "pulsar-wait-and-widen;seed=a;cache_affinity_wait_ms=300",
    );
    assert!(diags.is_empty(), "{diags:?}");
    let (_, diags) = compile(
        None,
        None,
        "pulsar-wait-and-widen;fallback_max_queued=1;max_queue_time_floor_ms=1;max_queue_time_ceil_ms=2",
    );
    assert!(diags.is_empty());
    let (_, diags) = compile(
        None,
        None,
        "wait-and-widen;max_queue_time_floor_ms=10;max_queue_time_ceil_ms=2",
    );
    assert_eq!(
        diags.iter().map(|d| d.code).collect::<Vec<_>>(),
        vec![Code::FloorAboveCeil]
    );
}
