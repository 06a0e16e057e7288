//! Properties: no input makes a parser or the printer panic; fmt is
//! idempotent; parsing the printed form gives back the same tree (spans
//! aside).

use super::support::{file_shape, shape, Shape};
use proptest::prelude::*;
use routex::diag::Span;
use routex::ir::Algorithm;
use routex::syntax::ast::{Arg, Expr, Form, Spanned, Value};
use routex::syntax::{
    format_expression, format_route_file, parse_call, parse_expression, parse_header,
    parse_route_file, print_call, print_header,
};

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 256,
        ..ProptestConfig::default()
    }
}

fn run_everything(text: &str) {
    let _ = parse_header(text);
    let _ = parse_call(text);
    let _ = parse_expression(text);
    let _ = parse_route_file(text);
    let _ = format_expression(text, false);
    let _ = format_expression(text, true);
    if let Ok(formatted) = format_route_file(text) {
        // Whatever fmt accepts, it prints in a form it accepts again.
        assert_eq!(
            format_route_file(&formatted).as_deref(),
            Ok(formatted.as_str())
        );
    }
}

const VALID: &[&str] = &[
    "pulsar-wait-and-widen(seed=\"v1\", cache_affinity_wait_ms=300, band_widen_interval_ms=300)",
    "power-of-n(sample_count=4, comparator=queue-time,)",
    "pulsar-wait-and-widen;seed=v1;cache_affinity_wait_ms=300",
    " pulsar; seed=\"escaped \\\" quote\";n=-1.5 ",
    "# Fleet\ndefault = power-of-n(sample_count=2)\n\nallow wait-and-widen(seed=\"req-v1\")  # any\n\nmodel \"llama\" = pulsar-wait-and-widen(\n    seed = \"v1\",\n    n = 2,\n) {\n    allow pulsar(seed=\"v1\")  # only\n}\n",
];

/// A valid input with characters deleted, inserted or replaced.
fn mutated() -> impl Strategy<Value = String> {
    let edit = (
        0usize..400,
        0usize..4,
        prop::sample::select(vec![
            ';', ',', '"', '\\', '(', ')', '{', '}', '#', '\n', '=', ' ', '?', ':', 'é', '\t', '*',
            '0', 'a',
        ]),
    );
    (
        prop::sample::select(VALID),
        prop::collection::vec(edit, 1..6),
    )
        .prop_map(|(base, edits)| {
            let mut chars: Vec<char> = base.chars().collect();
            for (at, kind, c) in edits {
                let i = at % (chars.len() + 1);
                match kind {
                    0 if i < chars.len() => {
                        chars.remove(i);
                    }
                    1 if i < chars.len() => chars[i] = c,
                    _ => chars.insert(i, c),
                }
            }
            chars.into_iter().collect()
        })
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn no_string_makes_a_parser_panic(text in any::<String>()) {
        run_everything(&text);
    }

    #[test]
    fn no_ascii_text_makes_a_parser_panic(text in "[ -~\t\n]{0,120}") {
        run_everything(&text);
    }

    #[test]
    fn no_mutated_input_makes_a_parser_panic(text in mutated()) {
        run_everything(&text);
    }
}

fn method() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "pulsar",
            "round-robin",
            "random",
            "power-of-n",
            "wait-and-widen",
            "pulsar-wait-and-widen",
            "powerOf2",
            "GROQ_MULTIREGION",
            "Pulsar",
        ])
        .prop_map(String::from),
        "[a-zA-Z][a-zA-Z0-9_-]{0,10}",
    ]
}

fn value() -> impl Strategy<Value = Value> {
    prop_oneof![
        "[-+]?[0-9]{1,18}".prop_map(Value::Integer),
        "-?[0-9]{1,14}\\.[0-9]{1,6}".prop_map(Value::Decimal),
        "[^\\x00-\\x1f\\x7f]{0,12}".prop_map(Value::String),
        "[a-zA-Z][a-zA-Z0-9_.-]{0,8}".prop_map(Value::Token),
    ]
}

fn expr() -> impl Strategy<Value = Expr> {
    let args = prop::collection::btree_map("[a-z][a-z0-9_]{0,8}", value(), 0..6);
    (method(), args).prop_map(|(method, args)| {
        let at = Span::default();
        Expr {
            form: Form::Call,
            method: Spanned::new(method, at),
            args: args
                .into_iter()
                .map(|(n, v)| Arg {
                    name: Spanned::new(n, at),
                    value: Spanned::new(v, at),
                    span: at,
                })
                .collect(),
            span: at,
        }
    })
}

