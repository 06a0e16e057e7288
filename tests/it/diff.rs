//! The policy diff through the library (`routex::diff`): the fields and
//! provenance it reports on the bundled pairs (tests/inputs/diff), and its
//! rejected-expression classes against the real expression compiler.

use routex::check::compile_request_expression;
use routex::check::schema::Field;
use routex::config::load_table;
use routex::diag::Code;
use routex::diff::{
    diff_tables, AlgorithmDiff, FieldSource, Place, Presence, RejectedClass, RejectionCause,
    SetDiff, TableDiff,
};
use routex::ir::{Algorithm, Origin, RouteTable};
use serde_json::{json, Value};

fn table(path: &str) -> RouteTable {
    let full = format!("{}/{path}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{full}: {e}"));
    let (table, report) = load_table(path, &text);
    assert!(!report.has_errors(), "{path}: {:?}", report.diagnostics);
    table.unwrap_or_else(|| panic!("{path} builds"))
}

fn pair(name: &str) -> (RouteTable, RouteTable, TableDiff) {
    let old = table(&format!("tests/inputs/diff/old.{name}"));
    let new = table(&format!("tests/inputs/diff/new.{name}"));
    let diff = diff_tables(&old, &new);
    (old, new, diff)
}

fn set<'a>(diff: &'a TableDiff, model: Option<&str>) -> &'a SetDiff {
    diff.sets
        .iter()
        .find(|s| s.model.as_deref() == model)
        .unwrap_or_else(|| panic!("{model:?} differs"))
}

fn algorithm(set: &SetDiff, algorithm: Algorithm) -> &AlgorithmDiff {
    set.algorithms
        .iter()
        .find(|a| a.algorithm == algorithm)
        .unwrap_or_else(|| panic!("{algorithm} differs in {:?}", set.model))
}

/// (field, before value, before source, after value, after source).
fn changes(a: &AlgorithmDiff) -> Vec<(String, Value, String, Value, String)> {
    a.changes
        .iter()
        .map(|c| {
            (
                c.field.clone(),
                c.before.0.clone(),
                c.before.1.label(),
                c.after.0.clone(),
                c.after.1.label(),
            )
        })
        .collect()
}

fn row(
    field: &str,
    before: Value,
    from: &str,
    after: Value,
    to: &str,
) -> (String, Value, String, Value, String) {
    (field.into(), before, from.into(), after, to.into())
}

#[test]
fn lb_config_pair_reports_each_changed_field_with_its_provenance() {
    let (_, _, diff) = pair("json");
    let llama = set(&diff, Some("llama-3-70b"));
    assert_eq!(llama.presence, Presence::Changed);
    let pww = algorithm(llama, Algorithm::PulsarWaitAndWiden);
    let rows = changes(pww);
    assert!(rows.contains(&row(
        "cache_affinity_wait_ms",
        json!(300),
        "config (model entry)",
        json!(400),
        "config (model entry)"
    )));
    assert!(rows.contains(&row(
        "consider_kv_free_tokens",
        json!(false),
        "default",
        json!(true),
        "config (model entry)"
    )));
    // explain's implication: consider_kv_free_tokens forces it.
    assert!(rows.contains(&row(
        "require_input_tokens",
        json!(false),
        "default",
        json!(true),
        "implied by consider_kv_free_tokens"
    )));
    let implied = pww
        .changes
        .iter()
        .find(|c| c.field == "require_input_tokens");
    assert_eq!(
        implied.map(|c| c.after.1.label()).as_deref(),
        Some("implied by consider_kv_free_tokens")
    );
    // Unset on both sides: it follows cache_affinity_wait_ms.
    assert!(rows.contains(&row(
        "band_widen_interval_ms",
        json!(300),
        "default, follows cache_affinity_wait_ms",
        json!(400),
        "default, follows cache_affinity_wait_ms"
    )));
    let follows = pww
        .changes
        .iter()
        .find(|c| c.field == "band_widen_interval_ms")
        .map(|c| (c.before.1.label(), c.after.1.follows()));
    assert_eq!(
        follows,
        Some((
            "default, follows cache_affinity_wait_ms".to_string(),
            Some("cache_affinity_wait_ms")
        ))
    );
    // Unchanged fields are not listed.
    assert!(rows
        .iter()
        .all(|r| r.0 != "seed" && r.0 != "max_queue_time_ceil_ms"));
    assert!(pww.rejected.is_empty());
    // The model's own round-robin is gone, with every expression naming it.
    let rr = algorithm(llama, Algorithm::RoundRobin);
    assert_eq!(
        rr.before.as_ref().map(|r| r.place),
        Some(Place::ModelRequestAlgorithms)
    );
    assert!(rr.after.is_none());
    assert_eq!(
        rr.rejected,
        [RejectedClass {
            algorithm: Algorithm::RoundRobin,
            rejected: RejectionCause::Unavailable
        }]
    );

    let mixtral = algorithm(set(&diff, Some("mixtral-8x7b")), Algorithm::WaitAndWiden);
    assert_eq!(
        changes(mixtral),
        [
            row("n", json!(2), "default", json!(2), "config (model entry)"),
            row(
                "max_queue_time_floor_ms",
                json!(200),
                "config (model entry)",
                Value::Null,
                "default"
            ),
        ]
    );
    assert_eq!(
        mixtral.rejected,
        [RejectedClass {
            algorithm: Algorithm::WaitAndWiden,
            rejected: RejectionCause::LoneBound {
                sets: Field::MaxQueueTimeCeilMs,
                missing: Field::MaxQueueTimeFloorMs
            }
        }]
    );
    assert_eq!(mixtral.rejected[0].code(), Code::InertCombination);
}

