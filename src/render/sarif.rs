//! `--format sarif`: SARIF 2.1.0 as GitHub code scanning accepts it (docs/cli.md
//! "sarif" lists every property). One run, one rule per code that occurs
//! (in `Code::ALL` order), columns in UTF-16 code units (SARIF's default,
//! from the line index).
//!
//! Files are artifacts by URI: a relative path is a percent-encoded relative
//! reference against `%SRCROOT%` (the directory routex ran in), an absolute
//! one a `file:` URI. Inline sources (`arg:N` expressions, `<stdin>`) are
//! artifacts under `ROUTEX_INLINE` whose text is embedded in `run.artifacts`.

use super::{rules, uri, Locator, STDIN_NAME};
use crate::diag::{Code, Diagnostic, Report, Severity, Span};
use serde_json::{json, Map, Value};
use std::collections::HashMap;

pub const SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";

/// The base of relative file paths.
pub const SRCROOT: &str = "%SRCROOT%";
/// The base of inline sources, which are not files.
pub const INLINE: &str = "ROUTEX_INLINE";
/// The `partialFingerprints` key (version it when its inputs change).
pub const FINGERPRINT: &str = "routexDiagnostic/v1";

/// The log without knowing the working directory: `%SRCROOT%` is declared
/// but has no URI (used by tests and snapshots; the CLI passes its own).
pub fn to_value(reports: &[Report]) -> Value {
    to_value_in(reports, None)
}

/// The log, with `working_directory` (an absolute path) as `%SRCROOT%` and
/// the invocation's working directory, so absolute `file:` URIs can be
/// mapped into the checkout.
pub fn to_value_in(reports: &[Report], working_directory: Option<&str>) -> Value {
    let used: Vec<Code> = Code::ALL
        .iter()
        .copied()
        .filter(|code| {
            reports
                .iter()
                .any(|r| r.diagnostics.iter().any(|d| d.code == *code))
        })
        .collect();
    let rules: Vec<Value> = used.iter().map(|code| rule(*code)).collect();
    let mut artifacts = Vec::with_capacity(reports.len());
    let mut results = Vec::new();
    for (index, report) in reports.iter().enumerate() {
        let location = artifact_location(&report.source_name, index);
        artifacts.push(artifact(report, &location));
        if report.diagnostics.is_empty() {
            continue;
        }
        let locator = Locator::new(report);
        let mut seen: HashMap<u64, usize> = HashMap::new();
        for d in &report.diagnostics {
            let rule_index = used.iter().position(|c| *c == d.code).unwrap_or(0);
            let at = locator.locate(d.span);
            let fingerprint = fingerprint(report, d, at.span, &location, &mut seen);
            let start = locator.index().position(at.span.start);
            let end = locator.index().position(at.span.end);
            let region = json!({
                "startLine": start.line,
                "startColumn": start.utf16_column,
                "endLine": end.line,
                "endColumn": end.utf16_column,
                "byteOffset": at.span.start,
                "byteLength": at.span.end - at.span.start,
            });
            results.push(result(d, rule_index, &location, region, fingerprint));
        }
    }
    let mut bases = Map::new();
    let srcroot = match working_directory.and_then(uri::directory_uri) {
        Some(dir) => json!({"uri": dir}),
        None => json!({"description": {"text": "The directory routex ran in."}}),
    };
    bases.insert(SRCROOT.into(), srcroot);
    bases.insert(
        INLINE.into(),
        json!({"description": {"text": "Inputs given inline: expression arguments (arg:N) and standard input. They are not files; each artifact embeds its text."}}),
    );
    let mut invocation = json!({"executionSuccessful": true});
    if let Some(dir) = working_directory.and_then(uri::directory_uri) {
        invocation["workingDirectory"] = json!({"uri": dir});
    }
    json!({
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "routex",
                "version": env!("CARGO_PKG_VERSION"),
                "semanticVersion": env!("CARGO_PKG_VERSION"),
                "informationUri": rules::REPOSITORY,
                "rules": rules,
            }},
            "invocations": [invocation],
            "originalUriBaseIds": bases,
            "artifacts": artifacts,
            "columnKind": "utf16CodeUnits",
            "results": results,
        }],
    })
}

pub fn render(reports: &[Report]) -> String {
    render_in(reports, None)
}

