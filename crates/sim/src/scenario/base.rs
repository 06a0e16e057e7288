//! `base_config`: the lb-config.json (or route file) the policies compile
//! against, given inline, by path (relative to the scenario), or `null`
//! for the permissive default; and the rule that `router.model` names a
//! model it lists.

use super::spans::Spans;
use routex::check::{self, did_you_mean};
use routex::config::json::Json;
use routex::diag::{Code, Diagnostic, Report, Span};
use routex::ir::{RouteTable, Target};
use std::path::Path;

/// The resolved base configuration.
pub(super) struct Base {
    /// `None` when it has errors.
    pub table: Option<RouteTable>,
    /// The report of a `base_config` file (errors or warnings).
    pub file_report: Option<Report>,
    /// How messages name it: `base_config`, or `base_config file PATH`.
    pub name: String,
    /// The permissive default (no `base_config`): every model alike.
    pub permissive: bool,
}

/// Reads `base_config` as the scenario gives it.
pub(super) fn resolve(
    text: &str,
    spans: &Spans,
    dir: Option<&Path>,
    target: Target,
    errors: &mut Vec<Diagnostic>,
) -> Base {
    let mut base = Base {
        table: None,
        file_report: None,
        name: "base_config".into(),
        permissive: false,
    };
    let Some(node) = spans.node("base_config") else {
        base.permissive = true;
        base.table = Some(check::permissive_table_for(target));
        return base;
    };
    match &node.value {
        Json::Null => {
            base.permissive = true;
            base.table = Some(check::permissive_table_for(target));
        }
        Json::Object(_) => {
            // Its own text, read as an lb-config.json, so its diagnostics
            // point at their keys inside the scenario.
            let offset = node.span.start;
            let json = text.get(node.span.start..node.span.end).unwrap_or_default();
            let (table, report) = routex::config::load_table_for("base_config.json", json, target);
            for d in report.diagnostics.iter().filter(|d| d.is_error()) {
                errors.push(Diagnostic {
                    span: Span::new(offset + d.span.start, offset + d.span.end),
                    message: format!("base_config: {}", d.message),
                    // The span is the key now, not the text the fix would replace.
                    suggestion: None,
                    ..d.clone()
                });
            }
            base.table = table.filter(|_| !report.has_errors());
        }
        Json::String(given) => {
            let path = match dir {
                Some(dir) => dir.join(given),
                None => Path::new(given).to_path_buf(),
            };
            let name = path.display().to_string();
            base.name = format!("base_config file {name}");
            let source = match routex::config::read_source(&path) {
                Ok(source) => source,
                Err(e) => {
                    errors.push(
                        Diagnostic::new(
                            Code::InvalidValue,
                            node.span,
                            format!("cannot read base_config: {e}"),
                        )
                        .with_help(
                            "a path is relative to the scenario file's directory; \
                             `*.routes` is read as a route file, anything else as lb-config.json",
                        ),
                    );
                    return base;
                }
            };
            let (table, report) = routex::config::load_table_for(&name, &source, target);
            if report.has_errors() {
                let n = report.errors();
                errors.push(Diagnostic::new(
                    Code::InvalidValue,
                    node.span,
                    format!(
                        "base_config file {name} has {n} error{} (reported with the file)",
                        if n == 1 { "" } else { "s" }
                    ),
                ));
            } else {
                base.table = table;
            }
            base.file_report = Some(report);
        }
        other => errors.push(Diagnostic::new(
            Code::InvalidType,
            node.span,
            format!(
                "invalid type: {}, expected an lb-config.json object, the path of an \
                 lb-config.json or route file, or null for `base_config`",
                other.type_name()
            ),
        )),
    }
    base
}

/// `router.model` must name a model the base configuration lists, as
/// `routex check --model` requires: an unlisted name silently simulates
/// the default policy. A configuration that lists no model (only a
/// `default`, or none at all) gives every model its default, so any name
/// is the same there. Returns whether the model is acceptable.
pub(super) fn check_model(
    model: &str,
    table: &RouteTable,
    base: &Base,
    spans: &Spans,
    errors: &mut Vec<Diagnostic>,
) -> bool {
    if base.permissive || table.models.is_empty() || table.models.contains_key(model) {
        return true;
    }
    let mut d = Diagnostic::new(
        Code::UnlistedModel,
        spans.value("router.model"),
        format!("model \"{model}\" is not listed in {}", base.name),
    );
    let listed = table.models.keys().map(String::as_str);
    d = match (model.len() <= 256)
        .then(|| did_you_mean(model, listed.clone()))
        .flatten()
    {
        Some(best) => d
            .with_help(format!("did you mean \"{best}\"?"))
            .with_suggestion(format!("\"{best}\"")),
        None => {
            let mut names: Vec<&str> = listed.take(11).collect();
            let more = names.len() > 10;
            names.truncate(10);
            d.with_help(format!(
                "listed models: {}{}",
                names.join(", "),
                if more { ", ..." } else { "" }
            ))
        }
    };
    errors.push(d);
    false
}
