//! The project configuration file, `routex.toml`: discovery, reading, and
//! what it does to a file's report (rule levels, per-path overrides,
//! suppressions). The command and the editor server both read it through
//! this crate, so the terminal, CI and the editor agree (docs/cli.md
//! "Project configuration"). A route file's suppression comments are the
//! core's (`routex::check::check_route_file` applies them); this crate adds
//! the configuration's suppressions and the levels.

mod discover;
mod paths;
mod read;
mod schema;
mod settings;

pub use discover::{discover, FILE_NAMES};
pub use paths::Globs;
pub use read::{parse, Project};
pub use schema::{schema, SCHEMA_ID};
pub use settings::{ExternalSuppression, Override, Settings, FORMATS};

use routex::diag::{Code, Diagnostic, Levels, Report, Span, SuppressionKind, SuppressionRule};
use std::path::Path;

/// What applies to one file's report, besides the project: the command
/// line's levels (which win over the file's).
#[derive(Clone, Debug, Default)]
pub struct Finish<'a> {
    /// `--allow`, `--warn`, `--deny`.
    pub cli: Option<&'a Levels>,
}

impl Project {
    /// The levels for `file` (`None` for inline sources): the file's
    /// `levels`, then every matching override in order, then `cli`.
    pub fn levels_for(&self, file: Option<&Path>, cli: Option<&Levels>) -> Levels {
        let mut levels = self.settings.levels.clone();
        if let Some(file) = file {
            let relative = self.relative(file);
            for entry in &self.settings.overrides {
                if paths::matches(&entry.files, &relative) {
                    levels.extend(&entry.levels);
                }
            }
        }
        if let Some(cli) = cli {
            levels.extend(cli);
        }
        levels
    }

    /// Whether `file` is excluded from directory searches.
    pub fn is_excluded(&self, file: &Path) -> bool {
        paths::matches(&self.settings.exclude, &self.relative(file))
    }

    fn relative(&self, file: &Path) -> String {
        paths::relative_to(&self.dir, file)
    }

    /// Applies the project to one file's report: the route file's
    /// suppression comments, the configuration's suppressions for the file,
    /// then the levels. `used` records, per `[[suppressions]]` entry,
    /// whether it applied to a file and whether it matched a finding (see
    /// [`Project::unused_suppressions`]).
    pub fn finish(
        &self,
        file: Option<&Path>,
        report: &mut Report,
        cli: Option<&Levels>,
        used: &mut [Use],
    ) {
        if let Some(file) = file {
            let relative = self.relative(file);
            let mut rules = Vec::new();
            let mut owners = Vec::new();
            let models = lb_config_models(&report.source_name, &report.text);
            for (i, entry) in self.settings.suppressions.iter().enumerate() {
                if !paths::matches(&entry.files, &relative) {
                    continue;
                }
                if let Some(u) = used.get_mut(i) {
                    *u = (*u).max(Use::Applied);
                }
                let scopes: Vec<Option<Span>> = if entry.models.is_empty() {
                    vec![None]
                } else {
                    entry
                        .models
                        .iter()
                        .filter_map(|m| {
                            models.iter().find(|(id, _)| id == m).map(|(_, s)| Some(*s))
                        })
                        .collect()
                };
                for scope in scopes {
                    rules.push(SuppressionRule {
                        codes: entry.codes.clone(),
                        scope,
                        at: None,
                        suppression: routex::diag::Suppression {
                            kind: SuppressionKind::External,
                            justification: entry.reason.clone(),
                        },
                    });
                    owners.push(i);
                }
            }
            let matched = routex::diag::suppress(report, &rules);
            for (owner, matched) in owners.into_iter().zip(matched) {
                if matched {
                    if let Some(u) = used.get_mut(owner) {
                        *u = Use::Matched;
                    }
                }
            }
        }
        self.levels_for(file, cli).apply(report);
    }

    /// `unused_suppression` for every `[[suppressions]]` entry that applied
    /// to a file linted but matched no finding there (an entry for files
    /// this run did not lint says nothing), in the configuration file's own
    /// report.
    pub fn unused_suppressions(&self, used: &[Use]) -> Report {
        let mut report = Report::new(self.report.source_name.clone(), self.report.text.clone());
        for (entry, used) in self.settings.suppressions.iter().zip(used) {
            if *used == Use::Applied {
                report.diagnostics.push(
                    Diagnostic::new(
                        Code::UnusedSuppression,
                        entry.span,
                        "this suppression matched no finding in the files it names",
                    )
                    .with_help("remove the entry, or correct its files, models or codes"),
                );
            }
        }
        self.settings.levels.apply(&mut report);
        report
    }
}

/// What a run did with one `[[suppressions]]` entry.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum Use {
    /// No file it names was checked.
    #[default]
    Unmatched,
    /// A file it names was checked, but no finding matched it.
    Applied,
    /// It suppressed at least one finding.
    Matched,
}

/// Finishes a report with or without a project, then the command line.
pub fn finish(
    project: Option<&Project>,
    file: Option<&Path>,
    report: &mut Report,
    cli: Option<&Levels>,
    used: &mut [Use],
) {
    match project {
        Some(project) => project.finish(file, report, cli, used),
        None => {
            if let Some(cli) = cli {
                cli.apply(report);
            }
        }
    }
}

/// Each model of an lb-config.json text with the span of its entry (key
/// to the end of its value), for per-model suppressions.
fn lb_config_models(name: &str, text: &str) -> Vec<(String, Span)> {
    use routex::config::json::{parse, Json};
    if name.ends_with(".routes") {
        return Vec::new();
    }
    let Ok(root) = parse(text) else {
        return Vec::new();
    };
    let Json::Object(members) = &root.value else {
        return Vec::new();
    };
    let Some(models) = members.iter().rfind(|m| m.key == "models") else {
        return Vec::new();
    };
    let Json::Object(models) = &models.value.value else {
        return Vec::new();
    };
    models
        .iter()
        .map(|m| (m.key.clone(), Span::new(m.key_span.start, m.value.span.end)))
        .collect()
}
