//! The published examples of docs/configuration.md: every ```json lb-config
//! block loads without errors (reference 7.4
//! `published_load_balancer_configuration_examples_parse`).

use super::load;

/// The bodies of the fenced blocks whose info string is `info`.
pub fn fenced_blocks(markdown: &str, info: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in markdown.lines() {
        match current.as_mut() {
            Some(body) if line.trim_start().starts_with("```") => {
                blocks.push(std::mem::take(body));
                current = None;
            }
            Some(body) => {
                body.push_str(line);
                body.push('\n');
            }
            None if line.trim_start().strip_prefix("```").map(str::trim) == Some(info) => {
                current = Some(String::new());
            }
            None => {}
        }
    }
    blocks
}

fn configuration_md() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/configuration.md");
    std::fs::read_to_string(path).expect("docs/configuration.md")
}

#[test]
fn published_load_balancer_configuration_examples_parse() {
    let blocks = fenced_blocks(&configuration_md(), "json lb-config");
    assert_eq!(blocks.len(), 2);
    for block in blocks {
        let (table, report) = load(&block);
        assert!(table.is_some(), "{block}\n{:?}", report.diagnostics);
        assert!(report.diagnostics.is_empty(), "{:?}", report.diagnostics);
    }
}

#[test]
fn null_means_unset_only_for_optional_fields() {
    let (table, report) = load(
        r#"{"models": {"m": {"algorithm": "wait-and-widen", "max_queue_time_floor_ms": null,
            "max_input_work_seconds": null, "band_widen_interval_ms": null}}}"#,
    );
    // band_widen_interval_ms: null leaves it unset, so WW builds.
    assert!(report.diagnostics.is_empty(), "{:?}", report.diagnostics);
    let fields = &table.expect("loads").models["m"].definition.config.fields;
    assert_eq!(fields.max_queue_time_floor_ms, None);
    let (table, _) = load(r#"{"models": {"m": {"algorithm": "wait-and-widen", "n": null}}}"#);
    assert!(table.is_none());
}

fn read(relative: &str) -> String {
    let path = format!("{}/{relative}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn documented_route_files_check_without_errors() {
    let blocks = fenced_blocks(&configuration_md(), "routes");
    assert_eq!(blocks.len(), 1);
    for block in blocks {
        let (table, report) = routex::check::check_route_file("docs.routes", &block);
        assert!(table.is_some(), "{block}\n{:?}", report.diagnostics);
        assert!(report.diagnostics.is_empty(), "{:?}", report.diagnostics);
    }
}

#[test]
fn the_fleet_example_lints_clean_and_builds_to_the_shipped_json() {
    let routes = read("examples/fleet.routes");
    let (table, report) = routex::check::check_route_file("examples/fleet.routes", &routes);
    assert!(report.diagnostics.is_empty(), "{:?}", report.diagnostics);
    let table = table.expect("checks");
    assert_eq!(table.models.len(), 5);
    let (json, report) = routex::config::build("examples/fleet.routes", &routes);
    assert!(report.diagnostics.is_empty(), "{:?}", report.diagnostics);
    let shipped = read("examples/lb-config.json");
    assert_eq!(json.as_deref(), Some(shipped.as_str()));
    let (from_json, report) = load(&shipped);
    assert!(report.diagnostics.is_empty(), "{:?}", report.diagnostics);
    assert_eq!(from_json, Some(table));
}
