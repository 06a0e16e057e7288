//! The public entry points: compile_request_expression, check_expression,
//! explain_expression.

use super::table;
use routex::check::{
    check_expression, compile_request_expression, explain_expression, permissive_table, Place,
    Provenance,
};
use routex::diag::Code;
use routex::ir::Algorithm;

#[test]
fn permissive_default_resolves_alias_and_underscore_spellings() {
    let table = permissive_table();
    for (value, alg) in [
        ("PULSAR_WAIT_AND_WIDEN", Algorithm::PulsarWaitAndWiden),
        ("power_of_two", Algorithm::PowerOfN),
        ("powerOf2", Algorithm::PowerOfN),
        ("POWEROFN", Algorithm::PowerOfN),
        ("groq_multiregion", Algorithm::WaitAndWiden),
        ("pulsar-multiregion", Algorithm::PulsarWaitAndWiden),
        (" round_robin ", Algorithm::RoundRobin),
        ("Random", Algorithm::Random),
        (
            "PULSAR_WAIT_AND_WIDEN;seed=stable-a",
            Algorithm::PulsarWaitAndWiden,
        ),
    ] {
        let d = compile_request_expression(&table, "any", value).expect(value);
        assert_eq!(d.policy.algorithm, alg, "{value}");
    }
}

#[test]
fn method_only_values_reuse_the_configured_definition() {
    let table = table(r#"{"models": {"m": {"algorithm": "pulsar", "seed": "cfg"}}}"#);
    let d = compile_request_expression(&table, "m", "pulsar").unwrap();
    assert_eq!(&d, table.models["m"].definition.as_ref());
    let d = compile_request_expression(&table, "m", "pulsar;seed=x").unwrap();
    assert_eq!(d.config.fields.seed.as_deref(), Some("x"));
}

#[test]
fn request_errors_carry_stargates_first_error() {
    let table = table(r#"{"default": "pulsar"}"#);
    let err = |v: &str| {
        let e = compile_request_expression(&table, "m", v).unwrap_err();
        (e[0].code, e[0].message.clone())
    };
    assert_eq!(
        err("fastest"),
        (
            Code::UnknownMethod,
            "unknown routing method 'fastest'".into()
        )
    );
    assert_eq!(
        err(""),
        (Code::UnknownMethod, "unknown routing method ''".into())
    );
    assert_eq!(
        err("random"),
        (
            Code::Unavailable,
            "routing method random is not configured for this model".into()
        )
    );
    assert_eq!(
        err("pulsar;widen=1;seed=1"),
        (
            Code::UnknownParameter,
            "unknown parameter 'widen' for algorithm pulsar".into()
        )
    );
    assert_eq!(err("pulsar;seed=?1").0, Code::MalformedExpression);
    assert_eq!(err("pulsar;seed=a,b").0, Code::MalformedExpression);
    // Without `;` a value is a method name only.
    assert_eq!(err("pulsar,seed=x").0, Code::UnknownMethod);
}

#[test]
fn check_expression_reports_every_diagnostic_with_the_source_name() {
    let (def, report) = check_expression("arg:1", "powerOf2;sample_count=0;seed=x", None, None);
    assert!(def.is_none());
    assert_eq!(report.source_name, "arg:1");
    let codes: Vec<_> = report.diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(
        codes,
        vec![
            Code::DeprecatedAlias,
            Code::InvalidValue,
            Code::NotApplicable
        ]
    );
    let (def, report) = check_expression("arg:1", "random", None, Some("m"));
    assert!(report.diagnostics.is_empty());
    assert_eq!(def.unwrap().policy.algorithm, Algorithm::Random);
}

#[test]
fn explain_records_provenance() {
    let table = table(
        r#"{"request_algorithms": {"wait-and-widen": {"algorithm": "wait-and-widen", "seed": "cfg", "n": 3}}}"#,
    );
    let (e, report) = explain_expression(
        "arg:1",
        "wait-and-widen(ttft_bucket_size_ms=50)",
        Some(&table),
        None,
    );
    assert!(report.diagnostics.is_empty(), "{:?}", report.diagnostics);
    let e = e.unwrap();
    assert_eq!(e.provenance["ttft_bucket_size_ms"], Provenance::Expression);
    // An unlisted model's wait-and-widen is the top-level request_algorithms
    // entry: that is where the configured values are written.
    let configured = Provenance::Config(Place::RequestAlgorithms);
    assert_eq!(e.provenance["seed"], configured);
    assert_eq!(e.provenance["n"], configured);
    assert_eq!(e.provenance["comparator"], Provenance::Default);
    assert_eq!(e.provenance["max_input_work_seconds"], Provenance::Default);
    assert_eq!(e.provenance["last_cluster_affinity"], Provenance::Default);
    assert_eq!(e.provenance.len(), 18);
}

/// A compile's `Err` is every error of the value, in order (stargate's
/// first), exactly the errors the check of the same text reports.
#[test]
fn a_compile_returns_every_error_and_the_check_the_same_ones() {
    let table = permissive_table();
    let value = "pulsar;sede=\"a\";rendezvous_weight=\"heavy\"";
    let errors = compile_request_expression(&table, "m", value).unwrap_err();
    let codes: Vec<Code> = errors.iter().map(|e| e.code).collect();
    assert_eq!(codes.len(), 2, "{errors:?}");
    assert_eq!(codes[0], Code::UnknownParameter);
    assert!(errors.iter().all(|e| e.is_error()));
    let (definition, report) = check_expression("arg:1", value, Some(&table), Some("m"));
    assert!(definition.is_none());
    let checked: Vec<_> = report
        .diagnostics
        .into_iter()
        .filter(|d| d.is_error())
        .collect();
    assert_eq!(errors, checked);
}

/// A configured value is named after the place that writes it, in the
/// words `routex diff` uses: the model's entry, its own request_algorithms,
/// the top-level request_algorithms, or the default entry.
#[test]
fn explain_names_the_place_that_sets_a_value() {
    let table = table(
        r#"{"default": "pulsar", "request_algorithms": {"pulsar": {"algorithm": "pulsar", "seed": "top"},
            "random": {"algorithm": "random"}},
            "models": {"m": {"algorithm": "wait-and-widen", "seed": "own",
                "request_algorithms": {"pulsar": {"algorithm": "pulsar", "seed": "req"}}}}}"#,
    );
    let seed_from = |expr: &str, model: Option<&str>| {
        let (e, report) = explain_expression("arg:1", expr, Some(&table), model);
        assert!(report.diagnostics.is_empty(), "{:?}", report.diagnostics);
        e.unwrap().provenance["seed"]
    };
    let place = |p| Some(Provenance::Config(p));
    assert_eq!(
        Some(seed_from("wait-and-widen(n=2)", Some("m"))),
        place(Place::ModelEntry)
    );
    assert_eq!(
        Some(seed_from("pulsar", Some("m"))),
        place(Place::ModelRequestAlgorithms)
    );
    // A model without an entry gets `default` (no seed: the default's).
    assert_eq!(seed_from("pulsar", None), Provenance::Default);
    let (e, _) = explain_expression("arg:1", "pulsar", Some(&table), Some("m"));
    let json = routex::render::explain::to_value(&e.unwrap());
    // The JSON word is the contract's `config`; the place is its own member.
    assert_eq!(json["provenance"]["seed"], "config");
    assert_eq!(json["config_from"], "model_request_algorithms");
    assert_eq!(
        Provenance::Config(Place::ModelEntry).label(),
        "config (model entry)"
    );
    assert_eq!(Provenance::Config(Place::DefaultEntry).name(), "config");
}
