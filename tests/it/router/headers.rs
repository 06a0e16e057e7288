//! The request headers of docs/stargate.md 1.1: mandatory headers, numeric
//! widths, trimming, blank values, and the 400 `invalid_header` answer.

use routex::router::headers::{self, RequestHeaders};
use routex::router::{LastClusterHint, Rejection, RejectionCode};

/// Parses a header list (first value of a repeated name wins, as with
/// `http::HeaderMap::get`).
fn parse<'a>(list: &'a [(&'static str, &'a [u8])]) -> Result<RequestHeaders<'a>, Rejection> {
    RequestHeaders::parse(|name| list.iter().find(|(n, _)| *n == name).map(|(_, v)| *v))
}

const BASE: [(&str, &[u8]); 3] = [
    ("x-request-id", b"req-1"),
    ("x-model", b"llama"),
    ("x-input-tokens", b"100"),
];

fn with(extra: &[(&'static str, &'static [u8])]) -> Vec<(&'static str, &'static [u8])> {
    // Extra entries first: they replace the base value of the same name.
    extra.iter().copied().chain(BASE).collect()
}

fn without(name: &str) -> Vec<(&'static str, &'static [u8])> {
    BASE.iter().copied().filter(|(n, _)| *n != name).collect()
}

fn rejected(list: &[(&'static str, &'static [u8])]) -> String {
    let r = parse(list).unwrap_err();
    assert_eq!(r.code, RejectionCode::InvalidHeader);
    assert_eq!((r.status, r.header_value()), (400, "invalid_header"));
    r.message
}

#[test]
fn the_mandatory_headers_suffice() {
    let h = parse(&BASE).unwrap();
    assert_eq!(
        h,
        RequestHeaders {
            request_id: "req-1",
            model: "llama",
            routing_key: None,
            cache_affinity_key: None,
            input_tokens: 100,
            priority: 0,
            request_slo_ms: None,
            max_wait_ms: None,
            routing_method: None,
            last_cluster_id: LastClusterHint::Absent,
        }
    );
    let r = h.route_request();
    assert_eq!(r.request.model, "llama");
    assert_eq!(r.request.input_tokens, Some(100));
    assert_eq!(r.request.priority, 0);
    assert!(r.request.excluded.is_empty());
    assert_eq!(r.routing_method, None);
}

#[test]
fn every_header_is_read_and_trimmed() {
    let list = with(&[
        ("x-model", b"  llama-3-70b "),
        ("x-routing-key", b" tenant-7 "),
        ("x-cache-affinity-key", b"conv-42"),
        ("x-input-tokens", b"+6661"),
        ("x-priority", b"4294967295"),
        ("x-request-slo-ms", b"0"),
        ("x-max-wait-ms", b" 250 "),
        ("x-routing-method", b" pulsar;seed=x "),
    ]);
    let h = parse(&list).unwrap();
    assert_eq!(h.model, "llama-3-70b");
    assert_eq!(h.routing_key, Some("tenant-7"));
    assert_eq!(h.cache_affinity_key, Some("conv-42"));
    assert_eq!(h.input_tokens, 6661);
    assert_eq!(h.priority, u32::MAX);
    assert_eq!(h.request_slo_ms, Some(0), "0 is kept");
    assert_eq!(h.max_wait_ms, Some(250));
    // The router reads the method raw (it trims and checks it itself).
    assert_eq!(h.routing_method, Some(&b" pulsar;seed=x "[..]));
    let r = h.route_request();
    assert_eq!(r.request.routing_key, Some("tenant-7"));
    assert_eq!(r.request.cache_affinity_key, Some("conv-42"));
    assert_eq!(r.request.priority, u32::MAX);
    assert_eq!(r.request.request_slo_ms, Some(0));
}

