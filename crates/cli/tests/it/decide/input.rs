//! `routex decide` input parsing and output shapes (docs/contract.md 5.3).

use routex::balancer::ClusterSnapshot;
use routex::diag::Code;
use routex::router::{Rejection, RejectionCode};
use routex_cli::decide::{parse_input, Outcome};
use std::time::Duration;

fn input(name: &str) -> String {
    let path = format!(
        "{}/crates/cli/tests/inputs/decide/{name}",
        concat!(env!("CARGO_MANIFEST_DIR"), "/../..")
    );
    std::fs::read_to_string(path).unwrap()
}

#[test]
fn spec_example_parses_into_balancer_types() {
    let (request, clusters) = parse_input(&input("spec-example.json")).unwrap();
    assert_eq!(request.model.as_deref(), Some("m"));
    assert_eq!(request.cache_affinity_key.as_deref(), Some("k1"));
    assert_eq!(request.input_tokens, Some(6661));
    assert_eq!(request.elapsed_ms, 0.0);
    assert_eq!(
        clusters,
        [ClusterSnapshot {
            id: "c1".into(),
            rtt_ms: 5.0,
            last_mean_input_tps: 7000.0,
            max_input_tps: Some(7000.0),
            queue_size: 0,
            queued_input_size: 0,
            num_running_queries: 3,
            max_engine_concurrency: 25,
            queue_time_estimate_ms_by_priority: vec![],
            kv_cache_capacity_tokens: 400_000,
            kv_cache_used_tokens: 0,
            kv_cache_free_tokens: 400_000,
            total_query_input_size: 0,
        }]
    );
}

#[test]
fn omitted_cluster_fields_are_neutral_and_priorities_sorted() {
    let (_, clusters) = parse_input(&input("no-max-tps.json")).unwrap();
    assert_eq!(
        clusters[1],
        ClusterSnapshot {
            id: "b".into(),
            ..ClusterSnapshot::default()
        }
    );
    let (request, clusters) = parse_input(&input("priorities.json")).unwrap();
    assert_eq!(request.priority, 4);
    assert_eq!(
        clusters[0].queue_time_estimate_ms_by_priority,
        [(0, 5), (4, 25)]
    );
}

#[test]
fn invalid_inputs_give_one_line_errors() {
    for (file, needle) in [
        (
            "bad-priority-key.json",
            "key \"high\" is not a priority (an integer from 0 to 2^32-1)",
        ),
        ("missing-id.json", "missing field `id`"),
        ("misspelt-field.json", "unknown field `input_token`"),
        ("truncated.json", "EOF while parsing"),
    ] {
        let err = parse_input(&input(file)).unwrap_err();
        assert!(err.contains(needle), "{file}: {err}");
        assert!(!err.contains('\n'), "{file}: {err}");
    }
    let err = parse_input(r#"{"request": {"elapsed_ms": -1}}"#).unwrap_err();
    assert!(err.contains("elapsed_ms"), "{err}");
    // Negative times and rates are refused alike, naming the field.
    for field in ["rtt_ms", "last_mean_input_tps", "max_input_tps"] {
        let text = format!(r#"{{"request": {{}}, "clusters": [{{"id": "a", "{field}": -1}}]}}"#);
        let err = parse_input(&text).unwrap_err();
        assert_eq!(
            err,
            format!("cluster a: {field} must be a non-negative number, not -1")
        );
    }
    let err = parse_input(&input("misspelt-field.json")).unwrap_err();
    assert!(err.starts_with("1:40: unknown field"), "{err}");
    let err = parse_input("{\n  \"request\": 1}").unwrap_err();
    assert!(err.starts_with("2:14: invalid type"), "{err}");
    assert!(parse_input("").is_err());
    assert!(parse_input("[]").is_err());
}

#[test]
fn outputs_are_the_documented_lines() {
    let selected = Outcome::Selected {
        cluster: "c1".into(),
        rank_depth: 1,
        kv_skip: false,
    };
    assert_eq!(
        selected.to_json(),
        r#"{"version": 1, "decision": "selected", "cluster": "c1", "rank_depth": 1}"#
    );
    assert_eq!(
        Outcome::Wait(Duration::from_millis(200)).to_json(),
        r#"{"version": 1, "decision": "wait", "wait_ms": 200.0}"#
    );
    assert_eq!(
        Outcome::Unavailable.to_json(),
        r#"{"version": 1, "decision": "unavailable"}"#
    );
    let rejected = Outcome::Rejected(Rejection::new(
        RejectionCode::InputWorkLimitExceeded,
        "over",
    ));
    assert_eq!(
        rejected.to_json(),
        r#"{"version": 1, "decision": "rejected", "code": "input_work_limit_exceeded", "status": 503}"#
    );
    let unknown = Outcome::Rejected(Rejection::new(
        RejectionCode::Expression(Code::UnknownMethod),
        "unknown routing method 'fastest'",
    ));
    assert_eq!(
        unknown.to_human(),
        "rejected: 400 unknown_method: unknown routing method 'fastest'"
    );
    let quoted = Outcome::Selected {
        cluster: "a\"b".into(),
        rank_depth: 3,
        kv_skip: true,
    };
    assert!(quoted.to_json().contains(r#""cluster": "a\"b""#));
    assert_eq!(
        quoted.to_human(),
        "selected a\"b (rank depth 3, after skipping a higher rank for KV free tokens)"
    );
}

proptest::proptest! {
    /// Any text is read or answered with an error, never a panic.
    #[test]
    fn any_decide_input_parses_or_errors(text in "\\PC{0,200}") {
        let _ = routex_cli::decide::parse_input(&text);
    }
}
