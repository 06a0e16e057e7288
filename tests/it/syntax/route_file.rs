//! Route files (docs/contract.md 2): items, blocks, comments, and recovery that
//! reports every syntax error with its exact span.

use super::support::{file_shape, slice};
use routex::diag::Code;
use routex::syntax::ast::{Item, Value};
use routex::syntax::parse_route_file;

fn input(name: &str) -> String {
    let path = format!("{}/tests/inputs/syntax/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(path).expect("input file")
}

/// (text, (line, message) of each error, items kept)
type Case = (&'static str, Vec<(usize, &'static str)>, usize);

#[test]
fn parses_the_language_example() {
    let text = input("fleet.routes");
    let (file, diags) = parse_route_file(&text);
    assert!(diags.is_empty(), "{diags:?}");
    let shape = file_shape(&file);
    assert_eq!(shape.len(), 3);
    assert_eq!(shape[0].0, "default");
    assert_eq!(shape[0].2 .0, "power-of-n");
    assert_eq!(
        shape[0].2 .1,
        vec![("sample_count".to_string(), Value::Integer("2".into()))]
    );
    assert_eq!(shape[1].0, "allow");
    assert_eq!(shape[1].2 .0, "wait-and-widen");
    assert_eq!(shape[2].0, "model");
    assert_eq!(shape[2].1.as_deref(), Some("llama-3-70b"));
    let names: Vec<_> = shape[2].2 .1.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "seed",
            "cache_affinity_wait_ms",
            "band_widen_interval_ms",
            "max_queue_time_floor_ms",
            "max_queue_time_ceil_ms"
        ]
    );
    assert_eq!(shape[2].3.len(), 1);
    assert_eq!(shape[2].3[0].0, "pulsar");
    let Item::Model {
        id, span, allows, ..
    } = &file.items[2]
    else {
        panic!("model")
    };
    assert_eq!(slice(&text, id.span), "\"llama-3-70b\"");
    assert!(slice(&text, *span).starts_with("model \"llama-3-70b\""));
    assert!(slice(&text, *span).ends_with('}'));
    assert_eq!(slice(&text, allows[0].span), "allow pulsar(seed=\"v1\")");
}

#[test]
fn blocks_are_optional_and_may_be_empty() {
    let text = "model \"a\" = random\nmodel \"b\" = pulsar {}\nmodel \"c\" = pulsar { allow random allow round-robin }\n";
    let (file, diags) = parse_route_file(text);
    assert!(diags.is_empty(), "{diags:?}");
    let shape = file_shape(&file);
    assert_eq!(shape.len(), 3);
    assert_eq!(shape[0].3.len(), 0);
    assert_eq!(shape[1].3.len(), 0);
    assert_eq!(shape[2].3.len(), 2);
}

#[test]
fn keywords_need_a_word_boundary() {
    let (_, diags) = parse_route_file("defaults = pulsar\n");
    assert_eq!(diags.len(), 1);
    assert_eq!(
        diags[0].message,
        "expected `default`, `allow` or `model`, found `defaults`"
    );
    let (file, diags) = parse_route_file("allow allowed-thing\n");
    assert!(diags.is_empty());
    assert_eq!(file_shape(&file)[0].2 .0, "allowed-thing");
}

#[test]
fn reports_every_syntax_error_and_keeps_the_good_items() {
    let text = input("many_errors.routes");
    let (file, diags) = parse_route_file(&text);
    let got: Vec<(usize, &str, &str)> = diags
        .iter()
        .map(|d| {
            assert_eq!(d.code, Code::SyntaxError, "{d:?}");
            let (line, _) = routex::diag::line_column(&text, d.span.start);
            (line, slice(&text, d.span), d.message.as_str())
        })
        .collect();
    let value = "expected a value: a number, `\"string\"` or a name, found `)`";
    assert_eq!(
        got,
        vec![
            (2, ")", value),
            (4, "model", "expected `,` or `)`, found `model`"),
            (5, ")", value),
            (8, "}", "expected a parameter name or `)`, found `}`"),
            (9, ")", value),
            (
                12,
                "junk",
                "expected `default`, `allow` or `model`, found `junk`"
            ),
            (16, "model", "expected `allow` or `}`, found `model`"),
        ]
    );
    let shape = file_shape(&file);
    let kept: Vec<_> = shape
        .iter()
        .map(|s| (s.0.as_str(), s.1.as_deref(), s.3.len()))
        .collect();
    assert_eq!(
        kept,
        vec![
            ("model", Some("a"), 1),
            ("allow", None, 0),
            ("model", Some("c"), 1),
            ("model", Some("d"), 0),
        ]
    );
}

#[test]
fn recovery_cases() {
    // (text, expected (line, message) list, items kept)
    let cases: Vec<Case> = vec![
        (
            "model \"a\" = pulsar {\n    allow random\n",
            vec![(1, "this `{` is never closed")],
            1,
        ),
        (
            "}\ndefault = random\n",
            vec![(1, "expected `default`, `allow` or `model`, found `}`")],
            1,
        ),
        (
            "model a = random\nallow pulsar\n",
            vec![(
                1,
                "expected a quoted model id such as `\"llama-3-70b\"`, found `a`",
            )],
            1,
        ),
        (
            "model \"a\" = random {\n    default = pulsar\n}\nallow random\n",
            vec![
                (2, "expected `allow` or `}`, found `default`"),
                (3, "expected `default`, `allow` or `model`, found `}`"),
            ],
            3,
        ),
        (
            "default = pulsar(seed=\"x)\nallow random\n",
            vec![(1, "unterminated string")],
            1,
        ),
        (
            "default pulsar\nallow random\n",
            vec![(1, "expected `=` after `default`, found `pulsar`")],
            1,
        ),
        (
            "model \"a\" pulsar\n",
            vec![(1, "expected `=` after the model id, found `pulsar`")],
            0,
        ),
        (
            "allow pulsar(Seed=1, seed=2, seed=3)\n",
            vec![
                (1, "invalid parameter name 'Seed'"),
                (1, "repeated parameter 'seed'"),
            ],
            1,
        ),
    ];
    for (text, want, kept) in cases {
        let (file, diags) = parse_route_file(text);
        let got: Vec<_> = diags
            .iter()
            .map(|d| {
                (
                    routex::diag::line_column(text, d.span.start).0,
                    d.message.as_str(),
                )
            })
            .collect();
        assert_eq!(got, want, "{text:?}");
        assert_eq!(file.items.len(), kept, "{text:?}: {:?}", file_shape(&file));
    }
}

#[test]
fn name_errors_in_route_files_are_malformed_expressions() {
    let (_, diags) = parse_route_file("allow pulsar(seed=1, seed=2)\n");
    assert_eq!(diags.len(), 1);
    assert_eq!(diags[0].code, Code::MalformedExpression);
}

#[test]
fn empty_and_comment_only_files_have_no_items() {
    for text in ["", "\n\n", "# just a comment\n   # another"] {
        let (file, diags) = parse_route_file(text);
        assert!(file.items.is_empty() && diags.is_empty(), "{text:?}");
    }
}

#[test]
fn many_errors_on_one_line_stay_fast() {
    let text = "} ".repeat(20_000);
    let start = std::time::Instant::now();
    let (_, diags) = parse_route_file(&text);
    assert_eq!(diags.len(), 20_000);
    assert!(start.elapsed().as_secs() < 5, "{:?}", start.elapsed());
}