#[test]
fn blank_or_non_text_optional_keys_are_absent() {
    for value in [&b""[..], b"   ", b"\xff\xfe", b"caf\xc3\xa9"] {
        let list: Vec<(&'static str, &[u8])> =
            [("x-routing-key", value), ("x-cache-affinity-key", value)]
                .into_iter()
                .chain(BASE)
                .collect();
        let h = parse(&list).unwrap();
        assert_eq!((h.routing_key, h.cache_affinity_key), (None, None));
    }
}

#[test]
fn a_missing_or_blank_mandatory_header_is_400() {
    for name in [headers::REQUEST_ID, headers::MODEL, headers::INPUT_TOKENS] {
        assert_eq!(
            rejected(&without(name)),
            format!("missing required header {name}")
        );
    }
    assert_eq!(rejected(&with(&[("x-model", b"  ")])), "x-model is blank");
    assert_eq!(
        rejected(&with(&[("x-request-id", b"")])),
        "x-request-id is blank"
    );
    assert_eq!(
        rejected(&with(&[("x-model", b"llama\xff")])),
        "x-model is not visible ASCII text"
    );
}

#[test]
fn malformed_numbers_are_400_naming_the_header() {
    let u64_cases: [&[u8]; 9] = [
        b"",
        b"  ",
        b"-1",
        b"1.0",
        b"1e3",
        b"++1",
        b"0x10",
        b"18446744073709551616",
        b"1 2",
    ];
    for name in [
        headers::INPUT_TOKENS,
        headers::REQUEST_SLO_MS,
        headers::MAX_WAIT_MS,
    ] {
        for value in u64_cases {
            let message = rejected(&with(&[(name, value)]));
            let expected = if value.iter().all(|b| *b == b' ') {
                format!("{name} is empty")
            } else {
                format!("{name} is not an integer from 0 to 2^64-1")
            };
            assert_eq!(message, expected, "{name}: {:?}", value);
        }
        assert_eq!(
            rejected(&with(&[(name, b"1\x01")])),
            format!("{name} is not visible ASCII text")
        );
    }
    assert_eq!(
        rejected(&with(&[("x-priority", b"4294967296")])),
        "x-priority is not an integer from 0 to 2^32-1"
    );
    assert_eq!(
        rejected(&with(&[("x-priority", b"")])),
        "x-priority is empty"
    );
    // The widths' maxima are accepted.
    let maxima = with(&[
        ("x-input-tokens", b"18446744073709551615"),
        ("x-priority", b"4294967295"),
    ]);
    let h = parse(&maxima).unwrap();
    assert_eq!((h.input_tokens, h.priority), (u64::MAX, u32::MAX));
}

/// `x-stargate-last-cluster-id` (docs/stargate.md 3.10): read with the
/// rules of the other text headers, never a reason to reject; what the
/// parser does not keep classifies the request as stale.
#[test]
fn the_last_cluster_hint_is_a_defined_outcome_for_every_value() {
    use routex::balancer::SessionState;
    let hint = |value: &'static [u8]| {
        let list: &'static [_] = Box::leak(with(&[("x-stargate-last-cluster-id", value)]).into());
        let h = parse(list).expect("never rejected");
        let r = h.route_request();
        (
            h.last_cluster_id,
            r.request.last_cluster_id,
            r.request.session,
        )
    };
    assert_eq!(
        hint(b"cluster-a"),
        (LastClusterHint::Id("cluster-a"), Some("cluster-a"), None)
    );
    assert_eq!(
        hint(b"  cluster-a\t"),
        (LastClusterHint::Id("cluster-a"), Some("cluster-a"), None)
    );
    for blank in [&b""[..], b"   ", b"\t"] {
        assert_eq!(
            hint(blank),
            (LastClusterHint::Absent, None, None),
            "{blank:?}"
        );
    }
    let stale = (LastClusterHint::Unreadable, None, Some(SessionState::Stale));
    for bad in [&b"caf\xc3\xa9"[..], b"a\x00b", b"\xff", b"a\x7fb"] {
        assert_eq!(hint(bad), stale, "{bad:?}");
    }
    let at_bound: &'static [u8] = Box::leak(vec![b'a'; headers::MAX_LAST_CLUSTER_ID_BYTES].into());
    assert!(matches!(hint(at_bound).0, LastClusterHint::Id(id) if id.len() == 256));
    let over: &'static [u8] = Box::leak(vec![b'a'; headers::MAX_LAST_CLUSTER_ID_BYTES + 1].into());
    assert_eq!(hint(over), stale);
    // Absent: no hint.
    let h = parse(&BASE).unwrap();
    assert_eq!(h.last_cluster_id, LastClusterHint::Absent);
    assert_eq!(headers::LAST_CLUSTER_ID, "x-stargate-last-cluster-id");
    assert_eq!(headers::CLUSTER_ID, "x-stargate-cluster-id");
}
