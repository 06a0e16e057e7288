//! Every renderer on the diagnostics catalogue fixtures
//! (`tests/inputs/diagnostics/CODE.{expr,routes,json}`, one failing input
//! per code). Each fixture must produce a diagnostic of the code it is named
//! after, and every code must have a fixture.
//!
//! How a fixture is run: `.expr` is checked as one expression (trailing
//! newline removed) against the permissive default, or, when it is named
//! `CODE.context.expr`, against the route file `context/CODE.routes`; if that
//! yields no diagnostic of the code, it is formatted in header form
//! (`not_representable_in_header`).
//! `.routes` is linted, then built (`default_with_arguments`). `.json` is
//! linted as lb-config.json, then imported (`not_representable_in_route_file`),
//! except `CODE.scenario.json`: a simulator scenario, loaded from the
//! fixtures' directory (relative to the crate, so that the reports of the
//! files it names carry a stable path); the report with the code is shown.
//! `.toml` is read as a project configuration (`routex.toml`); `.bin` is a
//! file `lint` cannot read (`unreadable_file`).
//! `CODE.TARGET.ext` (e.g. `no_queue_slo.widening.expr`) is checked for that
//! stargate target (docs/stargate.md 0.1), everything else for the newest.

use routex::diag::{Code, Report};
use routex::ir::Target;
use routex::render::{github, json, sarif};
use routex_cli::human;
use std::path::Path;

fn settings() -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("../../snapshots/cli");
    settings.set_prepend_module_to_snapshot(false);
    settings
}

fn dir() -> &'static Path {
    Path::new(concat!(
        concat!(env!("CARGO_MANIFEST_DIR"), "/../.."),
        "/tests/inputs/diagnostics"
    ))
}

/// The code a fixture is named after: the file name up to its first `.`.
fn code_of(path: &Path) -> Option<Code> {
    let name = path.file_name()?.to_str()?;
    let stem = name.split('.').next()?;
    Code::ALL.iter().copied().find(|c| c.as_str() == stem)
}

/// The stargate target a fixture names (`CODE.TARGET.ext`), else the newest.
fn target_of(path: &Path) -> Target {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    name.split('.')
        .nth(1)
        .and_then(Target::from_name)
        .unwrap_or(Target::NEWEST)
}

fn has(report: &Report, code: Option<Code>) -> bool {
    report.diagnostics.iter().any(|d| Some(d.code) == code)
}

/// The report a fixture produces (see the module documentation).
pub fn produce(path: &Path) -> Report {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let code = code_of(path);
    let target = target_of(path);
    match path.extension().and_then(|e| e.to_str()) {
        Some("toml") => routex_project::parse(&name, &text).report,
        Some("bin") => match routex_cli::lint::read_file(path) {
            Ok(Err(why)) => routex_cli::lint::unreadable(&name, &why),
            _ => Report::new(name, ""),
        },
        Some("expr") => {
            let expr = text.trim_end_matches(['\n', '\r']);
            let table = match code {
                Some(code) if name.ends_with(".context.expr") => {
                    let context = dir().join("context").join(format!("{code}.routes"));
                    let text = std::fs::read_to_string(&context).unwrap_or_default();
                    let (table, report) = routex::check::check_route_file("context.routes", &text);
                    assert!(!report.has_errors(), "{}: {:?}", context.display(), report);
                    table
                }
                _ => None,
            };
            let (_, report) =
                routex::check::check_expression_for(&name, expr, table.as_ref(), None, target);
            if has(&report, code) {
                return report;
            }
            match routex::syntax::format_expression(expr, true) {
                Err(diagnostics) => Report {
                    source_name: name,
                    text: expr.to_string(),
                    diagnostics,
                    suppressed: Vec::new(),
                },
                Ok(_) => report,
            }
        }
        Some("routes") => {
            let (_, report) = routex::check::check_route_file_for(&name, &text, target);
            if has(&report, code) {
                return report;
            }
            let (_, built) = routex::config::build_for(&name, &text, target);
            if has(&built, code) {
                built
            } else {
                report
            }
        }
        _ if name.ends_with(".scenario.json") => {
            let options = routex_sim::scenario::LoadOptions {
                dir: Some(Path::new("../../tests/inputs/diagnostics")),
                trace: None,
                stargate: Some(target),
            };
            match routex_sim::scenario::load_with(&name, &text, options) {
                Ok(prepared) => prepared.warnings,
                Err(failure) => {
                    let reports = failure.reports();
                    let pick = reports.iter().rposition(|r| has(r, code)).unwrap_or(0);
                    reports.into_iter().nth(pick).unwrap_or_default()
                }
            }
        }
        _ => {
            let (_, report) = routex::config::check_lb_config_for(&name, &text, target);
            if has(&report, code) {
                return report;
            }
            let (_, imported) = routex::config::import_for(&name, &text, target);
            if has(&imported, code) {
                imported
            } else {
                report
            }
        }
    }
}

/// Fixtures also shown in the github and sarif formats.
const EVERY_FORMAT: &[&str] = &[
    "not_applicable.expr",
    "deprecated_alias.expr",
    "invalid_json.json",
    "duplicate_model.routes",
];

#[test]
fn every_fixture_renders_in_every_format() {
    insta::glob!(
        "../../../../../tests/inputs/diagnostics",
        "*.{expr,routes,json,toml,bin}",
        |path| {
            let report = produce(path);
            let code = code_of(path);
            assert!(
                has(&report, code),
                "{} does not produce {:?}: {:?}",
                path.display(),
                code,
                report.diagnostics
            );
            let reports = [report];
            settings().bind(|| {
                insta::assert_snapshot!("human", human::render(&reports, human::Style::Plain));
                insta::assert_snapshot!("json", json::render(&reports));
                let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
                if EVERY_FORMAT.contains(&name) {
                    insta::assert_snapshot!("github", github::render(&reports));
                    insta::assert_snapshot!("sarif", sarif::render(&reports));
                }
            });
        }
    );
}

#[test]
fn every_code_has_a_fixture() {
    let covered: Vec<Code> = std::fs::read_dir(dir())
        .map(|entries| {
            entries
                .flatten()
                .filter(|e| e.path().is_file())
                .filter_map(|e| code_of(&e.path()))
                .collect()
        })
        .unwrap_or_default();
    let missing: Vec<&str> = Code::ALL
        .iter()
        .filter(|c| !covered.contains(c))
        .map(|c| c.as_str())
        .collect();
    assert!(
        missing.is_empty(),
        "no fixture in tests/inputs/diagnostics for {missing:?}"
    );
}

#[test]
fn no_snapshot_outlives_its_fixture() {
    let snapshots = Path::new(concat!(
        concat!(env!("CARGO_MANIFEST_DIR"), "/../.."),
        "/crates/cli/tests/snapshots/cli"
    ));
    let orphans: Vec<String> = std::fs::read_dir(snapshots)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter_map(|n| {
                    let fixture = n.split_once('@')?.1.strip_suffix(".snap")?.to_string();
                    (!dir().join(&fixture).is_file()).then_some(n)
                })
                .collect()
        })
        .unwrap_or_default();
    assert!(
        orphans.is_empty(),
        "snapshots without a fixture: {orphans:?}"
    );
}
