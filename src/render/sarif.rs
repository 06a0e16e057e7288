//! `--format sarif`: SARIF 2.1.0 as GitHub code scanning accepts it (docs/cli.md
//! "sarif" lists every property). One run, one rule per code that occurs
//! (in `Code::ALL` order), columns in UTF-16 code units (SARIF's default,
//! from the line index).
//!
//! Files are artifacts by URI: a relative path is a percent-encoded relative
//! reference against `%SRCROOT%` (the directory routex ran in), an absolute
//! one a `file:` URI. Inline sources (`arg:N` expressions, `<stdin>`) are
//! artifacts under `ROUTEX_INLINE` whose text is embedded in `run.artifacts`.
//!
//! The log is serialised straight from borrowed structs (field order is the
//! output's key order): results are produced one at a time while the writer
//! consumes them, so a result costs its own bytes and nothing is built per
//! result but its fingerprint's hash.

use super::{rules, uri, Locator, STDIN_NAME};
use crate::diag::{Code, Diagnostic, Report, Severity, Span, SuppressionKind};
use serde::ser::{SerializeSeq, Serializer};
use serde::Serialize;
use std::collections::HashMap;
use std::fmt;

/// The log's `$schema`: SARIF 2.1.0.
const SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";

/// The base of relative file paths.
const SRCROOT: &str = "%SRCROOT%";
/// The base of inline sources, which are not files.
const INLINE: &str = "ROUTEX_INLINE";

const SRCROOT_DESCRIPTION: &str = "The directory routex ran in.";
const INLINE_DESCRIPTION: &str = "Inputs given inline: expression arguments (arg:N) and standard input. They are not files; each artifact embeds its text.";

/// The log without knowing the working directory: `%SRCROOT%` is declared
/// but has no URI (used by tests and snapshots; the CLI passes its own).
pub fn to_value(reports: &[Report]) -> serde_json::Value {
    to_value_in(reports, None)
}

/// The log, with `working_directory` (an absolute path) as `%SRCROOT%` and
/// the invocation's working directory, so absolute `file:` URIs can be
/// mapped into the checkout.
pub fn to_value_in(reports: &[Report], working_directory: Option<&str>) -> serde_json::Value {
    let uris = source_uris(reports);
    serde_json::to_value(Log::new(reports, &uris, working_directory)).unwrap_or_default()
}

/// [`to_value`]'s log pretty-printed, with a trailing newline.
pub fn render(reports: &[Report]) -> String {
    render_in(reports, None)
}

/// [`to_value_in`]'s log pretty-printed, with a trailing newline.
pub fn render_in(reports: &[Report], working_directory: Option<&str>) -> String {
    let mut text = Vec::new();
    // Writing into a Vec fails only if serialisation does, which these
    // structs cannot (string keys, no non-finite floats).
    let _ = write_in(&mut text, reports, working_directory);
    String::from_utf8(text).unwrap_or_default()
}

/// Writes the pretty-printed log and a trailing newline to `out` as it is
/// serialised (what [`render_in`] returns).
pub fn write_in<W: std::io::Write>(
    mut out: W,
    reports: &[Report],
    working_directory: Option<&str>,
) -> std::io::Result<()> {
    let uris = source_uris(reports);
    serde_json::to_writer_pretty(&mut out, &Log::new(reports, &uris, working_directory))?;
    out.write_all(b"\n")
}