#[test]
fn added_and_removed_models_compare_against_the_default_set() {
    let (_, _, diff) = pair("json");
    let qwen = set(&diff, Some("qwen-2-72b"));
    assert_eq!(qwen.presence, Presence::Added);
    assert_eq!(qwen.configured, (Algorithm::PowerOfN, Algorithm::PowerOfN));
    let p2 = algorithm(qwen, Algorithm::PowerOfN);
    assert_eq!(
        (
            p2.before.as_ref().map(|r| r.place),
            p2.after.as_ref().map(|r| r.place)
        ),
        (Some(Place::DefaultEntry), Some(Place::ModelEntry))
    );
    assert_eq!(
        changes(p2),
        [row(
            "sample_count",
            json!(2),
            "default",
            json!(3),
            "config (model entry)"
        )]
    );

    let retired = set(&diff, Some("retired"));
    assert_eq!(retired.presence, Presence::Removed);
    assert_eq!(retired.configured, (Algorithm::Random, Algorithm::PowerOfN));
    let random = algorithm(retired, Algorithm::Random);
    assert!(random.after.is_none());
    assert_eq!(random.rejected.len(), 1);
    assert_eq!(diff.counts(), (2, 1, 1));
    // Unlisted models (only inherited changes) and llama-3-8b.
    assert_eq!(diff.unchanged, 2);
}

#[test]
fn top_level_changes_are_reported_once_with_who_inherits_them() {
    let (_, _, diff) = pair("json");
    let tops: Vec<(Algorithm, bool, usize)> = diff
        .request_algorithms
        .iter()
        .map(|t| (t.diff.algorithm, t.unlisted, t.models))
        .collect();
    // random: every model but `retired` (its own random) inherited it;
    // pulsar: all five listed models.
    assert_eq!(
        tops,
        [(Algorithm::Random, true, 4), (Algorithm::Pulsar, true, 5)]
    );
    let pulsar = &diff.request_algorithms[1].diff;
    assert_eq!(
        changes(pulsar),
        [row(
            "seed",
            json!("req-v1"),
            "config (request_algorithms)",
            json!("req-v2"),
            "config (request_algorithms)"
        )]
    );
    // No set repeats an inherited change.
    assert!(diff
        .sets
        .iter()
        .flat_map(|s| &s.algorithms)
        .all(|a| a.algorithm != Algorithm::Pulsar));
}

