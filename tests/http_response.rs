//! `Rejection` into `http::Response` (feature `http`): status,
//! `x-stargate-error-code`, content type and the body of
//! docs/stargate.md 5.5, for every rejection code.
#![cfg(feature = "http")]

use routex::diag::Code;
use routex::router::{Rejection, RejectionCode, ERROR_CODE_HEADER};

#[test]
fn every_code_becomes_its_response() {
    let codes = [
        (RejectionCode::InvalidHeader, 400),
        (RejectionCode::Expression(Code::MalformedExpression), 400),
        (RejectionCode::Expression(Code::UnknownMethod), 400),
        (RejectionCode::Expression(Code::Unavailable), 400),
        (RejectionCode::MissingCacheAffinityKey, 400),
        (RejectionCode::NoEligibleCandidates, 404),
        (RejectionCode::CandidatesExhausted, 503),
        (RejectionCode::InputWorkLimitExceeded, 503),
        (RejectionCode::InputWorkCapacityUnavailable, 503),
        (RejectionCode::RoutingUnavailable, 503),
    ];
    for (code, status) in codes {
        let rejection = Rejection::new(code, "a \"quoted\" message");
        let response: http::Response<String> = rejection.to_response();
        assert_eq!(response.status().as_u16(), status, "{code}");
        assert_eq!(response.headers().len(), 2);
        assert_eq!(response.headers()[ERROR_CODE_HEADER], code.as_str());
        assert_eq!(
            response.headers()[http::header::CONTENT_TYPE],
            "application/json"
        );
        assert_eq!(
            response.body(),
            &format!(r#"{{"error":"a \"quoted\" message","code":"{code}"}}"#)
        );
        // The body is the JSON object a client parses.
        let parsed: serde_json::Value = serde_json::from_str(response.body()).unwrap();
        assert_eq!(parsed["code"], code.as_str());
        assert_eq!(parsed["error"], "a \"quoted\" message");
    }
}

#[test]
fn from_works_by_value_and_by_reference_for_any_string_body() {
    let rejection = Rejection::new(
        RejectionCode::Expression(Code::UnknownMethod),
        "unknown routing method 'fastest'",
    );
    let by_ref: http::Response<Vec<u8>> = (&rejection).into();
    assert_eq!(by_ref.status(), http::StatusCode::BAD_REQUEST);
    assert_eq!(
        by_ref.body().as_slice(),
        br#"{"error":"unknown routing method 'fastest'","code":"unknown_method"}"#
    );
    let by_value: http::Response<String> = rejection.into();
    assert_eq!(by_value.headers()[ERROR_CODE_HEADER], "unknown_method");
}

#[test]
fn parses_an_http_header_map() {
    let mut map = http::HeaderMap::new();
    map.insert("x-request-id", "r1".parse().unwrap());
    map.insert("x-model", "llama".parse().unwrap());
    map.insert("x-input-tokens", "12".parse().unwrap());
    map.insert(
        "x-routing-method",
        http::HeaderValue::from_bytes(b"pulsar;seed=\xff").unwrap(),
    );
    let h = routex::router::RequestHeaders::from_header_map(&map).unwrap();
    assert_eq!((h.model, h.input_tokens), ("llama", 12));
    assert_eq!(h.routing_method, Some(&b"pulsar;seed=\xff"[..]));
    map.insert("x-input-tokens", "twelve".parse().unwrap());
    let r = routex::router::RequestHeaders::from_header_map(&map).unwrap_err();
    assert_eq!(r.to_response::<String>().status(), 400);
}
