//! The header form: stargate's ordered rules (docs/stargate.md 5.1,
//! behaviours of 7.2).

use super::support::{header_error, slice};
use routex::diag::Code;
use routex::syntax::ast::{Form, Value};
use routex::syntax::parse_header;

fn params(n: usize) -> String {
    let mut s = "wait-and-widen".to_string();
    for i in 0..n {
        s.push_str(&format!(";p{i}=1"));
    }
    s
}

/// (value, method, arguments)
type Case = (String, &'static str, Vec<(&'static str, Value)>);

#[test]
fn test_parse_profile_accepts_valid_items() {
    let exactly_1024 = format!("pulsar;seed={}", "a".repeat(1024 - 12));
    assert_eq!(exactly_1024.len(), 1024);
    let cases: Vec<Case> = vec![
        (
            "pulsar;seed=x".into(),
            "pulsar",
            vec![("seed", Value::Token("x".into()))],
        ),
        (
            " pulsar; seed=x ".into(),
            "pulsar",
            vec![("seed", Value::Token("x".into()))],
        ),
        (
            "PULSAR_WAIT_AND_WIDEN;seed=stable-a".into(),
            "PULSAR_WAIT_AND_WIDEN",
            vec![("seed", Value::Token("stable-a".into()))],
        ),
        (
            "powerOf2;sample_count=2".into(),
            "powerOf2",
            vec![("sample_count", Value::Integer("2".into()))],
        ),
        (
            "pulsar;seed=\"spaces and = signs\"".into(),
            "pulsar",
            vec![("seed", Value::String("spaces and = signs".into()))],
        ),
        (
            r#"pulsar;seed="escaped \" quote""#.into(),
            "pulsar",
            vec![("seed", Value::String("escaped \" quote".into()))],
        ),
        (
            "wait-and-widen;next_bucket_unlock_factor=0.125".into(),
            "wait-and-widen",
            vec![("next_bucket_unlock_factor", Value::Decimal("0.125".into()))],
        ),
        (
            "wait-and-widen;next_bucket_unlock_factor=\"0.0625\"".into(),
            "wait-and-widen",
            vec![("next_bucket_unlock_factor", Value::String("0.0625".into()))],
        ),
        (
            "wait-and-widen;n=-999999999999999;f=-123456789012.125".into(),
            "wait-and-widen",
            vec![
                ("n", Value::Integer("-999999999999999".into())),
                ("f", Value::Decimal("-123456789012.125".into())),
            ],
        ),
        (
            // Unknown parameter names pass syntax (they fail in 5.4).
            "pulsar;widen=1".into(),
            "pulsar",
            vec![("widen", Value::Integer("1".into()))],
        ),
        (
            "pulsar;seed=a/b:c*".into(),
            "pulsar",
            vec![("seed", Value::Token("a/b:c*".into()))],
        ),
    ];
    for (raw, method, args) in cases {
        let e = parse_header(&raw).unwrap_or_else(|d| panic!("{raw:?}: {}", d[0].message));
        assert_eq!(e.form, Form::Header);
        assert_eq!(e.method.node, method, "{raw}");
        let got: Vec<_> = e
            .args
            .iter()
            .map(|a| (a.name.node.as_str(), a.value.node.clone()))
            .collect();
        assert_eq!(got, args, "{raw}");
    }
    let e = parse_header(&exactly_1024).expect("1024 bytes pass");
    assert_eq!(e.args.len(), 1);
    let e = parse_header(&params(32)).expect("32 parameters pass");
    assert_eq!(e.args.len(), 32);
}

#[test]
fn header_spans_point_into_the_raw_value() {
    let raw = " pulsar; seed=\"a b\";n=3 ";
    let e = parse_header(raw).unwrap();
    assert_eq!(slice(raw, e.method.span), "pulsar");
    assert_eq!(slice(raw, e.args[0].name.span), "seed");
    assert_eq!(slice(raw, e.args[0].value.span), "\"a b\"");
    assert_eq!(slice(raw, e.args[0].span), "seed=\"a b\"");
    assert_eq!(slice(raw, e.args[1].value.span), "3");
    assert_eq!(slice(raw, e.span), "pulsar; seed=\"a b\";n=3");
}

