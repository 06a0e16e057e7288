//! What the checker says about one document text: the same report `routex
//! lint` prints (or `routex sim`'s scenario checks), the route table when
//! the text has no error, and the syntax tree hover and fixes read. Each
//! part is computed when first needed.

use super::kind::{Kind, MAX_CHECKED_BYTES};
use routex::config::json::{self, Node};
use routex::diag::Report;
use routex::ir::RouteTable;
use routex::syntax::ast::RouteFile;
use std::cell::OnceCell;

pub struct Analysis {
    /// Every diagnostic; empty for [`Kind::Other`].
    pub report: Report,
    /// The table of an lb-config.json or route file without errors.
    pub table: Option<RouteTable>,
    /// Whether the text was too large to check.
    pub too_large: bool,
    /// The stargate target it was checked for: the command line's, else
    /// its project configuration's `stargate`, else the newest.
    pub target: routex::ir::Target,
    kind: Kind,
    text_len: usize,
    json: OnceCell<Option<Node>>,
    routes: OnceCell<RouteFile>,
}

impl Analysis {
    /// Checks `text`; `path` (the file on disk) selects the project
    /// configuration, read afresh so a changed `routex.toml` applies at
    /// once.
    pub fn new(kind: Kind, name: &str, text: &str, path: Option<&std::path::Path>) -> Self {
        let too_large = text.len() > MAX_CHECKED_BYTES && kind != Kind::Other;
        let project = path.and_then(project_of);
        let target = crate::chosen_target()
            .or_else(|| project.as_ref().and_then(|p| p.settings.stargate))
            .unwrap_or(routex::ir::Target::NEWEST);
        let (table, report) = match kind {
            _ if too_large => (None, Report::new(name, "")),
            Kind::Routes => routex::check::check_route_file_for(name, text, target),
            Kind::Config => routex::config::check_lb_config_for(name, text, target),
            Kind::Scenario => (None, scenario_report(name, text)),
            Kind::Other => (None, Report::new(name, "")),
        };
        let mut report = report;
        if let (Some(path), Kind::Routes | Kind::Config) = (path, kind) {
            apply_project(project.as_ref(), path, &mut report);
        }
        // The report's copy of the text is not needed: the document has it.
        let report = Report {
            text: String::new(),
            ..report
        };
        Analysis {
            report,
            table,
            too_large,
            target,
            kind,
            text_len: text.len(),
            json: OnceCell::new(),
            routes: OnceCell::new(),
        }
    }

    /// The JSON tree of a JSON document, when it parses.
    pub fn json<'a>(&'a self, text: &str) -> Option<&'a Node> {
        debug_assert_eq!(text.len(), self.text_len);
        if !matches!(self.kind, Kind::Config | Kind::Scenario) {
            return None;
        }
        self.json.get_or_init(|| json::parse(text).ok()).as_ref()
    }

    /// The route-file tree (with error recovery, so a file with syntax
    /// errors still has its other items).
    pub fn routes<'a>(&'a self, text: &str) -> Option<&'a RouteFile> {
        if self.kind != Kind::Routes {
            return None;
        }
        Some(
            self.routes
                .get_or_init(|| routex::syntax::parse_route_file(text).0),
        )
    }
}

/// The project configuration of the file at `path`, read afresh.
fn project_of(path: &std::path::Path) -> Option<routex_project::Project> {
    let dir = path.parent().unwrap_or(path);
    routex_project::Project::load(&routex_project::discover(dir)?).ok()
}

/// The project configuration of `path`, as `routex lint` applies it: its
/// suppressions and levels (its own problems are `routex lint`'s to report).
fn apply_project(
    project: Option<&routex_project::Project>,
    path: &std::path::Path,
    report: &mut Report,
) {
    let Some(project) = project else {
        return;
    };
    let mut used = vec![routex_project::Use::Unmatched; project.settings.suppressions.len()];
    project.finish(Some(path), report, None, &mut used);
}

fn scenario_report(name: &str, text: &str) -> Report {
    match routex_sim::scenario::load(name, text) {
        Ok(prepared) => prepared.warnings,
        Err(report) => report,
    }
}
