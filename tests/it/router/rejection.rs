//! The rejection value: code, status, header and body (5.5, 2.2, 3.9).

use routex::diag::Code;
use routex::router::{Rejection, RejectionCode, ERROR_CODE_HEADER};

#[test]
fn rejection_carries_code_status_header_and_body() {
    let r = Rejection::new(
        RejectionCode::Expression(Code::UnknownMethod),
        "unknown routing method 'fastest'",
    );
    assert_eq!(r.status, 400);
    assert_eq!(ERROR_CODE_HEADER, "x-stargate-error-code");
    assert_eq!(r.header_value(), "unknown_method");
    assert_eq!(
        r.body_json(),
        r#"{"error":"unknown routing method 'fastest'","code":"unknown_method"}"#
    );
    let quoted = Rejection::new(
        RejectionCode::Expression(Code::MalformedExpression),
        "P9: \"x\"",
    );
    assert_eq!(
        quoted.body_json(),
        r#"{"error":"P9: \"x\"","code":"malformed_expression"}"#
    );
}

#[test]
fn every_code_has_its_status() {
    let cases = [
        (RejectionCode::InvalidHeader, "invalid_header", 400),
        (
            RejectionCode::MissingCacheAffinityKey,
            "missing_cache_affinity_key",
            400,
        ),
        (
            RejectionCode::NoEligibleCandidates,
            "no_eligible_candidates",
            404,
        ),
        (
            RejectionCode::CandidatesExhausted,
            "candidates_exhausted",
            503,
        ),
        (
            RejectionCode::InputWorkLimitExceeded,
            "input_work_limit_exceeded",
            503,
        ),
        (
            RejectionCode::InputWorkCapacityUnavailable,
            "input_work_capacity_unavailable",
            503,
        ),
        (
            RejectionCode::RoutingUnavailable,
            "routing_unavailable",
            503,
        ),
    ];
    for (code, name, status) in cases {
        assert_eq!((code.as_str(), code.status()), (name, status));
        assert_eq!(Rejection::new(code, "m").status, status);
    }
    for code in Code::ALL.iter().filter(|c| c.is_stargate()) {
        let r = RejectionCode::Expression(*code);
        assert_eq!((r.as_str(), r.status()), (code.as_str(), 400));
    }
}

#[test]
fn from_diagnostic_keeps_stargates_code_and_message() {
    let d = routex::diag::Diagnostic::new(
        Code::UnknownParameter,
        routex::diag::Span::new(7, 12),
        "unknown parameter 'widen' for algorithm pulsar",
    );
    let r = Rejection::from_diagnostic(&d);
    assert_eq!(r.code, RejectionCode::Expression(Code::UnknownParameter));
    assert_eq!(r.message, "unknown parameter 'widen' for algorithm pulsar");
    assert_eq!(
        r.to_string(),
        "400 unknown_parameter: unknown parameter 'widen' for algorithm pulsar"
    );
}

/// A custom compiler that breaks the convention (an `Err` without an
/// error) still gets a rejection with stargate's code for a value that
/// does not compile, naming the value.
#[test]
fn a_compiler_error_without_diagnostics_is_malformed_expression() {
    use routex::router::{Compiler, Router, RouterOptions};
    let compile: Compiler = std::sync::Arc::new(|_, _, _| Err(Vec::new()));
    let router = Router::with_options(
        routex::check::permissive_table(),
        RouterOptions::default().with_compiler(compile),
    );
    let err = router
        .resolve("m", None, Some(b"pulsar;seed=x"))
        .unwrap_err();
    assert_eq!(
        err.code,
        RejectionCode::Expression(Code::MalformedExpression)
    );
    assert_eq!(err.message, "could not compile 'pulsar;seed=x'");
}
