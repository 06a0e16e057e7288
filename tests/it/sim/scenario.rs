//! Scenario files: schema errors point into the JSON text.

use routex::diag::{line_column, Code};
use routex::sim::scenario::{load, DEFAULT_SCENARIO};

fn first_error(text: &str) -> (Code, (usize, usize), String) {
    let report = match load("s.json", text) {
        Ok(_) => panic!("expected an invalid scenario"),
        Err(r) => r,
    };
    let d = report.first_error().expect("an error").clone();
    (d.code, line_column(text, d.span.start), d.message)
}

#[test]
fn unknown_fields_are_rejected_with_their_line() {
    let text =
        DEFAULT_SCENARIO.replacen("\"warmup_s\": 60,", "\"warmup_s\": 60, \"warmpu\": 1,", 1);
    let (code, (line, _), message) = first_error(&text);
    assert_eq!(code, Code::UnknownField);
    assert_eq!(line, 4);
    assert!(message.contains("warmpu"), "{message}");
}

#[test]
fn malformed_json_is_invalid_json() {
    let (code, (line, _), _) = first_error("{\n  \"name\": \"x\",,\n}");
    assert_eq!(code, Code::InvalidJson);
    assert_eq!(line, 2);
}

#[test]
fn wrong_types_and_missing_fields() {
    let text = DEFAULT_SCENARIO.replacen("\"seeds\": [1, 2, 3]", "\"seeds\": \"1\"", 1);
    assert_eq!(first_error(&text).0, Code::InvalidType);
    let text = DEFAULT_SCENARIO.replacen("\"seeds\": [1, 2, 3],", "", 1);
    assert_eq!(first_error(&text).0, Code::MissingField);
}
