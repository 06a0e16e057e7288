//! What stargate accepts but silently normalises or ignores: warnings that
//! point at the key, with the table still loading.

use super::{load, summary};
use routex::diag::{Code, Severity};
use routex::ir::{Algorithm, Settings, Target};

#[test]
fn aliased_request_algorithm_keys_collapse_last_wins() {
    let json = r#"{"request_algorithms": {
        "power-of-n": {"algorithm": "power-of-n", "sample_count": 3},
        "powerOf2": {"algorithm": "power-of-n", "sample_count": 5}}}"#;
    let (table, report) = load(json);
    let table = table.expect("loads");
    let Settings::PowerOfN(s) = &table.request_algorithms[&Algorithm::PowerOfN]
        .policy
        .settings
    else {
        panic!("power-of-n");
    };
    assert_eq!(s.sample_count, 5);
    assert_eq!(
        summary(&report),
        vec![
            (Code::DeprecatedAlias, "\"powerOf2\" is a deprecated alias of power-of-n".into(), "\"powerOf2\"".into()),
            (
                Code::DuplicateRequestAlgorithm,
                "request_algorithms key powerOf2 names power-of-n again; this entry replaces the earlier one".into(),
                "\"powerOf2\"".into()
            ),
        ]
    );
    assert!(report
        .diagnostics
        .iter()
        .all(|d| d.severity == Severity::Warning));
}

#[test]
fn nested_request_algorithms_are_parsed_and_discarded() {
    let json = r#"{"request_algorithms": {"pulsar": {"algorithm": "pulsar",
        "request_algorithms": {"random": "random"}}}}"#;
    let (table, report) = load(json);
    let table = table.expect("loads");
    assert!(!table.request_algorithms.contains_key(&Algorithm::Random));
    assert_eq!(
        summary(&report),
        vec![(
            Code::IgnoredRequestAlgorithms,
            "request_algorithms inside a request_algorithms entry is parsed and discarded".into(),
            "\"request_algorithms\"".into()
        )]
    );
    // Parsed: an error inside still fails start-up.
    let json = r#"{"request_algorithms": {"pulsar": {"algorithm": "pulsar",
        "request_algorithms": {"random": "fastest"}}}}"#;
    assert!(load(json).0.is_none());
    // Discarded, never built: a key naming another algorithm than its value,
    // or a value the builder would refuse, does not fail start-up in
    // stargate, so only the discard warning is reported.
    let json = r#"{"request_algorithms": {"pulsar": {"algorithm": "pulsar",
        "request_algorithms": {"random": "pulsar",
            "power-of-n": {"algorithm": "power-of-n", "sample_count": 100}}}}}"#;
    let (table, report) = load(json);
    assert!(table.is_some(), "{:?}", summary(&report));
    let codes: Vec<Code> = report.diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(codes, vec![Code::IgnoredRequestAlgorithms]);
    // A type error inside is a parse error: reported.
    let json = r#"{"request_algorithms": {"pulsar": {"algorithm": "pulsar",
        "request_algorithms": {"random": {"algorithm": "random", "require_input_tokens": 1}}}}}"#;
    let (table, report) = load(json);
    assert!(table.is_none());
    assert!(report
        .diagnostics
        .iter()
        .any(|d| d.code == Code::InvalidType));
}

/// One type error does not hide the entry's other problems: the builder's
/// refusals and the warnings about the fields that did type are reported
/// after it, so the first error stays the one stargate returns.
#[test]
fn every_problem_of_an_entry_is_reported() {
    let json = r#"{"models": {"m": {"algorithm": "wait-and-widen", "n": -1,
        "cache_affinity_input_tokens_scale": 2.0, "band_widen_interval_ms": 100}}}"#;
    let (table, report) = load(json);
    assert!(table.is_none());
    let found: Vec<(Code, String)> = summary(&report)
        .into_iter()
        .map(|(code, _, spanned)| (code, spanned))
        .collect();
    assert_eq!(
        found,
        vec![
            (Code::InvalidValue, "-1".into()),
            (Code::NotApplicable, "\"band_widen_interval_ms\"".into()),
            (
                Code::InvalidValue,
                "\"cache_affinity_input_tokens_scale\"".into()
            ),
        ]
    );
    let json = r#"{"models": {"m": {"algorithm": "wait-and-widen", "seed": 1,
        "max_queue_time_floor_ms": 500, "max_queue_time_ceil_ms": 100}}}"#;
    let (table, report) = load(json);
    assert!(table.is_none());
    let codes: Vec<Code> = report.diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(codes, vec![Code::InvalidType, Code::FloorAboveCeil]);
}

