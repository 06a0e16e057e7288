//! Every renderer on hand-made reports: exact shapes of the machine formats
//! (docs/contract.md 5.1, GitHub commands, SARIF 2.1.0) and the plain human output.

use routex::diag::{Code, Diagnostic, Report, Severity, Span};
use routex::render::{github, json, sarif};
use routex_cli::human;

fn settings() -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("../../snapshots/render");
    settings.set_prepend_module_to_snapshot(false);
    settings
}

/// An expression error (with help) and a route-file warning on line 3 after
/// a multi-byte character, so columns differ from byte offsets.
fn sample() -> Vec<Report> {
    let mut expr = Report::new("arg:1", "wait-and-widen(band_widen_interval_ms=300)");
    expr.diagnostics.push(
        Diagnostic::new(
            Code::NotApplicable,
            Span::new(15, 37),
            "band_widen_interval_ms is not applicable to wait-and-widen",
        )
        .with_help("band_widen_interval_ms applies to: pulsar-wait-and-widen"),
    );
    let mut file = Report::new(
        "fleet.routes",
        "# fleet\ndefault = round-robin\nmodel \"modèle\" = powerOf2\n",
    );
    file.diagnostics.push(
        Diagnostic::new(
            Code::DeprecatedAlias,
            Span::new(48, 56),
            "powerOf2 is a deprecated alias of power-of-n",
        )
        .with_label("alias")
        .with_help("write power-of-n"),
    );
    vec![expr, file]
}

#[test]
fn json_matches_the_version_1_shape() {
    let value = json::to_value(&sample());
    assert_eq!(value["version"], 1);
    assert_eq!(value["summary"]["errors"], 1);
    assert_eq!(value["summary"]["warnings"], 1);
    let first = &value["diagnostics"][0];
    assert_eq!(first["code"], "not_applicable");
    assert_eq!(first["severity"], "error");
    assert_eq!(first["source"], "arg:1");
    assert_eq!(first["span"]["start"], 15);
    assert_eq!(first["span"]["end"], 37);
    assert_eq!(
        (first["line"].clone(), first["column"].clone()),
        (1.into(), 16.into())
    );
    assert_eq!(
        first["help"],
        "band_widen_interval_ms applies to: pulsar-wait-and-widen"
    );
    let second = &value["diagnostics"][1];
    // Byte 48 is line 3, column 18: `model "modèle" = ` is 18 bytes but 17 characters.
    assert_eq!(
        (second["line"].clone(), second["column"].clone()),
        (3.into(), 18.into())
    );
    assert_eq!(second["severity"], "warning");
    let keys: Vec<&str> = first
        .as_object()
        .map(|o| o.keys().map(String::as_str).collect())
        .unwrap_or_default();
    // Version-1 keys stay as they were; end_line and end_column were added.
    assert_eq!(
        keys,
        [
            "code",
            "severity",
            "message",
            "source",
            "span",
            "line",
            "column",
            "end_line",
            "end_column",
            "help"
        ]
    );
    assert_eq!(
        (first["end_line"].clone(), first["end_column"].clone()),
        (1.into(), 38.into())
    );
    assert_eq!(
        (second["end_line"].clone(), second["end_column"].clone()),
        (3.into(), 26.into())
    );
    settings().bind(|| insta::assert_snapshot!("sample_json", json::render(&sample())));
}

#[test]
fn json_help_is_null_when_absent_and_an_empty_run_counts_zero() {
    let mut report = Report::new("arg:1", "x");
    report.diagnostics.push(Diagnostic::new(
        Code::UnknownMethod,
        Span::new(0, 1),
        "unknown routing method 'x'",
    ));
    let value = json::to_value(&[report]);
    assert!(value["diagnostics"][0]["help"].is_null());
    assert_eq!(
        json::to_value(&[]),
        serde_json::json!({"version": 1, "diagnostics": [], "summary": {"errors": 0, "warnings": 0}})
    );
}

#[test]
fn github_prints_one_escaped_command_per_diagnostic() {
    let text = github::render(&sample());
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines,
        [
            "::error file=arg%3A1,line=1,col=16,endLine=1,endColumn=38,title=not_applicable::\
             band_widen_interval_ms is not applicable to wait-and-widen%0A\
             help: band_widen_interval_ms applies to: pulsar-wait-and-widen",
            "::warning file=fleet.routes,line=3,col=18,endLine=3,endColumn=26,title=deprecated_alias::\
             powerOf2 is a deprecated alias of power-of-n%0Ahelp: write power-of-n",
        ]
    );
}

