//! Suppression comments in route files: `# routex: allow(CODE, ...) -- reason`.
//!
//! A comment after an entry's text on the same line suppresses the findings
//! that start on that line; a comment alone on its line suppresses the
//! findings inside the next entry (a `default`, an `allow`, or a whole
//! `model` block with its nested `allow`s). A `# routex:` comment that does
//! not parse is `invalid_suppression`; a code it names that matches nothing
//! is `unused_suppression` (docs/diagnostics.md). Errors of fixed codes
//! cannot be suppressed: stargate would still reject the input.

use crate::diag::{
    suppress, Code, Diagnostic, LineIndex, Report, Span, Suppression, SuppressionKind,
    SuppressionRule, CODES,
};
use crate::syntax::ast::{Item, RouteFile};

/// The marker that makes a comment a suppression.
pub const MARKER: &str = "routex:";

/// The form a suppression comment takes, for help texts.
pub const FORM: &str = "# routex: allow(CODE, ...) -- reason";

/// Every suppression comment of a route file, with the diagnostics of the
/// malformed ones.
pub fn route_file_suppressions(
    text: &str,
    file: &RouteFile,
) -> (Vec<SuppressionRule>, Vec<Diagnostic>) {
    let entries = entry_spans(file);
    let index = LineIndex::new(text);
    let mut rules = Vec::new();
    let mut problems = Vec::new();
    let mut line_start = 0;
    for line in text.split_inclusive('\n') {
        let start = line_start;
        line_start += line.len();
        let Some(hash) = comment_start(line) else {
            continue;
        };
        let body = &line[hash + 1..];
        let trimmed = body.trim_start();
        let Some(rest) = trimmed.strip_prefix(MARKER) else {
            continue;
        };
        let comment = Span::new(start + hash, start + line.trim_end().len());
        let rest_at = start + hash + 1 + (body.len() - trimmed.len()) + MARKER.len();
        let standalone = line[..hash].trim().is_empty();
        let scope = if standalone {
            // The next entry starting after this line, if any.
            entries
                .iter()
                .find(|e| e.start >= line_start)
                .copied()
                .unwrap_or(Span::new(line_start, line_start))
        } else {
            let line_number = index.position(start).line;
            index
                .line_span(line_number)
                .unwrap_or(Span::new(start, line_start))
        };
        match parse(rest, rest_at) {
            Ok((codes, justification)) => {
                for (code, span) in codes {
                    match check_code(code, span) {
                        Ok(code) => rules.push(SuppressionRule {
                            codes: vec![code],
                            scope: Some(scope),
                            at: Some(span),
                            suppression: Suppression {
                                kind: SuppressionKind::InSource,
                                justification: justification.clone(),
                            },
                        }),
                        Err(d) => problems.push(d),
                    }
                }
            }
            Err(d) => {
                problems.push(d.with_label(format!("in `{}`", &text[comment.start..comment.end])))
            }
        }
    }
    (rules, problems)
}

/// Applies a route file's suppression comments to its report: matched
/// findings move to `report.suppressed`, malformed comments and unused
/// codes are added as findings.
pub fn apply_route_file_suppressions(report: &mut Report, file: &RouteFile) {
    let (rules, problems) = route_file_suppressions(&report.text, file);
    let used = suppress(report, &rules);
    report.diagnostics.extend(problems);
    for (rule, used) in rules.iter().zip(used) {
        if used {
            continue;
        }
        let code = rule.codes.first().map_or("", |c| c.as_str());
        let at = rule.at.unwrap_or_default();
        report.diagnostics.push(
            Diagnostic::new(
                Code::UnusedSuppression,
                at,
                format!("the suppression of {code} matched no finding"),
            )
            .with_help("remove it, or move it to the line or the entry of the finding"),
        );
    }
    report.diagnostics.sort_by_key(|d| d.span.start);
}

/// The byte offset of the `#` that starts a comment on `line`, outside
/// string literals.
fn comment_start(line: &str) -> Option<usize> {
    let mut in_string = false;
    let mut escaped = false;
    for (i, c) in line.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if in_string => escaped = true,
            '"' => in_string = !in_string,
            '#' if !in_string => return Some(i),
            _ => {}
        }
    }
    None
}