/// Whether a source name is inline text rather than a file path.
pub fn is_inline(name: &str) -> bool {
    name == STDIN_NAME
        || name
            .strip_prefix("arg:")
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

#[derive(Serialize)]
struct Log<'a> {
    #[serde(rename = "$schema")]
    schema: &'static str,
    version: &'static str,
    runs: [Run<'a>; 1],
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Run<'a> {
    tool: Tool,
    invocations: [Invocation; 1],
    original_uri_base_ids: BaseIds,
    artifacts: Vec<Artifact<'a>>,
    column_kind: &'static str,
    results: Results<'a>,
}

#[derive(Serialize)]
struct Tool {
    driver: Driver,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Driver {
    name: &'static str,
    version: &'static str,
    semantic_version: &'static str,
    information_uri: &'static str,
    rules: Vec<Rule>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Rule {
    id: &'static str,
    /// SARIF 3.49.7: a name equal to the id (ignoring case, as the
    /// Multitool compares: `unavailable`) is omitted.
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    short_description: Text<&'static str>,
    full_description: Text<String>,
    help: Help,
    help_uri: String,
    default_configuration: Configuration,
}

#[derive(Serialize)]
struct Text<T> {
    text: T,
}

#[derive(Serialize)]
struct Help {
    text: String,
    markdown: String,
}

#[derive(Serialize)]
struct Configuration {
    level: &'static str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Invocation {
    execution_successful: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    working_directory: Option<UriOnly>,
}

#[derive(Serialize)]
struct UriOnly {
    uri: String,
}

#[derive(Serialize)]
struct BaseIds {
    #[serde(rename = "%SRCROOT%")]
    srcroot: Base,
    #[serde(rename = "ROUTEX_INLINE")]
    inline: Base,
}

/// A base with a URI (the working directory) or only a description.
#[derive(Serialize)]
#[serde(untagged)]
enum Base {
    Uri(UriOnly),
    Described { description: Text<&'static str> },
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Artifact<'a> {
    location: ArtifactLocation<'a>,
    roles: [&'static str; 1],
    /// Inline sources embed their text.
    #[serde(skip_serializing_if = "Option::is_none")]
    contents: Option<Text<&'a str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<Text<&'a str>>,
}

/// Where a source is: its URI (computed once per report), its base and, in
/// a result, its index into `run.artifacts`.
#[derive(Clone, Copy, Serialize)]
#[serde(rename_all = "camelCase")]
struct ArtifactLocation<'a> {
    uri: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    uri_base_id: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    index: Option<usize>,
}

/// `run.results`, produced while serialising: a result is located,
/// fingerprinted and written before the next one is looked at.
struct Results<'a> {
    reports: &'a [Report],
    uris: &'a [String],
    /// Each code's index into `driver.rules` (by `slot`).
    rule_index: [usize; Code::ALL.len()],
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SarifResult<'a> {
    rule_id: &'static str,
    rule_index: usize,
    level: &'static str,
    message: Text<MessageText<'a>>,
    locations: [Location<'a>; 1],
    partial_fingerprints: Fingerprints,
    /// Only on a finding a suppression matched (SARIF 3.27.23; GitHub code
    /// scanning shows it as dismissed).
    #[serde(skip_serializing_if = "Option::is_none")]
    suppressions: Option<[SarifSuppression<'a>; 1]>,
}

#[derive(Serialize)]
struct SarifSuppression<'a> {
    /// `inSource` (a comment) or `external` (the project configuration).
    kind: &'static str,
    status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    justification: Option<&'a str>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Location<'a> {
    physical_location: PhysicalLocation<'a>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PhysicalLocation<'a> {
    artifact_location: ArtifactLocation<'a>,
    region: Region,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Region {
    start_line: usize,
    start_column: usize,
    end_line: usize,
    end_column: usize,
    byte_offset: usize,
    byte_length: usize,
}

/// `partialFingerprints`: one key, versioned when the fingerprint's inputs
/// change (docs/cli.md documents it for the readers of the log).
#[derive(Serialize)]
struct Fingerprints {
    #[serde(rename = "routexDiagnostic/v1")]
    v1: Fingerprint,
}

/// The message and its help, written into the JSON string as it is
/// escaped (no joined copy).
struct MessageText<'a>(&'a Diagnostic);

impl fmt::Display for MessageText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.message)?;
        if let Some(help) = &self.0.help {
            f.write_str("\nhelp: ")?;
            f.write_str(help)?;
        }
        Ok(())
    }
}

impl Serialize for MessageText<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// `hash:occurrence`, as `{hash:016x}:{count}`.
struct Fingerprint {
    hash: u64,
    count: usize,
}

impl Serialize for Fingerprint {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(&format_args!("{:016x}:{}", self.hash, self.count))
    }
}

impl<'a> Log<'a> {
    fn new(reports: &'a [Report], uris: &'a [String], working_directory: Option<&str>) -> Self {
        Log {
            schema: SCHEMA,
            version: "2.1.0",
            runs: [Run::new(reports, uris, working_directory)],
        }
    }
}

impl<'a> Run<'a> {
    fn new(reports: &'a [Report], uris: &'a [String], working_directory: Option<&str>) -> Self {
        // Which codes occur, in one pass; rules in `Code::ALL` order.
        let mut present = [false; Code::ALL.len()];
        for d in reports.iter().flat_map(|r| &r.diagnostics) {
            present[slot(d.code)] = true;
        }
        for s in reports.iter().flat_map(|r| &r.suppressed) {
            present[slot(s.diagnostic.code)] = true;
        }
        let mut rule_index = [0; Code::ALL.len()];
        let mut rules = Vec::new();
        for code in Code::ALL.iter().copied().filter(|c| present[slot(*c)]) {
            rule_index[slot(code)] = rules.len();
            rules.push(rule(code));
        }
        let artifacts = reports
            .iter()
            .zip(uris)
            .map(|(report, uri)| artifact(report, uri))
            .collect();
        let directory = working_directory.and_then(uri::directory_uri);
        let srcroot = match &directory {
            Some(dir) => Base::Uri(UriOnly { uri: dir.clone() }),
            None => Base::Described {
                description: Text {
                    text: SRCROOT_DESCRIPTION,
                },
            },
        };
        Run {
            tool: Tool {
                driver: Driver {
                    name: "routex",
                    version: env!("CARGO_PKG_VERSION"),
                    semantic_version: env!("CARGO_PKG_VERSION"),
                    information_uri: rules::REPOSITORY,
                    rules,
                },
            },
            invocations: [Invocation {
                execution_successful: true,
                working_directory: directory.map(|uri| UriOnly { uri }),
            }],
            original_uri_base_ids: BaseIds {
                srcroot,
                inline: Base::Described {
                    description: Text {
                        text: INLINE_DESCRIPTION,
                    },
                },
            },
            artifacts,
            column_kind: "utf16CodeUnits",
            results: Results {
                reports,
                uris,
                rule_index,
            },
        }
    }
}

impl Serialize for Results<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let total = self
            .reports
            .iter()
            .map(|r| r.diagnostics.len() + r.suppressed.len())
            .sum();
        let mut seq = serializer.serialize_seq(Some(total))?;
        for (index, (report, uri)) in self.reports.iter().zip(self.uris).enumerate() {
            if report.diagnostics.is_empty() && report.suppressed.is_empty() {
                continue;
            }
            let location = ArtifactLocation {
                index: Some(index),
                ..artifact_location(&report.source_name, uri)
            };
            let locator = Locator::new(report);
            let mut seen: HashMap<u64, usize> = HashMap::new();
            let findings = report.diagnostics.iter().map(|d| (d, None)).chain(
                report
                    .suppressed
                    .iter()
                    .map(|s| (&s.diagnostic, Some(&s.suppression))),
            );
            for (d, suppression) in findings {
                let at = locator.locate(d.span);
                let start = locator.index().position(at.span.start);
                let end = locator.index().position(at.span.end);
                seq.serialize_element(&SarifResult {
                    rule_id: d.code.as_str(),
                    rule_index: self.rule_index[slot(d.code)],
                    level: level(d.severity),
                    message: Text {
                        text: MessageText(d),
                    },
                    locations: [Location {
                        physical_location: PhysicalLocation {
                            artifact_location: location,
                            region: Region {
                                start_line: start.line,
                                start_column: start.utf16_column,
                                end_line: end.line,
                                end_column: end.utf16_column,
                                byte_offset: at.span.start,
                                byte_length: at.span.end - at.span.start,
                            },
                        },
                    }],
                    partial_fingerprints: Fingerprints {
                        v1: fingerprint(report, d, at.span, uri, &mut seen),
                    },
                    suppressions: suppression.map(|s| {
                        [SarifSuppression {
                            kind: match s.kind {
                                SuppressionKind::InSource => "inSource",
                                SuppressionKind::External => "external",
                            },
                            status: "accepted",
                            justification: s.justification.as_deref(),
                        }]
                    }),
                })?;
            }
        }
        seq.end()
    }
}