#[test]
fn github_escapes_percent_newlines_and_property_separators() {
    let mut report = Report::new("a,b:c.routes", "x");
    report.diagnostics.push(
        Diagnostic::new(Code::SyntaxError, Span::new(0, 1), "100% wrong\r\nreally")
            .with_severity(Severity::Warning),
    );
    assert_eq!(
        github::render(&[report]),
        "::warning file=a%2Cb%3Ac.routes,line=1,col=1,endLine=1,endColumn=2,title=syntax_error::\
         100%25 wrong%0D%0Areally\n"
    );
}

#[test]
fn sarif_has_one_run_one_rule_per_code_and_regions() {
    let value = sarif::to_value(&sample());
    assert_eq!(value["version"], "2.1.0");
    assert_eq!(
        value["$schema"],
        "https://json.schemastore.org/sarif-2.1.0.json"
    );
    let runs = value["runs"].as_array().map(Vec::len);
    assert_eq!(runs, Some(1));
    let run = &value["runs"][0];
    assert_eq!(run["tool"]["driver"]["name"], "routex");
    let rules = &run["tool"]["driver"]["rules"];
    assert_eq!(rules.as_array().map(Vec::len), Some(2));
    assert_eq!(rules[0]["id"], "not_applicable");
    assert_eq!(
        rules[0]["shortDescription"]["text"],
        Code::NotApplicable.summary()
    );
    assert_eq!(rules[1]["id"], "deprecated_alias");
    let result = &run["results"][1];
    assert_eq!(result["ruleId"], "deprecated_alias");
    assert_eq!(result["ruleIndex"], 1);
    assert_eq!(result["level"], "warning");
    let location = &result["locations"][0]["physicalLocation"];
    assert_eq!(location["artifactLocation"]["uri"], "fleet.routes");
    let region = &location["region"];
    assert_eq!(
        [
            &region["startLine"],
            &region["startColumn"],
            &region["endLine"],
            &region["endColumn"]
        ],
        [&3.into(), &18.into(), &3.into(), &26.into()] as [&serde_json::Value; 4]
    );
    settings().bind(|| insta::assert_snapshot!("sample_sarif", sarif::render(&sample())));
}

#[test]
fn human_plain_shows_code_label_help_without_escape_codes() {
    let text = human::render(&sample(), human::Style::Plain);
    assert!(!text.contains('\u{1b}'), "no ANSI escapes in plain output");
    for needle in [
        "not_applicable",
        "band_widen_interval_ms is not applicable to wait-and-widen",
        "help: band_widen_interval_ms applies to: pulsar-wait-and-widen",
        "deprecated_alias",
        "alias",
        "[fleet.routes:3:18]",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in:\n{text}");
    }
    settings().bind(|| insta::assert_snapshot!("sample_human", text));
}

#[test]
fn human_summary_pluralises() {
    assert_eq!(
        human::summary(1, 0, 1, "file"),
        "1 error, 0 warnings in 1 file\n"
    );
    assert_eq!(
        human::summary(2, 1, 3, "expression"),
        "2 errors, 1 warning in 3 expressions\n"
    );
}

#[test]
fn broken_spans_render_without_panicking() {
    let mut report = Report::new("arg:1", "é");
    for span in [
        Span::new(1, 1),
        Span::new(5, 99),
        Span::new(1, 0),
        Span::new(0, 2),
    ] {
        report
            .diagnostics
            .push(Diagnostic::new(Code::MalformedExpression, span, "bad"));
    }
    let reports = [report, Report::new("empty", "")];
    let value = json::to_value(&reports);
    assert_eq!(
        value["diagnostics"][1]["span"],
        serde_json::json!({"start": 2, "end": 2})
    );
    assert_eq!(value["diagnostics"][1]["column"], 2);
    assert_eq!(
        value["diagnostics"][0]["span"],
        serde_json::json!({"start": 0, "end": 0})
    );
    let human = human::render(&reports, human::Style::Plain);
    assert_eq!(human.matches("malformed_expression").count(), 4);
    assert_eq!(github::render(&reports).lines().count(), 4);
    let sarif = sarif::to_value(&reports);
    assert_eq!(
        sarif["runs"][0]["results"].as_array().map(Vec::len),
        Some(4)
    );
}

#[test]
fn human_fancy_draws_unicode() {
    let text = human::render(&sample(), human::Style::Fancy { width: 80 });
    assert!(text.contains('╭') || text.contains('┬'), "{text}");
    assert!(text.contains("fleet.routes:3:18"));
}
