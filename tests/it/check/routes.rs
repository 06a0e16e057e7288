//! Route files: lowering to route tables and the file-level rules.

use routex::check::check_route_file;
use routex::diag::{Code, Report};
use routex::ir::{Algorithm, RendezvousWeight, Settings};

fn codes(report: &Report) -> Vec<(Code, String)> {
    report
        .diagnostics
        .iter()
        .map(|d| (d.code, report.text[d.span.start..d.span.end].to_string()))
        .collect()
}

const LANGUAGE_EXAMPLE: &str = r#"# Fleet routing for the chat models.
default = power-of-n(sample_count=2)

allow wait-and-widen(seed="req-v1")          # any model may request it

model "llama-3-70b" = pulsar-wait-and-widen(
    seed = "v1",
    cache_affinity_wait_ms = 300,
    band_widen_interval_ms = 300,
    max_queue_time_floor_ms = 500,
    max_queue_time_ceil_ms = 2000,
) {
    allow pulsar(seed="v1")                  # this model only
}
"#;

#[test]
fn the_language_example_lowers_to_its_table() {
    let (table, report) = check_route_file("fleet.routes", LANGUAGE_EXAMPLE);
    assert!(report.diagnostics.is_empty(), "{:?}", report.diagnostics);
    let table = table.expect("checks");
    assert_eq!(table.default.config.algorithm, Algorithm::PowerOfN);
    assert_eq!(table.default.config.fields.sample_count, Some(2));
    assert_eq!(
        table.request_algorithms.keys().copied().collect::<Vec<_>>(),
        vec![Algorithm::WaitAndWiden]
    );
    let entry = &table.models["llama-3-70b"];
    let Settings::PulsarWaitAndWiden(s) = &entry.definition.policy.settings else {
        panic!("pww");
    };
    assert_eq!(
        (s.cache_affinity_wait_ms, s.band_widen_interval_ms),
        (300, 300)
    );
    assert!(s.bucket.queue_slo().is_some());
    assert_eq!(
        entry.request_algorithms.keys().copied().collect::<Vec<_>>(),
        vec![Algorithm::Pulsar]
    );
    // Resolution follows 4.4: the model's own allow, then the top level.
    assert!(table.resolve("llama-3-70b", Algorithm::Pulsar).is_some());
    assert!(table
        .resolve("llama-3-70b", Algorithm::WaitAndWiden)
        .is_some());
    assert!(table.resolve("llama-3-70b", Algorithm::PowerOfN).is_none());
    assert!(table.resolve("other", Algorithm::Pulsar).is_none());
}

#[test]
fn an_absent_default_is_power_of_n() {
    let (table, report) = check_route_file("a.routes", "model \"m\" = random\n");
    assert!(report.diagnostics.is_empty());
    let table = table.unwrap();
    assert_eq!(table.default.config.algorithm, Algorithm::PowerOfN);
    assert_eq!(table.default.config.fields, Default::default());
    let (table, _) = check_route_file("empty.routes", "");
    assert!(table.unwrap().models.is_empty());
}

#[test]
fn file_level_duplicates_are_errors() {
    let text = "default = random\ndefault = pulsar\n";
    let (table, report) = check_route_file("a.routes", text);
    assert!(table.is_none());
    assert_eq!(report.diagnostics.len(), 1);
    assert_eq!(report.diagnostics[0].code, Code::DuplicateDefault);
    assert_eq!(report.line_column(report.diagnostics[0].span.start), (2, 1));

    let text = "model \"m\" = random\nmodel \"m\" = pulsar\n";
    let (table, report) = check_route_file("a.routes", text);
    assert!(table.is_none());
    assert_eq!(
        codes(&report),
        vec![(Code::DuplicateModel, "\"m\"".to_string())]
    );
    assert_eq!(report.diagnostics[0].message, "model \"m\" is listed twice");
    assert_eq!(report.line_column(report.diagnostics[0].span.start), (2, 7));

    let text = "allow pulsar\nallow pulsar(seed=\"x\")\nmodel \"m\" = random {\n  allow pulsar\n  allow random\n  allow power_of_two\n  allow power-of-n\n}\n";
    let (table, report) = check_route_file("a.routes", text);
    assert!(table.is_none());
    let dups: Vec<_> = report
        .diagnostics
        .iter()
        .filter(|d| d.code == Code::DuplicateAllow)
        .map(|d| d.message.clone())
        .collect();
    assert_eq!(
        dups,
        vec![
            "pulsar is allowed twice in the top level".to_string(),
            "power-of-n is allowed twice in model \"m\"".to_string()
        ]
    );
    // An allow of another scope is fine; one naming the model's own
    // algorithm is a warning, not an error.
    assert_eq!(
        codes(&report)
            .iter()
            .filter(|(c, _)| *c == Code::DeprecatedAlias)
            .count(),
        1
    );
    let shadowed: Vec<_> = codes(&report)
        .into_iter()
        .filter(|(c, _)| *c == Code::ShadowedAllow)
        .collect();
    assert_eq!(
        shadowed,
        vec![(Code::ShadowedAllow, "allow random".to_string())]
    );
}