/// The tree fmt should give back: known methods canonical.
fn canonical(e: &Expr) -> Shape {
    let (m, args) = shape(e);
    let m = Algorithm::from_header_name(&m).map_or(m, |(a, _)| a.name().to_string());
    (m, args)
}

fn bare_header_number(v: &Value) -> bool {
    let (Value::Integer(t) | Value::Decimal(t)) = v else {
        return true;
    };
    let digits = t.strip_prefix('-').unwrap_or(t);
    match digits.split_once('.') {
        None => digits.len() <= 15 && !digits.starts_with('+'),
        Some((i, f)) => i.len() <= 12 && f.len() <= 3,
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn call_form_round_trips(e in expr()) {
        let printed = print_call(&e);
        let back = parse_call(&printed).map_err(|d| TestCaseError::fail(format!("{printed}: {d:?}")))?;
        prop_assert_eq!(shape(&back), canonical(&e));
        let again = format_expression(&printed, false);
        prop_assert_eq!(again.as_deref(), Ok(printed.as_str()));
    }

    #[test]
    fn header_form_round_trips_or_is_refused(e in expr()) {
        match print_header(&e) {
            Ok(printed) => {
                let back = parse_header(&printed).map_err(|d| TestCaseError::fail(format!("{printed}: {}", d[0].message)))?;
                let (m, args) = canonical(&e);
                // Numbers too long for a bare item come back quoted.
                let args: Vec<_> = args.into_iter().map(|(n, v)| {
                    if bare_header_number(&v) { (n, v) } else {
                        let (Value::Integer(t) | Value::Decimal(t)) = v else { unreachable!() };
                        (n, Value::String(t))
                    }
                }).collect();
                prop_assert_eq!(shape(&back), (m, args));
            }
            Err(d) => {
                let has_bad_string = e.args.iter().any(|a| matches!(&a.value.node,
                    Value::String(s) if s.chars().any(|c| c == ';' || c == ',' || !(' '..='~').contains(&c))));
                prop_assert!(has_bad_string || d.message.contains("bytes"), "{}", d.message);
            }
        }
    }

    #[test]
    fn route_files_round_trip_and_fmt_is_idempotent(
        items in prop::collection::vec((0u8..3, expr(), prop::collection::vec(expr(), 0..3), "[a-z0-9 .-]{1,8}"), 0..5),
        seps in prop::collection::vec(prop::sample::select(vec!["\n", "\n\n", "  # note\n", "\n# own line\n\n"]), 5),
    ) {
        let mut text = String::new();
        for (i, (kind, e, allows, id)) in items.iter().enumerate() {
            match kind {
                0 => text.push_str(&format!("default = {}", print_call(e))),
                1 => text.push_str(&format!("allow {}", print_call(e))),
                _ => {
                    text.push_str(&format!("model \"{id}\" = {}", print_call(e)));
                    if !allows.is_empty() {
                        text.push_str(" {");
                        for a in allows {
                            text.push_str(&format!("\n  allow {} # c", print_call(a)));
                        }
                        text.push_str("\n}");
                    }
                }
            }
            text.push_str(seps[i % seps.len()]);
        }
        let (original, diags) = parse_route_file(&text);
        prop_assert!(diags.is_empty(), "{text}: {diags:?}");
        let formatted = format_route_file(&text).map_err(|d| TestCaseError::fail(format!("{d:?}")))?;
        let (back, diags) = parse_route_file(&formatted);
        prop_assert!(diags.is_empty());
        let canon = |f: &routex::syntax::ast::RouteFile| {
            file_shape(f).into_iter().map(|(k, id, e, a)| {
                let c = |(m, args): Shape| (Algorithm::from_header_name(&m).map_or(m, |(al, _)| al.name().to_string()), args);
                (k, id, c(e), a.into_iter().map(c).collect::<Vec<_>>())
            }).collect::<Vec<_>>()
        };
        prop_assert_eq!(canon(&back), canon(&original));
        let again = format_route_file(&formatted);
        prop_assert_eq!(again.as_deref(), Ok(formatted.as_str()));
        prop_assert_eq!(formatted.matches('#').count(), text.matches('#').count());
    }
}