#[test]
fn route_file_pair_credits_the_default_entry_and_allows() {
    let (_, _, diff) = pair("routes");
    let unlisted = set(&diff, None);
    let pulsar = algorithm(unlisted, Algorithm::Pulsar);
    assert_eq!(
        changes(pulsar),
        [row(
            "seed",
            json!("fleet-v1"),
            "config (default entry)",
            json!("fleet-v2"),
            "config (default entry)"
        )]
    );
    let ww = &diff.request_algorithms[0];
    assert_eq!(
        (ww.diff.algorithm, ww.unlisted, ww.models),
        (Algorithm::WaitAndWiden, true, 1)
    );
    assert_eq!(ww.diff.rejected.len(), 2, "{:?}", ww.diff.rejected);
}

#[test]
fn identical_tables_and_one_configuration_in_both_kinds_have_no_difference() {
    for path in ["examples/lb-config.json", "examples/fleet.routes"] {
        let t = table(path);
        let diff = diff_tables(&t, &t);
        assert!(diff.is_empty(), "{path}");
        assert_eq!(diff.unchanged, 1 + t.models.len());
    }
    // The library compares the IR: a route file and the lb-config.json it
    // builds to resolve alike.
    let diff = diff_tables(
        &table("examples/fleet.routes"),
        &table("examples/lb-config.json"),
    );
    assert!(diff.is_empty(), "{:?}", diff.sets);
}

#[test]
fn provenance_only_changes_are_not_behaviour_changes() {
    let (_, _, diff) = pair("json");
    let mixtral = algorithm(set(&diff, Some("mixtral-8x7b")), Algorithm::WaitAndWiden);
    let n = &mixtral.changes[0];
    assert_eq!(n.before.0, n.after.0);
    assert_eq!(
        n.before.1,
        FieldSource::Explain(routex::check::Provenance::Default)
    );
    assert_eq!(n.after.1, FieldSource::Place(Place::ModelEntry));
}

/// A band_widen_interval_ms set on one side only: the defaulted side says
/// it follows cache_affinity_wait_ms, the set side names its place.
#[test]
fn a_defaulted_band_widen_interval_follows_the_affinity_wait() {
    let load = |text: &str| load_table("lb-config.json", text).0.expect("builds");
    let old = load(
        r#"{"models": {"m": {"algorithm": "pulsar-wait-and-widen", "cache_affinity_wait_ms": 300}}}"#,
    );
    let new = load(
        r#"{"models": {"m": {"algorithm": "pulsar-wait-and-widen", "cache_affinity_wait_ms": 300,
            "band_widen_interval_ms": 300}}}"#,
    );
    let diff = diff_tables(&old, &new);
    let pww = algorithm(set(&diff, Some("m")), Algorithm::PulsarWaitAndWiden);
    let labels: Vec<_> = pww
        .changes
        .iter()
        .map(|c| (c.field.as_str(), c.before.1.label(), c.after.1.label()))
        .collect();
    // The same 300 either way, but a set interval keeps pacing the bands
    // when the effective wait drops to 0 (docs/stargate.md 3.10): the IR's
    // band_widen_interval_is_default changes too.
    assert_eq!(
        labels,
        [
            (
                "band_widen_interval_ms",
                "default, follows cache_affinity_wait_ms".to_string(),
                "config (model entry)".to_string()
            ),
            (
                "band_widen_interval_is_default",
                "default".to_string(),
                "default".to_string()
            )
        ]
    );
    assert!(pww.changes_behaviour());
    let back = diff_tables(&new, &old);
    let pww = algorithm(set(&back, Some("m")), Algorithm::PulsarWaitAndWiden);
    assert_eq!(
        pww.changes[0].after.1,
        FieldSource::Follows {
            of: "cache_affinity_wait_ms"
        }
    );
}

/// Expressions of every algorithm: method only, one bound alone, both.
fn expressions() -> Vec<(Algorithm, Vec<Field>, String)> {
    let mut out = Vec::new();
    for alg in Algorithm::ALL {
        out.push((alg, vec![], alg.name().to_string()));
        out.push((
            alg,
            vec![],
            format!("{alg};require_cache_affinity_key=true"),
        ));
        if Field::MaxQueueTimeFloorMs
            .expression_algorithms()
            .contains(&alg)
        {
            let (floor, ceil) = (Field::MaxQueueTimeFloorMs, Field::MaxQueueTimeCeilMs);
            out.push((
                alg,
                vec![floor],
                format!("{alg};max_queue_time_floor_ms=10"),
            ));
            out.push((
                alg,
                vec![ceil],
                format!("{alg};max_queue_time_ceil_ms=9000"),
            ));
            out.push((
                alg,
                vec![floor, ceil],
                format!("{alg};max_queue_time_floor_ms=10;max_queue_time_ceil_ms=9000"),
            ));
        }
    }
    out
}

