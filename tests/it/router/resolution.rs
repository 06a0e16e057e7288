//! Resolution of `x-routing-method` (docs/stargate.md 4.4, 5.5).

use super::support::*;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use routex::balancer::{Decision, Scratch};
use routex::diag::Code;
use routex::ir::Algorithm;
use routex::router::{RejectionCode, RouteRequest, Source};
use std::sync::Arc;

fn algorithm_of(h: &Harness, model: &str, method: Option<&str>) -> Algorithm {
    let resolved = h
        .router
        .resolve(model, None, method.map(str::as_bytes))
        .unwrap_or_else(|r| panic!("{model} {method:?}: {r}"));
    resolved.definition().policy.algorithm
}

fn rejection_of(h: &Harness, model: &str, method: &[u8]) -> (RejectionCode, u16, String) {
    match h.router.resolve(model, None, Some(method)) {
        Ok(r) => panic!(
            "expected a rejection, got {}",
            r.definition().policy.algorithm
        ),
        Err(r) => (r.code, r.status, r.message),
    }
}

fn restrictive() -> Harness {
    harness_with(
        restrictive_table(),
        16_384,
        std::time::Duration::from_secs(900),
    )
}

#[test]
fn absent_header_uses_the_sets_configured_algorithm() {
    let h = restrictive();
    assert_eq!(algorithm_of(&h, "m1", None), Algorithm::RoundRobin);
    assert_eq!(algorithm_of(&h, "unlisted", None), Algorithm::PowerOfN);
    let r = h.router.resolve("m1", None, None).unwrap();
    assert_eq!(r.source, Source::Configured);
    assert!(Arc::ptr_eq(
        r.definition(),
        &h.router.table().models["m1"].definition.clone()
    ));
}

#[test]
fn model_entry_resolves_configured_then_model_then_top_level() {
    let h = restrictive();
    // 1. the set's configured algorithm, any spelling.
    assert_eq!(
        algorithm_of(&h, "m1", Some(" ROUND_ROBIN ")),
        Algorithm::RoundRobin
    );
    // 2. the model-level request algorithms.
    assert_eq!(
        algorithm_of(&h, "m1", Some("wait_and_widen")),
        Algorithm::WaitAndWiden
    );
    assert_eq!(
        algorithm_of(&h, "m1", Some("groq-multiregion")),
        Algorithm::WaitAndWiden
    );
    // 3. the top-level request algorithms, for a model with an entry.
    assert_eq!(algorithm_of(&h, "m1", Some("pulsar")), Algorithm::Pulsar);
    assert_eq!(algorithm_of(&h, "m1", Some("random")), Algorithm::Random);
    let r = h.router.resolve("m1", None, Some(b"pulsar")).unwrap();
    assert_eq!(r.source, Source::Method);
    assert!(Arc::ptr_eq(
        r.definition(),
        &h.router.table().request_algorithms[&Algorithm::Pulsar].clone()
    ));
}

#[test]
fn model_entry_does_not_fall_back_to_the_top_level_default() {
    let h = restrictive();
    let (code, status, message) = rejection_of(&h, "m1", b"power-of-n");
    assert_eq!(code, RejectionCode::Expression(Code::Unavailable));
    assert_eq!(status, 400);
    assert_eq!(
        message,
        "routing method power-of-n is not configured for this model"
    );
    let (code, _, _) = rejection_of(&h, "m1", b"pulsar-wait-and-widen");
    assert_eq!(code, RejectionCode::Expression(Code::Unavailable));
}

#[test]
fn default_set_resolves_default_then_top_level_only() {
    let h = restrictive();
    assert_eq!(
        algorithm_of(&h, "other", Some("power_of_two")),
        Algorithm::PowerOfN
    );
    assert_eq!(
        algorithm_of(&h, "other", Some("powerOf2")),
        Algorithm::PowerOfN
    );
    assert_eq!(algorithm_of(&h, "other", Some("random")), Algorithm::Random);
    // m1's own request algorithms are not the default set's.
    let (code, _, message) = rejection_of(&h, "other", b"wait-and-widen");
    assert_eq!(code, RejectionCode::Expression(Code::Unavailable));
    assert_eq!(
        message,
        "routing method wait-and-widen is not configured for this model"
    );
}