#[test]
fn an_allow_of_the_models_own_algorithm_is_shadowed() {
    // Resolution picks the model's configured algorithm before its allows
    // (docs/stargate.md 4.4 step 1): the allow is never used.
    let text = "allow pulsar(seed=\"top\")\nmodel \"m\" = pulsar(seed=\"own\") {\n  allow pulsar(seed=\"never\")\n  allow random\n}\n";
    let (table, report) = check_route_file("a.routes", text);
    assert_eq!(
        codes(&report),
        vec![(
            Code::ShadowedAllow,
            "allow pulsar(seed=\"never\")".to_string()
        )]
    );
    let d = &report.diagnostics[0];
    assert_eq!(d.severity, routex::diag::Severity::Warning);
    assert_eq!(
        d.message,
        "model \"m\" already uses pulsar: a request naming pulsar gets the model's own configuration, so this entry is never used"
    );
    // The table still loads, and resolution indeed ignores the entry.
    let table = table.expect("warnings only");
    let resolved = table
        .resolve("m", routex::ir::Algorithm::Pulsar)
        .expect("own");
    let routex::ir::Settings::Pulsar(p) = &resolved.definition.policy.settings else {
        panic!("pulsar");
    };
    assert_eq!(p.seed, "own");
}

#[test]
fn route_file_expressions_are_strict() {
    let text = "model \"m\" = wait-and-widen(n=0, seed=1)\nallow pulsar(widen=1)\ndefault = power-of-n(sample_count=65)\n";
    let (table, report) = check_route_file("a.routes", text);
    assert!(table.is_none());
    assert_eq!(
        codes(&report),
        vec![
            (Code::InertValue, "0".to_string()),
            (Code::InvalidValue, "1".to_string()),
            (Code::UnknownParameter, "widen".to_string()),
            (Code::InvalidValue, "65".to_string()),
        ]
    );
    let (_, report) = check_route_file(
        "b.routes",
        "model \"m\" = wait-and-widen(max_queue_time_floor_ms=5)\n",
    );
    assert_eq!(
        codes(&report),
        vec![(
            Code::InertCombination,
            "max_queue_time_floor_ms=5".to_string()
        )]
    );
}

#[test]
fn route_files_may_set_rendezvous_weight() {
    let text = "model \"m\" = pulsar(rendezvous_weight=last-mean-input-tps)\n";
    let (table, report) = check_route_file("a.routes", text);
    assert!(report.diagnostics.is_empty(), "{:?}", report.diagnostics);
    let Settings::Pulsar(p) = &table.unwrap().models["m"].definition.policy.settings else {
        panic!("pulsar");
    };
    assert_eq!(p.rendezvous_weight, RendezvousWeight::LastMeanInputTps);
    let (_, report) = check_route_file(
        "b.routes",
        "model \"m\" = wait-and-widen(rendezvous_weight=max-input-tps)\n",
    );
    assert_eq!(report.diagnostics[0].code, Code::NotApplicable);
}

#[test]
fn syntax_errors_and_semantic_errors_are_reported_together() {
    let text = "model \"n\" = pulsar(seed=1)\nmodel \"m\" = random(\n";
    let (table, report) = check_route_file("a.routes", text);
    assert!(table.is_none());
    let codes: Vec<_> = report.diagnostics.iter().map(|d| d.code).collect();
    assert!(codes.contains(&Code::SyntaxError), "{codes:?}");
    assert!(codes.contains(&Code::InvalidValue), "{codes:?}");
}
