//! The human renderer at its edges: end of input, long lines, many
//! diagnostics in one source, wrapping of hyphenated names.

use routex::diag::{Code, Diagnostic, Report, Span};
use routex_cli::human::{self, Style, LINE_WINDOW, MAX_SHOWN_PER_SOURCE};

fn one(name: &str, text: &str, span: Span) -> Report {
    let mut report = Report::new(name, text);
    report
        .diagnostics
        .push(Diagnostic::new(Code::SyntaxError, span, "expected `)`"));
    report
}

/// The caret line under the source line that ends with `source_line`.
fn caret_column(text: &str, source_line: &str) -> Option<usize> {
    let mut lines = text.lines();
    lines.find(|l| l.ends_with(source_line))?;
    let caret = lines.next()?;
    caret.find('^')
}

#[test]
fn end_of_input_draws_a_caret_after_the_last_character() {
    for text in ["pulsar(seed=", "pulsar(seed=\n", "pulsar(seed=\n\n"] {
        let report = one("arg:1", text, Span::new(text.len(), text.len()));
        let out = human::render(&[report], Style::Plain);
        assert!(out.contains("[arg:1:1:13]"), "{out}");
        // ` 1 | ` is 5 characters, `pulsar(seed=` 12: the caret is at 17.
        assert_eq!(
            caret_column(&out, "pulsar(seed="),
            Some(17),
            "{text:?}:\n{out}"
        );
    }
}

#[test]
fn a_long_line_is_cut_around_the_span() {
    let text = format!("{}BAD{}", "a".repeat(50_000), "b".repeat(50_000));
    let report = one("long.routes", &text, Span::new(50_000, 50_003));
    let out = human::render(&[report], Style::Plain);
    assert!(out.contains("[long.routes:1:50001]"), "{out}");
    let shown = out.lines().find(|l| l.contains("BAD")).unwrap_or_default();
    assert!(
        shown.contains("...aaa") && shown.ends_with("bbb..."),
        "{shown}"
    );
    assert!(shown.len() < LINE_WINDOW + 20, "{} characters", shown.len());
    let caret = out
        .lines()
        .skip_while(|l| !l.contains("BAD"))
        .nth(1)
        .unwrap_or_default();
    assert_eq!(caret.find("^^^"), shown.find("BAD"), "\n{shown}\n{caret}");
    assert!(out.len() < 1_000, "{} bytes", out.len());
}

#[test]
fn diagnostics_past_the_cap_are_counted_not_drawn() {
    let text = "} ".repeat(1_000);
    let mut report = Report::new("many.routes", text.as_str());
    for i in 0..1_000 {
        report.diagnostics.push(Diagnostic::new(
            Code::SyntaxError,
            Span::new(2 * i, 2 * i + 1),
            "unexpected `}`",
        ));
    }
    let out = human::render(&[report], Style::Plain);
    assert_eq!(out.matches("unexpected `}`").count(), MAX_SHOWN_PER_SOURCE);
    assert!(
        out.ends_with("... and 900 more diagnostics in many.routes not shown (--format json lists every one)\n"),
        "{}",
        &out[out.len().saturating_sub(200)..]
    );
    // Each drawn diagnostic shows its own stretch of the line, not all of it.
    assert!(
        out.len() < MAX_SHOWN_PER_SOURCE * 1_000,
        "{} bytes",
        out.len()
    );
}

#[test]
fn help_wraps_between_words_never_inside_a_hyphenated_name() {
    let mut report = one("arg:1", "x", Span::new(0, 1));
    report.diagnostics[0].help = Some(format!(
        "{} pulsar-wait-and-widen, round-robin",
        "word ".repeat(17)
    ));
    let out = human::render(&[report], Style::Fancy { width: 100 });
    assert!(out.contains("pulsar-wait-and-widen"), "{out}");
    assert!(!out.lines().any(|l| l.trim_end().ends_with('-')), "{out}");
}

#[test]
fn an_over_long_value_is_not_repeated_in_full() {
    let value = format!("pulsar;seed=\"{}\"", "x".repeat(1_100));
    let (_, report) = routex::check::check_expression("arg:1", &value, None, None);
    let message = &report.diagnostics[0].message;
    assert!(
        message.starts_with("P7:") && message.contains(&value),
        "the message keeps stargate's echo"
    );
    let out = human::render(&[report], Style::Plain);
    assert!(
        out.contains("P7: 1114 bytes, more than the 1024 allowed"),
        "{out}"
    );
    assert!(out.contains("characters omitted"), "{out}");
    assert!(out.lines().count() < 12, "{out}");
    assert!(out.len() < 1_000, "{} bytes:\n{out}", out.len());
}

#[test]
fn a_comma_in_a_header_value_gets_the_separator_as_help() {
    let (_, report) = routex::check::check_expression("arg:1", "pulsar;seed=a,n=2", None, None);
    let d = &report.diagnostics[0];
    assert!(d.message.starts_with("P3:"), "{}", d.message);
    let help = d.help.as_deref().unwrap_or_default();
    assert!(help.contains("separated by `;`"), "{help}");
}

#[test]
fn a_byte_order_mark_is_named_and_shown() {
    let text = "\u{feff}default = pulsar\n";
    let (_, report) = routex::check::check_route_file("bom.routes", text);
    let d = &report.diagnostics[0];
    assert_eq!(d.code, Code::SyntaxError);
    assert!(
        d.message.contains("byte order mark (U+FEFF)"),
        "{}",
        d.message
    );
    assert_eq!(report.diagnostics.len(), 1, "the rest still parses");
    let out = human::render(&[report], Style::Plain);
    assert!(out.contains("\u{fffd}default = pulsar"), "{out}");
    let (_, report) = routex::config::check_lb_config("lb-config.json", "\u{feff}{}");
    let d = &report.diagnostics[0];
    assert_eq!(d.code, Code::InvalidJson);
    assert!(
        d.message.contains("byte order mark (U+FEFF)"),
        "{}",
        d.message
    );
    let (_, report) = routex::check::check_expression("arg:1", "\u{feff}pulsar", None, None);
    let out = human::render(&[report], Style::Plain);
    assert!(out.contains("<U+FEFF>pulsar"), "{out}");
}