/// A code's position in `Code::ALL` (the enum is declared in that order;
/// a unit test checks it).
fn slot(code: Code) -> usize {
    code as usize
}

fn rule(code: Code) -> Rule {
    let name = rules::pascal_name(code);
    Rule {
        id: code.as_str(),
        name: (!name.eq_ignore_ascii_case(code.as_str())).then_some(name),
        short_description: Text {
            text: code.summary(),
        },
        full_description: Text {
            text: rules::description_text(code),
        },
        help: Help {
            text: rules::help_text(code),
            markdown: rules::help_markdown(code),
        },
        help_uri: rules::help_uri(code),
        default_configuration: Configuration {
            level: level(code.default_severity()),
        },
    }
}

/// Each report's artifact URI, once per source.
fn source_uris(reports: &[Report]) -> Vec<String> {
    reports
        .iter()
        .map(|report| {
            let name = &report.source_name;
            if is_inline(name) {
                uri::encode_path(name)
            } else {
                uri::file_uri(name).unwrap_or_else(|| uri::encode_path(name))
            }
        })
        .collect()
}

/// The `artifactLocation` of a source, without its index.
fn artifact_location<'a>(name: &str, uri: &'a str) -> ArtifactLocation<'a> {
    let uri_base_id = if is_inline(name) {
        Some(INLINE)
    } else if uri::file_uri(name).is_some() {
        None
    } else {
        Some(SRCROOT)
    };
    ArtifactLocation {
        uri,
        uri_base_id,
        index: None,
    }
}