#[test]
fn unknown_blank_and_non_utf8_methods_are_unknown_method() {
    let h = restrictive();
    for (value, shown) in [
        (&b"fastest"[..], "fastest"),
        (b"", ""),
        (b"   ", "   "),
        (b"round robin", "round robin"),
    ] {
        let (code, status, message) = rejection_of(&h, "m1", value);
        assert_eq!(
            code,
            RejectionCode::Expression(Code::UnknownMethod),
            "{shown:?}"
        );
        assert_eq!(status, 400);
        assert_eq!(message, format!("unknown routing method '{shown}'"));
    }
    let (code, _, _) = rejection_of(&h, "m1", b"pul\xffsar");
    assert_eq!(code, RejectionCode::Expression(Code::UnknownMethod));
    let (code, _, _) = rejection_of(&h, "m1", b"pul\xffsar;seed=x");
    assert_eq!(code, RejectionCode::Expression(Code::UnknownMethod));
}

#[test]
fn matching_method_only_override_shares_the_configured_instance() {
    let h = restrictive();
    let configured = h.router.resolve("m1", None, None).unwrap();
    let method = h.router.resolve("m1", None, Some(b"round_robin")).unwrap();
    assert!(Arc::ptr_eq(configured.definition(), method.definition()));
    assert!(Arc::ptr_eq(configured.instance(), method.instance()));
    assert_eq!(h.router.instance_count("m1", None), 1);

    // The counter continues across the two spellings.
    let clusters = [cluster("a"), cluster("b"), cluster("c")];
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let mut scratch = Scratch::default();
    let picks: Vec<usize> = [None, Some("round-robin"), None, Some("ROUND_ROBIN")]
        .into_iter()
        .map(|method| {
            let mut req = RouteRequest::new(request("m1"));
            if let Some(m) = method {
                req = req.with_method(m);
            }
            match h.router.route(&req, &clusters, &mut rng, &mut scratch) {
                Ok(Decision::Selected(c)) => c.index,
                other => panic!("{other:?}"),
            }
        })
        .collect();
    assert_eq!(picks, [0, 1, 2, 0]);
}

#[test]
fn instances_are_per_target_and_blank_routing_key_is_absent() {
    let h = restrictive();
    let keyless = h.router.resolve("m1", None, None).unwrap();
    let blank = h.router.resolve("m1", Some("  "), None).unwrap();
    let keyed = h.router.resolve("m1", Some("tenant-a"), None).unwrap();
    let other_model = h.router.resolve("m2", None, None).unwrap();
    assert!(Arc::ptr_eq(keyless.instance(), blank.instance()));
    assert!(!Arc::ptr_eq(keyless.instance(), keyed.instance()));
    assert!(!Arc::ptr_eq(keyless.instance(), other_model.instance()));
    assert_eq!(h.router.instance_count("m1", Some("tenant-a")), 1);
}

#[test]
fn method_only_values_never_reach_the_compiler() {
    let h = restrictive();
    h.router.resolve("m1", None, Some(b"pulsar")).unwrap();
    h.router.resolve("m1", None, Some(b"fastest")).unwrap_err();
    assert_eq!(h.compiler.builds(), 0);
    let r = h
        .router
        .resolve("m1", None, Some(b"pulsar;seed=x"))
        .unwrap();
    assert_eq!(
        r.source,
        Source::Expression(routex::router::CacheOutcome::Build)
    );
    let r = h
        .router
        .resolve("m1", None, Some(b"pulsar(seed=\"x\")"))
        .unwrap();
    assert_eq!(
        r.source,
        Source::Expression(routex::router::CacheOutcome::Rebuild)
    );
    assert_eq!(h.compiler.builds(), 2);
}

