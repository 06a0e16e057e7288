//! `--format sarif` as GitHub code scanning reads it: valid against the SARIF
//! 2.1.0 schema (draft-07, formats checked) for odd file names, absolute
//! paths and expressions; percent-encoded URIs; UTF-16 columns; fingerprints
//! that survive line shifts; one name per file however it was reached.
//! `.ci/sarif-validate` runs Microsoft's Multitool over the same cases.

use super::json_schema::{validate, Draft};
use super::run::{json, routex_in, scratch, Output};
use routex::diag::{Code, Diagnostic, Report, Span};
use routex::render::sarif;
use serde_json::Value;

/// The published schema's `run.language` pattern has a stray `]`, which
/// ECMA-262 reads as a literal but a format-checking validator rejects as a
/// regex; the committed copy stays as published and is mended here.
const BROKEN_PATTERN: &str = r#""^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}]?$""#;
const MENDED_PATTERN: &str = r#""^[a-zA-Z]{2}(-[a-zA-Z]{2})?$""#;

/// The schema errors of each log (the schema's formats checked), or
/// `None` when no validator is installed.
fn schema_errors(logs: &[Value]) -> Option<Vec<Vec<String>>> {
    let path = super::run::root().join("tests/inputs/sarif/sarif-schema-2.1.0.json");
    let text = std::fs::read_to_string(path).expect("the schema is committed");
    assert!(
        text.contains(BROKEN_PATTERN),
        "the schema changed: review the mending"
    );
    let schema: Value = json(&text.replace(BROKEN_PATTERN, MENDED_PATTERN));
    validate(&schema, Draft::Draft7, true, logs)
}

/// Fails the test with every schema error of `log`.
fn assert_valid(log: &Value) {
    if let Some(errors) = schema_errors(std::slice::from_ref(log)) {
        assert!(errors[0].is_empty(), "{:#?}\n{log:#}", errors[0]);
    }
}

fn uris(log: &Value) -> Vec<String> {
    log["runs"][0]["results"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| {
            let at = &r["locations"][0]["physicalLocation"]["artifactLocation"];
            format!(
                "{} {}",
                at["uriBaseId"].as_str().unwrap_or("-"),
                at["uri"].as_str().unwrap_or("")
            )
        })
        .collect()
}

const ALIAS: &str = "default = round-robin\nmodel \"m\" = powerOf2\n";

/// Odd file names: each must stay one path of one file.
const ODD: &[(&str, &str)] = &[
    ("a b.routes", "a%20b.routes"),
    ("modèle.routes", "mod%C3%A8le.routes"),
    ("100%.routes", "100%25.routes"),
    ("x#1.routes", "x%231.routes"),
    ("what?.routes", "what%3F.routes"),
    ("a:b.routes", "a%3Ab.routes"),
    ("c,d.routes", "c%2Cd.routes"),
];

#[test]
fn odd_file_names_are_percent_encoded_relative_references() {
    let dir = scratch("sarif-odd");
    let mut args = vec!["lint", "--format", "sarif"];
    for (name, _) in ODD {
        std::fs::write(dir.join(name), ALIAS).expect("write");
        args.push(name);
    }
    let Output { code, stdout, .. } = routex_in(&dir, &args);
    assert_eq!(code, 0, "warnings only");
    let log = json(&stdout);
    let want: Vec<String> = ODD
        .iter()
        .map(|(_, uri)| format!("%SRCROOT% {uri}"))
        .collect();
    assert_eq!(uris(&log), want);
    let run = &log["runs"][0];
    let root = run["originalUriBaseIds"]["%SRCROOT%"]["uri"]
        .as_str()
        .unwrap_or("");
    assert!(
        root.starts_with("file:///") && root.ends_with("/sarif-odd/"),
        "{root}"
    );
    assert_eq!(run["invocations"][0]["workingDirectory"]["uri"], root);
    assert_eq!(run["artifacts"].as_array().map(Vec::len), Some(ODD.len()));
    assert_eq!(run["artifacts"][3]["location"]["uri"], "x%231.routes");
    assert_eq!(
        run["results"][3]["locations"][0]["physicalLocation"]["artifactLocation"]["index"],
        3
    );
    assert_valid(&log);
}

#[test]
fn absolute_paths_are_file_uris() {
    let dir = scratch("sarif-absolute");
    let file = dir.join("a b#.routes");
    std::fs::write(&file, ALIAS).expect("write");
    let path = file.to_str().expect("utf-8 path");
    let Output { stdout, .. } = routex_in(&dir, &["lint", "--format", "sarif", path]);
    let log = json(&stdout);
    let uri = format!("file://{}", path.replace(' ', "%20").replace('#', "%23"));
    assert_eq!(uris(&log), [format!("- {uri}")]);
    assert_valid(&log);
}

#[test]
fn one_file_has_one_name_in_every_format_however_it_was_reached() {
    let dir = scratch("sarif-dot");
    std::fs::create_dir_all(dir.join("sub")).expect("mkdir");
    std::fs::write(dir.join("sub/x.routes"), ALIAS).expect("write");
    for format in ["sarif", "github", "json"] {
        let outputs: Vec<String> = [".", "sub", "./sub/", "./sub/./x.routes"]
            .iter()
            .map(|path| routex_in(&dir, &["lint", "--format", format, path]).stdout)
            .collect();
        assert!(
            outputs.iter().all(|o| *o == outputs[0]),
            "{format}: {outputs:#?}"
        );
        assert!(!outputs[0].contains("./"), "{format}: {}", outputs[0]);
    }
    let Output { stdout: github, .. } = routex_in(&dir, &["lint", "--format", "github", "."]);
    assert!(
        github.starts_with("::warning file=sub/x.routes,line=2,"),
        "{github}"
    );
}

