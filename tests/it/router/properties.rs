//! Properties: no input makes the router panic, and the cache never holds
//! more than two expressions or an instance for a dropped definition.

use super::support::*;
use proptest::prelude::*;
use routex::router::Router;
use std::time::Duration;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn any_header_bytes_resolve_or_reject(value in proptest::collection::vec(any::<u8>(), 0..64),
                                          key in proptest::option::of("[ a-z]{0,4}")) {
        let router = Router::new(routex::check::permissive_table());
        if let Err(r) = router.resolve("m", key.as_deref(), Some(&value)) {
            prop_assert_eq!(r.status, 400);
            prop_assert_eq!(r.status, r.code.status());
        }
    }

    #[test]
    fn near_miss_expressions_resolve_or_reject(
        method in prop::sample::select(vec!["pulsar", "PULSAR", "wait_and_widen", "power-of-n", "random", "round-robin", "fastest", ""]),
        params in proptest::collection::vec("[a-z_]{1,12}=[a-z0-9\".-]{0,6}", 0..4),
    ) {
        let value = std::iter::once(method.to_string()).chain(params).collect::<Vec<_>>().join(";");
        let router = Router::new(routex::check::permissive_table());
        let first = router.resolve("m", None, Some(value.as_bytes())).map(|r| r.definition().clone());
        let second = router.resolve("m", None, Some(value.as_bytes())).map(|r| r.definition().clone());
        match (first, second) {
            (Ok(a), Ok(b)) => prop_assert!(std::sync::Arc::ptr_eq(&a, &b) || !value.contains(';')),
            (Err(a), Err(b)) => prop_assert_eq!(a, b),
            (a, b) => prop_assert!(false, "{:?} then {:?}", a.is_ok(), b.is_ok()),
        }
    }

    #[test]
    fn cache_keeps_at_most_two_expressions_and_no_dropped_instance(
        steps in proptest::collection::vec((0usize..5, 0usize..3, 0u64..40), 1..40),
    ) {
        let h = harness_with(permissive_table(), 2, Duration::from_secs(60));
        let values = ["pulsar;seed=a", "pulsar;seed=b", "random;require_input_tokens=true", "pulsar;bad=1", "pulsar;seed=a "];
        let keys = [None, Some("k1"), Some("k2")];
        let mut seen = Vec::new();
        for (value, key, advance) in steps {
            h.clock.advance(Duration::from_secs(advance));
            if let Ok(r) = h.router.resolve("m", keys[key], Some(values[value].as_bytes())) {
                seen.push((keys[key], r.definition().clone()));
            }
            let mut holding = 0;
            for key in keys {
                let (current, previous) = h.router.cached_definitions("m", key);
                holding += usize::from(current.is_some());
                prop_assert!(current.is_some() || previous.is_none());
                let cached = [current, previous];
                for (k, d) in &seen {
                    let live = *k == key && cached.iter().flatten().any(|c| std::sync::Arc::ptr_eq(c, d));
                    prop_assert_eq!(h.router.has_instance("m", key, d), live);
                }
            }
            prop_assert!(holding <= 2, "capacity 2 exceeded");
        }
    }
}