#[test]
fn expression_compile_errors_become_rejections_with_the_compilers_code() {
    let h = restrictive();
    let (code, status, message) = rejection_of(&h, "m1", b"power-of-n;sample_count=2");
    assert_eq!(code, RejectionCode::Expression(Code::Unavailable));
    assert_eq!(status, 400);
    assert_eq!(
        message,
        "routing method power-of-n is not configured for this model"
    );
    let (code, _, message) = rejection_of(&h, "m1", b"pulsar;bad=1");
    assert_eq!(code, RejectionCode::Expression(Code::UnknownParameter));
    assert_eq!(message, "unknown parameter 'bad'");
}

#[test]
fn router_and_resolutions_are_send_and_sync() {
    fn shareable<T: Send + Sync>() {}
    shareable::<routex::router::Router>();
    shareable::<routex::router::Resolved>();
    shareable::<routex::router::Rejection>();
    shareable::<routex::router::WaitLoop>();
}

#[test]
fn a_new_target_generation_starts_with_fresh_instances() {
    let h = restrictive();
    let clusters = [cluster("a"), cluster("b"), cluster("c")];
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let mut scratch = Scratch::default();
    let mut pick = |key: Option<&'static str>| {
        let req = RouteRequest::new(routex::balancer::Request {
            routing_key: key,
            ..request("m1")
        });
        match h.router.route(&req, &clusters, &mut rng, &mut scratch) {
            Ok(Decision::Selected(c)) => c.index,
            other => panic!("{other:?}"),
        }
    };
    assert_eq!([pick(None), pick(None), pick(Some("k"))], [0, 1, 0]);
    h.router.reset_target("m1", None);
    // The reset target restarts its counter; another target keeps its own.
    assert_eq!([pick(None), pick(Some("k"))], [0, 1]);
}

