//! The call form: `method(name=value, ...)` (docs/contract.md 1).

use super::support::{shape, slice};
use routex::diag::{Code, Span};
use routex::syntax::ast::{Form, Value};
use routex::syntax::{detect_form, parse_call, parse_expression};

fn tok(s: &str) -> Value {
    Value::Token(s.into())
}
fn int(s: &str) -> Value {
    Value::Integer(s.into())
}

/// (text, method, arguments)
type Case = (&'static str, &'static str, Vec<(&'static str, Value)>);

#[test]
fn accepts_the_language_examples() {
    let cases: Vec<Case> = vec![
        (
            r#"pulsar-wait-and-widen(seed="v1", cache_affinity_wait_ms=300, band_widen_interval_ms=300)"#,
            "pulsar-wait-and-widen",
            vec![
                ("seed", Value::String("v1".into())),
                ("cache_affinity_wait_ms", int("300")),
                ("band_widen_interval_ms", int("300")),
            ],
        ),
        ("round-robin", "round-robin", vec![]),
        ("round-robin()", "round-robin", vec![]),
        (
            "power-of-n(sample_count=4, comparator=queue-time,)",
            "power-of-n",
            vec![("sample_count", int("4")), ("comparator", tok("queue-time"))],
        ),
        (
            "wait-and-widen(next_bucket_unlock_factor=0.0625, n=-3, max_queued=+42, ttft_bucket_size_ms=0300)",
            "wait-and-widen",
            vec![
                ("next_bucket_unlock_factor", Value::Decimal("0.0625".into())),
                ("n", int("-3")),
                ("max_queued", int("+42")),
                ("ttft_bucket_size_ms", int("0300")),
            ],
        ),
        (
            "pulsar(\n  seed = \"a \\\"b\\\" \\\\ c\",  # the seed\n\tconsider_kv_free_tokens=true\n)",
            "pulsar",
            vec![
                ("seed", Value::String("a \"b\" \\ c".into())),
                ("consider_kv_free_tokens", tok("true")),
            ],
        ),
        (
            "  # leading comment\n PULSAR_Wait_and_widen ( seed = stable-a ) # trailing",
            "PULSAR_Wait_and_widen",
            vec![("seed", tok("stable-a"))],
        ),
        (
            "pulsar(seed=\"ünïcode; and, commas\")",
            "pulsar",
            vec![("seed", Value::String("ünïcode; and, commas".into()))],
        ),
    ];
    for (text, method, args) in cases {
        let e = parse_call(text).unwrap_or_else(|d| panic!("{text:?}: {d:?}"));
        assert_eq!(e.form, Form::Call);
        let want: Vec<(String, Value)> =
            args.into_iter().map(|(n, v)| (n.to_string(), v)).collect();
        assert_eq!(shape(&e), (method.to_string(), want), "{text}");
    }
}

#[test]
fn call_spans_are_byte_offsets() {
    let text = "pulsar( seed = \"é\" , n=2 )";
    let e = parse_call(text).unwrap();
    assert_eq!(e.method.span, Span::new(0, 6));
    assert_eq!(slice(text, e.args[0].name.span), "seed");
    assert_eq!(slice(text, e.args[0].value.span), "\"é\"");
    assert_eq!(slice(text, e.args[0].span), "seed = \"é\"");
    assert_eq!(slice(text, e.args[1].span), "n=2");
    assert_eq!(e.span, Span::new(0, text.len()));
}

/// (text, message, text the span covers, span start)
#[test]
fn syntax_errors_speak_the_users_words() {
    let cases = [
        (
            "pulsar(seed=)",
            "expected a value: a number, `\"string\"` or a name, found `)`",
            ")",
            12,
        ),
        (
            "pulsar(seed \"x\")",
            "expected `=` after the parameter name, found `\"`",
            "\"",
            12,
        ),
        (
            "pulsar(seed=1 n=2)",
            "expected `,` or `)`, found `n`",
            "n",
            14,
        ),
        (
            "pulsar(",
            "expected a parameter name or `)`, found end of input",
            "",
            7,
        ),
        ("pulsar(seed=\"abc", "unterminated string", "\"abc", 12),
        (
            "pulsar(seed=\"a\\nb\")",
            "unknown escape `\\n` in a string: only `\\\"` and `\\\\` are allowed",
            "\\n",
            14,
        ),
        (
            "pulsar(seed=\"a\tb\")",
            "control character '\\t' inside a string is not allowed",
            "\t",
            14,
        ),
        (
            "pulsar(seed=?1)",
            "expected a value: a number, `\"string\"` or a name, found `?`",
            "?",
            12,
        ),
        ("pulsar(seed=1.)", "expected `,` or `)`, found `.`", ".", 13),
        (
            "pulsar(,)",
            "expected a parameter name or `)`, found `,`",
            ",",
            7,
        ),
        (
            "pulsar(seed=1,,)",
            "expected a parameter name or `)`, found `,`",
            ",",
            14,
        ),
        ("pulsar() x", "expected end of input, found `x`", "x", 9),
        ("(seed=1)", "expected an algorithm name, found `(`", "(", 0),
        ("", "expected an algorithm name, found end of input", "", 0),
        (
            "pulsar(seed=1)\n)",
            "expected end of input, found `)`",
            ")",
            15,
        ),
    ];
    for (text, message, covered, start) in cases {
        let d = parse_call(text).expect_err(text);
        assert_eq!(d.len(), 1, "{text:?}: {d:?}");
        assert_eq!(d[0].code, Code::MalformedExpression);
        assert_eq!(d[0].message, message, "{text:?}");
        assert_eq!(slice(text, d[0].span), covered, "{text:?}");
        assert_eq!(d[0].span.start, start, "{text:?}");
        assert!(!d[0].message.contains("Rule"), "no pest rule names");
    }
}

#[test]
fn bad_and_repeated_names_are_all_reported() {
    let text = "pulsar(Seed=1, n=2, n=3, cache-affinity-wait-ms=4)";
    let d = parse_call(text).expect_err("names");
    let got: Vec<_> = d
        .iter()
        .map(|d| (d.message.as_str(), slice(text, d.span)))
        .collect();
    assert_eq!(
        got,
        vec![
            ("invalid parameter name 'Seed'", "Seed"),
            ("repeated parameter 'n'", "n"),
            (
                "invalid parameter name 'cache-affinity-wait-ms'",
                "cache-affinity-wait-ms"
            ),
        ]
    );
    assert!(d.iter().all(|d| d.code == Code::MalformedExpression));
    assert_eq!(d[0].help.as_deref(), Some("parameter names are lower-case letters, digits and `_`, starting with a letter (did you mean `seed`?)"));
}

#[test]
fn either_form_is_detected_by_the_first_paren_or_semicolon() {
    assert_eq!(detect_form("pulsar(seed=1)"), Form::Call);
    assert_eq!(detect_form("pulsar(seed=\"a;b\")"), Form::Call);
    assert_eq!(detect_form("pulsar;seed=\"a(b\""), Form::Header);
    assert_eq!(detect_form("round-robin"), Form::Header);
    let call = parse_expression("pulsar(seed=x)").unwrap();
    let header = parse_expression("pulsar;seed=x").unwrap();
    assert_eq!(call.form, Form::Call);
    assert_eq!(header.form, Form::Header);
    assert_eq!(shape(&call), shape(&header));
    let d = parse_expression("pulsar;seed=a,b").unwrap_err();
    assert!(d[0].message.starts_with("P3: "));
}
