//! The same mistake says the same thing whichever form carries it: every
//! field on every algorithm, written in an expression and in an
//! lb-config.json model entry. Where the expression says the field is
//! `not_applicable` to the algorithm, the JSON entry says so too (or, where
//! stargate's parser does not know the field for that algorithm and so
//! refuses to start, `unsupported_field`), with the same help where both
//! forms take the field on the same algorithms.

use routex::check::schema::{Field, Kind};
use routex::diag::{Code, Report};
use routex::ir::{Algorithm, Target};

/// A valid value of `kind`: (header form, JSON).
fn sample(kind: Kind) -> Option<(&'static str, &'static str)> {
    match kind {
        Kind::Boolean => Some(("true", "true")),
        Kind::Text => Some(("x", "\"x\"")),
        Kind::Unsigned => Some(("5", "5")),
        Kind::Decimal => Some(("0.5", "0.5")),
        Kind::Comparator => Some(("ttft", "\"ttft\"")),
        Kind::Weight => None,
    }
}

/// `(code, help)` of the findings that say the field is not for the
/// algorithm.
fn misplaced(report: &Report) -> Vec<(Code, String)> {
    report
        .diagnostics
        .iter()
        .filter(|d| matches!(d.code, Code::NotApplicable | Code::UnsupportedField))
        .map(|d| (d.code, d.help.clone().unwrap_or_default()))
        .collect()
}

#[test]
fn a_field_on_the_wrong_algorithm_gets_one_code_and_one_help_in_both_forms() {
    let target = Target::NEWEST;
    let mut compared = 0;
    for alg in Algorithm::ALL {
        for field in Field::ALL {
            if field.expression_algorithms().is_empty() || !field.accepted_by(target) {
                continue;
            }
            let Some((header, json)) = sample(field.kind()) else {
                continue;
            };
            let expr = format!("{alg};{}={header}", field.name());
            let (_, expr_report) =
                routex::check::check_expression_for("arg", &expr, None, None, target);
            let text = format!(
                r#"{{"default": "round-robin", "models": {{"m": {{"algorithm": "{alg}", "{}": {json}}}}}}}"#,
                field.name()
            );
            let (_, json_report) =
                routex::config::check_lb_config_for("lb-config.json", &text, target);
            let in_expr = misplaced(&expr_report);
            let in_json = misplaced(&json_report);
            if field.json_takes(alg) {
                // Configuration may set what a request may not
                // (`cache_affinity_virtual_nodes` on pulsar-wait-and-widen):
                // no mistake in the file.
                assert_eq!(in_json, [], "{text}");
                continue;
            }
            assert_eq!(
                in_expr.len(),
                in_json.len(),
                "{expr} / {text}: {in_expr:?} {in_json:?}"
            );
            for ((expr_code, expr_help), (json_code, json_help)) in in_expr.iter().zip(&in_json) {
                assert_eq!(*expr_code, Code::NotApplicable, "{expr}");
                // Parsed for the algorithm but refused by the builder.
                let expected = if field.json_algorithms().contains(&alg) {
                    Code::NotApplicable
                } else {
                    Code::UnsupportedField
                };
                assert_eq!(*json_code, expected, "{text}");
                // The same help where both forms take the field on the same
                // algorithms; else each names where its own form takes it
                // (stargate reads `cache_affinity_virtual_nodes` from
                // pulsar-wait-and-widen's entry, not from its expressions).
                let json_list = if expected == Code::NotApplicable {
                    field.expression_algorithms()
                } else {
                    field.json_algorithms()
                };
                if json_list == field.expression_algorithms() {
                    assert_eq!(expr_help, json_help, "{expr} / {text}");
                } else {
                    let names: Vec<&str> = json_list.iter().map(|a| a.name()).collect();
                    assert_eq!(
                        *json_help,
                        format!("{} applies to: {}", field.name(), names.join(", ")),
                        "{text}"
                    );
                }
                compared += 1;
            }
        }
    }
    // comparator on pulsar-wait-and-widen, band_widen_interval_ms and
    // fallback_max_queued on wait-and-widen, and the fields of other
    // algorithms: dozens of pairs, not none.
    assert!(compared > 30, "{compared}");
}

#[test]
fn the_named_cases_say_the_same_in_both_forms() {
    for (alg, field, value) in [
        ("pulsar-wait-and-widen", "comparator", ("ttft", "\"ttft\"")),
        ("wait-and-widen", "band_widen_interval_ms", ("5", "5")),
    ] {
        let (_, expr) = routex::check::check_expression_for(
            "arg",
            &format!("{alg};{field}={}", value.0),
            None,
            None,
            Target::NEWEST,
        );
        let text = format!(
            r#"{{"models": {{"m": {{"algorithm": "{alg}", "{field}": {}}}}}}}"#,
            value.1
        );
        let (_, json) =
            routex::config::check_lb_config_for("lb-config.json", &text, Target::NEWEST);
        let first = |r: &Report| {
            let d = &r.diagnostics[0];
            (d.code, d.help.clone())
        };
        assert_eq!(first(&expr), first(&json), "{alg} {field}");
        assert_eq!(first(&json).0, Code::NotApplicable);
    }
}

#[test]
fn a_mistyped_algorithm_key_and_a_mismatched_key_have_help() {
    let (_, report) = routex::config::check_lb_config_for(
        "lb-config.json",
        r#"{"models": {"m": {"algoritm": "pulsar"}}}"#,
        Target::NEWEST,
    );
    let d = &report.diagnostics[0];
    assert_eq!(d.code, Code::MissingField);
    assert_eq!(
        d.help.as_deref(),
        Some("`algoritm` is not a field: did you mean `algorithm`?")
    );
    assert_eq!(&report.text[d.span.start..d.span.end], "\"algoritm\"");
    assert_eq!(d.suggestion.as_deref(), Some("\"algorithm\""));
    let (_, report) = routex::config::check_lb_config_for(
        "lb-config.json",
        r#"{"request_algorithms": {"pulsar": {"algorithm": "random"}}}"#,
        Target::NEWEST,
    );
    let d = &report.diagnostics[0];
    assert_eq!(d.code, Code::RequestAlgorithmMismatch);
    assert_eq!(
        d.help.as_deref(),
        Some("a request_algorithms entry's key is its algorithm: write `random` as the key, or `pulsar` as the algorithm")
    );
}
