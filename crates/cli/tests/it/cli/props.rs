//! Renderers never panic and stay well-formed, whatever the text and spans
//! (a buggy producer must not take the CLI down).

use proptest::prelude::*;
use routex::diag::{Code, Diagnostic, Report, Severity, Span};
use routex::render::{github, json, sarif};
use routex_cli::human;

fn diagnostic() -> impl Strategy<Value = Diagnostic> {
    (
        0..Code::ALL.len(),
        any::<bool>(),
        0usize..300,
        0usize..300,
        ".{0,40}",
        proptest::option::of(".{0,40}"),
    )
        .prop_map(|(code, warning, start, end, message, help)| {
            let severity = if warning {
                Severity::Warning
            } else {
                Severity::Error
            };
            let mut d = Diagnostic::new(Code::ALL[code], Span::new(start, end), message)
                .with_severity(severity);
            d.help = help;
            d
        })
}

fn report() -> impl Strategy<Value = Report> {
    (
        ".{0,30}",
        "(.|\n){0,200}",
        proptest::collection::vec(diagnostic(), 0..5),
    )
        .prop_map(|(name, text, diagnostics)| Report {
            source_name: name,
            text,
            diagnostics,
            suppressed: Vec::new(),
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn every_renderer_is_total(reports in proptest::collection::vec(report(), 0..3)) {
        let total: usize = reports.iter().map(|r| r.diagnostics.len()).sum();

        let value: serde_json::Value = serde_json::from_str(&json::render(&reports))
            .expect("json output parses");
        let entries = value["diagnostics"].as_array().cloned().unwrap_or_default();
        prop_assert_eq!(entries.len(), total);
        for (entry, report) in entries.iter().zip(reports.iter().flat_map(|r| r.diagnostics.iter().map(move |_| r))) {
            let start = entry["span"]["start"].as_u64().unwrap_or(u64::MAX) as usize;
            let end = entry["span"]["end"].as_u64().unwrap_or(0) as usize;
            prop_assert!(start <= end && end <= report.text.len());
            prop_assert!(report.text.is_char_boundary(start) && report.text.is_char_boundary(end));
            prop_assert!(entry["line"].as_u64().unwrap_or(0) >= 1);
            prop_assert!(entry["column"].as_u64().unwrap_or(0) >= 1);
        }

        let sarif: serde_json::Value = serde_json::from_str(&sarif::render(&reports))
            .expect("sarif output parses");
        prop_assert_eq!(sarif["runs"][0]["results"].as_array().map(Vec::len), Some(total));

        // One command per diagnostic, each on one line: newlines are escaped.
        let github = github::render(&reports);
        prop_assert_eq!(github.lines().count(), total);
        prop_assert!(github.lines().all(|l| l.starts_with("::error ") || l.starts_with("::warning ")));

        let plain = human::render(&reports, human::Style::Plain);
        prop_assert!(!plain.contains('\x1b'), "no escape codes");
        let _ = human::render(&reports, human::Style::Fancy { width: 60 });
    }
}