fn artifact<'a>(report: &'a Report, uri: &'a str) -> Artifact<'a> {
    let inline = is_inline(&report.source_name);
    Artifact {
        location: artifact_location(&report.source_name, uri),
        roles: ["analysisTarget"],
        contents: inline.then_some(Text {
            text: report.text.as_str(),
        }),
        description: inline.then_some(Text {
            text: report.source_name.as_str(),
        }),
    }
}

/// A hash of what the diagnostic is, not where: the artifact, the code, the
/// message and the text it points at, plus the occurrence count of that
/// combination in the source. Editing other lines, or shifting this one,
/// keeps it; two runs over the same input give the same value.
fn fingerprint(
    report: &Report,
    d: &Diagnostic,
    span: Span,
    uri: &str,
    seen: &mut HashMap<u64, usize>,
) -> Fingerprint {
    // At most 256 bytes of it: a span over a whole file must not make
    // every fingerprint cost the file.
    let mut end = span.end.min(span.start + 256);
    while !report.text.is_char_boundary(end) {
        end -= 1;
    }
    let pointed = report.text.get(span.start..end).unwrap_or("");
    // Streamed: the same hash as of the parts joined by NUL bytes.
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    for part in [uri, d.code.as_str(), &d.message, pointed] {
        hasher.update(part.as_bytes());
        hasher.update(&[0]);
    }
    let hash = hasher.digest();
    let count = seen.entry(hash).or_insert(0);
    *count += 1;
    Fingerprint {
        hash,
        count: *count,
    }
}

fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_follow_code_all() {
        for (i, code) in Code::ALL.iter().enumerate() {
            assert_eq!(slot(*code), i, "{code}");
        }
    }
}
