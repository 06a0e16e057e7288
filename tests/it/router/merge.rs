//! Per-request expressions over the resolved base, through the real
//! compiler (docs/stargate.md 5.3, 7.2
//! `test_overlay_uses_resolved_base_and_completes_bounds`).

use routex::diag::Code;
use routex::ir::{Algorithm, RouteTable, Settings, WaitAndWidenSettings};
use routex::router::{RejectionCode, Router, RouterOptions, Source};

const CONFIG: &str = r#"{
  "default": "power-of-n",
  "request_algorithms": {
    "wait-and-widen": {"algorithm": "wait-and-widen", "seed": "top", "n": 0,
                       "max_queue_time_ceil_ms": 300},
    "pulsar": {"algorithm": "pulsar", "seed": "top", "rendezvous_weight": "last-mean-input-tps"}
  },
  "models": {
    "m1": {"algorithm": "round-robin",
           "request_algorithms": {
             "wait-and-widen": {"algorithm": "wait-and-widen", "seed": "model", "n": 3}}}
  }
}"#;

fn table() -> RouteTable {
    let (table, report) = routex::config::load_table("lb-config.json", CONFIG);
    table.unwrap_or_else(|| panic!("{:?}", report.diagnostics))
}

fn router() -> Router {
    Router::new(table())
}

fn ww(router: &Router, model: &str, value: &str) -> (WaitAndWidenSettings, Option<u64>) {
    let r = router
        .resolve(model, None, Some(value.as_bytes()))
        .unwrap_or_else(|e| panic!("{value}: {e}"));
    assert!(matches!(r.source, Source::Expression(_)));
    match &r.definition().policy.settings {
        Settings::WaitAndWiden(s) => (s.clone(), r.definition().config.fields.n),
        other => panic!("{other:?}"),
    }
}

#[test]
fn expression_merges_onto_the_resolved_base_and_keeps_static_zero_n() {
    let router = router();
    // Unlisted model: the top-level request algorithm is the base.
    let (s, configured_n) = ww(
        &router,
        "other",
        "wait-and-widen;max_queue_time_floor_ms=100",
    );
    assert_eq!(s.seed, "top");
    assert_eq!(configured_n, Some(0), "the static n = 0 is kept");
    assert_eq!(s.bucket.n, 1, "and normalised to 1 by the builder");
    // The base's ceiling completes the pair.
    assert_eq!(s.bucket.max_queue_time_floor_ms, Some(100));
    assert_eq!(s.bucket.max_queue_time_ceil_ms, Some(300));
    // Quoted plain numbers and booleans are accepted.
    let (s, _) = ww(
        &router,
        "other",
        r#"wait-and-widen;max_queue_time_floor_ms="100";ignore_queue_time="true""#,
    );
    assert_eq!(s.bucket.max_queue_time_floor_ms, Some(100));
    assert!(s.bucket.ignore_queue_time);
}

#[test]
fn model_level_request_algorithm_is_the_base_for_a_listed_model() {
    let router = router();
    let (s, configured_n) = ww(&router, "m1", "wait-and-widen;cache_affinity_wait_ms=50");
    assert_eq!(s.seed, "model");
    assert_eq!(configured_n, Some(3));
    assert_eq!(s.cache_affinity_wait_ms, 50);
    // No ceiling in the model's base: a lone floor is inert.
    let err = router
        .resolve(
            "m1",
            None,
            Some(b"wait-and-widen;max_queue_time_floor_ms=100"),
        )
        .unwrap_err();
    assert_eq!(err.code, RejectionCode::Expression(Code::InertCombination));
    assert_eq!(err.status, 400);
    // The top-level pulsar applies to m1 too, with its static weight.
    let r = router.resolve("m1", None, Some(b"pulsar;seed=x")).unwrap();
    match &r.definition().policy.settings {
        Settings::Pulsar(p) => {
            assert_eq!(p.seed, "x");
            assert_eq!(p.rendezvous_weight.name(), "last-mean-input-tps");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn request_expressions_report_stargates_first_error() {
    let router = router();
    let cases: [(&[u8], Code, Option<&str>); 6] = [
        (
            b"fastest;seed=x",
            Code::UnknownMethod,
            Some("unknown routing method 'fastest'"),
        ),
        (
            b"pulsar;n=2",
            Code::NotApplicable,
            Some("n is not applicable to pulsar"),
        ),
        (
            b"pulsar;widen=1",
            Code::UnknownParameter,
            Some("unknown parameter 'widen' for algorithm pulsar"),
        ),
        (b"pulsar;seed=?1", Code::MalformedExpression, None),
        (b"power-of-n;sample_count=2", Code::Unavailable, None),
        (b"wait-and-widen;n=0", Code::InertValue, None),
    ];
    for (value, code, message) in cases {
        let model = if code == Code::Unavailable {
            "m1"
        } else {
            "other"
        };
        let err = router.resolve(model, None, Some(value)).unwrap_err();
        let shown = String::from_utf8_lossy(value);
        assert_eq!(err.code, RejectionCode::Expression(code), "{shown}: {err}");
        assert_eq!(err.status, 400);
        assert_eq!(err.header_value(), code.as_str());
        if let Some(message) = message {
            assert_eq!(err.message, message);
        }
    }
    // Failures are not cached and count nothing.
    assert_eq!(router.metrics().entries, 0);
    assert!(router.metrics().expressions.is_empty());
}

#[test]
fn call_form_values_compile_like_header_form_when_the_compiler_takes_both() {
    let options = RouterOptions::default().with_call_form_compiler(std::sync::Arc::new(
        routex::check::compile_request_expression,
    ));
    let router: Router = Router::with_options(table(), options);
    let header = router
        .resolve("other", Some("k"), Some(b"pulsar;seed=abc"))
        .unwrap();
    let call = router
        .resolve("other", Some("k"), Some(br#"pulsar(seed="abc")"#))
        .unwrap();
    assert_eq!(header.definition().policy, call.definition().policy);
    assert_eq!(call.definition().policy.algorithm, Algorithm::Pulsar);
}

#[test]
fn the_default_router_reads_the_header_form_only_as_stargate_does() {
    let router = router();
    let err = router
        .resolve("other", Some("k"), Some(br#"pulsar(seed="abc")"#))
        .unwrap_err();
    assert_eq!(err.status, 400);
    assert_eq!(err.code, RejectionCode::Expression(Code::UnknownMethod));
}
