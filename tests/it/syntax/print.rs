//! The `routex fmt` printer: canonical call form, header form, route-file
//! layout with comments.

use routex::diag::Code;
use routex::syntax::{format_expression, format_route_file, parse_header};

fn input(name: &str) -> String {
    let path = format!("{}/tests/inputs/syntax/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(path).expect("input file")
}

#[test]
fn call_form_is_canonical() {
    let cases = [
        ("round-robin()", "round-robin"),
        ("ROUND_ROBIN", "round-robin"),
        ("powerOf2;sample_count=2", "power-of-n(sample_count=2)"),
        ("groq_multiregion(seed = x ,)", "wait-and-widen(seed=x)"),
        ("pulsar;seed=\"a \\\" b\"", r#"pulsar(seed="a \" b")"#),
        ("pulsar;seed=a/b", r#"pulsar(seed="a/b")"#),
        ("pulsar;seed=*x", r#"pulsar(seed="*x")"#),
        ("fastest(x=1)", "fastest(x=1)"),
        (
            "wait-and-widen(n=+2, next_bucket_unlock_factor=0.0625)",
            "wait-and-widen(n=+2, next_bucket_unlock_factor=0.0625)",
        ),
        ("pulsar # why\n(\n seed=x # the seed\n)", "pulsar(seed=x)"),
    ];
    for (text, want) in cases {
        assert_eq!(
            format_expression(text, false).as_deref(),
            Ok(want),
            "{text:?}"
        );
    }
}

#[test]
fn header_form_follows_the_header_rules() {
    let cases = [
        ("round-robin()", "round-robin"),
        (
            "pulsar(seed=\"v1\", consider_kv_free_tokens=true)",
            "pulsar;seed=\"v1\";consider_kv_free_tokens=true",
        ),
        // Too long for a bare item: quoted, not refused.
        (
            "wait-and-widen(next_bucket_unlock_factor=0.0625)",
            "wait-and-widen;next_bucket_unlock_factor=\"0.0625\"",
        ),
        (
            "wait-and-widen(max_queued=1234567890123456)",
            "wait-and-widen;max_queued=\"1234567890123456\"",
        ),
        (
            "wait-and-widen(next_bucket_unlock_factor=1234567890123.5)",
            "wait-and-widen;next_bucket_unlock_factor=\"1234567890123.5\"",
        ),
        ("wait-and-widen(n=+2)", "wait-and-widen;n=\"+2\""),
        (
            "wait-and-widen(n=-2, next_bucket_unlock_factor=-0.125)",
            "wait-and-widen;n=-2;next_bucket_unlock_factor=-0.125",
        ),
        (
            "pulsar(seed=\"say \\\"hi\\\" \\\\o/\")",
            r#"pulsar;seed="say \"hi\" \\o/""#,
        ),
        ("powerOf2(sample_count=2)", "power-of-n;sample_count=2"),
    ];
    for (text, want) in cases {
        let got = format_expression(text, true);
        assert_eq!(got.as_deref(), Ok(want), "{text:?}");
        // What fmt --header prints, stargate accepts.
        let back = parse_header(want).unwrap_or_else(|d| panic!("{want:?}: {}", d[0].message));
        assert_eq!(back.args.len(), want.matches(';').count());
    }
}

#[test]
fn values_without_a_header_spelling_are_refused() {
    let many: Vec<String> = (0..33).map(|i| format!("p{i}=1")).collect();
    let many = format!("wait-and-widen({})", many.join(", "));
    let long = format!("pulsar(seed=\"{}\")", "a".repeat(1020));
    let cases = [
        (
            "pulsar(seed=\"a;b\")",
            "the value of 'seed' contains `;`, which a header value cannot carry",
            "\"a;b\"",
        ),
        (
            "pulsar(seed=\"a,b\")",
            "the value of 'seed' contains `,`, which a header value cannot carry",
            "\"a,b\"",
        ),
        (
            "pulsar(seed=\"é\")",
            "the value of 'seed' contains 'é', which a header value cannot carry",
            "\"é\"",
        ),
        (
            many.as_str(),
            "33 parameters, more than the 32 a header value may have",
            many.as_str(),
        ),
        (
            long.as_str(),
            "the header form is 1034 bytes, more than the 1024 allowed",
            long.as_str(),
        ),
    ];
    for (text, message, covered) in cases {
        let d = format_expression(text, true).expect_err(text);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].code, Code::NotRepresentableInHeader);
        assert_eq!(d[0].message, message);
        assert_eq!(&text[d[0].span.start..d[0].span.end], covered);
        assert!(
            format_expression(text, false).is_ok(),
            "the call form is fine"
        );
    }
}

#[test]
fn route_files_get_the_canonical_layout_and_keep_comments() {
    let formatted = format_route_file(&input("unformatted.routes")).expect("formats");
    assert_eq!(formatted, input("formatted.routes"));
    let again = format_route_file(&formatted).expect("formats");
    assert_eq!(again, formatted, "fmt is idempotent");
    let comments = |t: &str| {
        t.lines()
            .filter_map(|l| l.find('#').map(|i| l[i..].to_string()))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        comments(&formatted),
        comments(&input("unformatted.routes")),
        "every comment kept, in order"
    );
}

#[test]
fn the_language_example_is_already_formatted_but_for_comment_spacing() {
    let text = input("fleet.routes");
    let formatted = format_route_file(&text).expect("formats");
    let squeeze = |t: &str| {
        t.lines()
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect::<Vec<_>>()
    };
    assert_eq!(squeeze(&formatted), squeeze(&text));
    assert!(
        formatted.contains("allow wait-and-widen(seed=\"req-v1\")  # any model may request it\n")
    );
}

#[test]
fn route_file_with_syntax_errors_is_not_formatted() {
    let d = format_route_file("default = pulsar(\n").expect_err("broken");
    assert_eq!(d[0].code, Code::SyntaxError);
}

#[test]
fn empty_route_file_formats_to_nothing() {
    assert_eq!(format_route_file("\n\n").as_deref(), Ok(""));
    assert_eq!(
        format_route_file("# only\n\n\n# comments").as_deref(),
        Ok("# only\n\n# comments\n")
    );
}

/// The diagnostics-catalogue fixtures of the codes this layer emits fail
/// with exactly their code.
#[test]
fn diagnostics_fixtures_fail_with_their_code() {
    let dir = format!("{}/tests/inputs/diagnostics", env!("CARGO_MANIFEST_DIR"));
    let read = |name: &str| std::fs::read_to_string(format!("{dir}/{name}")).expect("fixture");
    let d =
        routex::syntax::parse_expression(&read("malformed_expression.expr")).expect_err("fails");
    assert_eq!(d[0].code, Code::MalformedExpression);
    assert!(d[0].message.starts_with("P4: "));
    let (_, d) = routex::syntax::parse_route_file(&read("syntax_error.routes"));
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].code, Code::SyntaxError);
    let d = format_expression(&read("not_representable_in_header.expr"), true).expect_err("fails");
    assert_eq!(d[0].code, Code::NotRepresentableInHeader);
}

#[test]
fn fmt_refuses_a_method_only_value_that_is_no_method_token() {
    for bad in [")", "pul/sar", "*pulsar", "9x"] {
        let errors = format_expression(bad, false).unwrap_err();
        assert_eq!(
            errors[0].code,
            routex::diag::Code::MalformedExpression,
            "{bad}"
        );
        assert!(
            errors[0].message.starts_with("P10:"),
            "{}",
            errors[0].message
        );
    }
    assert_eq!(
        format_expression(" Round_Robin ", false).unwrap(),
        "round-robin"
    );
}

/// A comment between an argument's name and its `=` (found by the mutation
/// property test): it stays inside the argument list, on its own line
/// before the argument, and a second fmt changes nothing.
#[test]
fn a_comment_inside_an_argument_stays_in_the_list() {
    let text = "model \"m\" = pulsar-wait-and-widen(\n    s#ed = \"v1\",\n     = 2,\n) {\n}\n";
    let formatted = format_route_file(text).expect("formats");
    assert_eq!(
        formatted,
        "model \"m\" = pulsar-wait-and-widen(\n    #ed = \"v1\",\n    s = 2,\n)\n"
    );
    assert_eq!(format_route_file(&formatted).expect("formats"), formatted);
}
