//! `Router::reload`: the table is swapped whole; unchanged definitions
//! keep their balancer instances (and their state), changed ones rebuild,
//! cached expressions of changed models go.

use routex::router::{CacheOutcome, Router, Source};
use std::sync::Arc;

/// Models `a` and `b`, and pulsar as a top-level request algorithm (so
/// `pulsar;seed=x` compiles for both).
fn table(a: &str, b: &str) -> routex::ir::RouteTable {
    let text = format!(
        r#"{{"request_algorithms": {{"pulsar": {{"algorithm": "pulsar", "seed": "s"}}}},
            "models": {{"a": {a}, "b": {b}}}}}"#
    );
    load(&text)
}

fn load(text: &str) -> routex::ir::RouteTable {
    let (table, report) = routex::config::load_table("lb-config.json", text);
    table.unwrap_or_else(|| panic!("{report:?}"))
}

#[test]
fn unchanged_targets_keep_their_state_and_changed_ones_rebuild() {
    let router = Router::new(table(r#""round-robin""#, r#""random""#));
    let a_before = router.resolve("a", Some("k"), None).unwrap();
    let b_before = router.resolve("b", Some("k"), None).unwrap();
    let expr: &[u8] = b"pulsar;seed=x";
    router.resolve("a", Some("k"), Some(expr)).unwrap();
    router.resolve("b", Some("k"), Some(expr)).unwrap();
    assert_eq!(router.metrics().entries, 2);

    let reloaded = router.reload(table(r#""pulsar""#, r#""random""#));
    assert_eq!(reloaded.changed_models, ["a"]);
    assert_eq!(
        reloaded.instances_dropped, 2,
        "a's round-robin and pulsar expression"
    );
    assert_eq!(reloaded.expressions_dropped, 1);
    assert_eq!(router.metrics().entries, 1);

    // b: the same definition and instance as before the reload.
    let b_after = router.resolve("b", Some("k"), None).unwrap();
    assert!(Arc::ptr_eq(b_before.definition(), b_after.definition()));
    assert!(Arc::ptr_eq(b_before.instance(), b_after.instance()));
    let again = router.resolve("b", Some("k"), Some(expr)).unwrap();
    assert_eq!(again.source, Source::Expression(CacheOutcome::Hit));
    // a: the new policy, a fresh instance; its expression compiles again.
    let a_after = router.resolve("a", Some("k"), None).unwrap();
    assert_eq!(a_after.definition().policy.algorithm.name(), "pulsar");
    assert!(!Arc::ptr_eq(a_before.instance(), a_after.instance()));
    let rebuilt = router.resolve("a", Some("k"), Some(expr)).unwrap();
    assert_eq!(rebuilt.source, Source::Expression(CacheOutcome::Build));
    // The request that held the old instance still decides with it.
    assert_eq!(a_before.definition().policy.algorithm.name(), "round-robin");
}

#[test]
fn a_model_that_goes_falls_back_to_the_default() {
    let router = Router::new(load(r#"{"models": {"a": "round-robin", "b": "random"}}"#));
    router.resolve("b", None, None).unwrap();
    let reloaded = router.reload(load(r#"{"models": {"a": "round-robin"}}"#));
    assert_eq!(reloaded.changed_models, ["b"]);
    let b = router.resolve("b", None, None).unwrap();
    assert_eq!(b.definition(), &router.table().default);
}
