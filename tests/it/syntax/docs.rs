//! The examples of docs/language.md, checked at the parse level: fenced
//! `routex-check` lines parse, `routex-error` lines fail, `routes` blocks
//! parse clean and are formatted; the message tables match what the parser
//! says.

use routex::diag::line_column;
use routex::syntax::{format_route_file, parse_expression, parse_route_file};

fn doc() -> String {
    let path = format!("{}/docs/language.md", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(path).expect("docs/language.md")
}

/// The bodies of the code blocks fenced with exactly ```` ```tag ````.
fn fences(text: &str, tag: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        match &mut current {
            None if line.trim_end() == format!("```{tag}") => current = Some(String::new()),
            Some(body) if line.trim_end() == "```" => {
                out.push(std::mem::take(body));
                current = None;
            }
            Some(body) => {
                body.push_str(line);
                body.push('\n');
            }
            None => {}
        }
    }
    out
}

/// Rows of the markdown table whose header row is `header`: cells trimmed.
fn table(text: &str, header: &str) -> Vec<Vec<String>> {
    let mut lines = text.lines().skip_while(|l| l.trim() != header).skip(2);
    let mut rows = Vec::new();
    for line in lines.by_ref() {
        let Some(inner) = line
            .trim()
            .strip_prefix('|')
            .and_then(|l| l.strip_suffix('|'))
        else {
            break;
        };
        rows.push(inner.split(" | ").map(|c| c.trim().to_string()).collect());
    }
    rows
}

fn unquote(cell: &str) -> &str {
    cell.trim_matches('`')
}

#[test]
fn routex_check_examples_parse() {
    let blocks = fences(&doc(), "routex-check");
    assert!(blocks.len() >= 2);
    for line in blocks
        .iter()
        .flat_map(|b| b.lines())
        .filter(|l| !l.trim().is_empty())
    {
        assert!(
            parse_expression(line).is_ok(),
            "{line:?}: {:?}",
            parse_expression(line)
        );
    }
}

#[test]
fn routex_error_examples_fail_to_parse() {
    let blocks = fences(&doc(), "routex-error");
    assert!(blocks.len() >= 2);
    for line in blocks
        .iter()
        .flat_map(|b| b.lines())
        .filter(|l| !l.trim().is_empty())
    {
        assert!(parse_expression(line).is_err(), "{line:?} parsed");
    }
}

#[test]
fn routes_examples_parse_clean_and_are_formatted() {
    let blocks = fences(&doc(), "routes");
    assert!(!blocks.is_empty());
    for text in blocks {
        let (file, diags) = parse_route_file(&text);
        assert!(diags.is_empty(), "{diags:?}");
        assert!(!file.items.is_empty());
        assert_eq!(format_route_file(&text).as_deref(), Ok(text.as_str()));
    }
}

#[test]
fn call_form_message_table_matches_the_parser() {
    let rows = table(&doc(), "| Input | Message |");
    assert!(rows.len() >= 6);
    for row in rows {
        let (input, message) = (unquote(&row[0]), row[1].as_str());
        let diags = parse_expression(input).expect_err(input);
        let message = message.split(" (help: ").next().unwrap_or(message);
        assert_eq!(diags[0].message, message, "{input}");
    }
}

#[test]
fn header_message_table_matches_the_parser() {
    let rows = table(&doc(), "| Input | Message starts with |");
    assert!(rows.len() >= 5);
    for row in rows {
        let (input, message) = (unquote(&row[0]), unquote(&row[1]));
        let prefix = message.trim_end_matches(" ...");
        let diags = parse_expression(input).expect_err(input);
        assert!(
            diags[0].message.starts_with(prefix),
            "{input}: {}",
            diags[0].message
        );
    }
}

#[test]
fn recovery_example_matches_the_parser() {
    let doc = doc();
    let file = fences(&doc, "text")
        .into_iter()
        .find(|b| b.starts_with("# Every item below"))
        .expect("recovery example");
    let path = format!(
        "{}/tests/inputs/syntax/many_errors.routes",
        env!("CARGO_MANIFEST_DIR")
    );
    assert_eq!(file, std::fs::read_to_string(path).expect("input"));
    let (_, diags) = parse_route_file(&file);
    let got: Vec<_> = diags
        .iter()
        .map(|d| {
            let (l, c) = line_column(&file, d.span.start);
            vec![format!("{l}:{c}"), d.message.clone()]
        })
        .collect();
    assert_eq!(got, table(&doc, "| Line:column | Message |"));
}

/// End to end through the checker: `routex-check` lines compile without a
/// diagnostic, `routex-error` lines with an error, `routes` blocks clean.
#[test]
fn docs_examples_compile_as_fenced() {
    let doc = doc();
    for line in fences(&doc, "routex-check")
        .iter()
        .flat_map(|b| b.lines().map(str::to_string).collect::<Vec<_>>())
    {
        let (definition, report) = routex::check::check_expression("arg:1", &line, None, None);
        assert!(
            definition.is_some() && report.diagnostics.is_empty(),
            "{line:?}: {:?}",
            report.diagnostics
        );
    }
    for line in fences(&doc, "routex-error")
        .iter()
        .flat_map(|b| b.lines().map(str::to_string).collect::<Vec<_>>())
    {
        let (_, report) = routex::check::check_expression("arg:1", &line, None, None);
        assert!(report.has_errors(), "{line:?}");
    }
    for text in fences(&doc, "routes") {
        let (table, report) = routex::check::check_route_file("docs.routes", &text);
        assert!(
            table.is_some() && report.diagnostics.is_empty(),
            "{:?}",
            report.diagnostics
        );
    }
}
