//! insta snapshots (snapshots/syntax/) of the AST of a few inputs and of
//! syntax diagnostics as a user reads them.

use routex::diag::{line_column, Diagnostic};
use routex::syntax::{parse_expression, parse_route_file};

fn settings() -> insta::Settings {
    let mut s = insta::Settings::clone_current();
    s.set_snapshot_path("../../../snapshots/syntax");
    s.set_prepend_module_to_snapshot(false);
    s
}

fn input(name: &str) -> String {
    let path = format!("{}/tests/inputs/syntax/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(path).expect("input file")
}

/// `line:column code: message` and the text the span covers.
fn render(text: &str, diags: &[Diagnostic]) -> String {
    diags
        .iter()
        .map(|d| {
            let (line, col) = line_column(text, d.span.start);
            let covered = text.get(d.span.start..d.span.end).unwrap_or("?");
            let mut s = format!("{line}:{col} {}: {} [{covered:?}]", d.code, d.message);
            if let Some(h) = &d.help {
                s.push_str(&format!("\n    help: {h}"));
            }
            s
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn ast_of_a_call_expression() {
    let e = parse_expression("pulsar-wait-and-widen(seed=\"v1\", n=2, next_bucket_unlock_factor=0.0625, comparator=queue-time,)").unwrap();
    settings().bind(|| insta::assert_debug_snapshot!("ast_call", e));
}

#[test]
fn ast_of_a_header_expression() {
    let e = parse_expression(" pulsar; seed=\"a \\\" b\";n=-3;f=1.5;w=max-input-tps").unwrap();
    settings().bind(|| insta::assert_debug_snapshot!("ast_header", e));
}

#[test]
fn ast_of_a_route_file() {
    let (file, diags) = parse_route_file(&input("fleet.routes"));
    assert!(diags.is_empty());
    settings().bind(|| insta::assert_debug_snapshot!("ast_route_file", file));
}

#[test]
fn diagnostics_of_a_route_file_with_many_errors() {
    let text = input("many_errors.routes");
    let (_, diags) = parse_route_file(&text);
    settings().bind(|| insta::assert_snapshot!("diagnostics_many_errors", render(&text, &diags)));
}

#[test]
fn diagnostics_of_expressions() {
    let cases = [
        "pulsar(seed=)",
        "pulsar(seed \"x\")",
        "pulsar(seed=1 n=2)",
        "pulsar(seed=\"abc",
        "pulsar(Seed=1, n=2, n=3)",
        "pulsar;seed=\"a;b\"",
        "pulsar;x=?1",
        "pulsar;seed= x",
        "wait-and-widen;next_bucket_unlock_factor=0.0625",
    ];
    let out = cases
        .iter()
        .map(|text| {
            let diags = parse_expression(text).expect_err(text);
            format!("{text}\n{}", render(text, &diags))
        })
        .collect::<Vec<_>>()
        .join("\n\n");
    settings().bind(|| insta::assert_snapshot!("diagnostics_expressions", out));
}