/// Whether `model` resolves `alg` through the top-level entries (or not
/// at all) in `table`: it then inherits a top-level change.
fn inherits(table: &RouteTable, model: &str, alg: Algorithm) -> bool {
    match table.resolve(model, alg) {
        None => true,
        Some(r) if table.models.contains_key(model) => {
            r.origin == Origin::TopLevelRequestAlgorithms
        }
        Some(r) => r.origin == Origin::SetRequestAlgorithms,
    }
}

/// Checks the derivation of docs/cli.md ("Which expressions are now
/// rejected") against the compiler: of the expressions the old table
/// accepts for a model, those in a reported class are exactly the ones
/// the new table rejects, and the new table rejects everything a class
/// names with the class's code. Returns how many newly rejected
/// expressions it saw.
fn rejections_match_the_compiler(old: &RouteTable, new: &RouteTable, diff: &TableDiff) -> usize {
    let mut models: Vec<String> = old
        .models
        .keys()
        .chain(new.models.keys())
        .cloned()
        .collect();
    models.push("a-model-neither-lists".into());
    let mut seen = 0;
    for model in &models {
        let listed = new.models.contains_key(model) || old.models.contains_key(model);
        let own = diff
            .sets
            .iter()
            .find(|s| s.model.as_deref() == listed.then_some(model.as_str()));
        for (alg, fields, expr) in expressions() {
            let before = compile_request_expression(old, model, &expr);
            let after = compile_request_expression(new, model, &expr);
            let newly = before.is_ok() && after.is_err();
            let classes: Vec<&RejectedClass> =
                match own.and_then(|s| s.algorithms.iter().find(|a| a.algorithm == alg)) {
                    Some(a) => a.rejected.iter().collect(),
                    None if inherits(old, model, alg) && inherits(new, model, alg) => diff
                        .request_algorithms
                        .iter()
                        .filter(|t| t.diff.algorithm == alg)
                        .flat_map(|t| &t.diff.rejected)
                        .collect(),
                    None => Vec::new(),
                };
            let covered = classes.iter().find(|r| r.covers(alg, &fields));
            // Among what the old table accepted, exactly the classes are
            // newly rejected; whatever a class names, the new table
            // rejects with its code.
            if before.is_ok() {
                assert_eq!(newly, covered.is_some(), "{model}: {expr}: {classes:?}");
            }
            if let Some(class) = covered {
                let code = after.as_ref().err().map(|e| e[0].code);
                assert_eq!(code, Some(class.code()), "{model}: {expr}");
                seen += usize::from(newly);
            }
        }
    }
    seen
}

#[test]
fn rejected_classes_are_exactly_what_the_compiler_now_rejects() {
    for name in ["json", "routes"] {
        let (old, new, diff) = pair(name);
        let seen = rejections_match_the_compiler(&old, &new, &diff);
        assert!(seen >= 6, "{name}: only {seen} newly rejected expressions");
    }
}

/// Entries for generated configurations: every algorithm, queue bounds
/// alone and together, settings that differ.
const ENTRIES: [&str; 12] = [
    r#"{"algorithm": "random"}"#,
    r#"{"algorithm": "round-robin", "max_input_work_seconds": 30}"#,
    r#"{"algorithm": "power-of-n"}"#,
    r#"{"algorithm": "power-of-n", "sample_count": 3}"#,
    r#"{"algorithm": "pulsar", "seed": "a"}"#,
    r#"{"algorithm": "pulsar", "seed": "b", "consider_kv_free_tokens": true}"#,
    r#"{"algorithm": "wait-and-widen", "max_queue_time_floor_ms": 100}"#,
    r#"{"algorithm": "wait-and-widen", "max_queue_time_ceil_ms": 900}"#,
    r#"{"algorithm": "wait-and-widen", "max_queue_time_floor_ms": 100, "max_queue_time_ceil_ms": 900}"#,
    r#"{"algorithm": "pulsar-wait-and-widen", "max_queue_time_floor_ms": 100}"#,
    r#"{"algorithm": "pulsar-wait-and-widen", "max_queue_time_ceil_ms": 900, "cache_affinity_wait_ms": 5}"#,
    r#"{"algorithm": "pulsar-wait-and-widen"}"#,
];