/// `allow(a, b) -- reason` after the marker; `at` is its byte offset.
#[allow(clippy::type_complexity)]
fn parse(rest: &str, at: usize) -> Result<(Vec<(&str, Span)>, Option<String>), Diagnostic> {
    let malformed = |message: &str| {
        Diagnostic::new(
            Code::InvalidSuppression,
            Span::new(at, at + rest.trim_end().len()),
            message,
        )
        .with_help(format!("a suppression reads `{FORM}`"))
    };
    let lead = rest.len() - rest.trim_start().len();
    let body = rest.trim_start();
    let Some(args) = body.strip_prefix("allow") else {
        return Err(malformed(
            "a `# routex:` comment must say `allow(CODE, ...)`",
        ));
    };
    let args = args.trim_start();
    let Some(inner) = args.strip_prefix('(') else {
        return Err(malformed("`allow` must be followed by `(CODE, ...)`"));
    };
    let Some(close) = inner.find(')') else {
        return Err(malformed("`allow(` is not closed with `)`"));
    };
    let inner_at = at + lead + body.len() - inner.len();
    let mut codes = Vec::new();
    let mut offset = 0;
    for part in inner[..close].split(',') {
        let word = part.trim();
        let word_at = inner_at + offset + (part.len() - part.trim_start().len());
        offset += part.len() + 1;
        if word.is_empty() {
            return Err(malformed("`allow()` names no code"));
        }
        codes.push((word, Span::new(word_at, word_at + word.len())));
    }
    let after = inner[close + 1..].trim();
    let justification = if after.is_empty() {
        None
    } else if let Some(reason) = after.strip_prefix("--") {
        Some(reason.trim().to_string()).filter(|r| !r.is_empty())
    } else {
        return Err(malformed("text after `allow(...)` must start with `--`"));
    };
    Ok((codes, justification))
}

/// A named code that may be suppressed, or why not.
fn check_code(name: &str, span: Span) -> Result<Code, Diagnostic> {
    match Code::from_name(name) {
        Some(code) if code.info().fixed.is_some() => Err(Diagnostic::new(
            Code::InvalidSuppression,
            span,
            format!(
                "{name} cannot be suppressed: it is always `{}` ({})",
                code.default_level().name(),
                code.info().fixed.unwrap_or("fixed")
            ),
        )),
        Some(code) => Ok(code),
        None => {
            let mut d = Diagnostic::new(
                Code::InvalidSuppression,
                span,
                format!("unknown diagnostic code `{name}`"),
            );
            let near = (name.len() <= 64)
                .then(|| super::did_you_mean(name, CODES.iter().map(|c| c.name)))
                .flatten();
            match near {
                Some(near) => {
                    d = d
                        .with_help(format!("did you mean `{near}`?"))
                        .with_suggestion(near);
                }
                None => d = d.with_help("the codes are listed in docs/diagnostics.md"),
            }
            Err(d)
        }
    }
}

/// The spans of every entry, in source order: top-level items and, after
/// each model, its nested `allow`s.
fn entry_spans(file: &RouteFile) -> Vec<Span> {
    let mut spans = Vec::new();
    for item in &file.items {
        match item {
            Item::Default { span, .. } => spans.push(*span),
            Item::Allow(allow) => spans.push(allow.span),
            Item::Model { allows, span, .. } => {
                spans.push(*span);
                spans.extend(allows.iter().map(|a| a.span));
            }
        }
    }
    spans.sort_by_key(|s| s.start);
    spans
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_start_outside_strings() {
        assert_eq!(comment_start(r#"model "a#b" = x # c"#), Some(16));
        assert_eq!(comment_start(r##"model "a\"#" = x"##), None);
        assert_eq!(comment_start("# only"), Some(0));
    }

    #[test]
    fn parses_codes_and_reason() {
        let (codes, reason) =
            parse(" allow(no_queue_slo, deprecated_alias) -- on purpose", 10).unwrap();
        let names: Vec<_> = codes.iter().map(|(n, _)| *n).collect();
        assert_eq!(names, ["no_queue_slo", "deprecated_alias"]);
        assert_eq!(codes[0].1, Span::new(17, 29));
        assert_eq!(reason.as_deref(), Some("on purpose"));
        assert!(parse(" allow no_queue_slo", 0).is_err());
        assert!(parse(" allow(no_queue_slo) because", 0).is_err());
        assert!(parse(" allow()", 0).is_err());
    }
}