/// A stargate-compatible router (the default options: header form only)
/// reads a value without `;` as a method name, even with `(` in it, and
/// never builds it (docs/stargate.md 5).
#[test]
fn header_only_routers_read_parenthesised_values_as_method_names() {
    let router: routex::router::Router = routex::router::Router::new(restrictive_table());
    let err = router
        .resolve("m1", Some("k"), Some(br#"pulsar(seed="x")"#))
        .unwrap_err();
    assert_eq!(err.code, RejectionCode::Expression(Code::UnknownMethod));
    assert_eq!(err.status, 400);
    assert_eq!(err.message, r#"unknown routing method 'pulsar(seed="x")'"#);
    assert_eq!(router.metrics().entries, 0, "nothing was built or cached");
}

/// Header values that are not visible ASCII (or tab) are not text (1.1):
/// like invalid UTF-8, an unknown method (5.5), in both paths.
#[test]
fn values_that_are_not_visible_ascii_are_unknown_methods() {
    let h = restrictive();
    for value in [
        "\u{a0}pulsar".as_bytes(),
        "pulsar\u{2003}".as_bytes(),
        "pulsar;seed=\"é\"".as_bytes(),
        b"pulsar\x7f",
        b"pul\x01sar;seed=x",
        b"\xffpulsar",
    ] {
        let (code, status, _) = rejection_of(&h, "m1", value);
        assert_eq!(
            (code, status),
            (RejectionCode::Expression(Code::UnknownMethod), 400),
            "{value:?}"
        );
    }
    assert_eq!(h.compiler.builds(), 0);
    // Tabs are visible-ASCII text in HTTP and trimmed like spaces.
    let r = h.router.resolve("m1", None, Some(b"\tpulsar ")).unwrap();
    assert_eq!(r.definition().policy.algorithm, Algorithm::Pulsar);
}

/// The two log lines of docs/stargate.md 5.5, through the `log`
/// facade. The logger is process-wide, so other tests' lines are captured
/// too; these look for their own unique values.
#[test]
fn builds_and_rejections_are_logged() {
    struct Capture(std::sync::Mutex<Vec<(log::Level, String)>>);
    impl log::Log for Capture {
        fn enabled(&self, _: &log::Metadata) -> bool {
            true
        }
        fn log(&self, record: &log::Record) {
            let line = (record.level(), record.args().to_string());
            self.0.lock().unwrap_or_else(|e| e.into_inner()).push(line);
        }
        fn flush(&self) {}
    }
    static CAPTURE: Capture = Capture(std::sync::Mutex::new(Vec::new()));
    if log::set_logger(&CAPTURE).is_ok() {
        log::set_max_level(log::LevelFilter::Info);
    }
    let router: routex::router::Router = routex::router::Router::new(restrictive_table());
    router
        .resolve("m1", None, Some(b"pulsar;seed=logged-7"))
        .unwrap();
    router
        .resolve("m1", None, Some(b"pulsar;seed=logged-7;bogus=1"))
        .unwrap_err();
    let lines = CAPTURE.0.lock().unwrap().clone();
    assert!(lines.contains(&(
        log::Level::Info,
        "routing expression configuration built: algorithm=pulsar outcome=Build value=\"pulsar;seed=logged-7\"".to_string()
    )), "{lines:?}");
    assert!(lines.contains(&(
        log::Level::Warn,
        "invalid routing algorithm header: code=unknown_parameter message=unknown parameter 'bogus' for algorithm pulsar".to_string()
    )), "{lines:?}");
    // 1 MiB values of every shape: each rejection, its body and its log
    // line stay within the documented bound, ending with the marker.
    let mib = "q".repeat(1 << 20);
    let values = [
        mib.clone(),
        format!("pulsar;seed={mib}"),
        format!("pulsar;{mib}=1"),
        format!("{mib};seed=a"),
        format!("pulsar;seed=\"{mib}"),
    ];
    let bound = routex::router::MAX_MESSAGE_BYTES;
    for value in &values {
        let rejection = router
            .resolve("m1", None, Some(value.as_bytes()))
            .unwrap_err();
        assert!(
            rejection.message.len() <= bound,
            "{}",
            rejection.message.len()
        );
        assert!(rejection.body_json().len() <= bound + 64);
    }
    let unknown = router
        .resolve("m1", None, Some(mib.as_bytes()))
        .unwrap_err();
    assert!(
        unknown.message.starts_with("unknown routing method 'qqq"),
        "{}",
        unknown.message
    );
    assert!(
        unknown.message.contains(routex::router::ECHO_MARKER),
        "{}",
        unknown.message
    );
    let lines = CAPTURE.0.lock().unwrap().clone();
    let longest = lines.iter().map(|(_, l)| l.len()).max().unwrap_or(0);
    // The line is its fixed words (under 100 bytes) and the message.
    assert!(longest <= bound + 100, "a log line of {longest} bytes");
}

#[test]
fn echoes_of_client_text_are_cut_at_a_character_boundary_with_the_marker() {
    use routex::router::{bounded_echo, ECHO_MARKER};
    assert_eq!(bounded_echo("short", 16), "short");
    let accents = "é".repeat(100);
    let cut = bounded_echo(&accents, 40);
    assert!(cut.len() <= 40, "{cut}");
    assert!(
        cut.ends_with(" bytes]") && cut.contains(ECHO_MARKER),
        "{cut}"
    );
    let kept = cut.split(ECHO_MARKER).next().unwrap();
    let cut_bytes: usize = cut[kept.len() + ECHO_MARKER.len()..]
        .trim_end_matches(" bytes]")
        .parse()
        .unwrap();
    assert_eq!(kept.len() + cut_bytes, 200, "the count says what was cut");
    // Header errors name the header, never echo the value: 1 MiB values
    // give the same short messages.
    let mib = vec![b'7'; 1 << 20];
    for name in [
        "x-input-tokens",
        "x-max-wait-ms",
        "x-priority",
        "x-request-slo-ms",
        "x-model",
        "x-request-id",
    ] {
        let get = |n: &str| -> Option<&[u8]> {
            match n {
                n if n == name => Some(&mib),
                "x-request-id" => Some(b"r"),
                "x-model" => Some(b"m"),
                "x-input-tokens" => Some(b"1"),
                _ => None,
            }
        };
        if let Err(rejection) = routex::router::RequestHeaders::parse(get) {
            assert!(
                rejection.message.len() <= 128,
                "{name}: {}",
                rejection.message
            );
        }
    }
}