/// A `request_algorithms` object of the given entries, one per algorithm.
fn request_algorithms(entries: &[usize]) -> String {
    let mut by_algorithm = indexmap::IndexMap::new();
    for &i in entries {
        let entry: Value = serde_json::from_str(ENTRIES[i % ENTRIES.len()]).unwrap_or_default();
        let name = entry["algorithm"].as_str().unwrap_or("random").to_string();
        by_algorithm.insert(name, entry);
    }
    serde_json::to_string(&by_algorithm).unwrap_or_default()
}

/// An lb-config.json: a default, top-level entries, and up to four models
/// (an entry and its own request algorithms each, or not listed).
fn generated(default: usize, top: &[usize], models: &[(Option<usize>, Vec<usize>)]) -> RouteTable {
    let defaults = ["random", "round-robin", "power-of-n", "pulsar"];
    let mut listed = Vec::new();
    for (i, (entry, own)) in models.iter().enumerate() {
        if let Some(entry) = entry {
            let mut value: Value =
                serde_json::from_str(ENTRIES[entry % ENTRIES.len()]).unwrap_or_default();
            value["request_algorithms"] =
                serde_json::from_str(&request_algorithms(own)).unwrap_or_default();
            listed.push(format!("\"m{i}\": {value}"));
        }
    }
    let text = format!(
        "{{\"default\": \"{}\", \"request_algorithms\": {}, \"models\": {{{}}}}}",
        defaults[default % defaults.len()],
        request_algorithms(top),
        listed.join(", ")
    );
    let (table, report) = load_table("generated.json", &text);
    assert!(!report.has_errors(), "{text}: {:?}", report.diagnostics);
    table.unwrap_or_else(|| panic!("{text} builds"))
}

fn table_strategy() -> impl proptest::strategy::Strategy<Value = RouteTable> {
    use proptest::collection::vec;
    use proptest::prelude::*;
    let entries = || vec(0..ENTRIES.len(), 0..3);
    let model = (proptest::option::of(0..ENTRIES.len()), entries());
    (0..4usize, entries(), vec(model, 4))
        .prop_map(|(default, top, models)| generated(default, &top, &models))
}

/// (model, algorithm) of every reported difference.
fn keys(diff: &TableDiff) -> Vec<(Option<String>, Algorithm)> {
    let mut keys: Vec<_> = diff
        .sets
        .iter()
        .flat_map(|s| s.algorithms.iter().map(|a| (s.model.clone(), a.algorithm)))
        .chain(
            diff.request_algorithms
                .iter()
                .map(|t| (Some("*".into()), t.diff.algorithm)),
        )
        .collect();
    keys.sort();
    keys
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]

    /// On generated pairs: the rejected classes match the compiler, a
    /// table has no difference with itself, and swapping the sides
    /// reports the same differences with added and removed swapped.
    #[test]
    fn generated_pairs_agree_with_the_compiler_and_are_symmetric(old in table_strategy(), new in table_strategy()) {
        let diff = diff_tables(&old, &new);
        rejections_match_the_compiler(&old, &new, &diff);
        let same = diff_tables(&old, &old);
        proptest::prop_assert!(same.is_empty());
        let back = diff_tables(&new, &old);
        proptest::prop_assert_eq!(keys(&diff), keys(&back));
        proptest::prop_assert_eq!(diff.unchanged, back.unchanged);
        let (changed, added, removed) = diff.counts();
        proptest::prop_assert_eq!(back.counts(), (changed, removed, added));
        for s in &diff.sets {
            let twin = back.sets.iter().find(|b| b.model == s.model);
            let twin = twin.map(|b| (b.configured.1, b.configured.0));
            proptest::prop_assert_eq!(twin, Some(s.configured));
        }
    }
}
