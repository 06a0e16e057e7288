//! lb-config.json in and out: reading with stargate's start-up rules (every
//! diagnostic points into the JSON text), writing for `routex build`, and the
//! route file of a configuration for `routex import`.

mod entry;
mod file;
pub mod json;
mod locate;
mod read;
mod write;

use crate::diag::{Code, Diagnostic, Report};
use crate::ir::{RouteTable, Target};

pub use file::io_reason as file_io_reason;
pub use file::{load_table_path, load_table_path_for, read_source, LoadError, MAX_INPUT_BYTES};
pub use read::{check_lb_config, check_lb_config_for};
pub use write::{entry_json, expression_text};

/// Whether a JSON text is meant as an lb-config.json, judged by content:
/// a non-empty object needs one of its keys (`default`,
/// `request_algorithms`, `models`); an empty object counts, and so does a
/// text that is not JSON at all (so its `invalid_json` is reported). Other
/// JSON (a simulator scenario, a decide input) is not. `routex lint` and
/// the editor server decide with this one rule.
pub fn looks_like_lb_config(text: &str) -> bool {
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(serde_json::Value::Object(map)) => {
            map.is_empty()
                || ["default", "request_algorithms", "models"]
                    .iter()
                    .any(|key| map.contains_key(*key))
        }
        Ok(_) | Err(_) => true,
    }
}

/// The `$id` of the lb-config.json schema `routex schema` prints.
pub const SCHEMA_ID: &str = concat!(
    env!("CARGO_PKG_REPOSITORY"),
    "/blob/main/docs/lb-config.schema.json"
);

/// The file name the schema is saved under (docs/cli.md "routex schema").
pub const SCHEMA_FILE: &str = "lb-config.schema.json";

/// Whether a `$schema` value names routex's lb-config.json schema: its
/// [`SCHEMA_ID`], or a path or URL whose last segment is [`SCHEMA_FILE`].
/// The one rule for `$schema`: the editor server reads a JSON file that
/// names it as an lb-config.json, and the checker, which rejects the key
/// as stargate does (docs/stargate.md 4.1: unknown top-level fields are
/// rejected), says where such a reference belongs instead.
pub fn names_routex_schema(value: &str) -> bool {
    let value = value.trim();
    let path = value.split(['#', '?']).next().unwrap_or(value);
    value == SCHEMA_ID || path.rsplit(['/', '\\']).next() == Some(SCHEMA_FILE)
}

/// Loads a route table from either format: `*.routes` as a route file,
/// anything else as lb-config.json; for the newest stargate.
pub fn load_table(source_name: &str, text: &str) -> (Option<RouteTable>, Report) {
    load_table_for(source_name, text, Target::NEWEST)
}

/// [`load_table`] for the stargate `target`.
pub fn load_table_for(
    source_name: &str,
    text: &str,
    target: Target,
) -> (Option<RouteTable>, Report) {
    if source_name.ends_with(".routes") {
        crate::check::check_route_file_for(source_name, text, target)
    } else {
        check_lb_config_for(source_name, text, target)
    }
}

/// `routex build`: a route file's text to lb-config.json text, for the
/// newest stargate.
pub fn build(source_name: &str, text: &str) -> (Option<String>, Report) {
    build_for(source_name, text, Target::NEWEST)
}

/// [`build`] for the stargate `target`.
pub fn build_for(source_name: &str, text: &str, target: Target) -> (Option<String>, Report) {
    let mut report = Report::new(source_name, text);
    let (file, syntax_errors) = crate::syntax::parse_route_file(text);
    report.diagnostics.extend(syntax_errors);
    let (table, diagnostics) = crate::check::check_route_ast_for(&file, target);
    report.diagnostics.extend(diagnostics);
    // stargate's `default` is a bare name: settings cannot be carried.
    for item in &file.items {
        if let crate::syntax::ast::Item::Default { expr, .. } = item {
            if !expr.args.is_empty() {
                report.diagnostics.push(
                    Diagnostic::new(
                        Code::DefaultWithArguments,
                        expr.span,
                        format!(
                            "`default = {}` has arguments, but lb-config.json's `default` is a name only",
                            expr.method.node
                        ),
                    )
                    .with_help(format!(
                        "write `default = {}` and move the settings into `model` entries",
                        expr.method.node
                    )),
                );
            }
        }
    }
    let json = table
        .filter(|_| !report.has_errors())
        .map(|t| write::table_json(&t));
    (json, report)
}

/// `routex import`: an lb-config.json text to route-file text, for the
/// newest stargate.
pub fn import(source_name: &str, text: &str) -> (Option<String>, Report) {
    import_for(source_name, text, Target::NEWEST)
}

/// [`import`] for the stargate `target`.
pub fn import_for(source_name: &str, text: &str, target: Target) -> (Option<String>, Report) {
    let (table, mut report) = check_lb_config_for(source_name, text, target);
    if let Some(t) = &table {
        report.diagnostics.extend(locate::inexpressible(t, text));
    }
    let table = table.filter(|_| !report.has_errors());
    // The syntax layer's printer owns the canonical layout (line breaks of
    // long argument lists); its input here is always valid.
    let routes = table.map(|t| {
        let plain = write::table_routes(&t);
        crate::syntax::format_route_file(&plain).unwrap_or(plain)
    });
    (routes, report)
}