#[test]
fn normalised_zeros_warn_at_the_key() {
    let json = r#"{"models": {
        "a": {"algorithm": "wait-and-widen", "n": 0, "cache_affinity_virtual_nodes": 0,
              "cache_affinity_backend_selection_count": 0},
        "b": {"algorithm": "pulsar-wait-and-widen", "cache_affinity_backend_selection_count": 0}}}"#;
    let (table, report) = load(json);
    assert!(table.is_some());
    assert_eq!(
        summary(&report),
        vec![
            (
                Code::NormalisedValue,
                "n 0 is treated as 1".into(),
                "\"n\"".into()
            ),
            (
                Code::NormalisedValue,
                "cache_affinity_virtual_nodes 0 is treated as 1".into(),
                "\"cache_affinity_virtual_nodes\"".into()
            ),
            (
                Code::NormalisedValue,
                "cache_affinity_backend_selection_count 0 turns cache affinity off".into(),
                "\"cache_affinity_backend_selection_count\"".into()
            ),
            (
                Code::NormalisedValue,
                "cache_affinity_backend_selection_count 0 is treated as 1".into(),
                "\"cache_affinity_backend_selection_count\"".into()
            ),
        ]
    );
}

#[test]
fn queue_slo_warnings() {
    let json = r#"{"models": {
        "one": {"algorithm": "wait-and-widen", "max_queue_time_ceil_ms": 300},
        "inverted": {"algorithm": "wait-and-widen", "max_queue_time_floor_ms": 500, "max_queue_time_ceil_ms": 300},
        "pww": {"algorithm": "pulsar-wait-and-widen", "cache_affinity_wait_ms": 300}}}"#;
    let (table, report) = load(json);
    assert!(table.is_some());
    let codes: Vec<_> = summary(&report)
        .into_iter()
        .map(|(c, _, at)| (c, at))
        .collect();
    assert_eq!(
        codes,
        vec![
            (
                Code::IncompleteQueueSlo,
                "\"max_queue_time_ceil_ms\"".into()
            ),
            (Code::FloorAboveCeil, "\"max_queue_time_floor_ms\"".into()),
        ]
    );
    // no_queue_slo only where its premise holds: the `widening` target,
    // whose PWW selects a feasible primary at once without a queue SLO.
    let (_, widening) =
        routex::config::check_lb_config_for("lb-config.json", json, Target::Widening);
    let codes: Vec<_> = summary(&widening)
        .into_iter()
        .map(|(c, _, at)| (c, at))
        .collect();
    assert_eq!(
        codes[2],
        (Code::NoQueueSlo, "\"cache_affinity_wait_ms\"".into())
    );
    assert_eq!(
        report.diagnostics[1].message,
        "max_queue_time_floor_ms 500 is above max_queue_time_ceil_ms 300: the queue-time limit shrinks as the request ages"
    );
    // With both bounds, the wait fields act: no warning.
    let json = r#"{"models": {"pww": {"algorithm": "pulsar-wait-and-widen",
        "cache_affinity_wait_ms": 300, "max_queue_time_floor_ms": 100, "max_queue_time_ceil_ms": 300}}}"#;
    assert!(load(json).1.diagnostics.is_empty());
}

#[test]
fn a_model_listed_twice_warns_and_the_last_wins() {
    let (table, report) = load(r#"{"models": {"m": "random", "m": "pulsar"}}"#);
    let table = table.expect("loads");
    assert_eq!(
        table.models["m"].definition.config.algorithm,
        Algorithm::Pulsar
    );
    assert_eq!(report.diagnostics[0].code, Code::DuplicateModel);
    assert_eq!(report.diagnostics[0].severity, Severity::Warning);
}

#[test]
fn a_model_request_algorithm_of_its_own_algorithm_is_shadowed() {
    let json = r#"{"request_algorithms": {"pulsar": {"algorithm": "pulsar", "seed": "top"}},
        "models": {"m": {"algorithm": "pulsar", "seed": "own",
            "request_algorithms": {"pulsar": {"algorithm": "pulsar", "seed": "never"},
                                   "random": {"algorithm": "random"}}}}}"#;
    let (table, report) = load(json);
    assert!(table.is_some());
    assert_eq!(
        summary(&report),
        vec![(
            Code::ShadowedAllow,
            "model \"m\" already uses pulsar: a request naming pulsar gets the model's own configuration, so this entry is never used".into(),
            "\"pulsar\"".into()
        )]
    );
    assert_eq!(report.diagnostics[0].severity, Severity::Warning);
    // The top-level map has no model algorithm to shadow it.
    assert_eq!(
        report.line_column(report.diagnostics[0].span.start),
        (3, 36)
    );
}

#[test]
fn pulsar_wait_and_widen_ignores_virtual_nodes_with_a_warning() {
    let json = r#"{"models": {"m": {"algorithm": "pulsar-wait-and-widen", "cache_affinity_virtual_nodes": 7}},
        "request_algorithms": {"wait-and-widen": {"algorithm": "wait-and-widen", "cache_affinity_virtual_nodes": 7}}}"#;
    let (table, report) = load(json);
    assert!(table.is_some());
    assert_eq!(
        summary(&report),
        vec![(
            Code::IgnoredField,
            "cache_affinity_virtual_nodes is accepted and ignored by pulsar-wait-and-widen, which ranks with Pulsar instead of a hash ring".into(),
            "\"cache_affinity_virtual_nodes\"".into()
        )]
    );
    assert_eq!(report.diagnostics[0].severity, Severity::Warning);
}
