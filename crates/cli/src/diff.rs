//! `routex diff OLD NEW` and `routex diff --git REV[..REV2] FILE`: what a
//! configuration change does, per model (docs/cli.md "routex diff"). The
//! comparison is the library's (`routex::diff`); this file reads the two
//! inputs, refuses a mismatch of kinds, and prints diagnostics instead of a
//! diff when an input has errors.

use super::input::{read_text, source_name, UsageError};
use super::output::{self, emit, usage_error, Stream};
use super::{git, Format};
use clap::{Args, ValueEnum};
use routex::config::{load_table_for, looks_like_lb_config};
use routex::diag::Report;
use routex::render::diff as render;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct DiffArgs {
    /// Compare git revisions of FILE: `REV` (REV's version against the
    /// working file), `REV..REV2` (two revisions) or `REV...REV2` (REV2
    /// against the merge base, as `git diff` reads it), via `git show`.
    #[arg(long, value_name = "REV[..REV2]")]
    pub git: Option<String>,
    #[arg(long, value_enum, default_value_t)]
    pub format: DiffFormat,
    #[command(flatten)]
    pub project: super::project::ProjectArgs,
    /// OLD and NEW (two route files or two lb-config.json files); with
    /// `--git`, the one FILE.
    #[arg(required = true, num_args = 1..=2, value_name = "FILE")]
    pub files: Vec<PathBuf>,
}

/// A diff is a report of changes, not of findings: no SARIF.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum DiffFormat {
    /// Per model, the fields that resolve differently, with provenance.
    #[default]
    Human,
    /// The version-1 diff document.
    Json,
    /// GitHub Actions workflow commands on the new file's entries.
    Github,
}

impl From<DiffFormat> for Format {
    fn from(format: DiffFormat) -> Format {
        match format {
            DiffFormat::Human => Format::Human,
            DiffFormat::Json => Format::Json,
            DiffFormat::Github => Format::Github,
        }
    }
}

/// One side: its name in every output and its text.
struct Side {
    name: String,
    text: String,
}

pub fn run(args: &DiffArgs) -> i32 {
    match compare(args) {
        Ok(code) => code,
        Err(error) => usage_error(error),
    }
}

/// Both sides under the project configuration of the file (NEW, or the
/// one FILE of `--git`): its target, and its levels and suppressions
/// deciding which errors leave a side without a policy.
fn compare(args: &DiffArgs) -> Result<i32, UsageError> {
    let mut projects = super::project::Projects::new(&args.project)?;
    let (old, new, file) = inputs(args)?;
    let path = args
        .files
        .last()
        .filter(|p| !super::input::is_stdin(p))
        .map(PathBuf::as_path);
    let target = projects.target_for(path)?;
    let (old_table, mut old_report) = load_table_for(&old.name, &old.text, target);
    let (new_table, mut new_report) = load_table_for(&new.name, &new.text, target);
    projects.finish(path, &mut old_report)?;
    projects.finish(path, &mut new_report)?;
    let config = projects.config_reports();
    let (Some(old_table), Some(new_table), false) = (
        old_table.filter(|_| !old_report.has_errors()),
        new_table.filter(|_| !new_report.has_errors()),
        config.iter().any(Report::has_errors),
    ) else {
        // A file stargate would refuse to start with has no policy to
        // compare: its diagnostics instead (warnings are lint's job).
        let failing: Vec<_> = [old_report, new_report]
            .into_iter()
            .chain(config)
            .filter(|r| r.has_errors())
            .collect();
        emit(&failing, args.format.into(), Stream::Stdout, "file", false);
        return Ok(output::FAILED);
    };
    let diff = routex::diff::diff_tables(&old_table, &new_table);
    let text = match args.format {
        DiffFormat::Human => render::render_human(&diff, &old.name, &new.name),
        DiffFormat::Json => render::render_json(&diff, &old.name, &new.name),
        DiffFormat::Github => {
            let at = routex::diff::locate(&new.name, &new.text);
            render::render_github(&diff, &file, &new.text, &at)
        }
    };
    output::stdout(&text);
    Ok(output::OK)
}

/// The old and new sides, and the file the github format annotates.
fn inputs(args: &DiffArgs) -> Result<(Side, Side, String), UsageError> {
    let (old, new, file) = match (&args.git, args.files.as_slice()) {
        (None, [old, new]) => {
            if super::input::is_stdin(old) && super::input::is_stdin(new) {
                return Err(UsageError::new("diff: only one of OLD and NEW can be `-`"));
            }
            let read = |path: &PathBuf| -> Result<Side, UsageError> {
                Ok(Side {
                    name: source_name(path),
                    text: read_text(path)?,
                })
            };
            let new = read(new)?;
            let file = new.name.clone();
            (read(old)?, new, file)
        }
        (Some(spec), [path]) => {
            let name = source_name(path);
            let at = |rev: &str, shown: &str| -> Result<Side, UsageError> {
                let side = format!("{shown}:{name}");
                Ok(Side {
                    text: git::show(rev, path, &side)?,
                    name: side,
                })
            };
            let (old, new_rev) = match git::revisions(spec)? {
                git::Revisions::One(old) => (at(old, old)?, None),
                git::Revisions::Two(old, new) => (at(old, old)?, Some(new)),
                git::Revisions::MergeBase(a, b) => {
                    let base = git::merge_base(a, b, path)?;
                    (at(&base, &format!("merge-base({a},{b})"))?, Some(b))
                }
            };
            let new = match new_rev {
                Some(rev) => at(rev, rev)?,
                None => Side {
                    text: read_text(path)?,
                    name: name.clone(),
                },
            };
            (old, new, name)
        }
        (None, _) => {
            return Err(UsageError::new(
                "diff needs OLD and NEW (or --git REV FILE for one file's revisions)",
            ))
        }
        (Some(_), _) => {
            return Err(UsageError::new(
                "diff --git takes one FILE, whose revisions are compared",
            ))
        }
    };
    same_kind(&old, &new)?;
    Ok((old, new, file))
}

/// Both route files or both lb-config.json (the extension decides, as for
/// every command), and a JSON side that is an lb-config.json at all.
fn same_kind(old: &Side, new: &Side) -> Result<(), UsageError> {
    let routes = |side: &Side| side.name.ends_with(".routes");
    match (routes(old), routes(new)) {
        (true, false) => {
            return Err(UsageError::new(format!(
                "diff: {} is a route file and {} an lb-config.json: compare two files of one kind (`routex build {}` writes the route file's lb-config.json)",
                old.name, new.name, old.name
            )))
        }
        (false, true) => {
            return Err(UsageError::new(format!(
                "diff: {} is an lb-config.json and {} a route file: compare two files of one kind (`routex build {}` writes the route file's lb-config.json)",
                old.name, new.name, new.name
            )))
        }
        (true, true) => return Ok(()),
        (false, false) => {}
    }
    for side in [old, new] {
        if !looks_like_lb_config(&side.text) {
            return Err(UsageError::new(format!(
                "{}: not an lb-config.json (none of `default`, `request_algorithms`, `models` at the top level)",
                side.name
            )));
        }
    }
    Ok(())
}