#[test]
fn method_only_values_skip_syntax_checks() {
    // Stargate looks a value without `;` up as a name (trimmed): anything
    // else is the checker's unknown_method, never malformed_expression.
    for (raw, method) in [
        ("round-robin", "round-robin"),
        ("  Round_Robin \t", "Round_Robin"),
        ("pul/sar", "pul/sar"),
        ("a,b", "a,b"),
        ("", ""),
        ("   ", ""),
    ] {
        let e = parse_header(raw).unwrap();
        assert_eq!(e.method.node, method);
        assert!(e.args.is_empty());
        assert_eq!(slice(raw, e.method.span), method);
    }
    let long = "x".repeat(2000);
    assert!(
        parse_header(&long).is_ok(),
        "P7 applies to expressions only"
    );
}

#[test]
fn test_parse_profile_rejects_malformed_items() {
    let over_1024 = format!("pulsar;seed={}", "a".repeat(1025 - 12));
    let thirty_three = params(33);
    // (value, rule tag, text the span covers)
    let cases: Vec<(&str, &str, &str)> = vec![
        // step 1
        (&over_1024, "P7", &over_1024[1024..]),
        // step 2
        ("pulsar;seed=a,b", "P3", ","),
        ("pulsar;seed=\"a,b\"", "P3", ","),
        // step 3
        ("pulsar;seed=\"a;b\"", "P9", ";"),
        (r#"pulsar;seed="a\";b""#, "P9", ";"),
        // step 4
        (&thirty_three, "P11", ";p32=1"[1..].as_ref()),
        ("pulsar;seed", "P4", "seed"),
        ("pulsar;", "P4", ""),
        ("pulsar;;seed=x", "P4", ""),
        ("pulsar;Seed=x", "P6", "Seed"),
        ("pulsar;se*d=x", "P6", "se*d"),
        ("pulsar;se-ed=x", "P6", "se-ed"),
        ("pulsar;se.ed=x", "P6", "se.ed"),
        ("pulsar;1seed=x", "P6", "1seed"),
        ("pulsar;seed =x", "P6", "seed "),
        ("pulsar;\tseed=x", "P6", "\tseed"),
        ("pulsar;seed=x;seed=y", "P5", "seed"),
        // step 5
        ("pulsar;seed= x", "RFC 8941 (P1/P2/P4/P8)", " "),
        ("pulsar ;seed=x", "RFC 8941 (P1/P2/P4/P8)", " "),
        ("pulsar;seed=", "RFC 8941 (P1/P2/P4/P8)", ""),
        ("pulsar;seed=x junk", "RFC 8941 (P1/P2/P4/P8)", "j"),
        ("pulsar;seed=\"open", "RFC 8941 (P1/P2/P4/P8)", "\""),
        ("pulsar;n=1234567890123456", "RFC 8941 (P1/P2/P4/P8)", "6"),
        ("pulsar;f=1234567890123.5", "RFC 8941 (P1/P2/P4/P8)", "."),
        ("pulsar;f=0.0625", "RFC 8941 (P1/P2/P4/P8)", "5"),
        ("pulsar;f=1.", "RFC 8941 (P1/P2/P4/P8)", "."),
        ("pulsar;f=1e3", "RFC 8941 (P1/P2/P4/P8)", "e"),
        ("pulsar;n=+1", "RFC 8941 (P1/P2/P4/P8)", "+"),
        ("pulsar;d=@1659578233", "RFC 8941 (P1/P2/P4/P8)", "@"),
        ("pulsar;s=%\"x\"", "RFC 8941 (P1/P2/P4/P8)", "%"),
        ("pulsar;seed=é", "RFC 8941 (P1/P2/P4/P8)", "\u{c3}"),
        ("\tpulsar;seed=x", "RFC 8941 (P1/P2/P4/P8)", "\t"),
        // step 6
        ("\"pulsar\";seed=x", "P1", "\"pulsar\""),
        ("42;seed=x", "P1", "42"),
        // step 7
        ("*pulsar;seed=x", "P10", "*"),
        ("pul/sar;seed=x", "P10", "/"),
        ("pul:sar;seed=x", "P10", ":"),
        ("pul.sar;seed=x", "P10", "."),
        // step 8
        ("pulsar;consider_kv_free_tokens=?1", "P4", "?1"),
        ("pulsar;x=:aGVsbG8=:", "P2", ":aGVsbG8=:"),
    ];
    for (raw, tag, at) in cases {
        let d = header_error(raw);
        assert_eq!(d.code, Code::MalformedExpression, "{raw:?}");
        assert!(
            d.message.starts_with(&format!("{tag}: ")),
            "{raw:?}: {}",
            d.message
        );
        assert!(
            d.message.contains(&format!("'{raw}'")),
            "raw value echoed: {}",
            d.message
        );
        let covered = raw
            .as_bytes()
            .get(d.span.start..d.span.end)
            .map(|b| String::from_utf8_lossy(b).into_owned());
        let expected = String::from_utf8_lossy(at.as_bytes()).into_owned();
        if at != "\u{c3}" {
            assert_eq!(
                covered.as_deref(),
                Some(expected.as_str()),
                "{raw:?} span {:?}",
                d.span
            );
        } else {
            assert_eq!(d.span.start, raw.find('é').unwrap());
        }
    }
}

#[test]
fn test_parse_profile_rejection_names_the_rule() {
    let d = header_error("pulsar;require_input_tokens=?1");
    assert!(d.message.starts_with("P4: "), "{}", d.message);
    assert!(d.message.contains("write true"), "{}", d.message);
    let d = header_error("pulsar;require_input_tokens=?0");
    assert!(d.message.starts_with("P4: "), "{}", d.message);
    assert!(d.message.contains("write false"), "{}", d.message);
    let d = header_error("pulsar;seed=:cGFzcw==:");
    assert!(d.message.starts_with("P2: "), "{}", d.message);
    let d = header_error("pulsar;seed=x;seed");
    assert!(d.message.starts_with("P4: "), "{}", d.message);
    assert!(
        d.message.contains("requires an explicit value"),
        "{}",
        d.message
    );
}

#[test]
fn rules_apply_in_stargate_order() {
    // Each value breaks two rules; the earlier step wins.
    let long_with_comma = format!("pulsar;seed=a,{}", "b".repeat(1100));
    for (raw, tag) in [
        (long_with_comma.as_str(), "P7"),
        ("pulsar;seed=\"a;b,\"", "P3"),
        ("pulsar;seed=\"a;b\";Bad", "P9"),
        ("pulsar;Bad;x=1", "P4"),
        ("pulsar;Bad=1;x", "P6"),
        ("pulsar;x=1;x=?1", "P5"),
        ("\"m\";x=?1", "P1"),
        ("pul/sar;x=?1", "P10"),
        ("pulsar;a= 1;b=?1", "RFC 8941 (P1/P2/P4/P8)"),
        ("pulsar;a=?1;b=:AA==:", "P4"),
        ("pulsar;a=:AA==:;b=?1", "P2"),
    ] {
        let d = header_error(raw);
        assert!(
            d.message.starts_with(&format!("{tag}: ")),
            "{raw:?}: {}",
            d.message
        );
    }
    // P11 is checked before P4 on the 33rd segment.
    let d = header_error(&format!("{};bad", params(32)));
    assert!(d.message.starts_with("P11: "), "{}", d.message);
}