#[test]
fn fingerprints_survive_runs_and_line_shifts() {
    let dir = scratch("sarif-fingerprint");
    let file = dir.join("f.routes");
    let two = "default = round-robin\nmodel \"m\" = powerOf2\nmodel \"n\" = powerOf2\n";
    let fingerprints = |text: &str| {
        std::fs::write(&file, text).expect("write");
        let log = json(&routex_in(&dir, &["lint", "--format", "sarif", "f.routes"]).stdout);
        log["runs"][0]["results"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|r| {
                (
                    r["partialFingerprints"]["routexDiagnostic/v1"]
                        .as_str()
                        .unwrap_or("")
                        .to_string(),
                    r["locations"][0]["physicalLocation"]["region"]["startLine"]
                        .as_u64()
                        .unwrap_or(0),
                )
            })
            .collect::<Vec<_>>()
    };
    let before = fingerprints(two);
    assert_eq!(before, fingerprints(two), "same input, same fingerprints");
    let shifted = fingerprints(&format!("# a comment\n\n{two}"));
    assert_eq!(before.len(), 2);
    assert_eq!(
        before
            .iter()
            .map(|(f, l)| (f.clone(), l + 2))
            .collect::<Vec<_>>(),
        shifted,
        "lines moved by 2, fingerprints kept"
    );
    // The same message on the same text twice: told apart by occurrence.
    assert_ne!(before[0].0, before[1].0);
}

#[test]
fn expressions_are_inline_artifacts_with_their_text() {
    let Output { code, stdout, .. } = routex_in(
        super::run::root(),
        &["check", "--format", "sarif", "round-robin", "powerOf2"],
    );
    assert_eq!(code, 0);
    let log = json(&stdout);
    assert_eq!(uris(&log), ["ROUTEX_INLINE arg%3A2"]);
    let run = &log["runs"][0];
    assert_eq!(run["artifacts"][1]["contents"]["text"], "powerOf2");
    assert_eq!(run["artifacts"][1]["description"]["text"], "arg:2");
    assert!(run["originalUriBaseIds"]["ROUTEX_INLINE"]["uri"].is_null());
    assert_valid(&log);
}

#[test]
fn columns_count_utf16_code_units() {
    // `😀` is one character and two UTF-16 units: `n` is character 18 of
    // the line but starts at UTF-16 column 19.
    let text = "pulsar(seed=\"😀\", n=1)";
    let mut report = Report::new("arg:1", text);
    let start = text.find("n=1").unwrap_or(0);
    report.diagnostics.push(Diagnostic::new(
        Code::NotApplicable,
        Span::new(start, start + 1),
        "n is not applicable to pulsar",
    ));
    let log = sarif::to_value(&[report]);
    let region = &log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"];
    assert_eq!(log["runs"][0]["columnKind"], "utf16CodeUnits");
    assert_eq!(
        (region["startColumn"].clone(), region["endColumn"].clone()),
        (19.into(), 20.into())
    );
    assert_eq!(region["byteOffset"], start);
    assert_valid(&log);
}

#[test]
fn rules_carry_what_github_requires() {
    let mut report = Report::new("x.routes", "model");
    for code in Code::ALL {
        report
            .diagnostics
            .push(Diagnostic::new(*code, Span::new(0, 1), "m"));
    }
    let log = sarif::to_value(&[report]);
    let driver = &log["runs"][0]["tool"]["driver"];
    assert!(driver["informationUri"]
        .as_str()
        .is_some_and(|u| u.starts_with("https://")));
    let rules = driver["rules"].as_array().cloned().unwrap_or_default();
    assert_eq!(rules.len(), Code::ALL.len());
    for rule in &rules {
        let id = rule["id"].as_str().unwrap_or("");
        for key in ["fullDescription", "shortDescription"] {
            assert!(
                rule[key]["text"].as_str().is_some_and(|t| !t.is_empty()),
                "{id} {key}"
            );
        }
        assert!(rule["help"]["text"]
            .as_str()
            .is_some_and(|t| t.contains("docs/diagnostics.md")));
        let markdown = rule["help"]["markdown"].as_str().unwrap_or("");
        assert!(
            markdown.contains(&format!("docs/diagnostics.md#{id})")),
            "{markdown}"
        );
        assert!(rule["helpUri"]
            .as_str()
            .is_some_and(|u| u.ends_with(&format!("#{id}"))));
        let name = rule["name"].as_str().unwrap_or("");
        assert!(
            !name.eq_ignore_ascii_case(id),
            "{id}: a name equal to the id is omitted"
        );
    }
    assert_eq!(rules[4]["name"], "NotApplicable");
    assert!(
        rules[2]["name"].is_null(),
        "`unavailable` has no distinct name"
    );
    assert_valid(&log);
}

#[test]
fn the_schema_check_catches_what_the_old_output_did() {
    // The same log with the raw name, as routex wrote before encoding: the
    // format check must see it, or the tests above prove nothing.
    let mut report = Report::new("a b#1.routes", "x");
    report
        .diagnostics
        .push(Diagnostic::new(Code::SyntaxError, Span::new(0, 1), "m"));
    let good = sarif::to_value(&[report]);
    let mut raw_name = good.clone();
    raw_name["runs"][0]["artifacts"][0]["location"]["uri"] = "a b#1.routes".into();
    let mut relative_information = good.clone();
    relative_information["runs"][0]["tool"]["driver"]["informationUri"] = "docs/cli.md".into();
    let Some(errors) = schema_errors(&[good, raw_name, relative_information]) else {
        return;
    };
    assert!(errors[0].is_empty(), "{:#?}", errors[0]);
    assert!(!errors[1].is_empty(), "a raw name is no URI reference");
    assert!(!errors[2].is_empty(), "informationUri must be absolute");
}