pub fn render_in(reports: &[Report], working_directory: Option<&str>) -> String {
    let value = to_value_in(reports, working_directory);
    let mut text = serde_json::to_string_pretty(&value).unwrap_or_default();
    text.push('\n');
    text
}

/// Whether a source name is inline text rather than a file path.
pub fn is_inline(name: &str) -> bool {
    name == STDIN_NAME
        || name
            .strip_prefix("arg:")
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

fn rule(code: Code) -> Value {
    let help_uri = rules::help_uri(code);
    let text = rules::description_text(code);
    let mut rule = Map::new();
    rule.insert("id".into(), code.as_str().into());
    // SARIF 3.49.7: a name equal to the id (ignoring case, as the
    // Multitool compares: `unavailable`) is omitted.
    let name = rules::pascal_name(code);
    if !name.eq_ignore_ascii_case(code.as_str()) {
        rule.insert("name".into(), name.into());
    }
    let rest = json!({
        "shortDescription": {"text": code.summary()},
        "fullDescription": {"text": text},
        "help": {
            "text": format!("{text}\n\nSee docs/diagnostics.md#{} ({help_uri}).", code.as_str()),
            "markdown": format!(
                "{}\n\nSee [`{}` in docs/diagnostics.md]({help_uri}).",
                rules::description_markdown(code),
                code.as_str()
            ),
        },
        "helpUri": help_uri,
        "defaultConfiguration": {"level": level(code.default_severity())},
    });
    if let Value::Object(rest) = rest {
        rule.extend(rest);
    }
    Value::Object(rule)
}

/// The `artifactLocation` of a source (with its index into `artifacts`).
fn artifact_location(name: &str, index: usize) -> Value {
    if is_inline(name) {
        json!({"uri": uri::encode_path(name), "uriBaseId": INLINE, "index": index})
    } else if let Some(absolute) = uri::file_uri(name) {
        json!({"uri": absolute, "index": index})
    } else {
        json!({"uri": uri::encode_path(name), "uriBaseId": SRCROOT, "index": index})
    }
}

fn artifact(report: &Report, location: &Value) -> Value {
    let mut location = location.clone();
    if let Some(map) = location.as_object_mut() {
        map.remove("index");
    }
    let mut artifact = json!({"location": location, "roles": ["analysisTarget"]});
    if is_inline(&report.source_name) {
        artifact["contents"] = json!({"text": report.text});
        artifact["description"] = json!({"text": report.source_name});
    }
    artifact
}

fn result(
    d: &Diagnostic,
    rule_index: usize,
    location: &Value,
    region: Value,
    fingerprint: String,
) -> Value {
    let mut text = d.message.clone();
    if let Some(help) = &d.help {
        text.push_str("\nhelp: ");
        text.push_str(help);
    }
    json!({
        "ruleId": d.code.as_str(),
        "ruleIndex": rule_index,
        "level": level(d.severity),
        "message": {"text": text},
        "locations": [{
            "physicalLocation": {"artifactLocation": location, "region": region}
        }],
        "partialFingerprints": {FINGERPRINT: fingerprint},
    })
}

/// A hash of what the diagnostic is, not where: the artifact, the code, the
/// message and the text it points at, plus the occurrence count of that
/// combination in the source. Editing other lines, or shifting this one,
/// keeps it; two runs over the same input give the same value.
fn fingerprint(
    report: &Report,
    d: &Diagnostic,
    span: Span,
    location: &Value,
    seen: &mut HashMap<u64, usize>,
) -> String {
    // At most 256 bytes of it: a span over a whole file must not make
    // every fingerprint cost the file.
    let mut end = span.end.min(span.start + 256);
    while !report.text.is_char_boundary(end) {
        end -= 1;
    }
    let pointed = report.text.get(span.start..end).unwrap_or("");
    let mut key = Vec::new();
    for part in [
        location["uri"].as_str().unwrap_or(""),
        d.code.as_str(),
        &d.message,
        pointed,
    ] {
        key.extend_from_slice(part.as_bytes());
        key.push(0);
    }
    let hash = xxhash_rust::xxh3::xxh3_64(&key);
    let count = seen.entry(hash).or_insert(0);
    *count += 1;
    format!("{hash:016x}:{count}")
}

fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
    }
}
