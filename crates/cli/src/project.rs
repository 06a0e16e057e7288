//! The project configuration for `check` and `lint`: `--config-file`,
//! discovery of `routex.toml` per input, `--allow`/`--warn`/`--deny`, and
//! finishing each report with them (docs/cli.md "Project configuration").

use super::input::UsageError;
use super::Format;
use clap::Args;
use routex::diag::{Code, Level, Levels, Report};
use routex::ir::Target;
use routex_project::{discover, Project, Use};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The options every linting command shares.
#[derive(Debug, Default, Args)]
pub struct ProjectArgs {
    /// Report CODE at no level (repeatable); wins over the project
    /// configuration. Codes stargate would reject cannot be allowed.
    #[arg(long = "allow", value_name = "CODE")]
    pub allow: Vec<String>,
    /// Report CODE as a warning (repeatable); wins over the configuration.
    #[arg(long = "warn", value_name = "CODE")]
    pub warn: Vec<String>,
    /// Report CODE as an error (repeatable); wins over the configuration
    /// and over `--allow`/`--warn` for the same code.
    #[arg(long = "deny", value_name = "CODE")]
    pub deny: Vec<String>,
    /// The project configuration file, instead of the `routex.toml` (or
    /// `.routex.toml`) nearest to each input.
    #[arg(long, value_name = "FILE")]
    pub config_file: Option<PathBuf>,
    /// Use no project configuration file.
    #[arg(long, conflicts_with = "config_file")]
    pub no_config_file: bool,
}

impl ProjectArgs {
    /// The command line's levels: `--allow`, then `--warn`, then `--deny`
    /// (so the highest wins for a code given twice).
    pub fn levels(&self) -> Result<Levels, UsageError> {
        let mut levels = Levels::new();
        for (flag, level, names) in [
            ("--allow", Level::Allow, &self.allow),
            ("--warn", Level::Warn, &self.warn),
            ("--deny", Level::Deny, &self.deny),
        ] {
            for name in names {
                let code = code(flag, name)?;
                levels
                    .set(code, level)
                    .map_err(|fixed| UsageError::new(format!("{flag} {name}: {fixed}")))?;
            }
        }
        Ok(levels)
    }
}

/// A code named on the command line, or a usage error with a did-you-mean.
fn code(flag: &str, name: &str) -> Result<Code, UsageError> {
    if let Some(code) = Code::from_name(name) {
        return Ok(code);
    }
    let near = (name.len() <= 64)
        .then(|| routex::check::did_you_mean(name, routex::diag::CODES.iter().map(|c| c.name)))
        .flatten()
        .map(|n| format!("; did you mean `{n}`?"))
        .unwrap_or_else(|| " (docs/diagnostics.md lists the codes)".into());
    Err(UsageError::new(format!(
        "{flag} {name}: unknown diagnostic code{near}"
    )))
}

/// The configuration of each input, found once per directory and read
/// once per file, and which of each file's suppressions matched.
pub struct Projects {
    explicit: Option<PathBuf>,
    disabled: bool,
    cli: Levels,
    by_dir: HashMap<PathBuf, Option<PathBuf>>,
    loaded: Vec<(Project, Vec<Use>)>,
}

impl Projects {
    /// From the command line; an unreadable `--config-file` is a usage
    /// error.
    pub fn new(args: &ProjectArgs) -> Result<Projects, UsageError> {
        let mut projects = Projects {
            explicit: args.config_file.clone(),
            disabled: args.no_config_file,
            cli: args.levels()?,
            by_dir: HashMap::new(),
            loaded: Vec::new(),
        };
        if let Some(path) = &args.config_file {
            projects.load(path)?;
        }
        Ok(projects)
    }

    fn load(&mut self, path: &Path) -> Result<usize, UsageError> {
        if let Some(i) = self.loaded.iter().position(|(p, _)| p.path == path) {
            return Ok(i);
        }
        let project = Project::load(path).map_err(UsageError::new)?;
        let used = vec![Use::Unmatched; project.settings.suppressions.len()];
        self.loaded.push((project, used));
        Ok(self.loaded.len() - 1)
    }

    /// The index of the configuration that applies to `file` (`None`: an
    /// inline source, found from the working directory).
    fn index_for(&mut self, file: Option<&Path>) -> Result<Option<usize>, UsageError> {
        if self.disabled {
            return Ok(None);
        }
        if let Some(path) = self.explicit.clone() {
            return self.load(&path).map(Some);
        }
        let dir = match file.and_then(Path::parent) {
            Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let found = match self.by_dir.get(&dir) {
            Some(found) => found.clone(),
            None => {
                let found = discover(&dir);
                self.by_dir.insert(dir, found.clone());
                found
            }
        };
        match found {
            Some(path) => self.load(&path).map(Some),
            None => Ok(None),
        }
    }

    /// The configuration for `file`, if any.
    pub fn project_for(&mut self, file: Option<&Path>) -> Result<Option<&Project>, UsageError> {
        Ok(self.index_for(file)?.map(|i| &self.loaded[i].0))
    }

    /// Finishes one report: suppressions, then levels (the file's, its
    /// overrides', the command line's).
    pub fn finish(&mut self, file: Option<&Path>, report: &mut Report) -> Result<(), UsageError> {
        match self.index_for(file)? {
            Some(i) => {
                let (project, used) = &mut self.loaded[i];
                project.finish(file, report, Some(&self.cli), used);
            }
            None => routex_project::finish(None, file, report, Some(&self.cli), &mut []),
        }
        Ok(())
    }

    /// The stargate target `file` is checked for: `--stargate`, else its
    /// configuration's `stargate`, else the newest (docs/cli.md "Project
    /// configuration").
    pub fn target_for(&mut self, file: Option<&Path>) -> Result<Target, UsageError> {
        if let Some(target) = super::target::chosen() {
            return Ok(target);
        }
        Ok(self
            .project_for(file)?
            .and_then(|p| p.settings.stargate)
            .unwrap_or(Target::NEWEST))
    }

    /// The output format: `--format`, else the first configuration's
    /// `format`, else human.
    pub fn format(
        &mut self,
        given: Option<Format>,
        first: Option<&Path>,
    ) -> Result<Format, UsageError> {
        if let Some(format) = given {
            return Ok(format);
        }
        let chosen = self
            .project_for(first)?
            .and_then(|p| p.settings.format.clone());
        Ok(match chosen.as_deref() {
            Some("json") => Format::Json,
            Some("github") => Format::Github,
            Some("sarif") => Format::Sarif,
            _ => Format::Human,
        })
    }

    /// The reports of the configuration files themselves: their own
    /// problems and their unused suppressions (none when clean).
    pub fn reports(&self) -> Vec<Report> {
        let mut out = Vec::new();
        for (project, used) in &self.loaded {
            let mut report = project.report.clone();
            report
                .diagnostics
                .extend(project.unused_suppressions(used).diagnostics);
            self.cli.apply(&mut report);
            if !report.diagnostics.is_empty() {
                out.push(report);
            }
        }
        out
    }

    /// The configuration files' own problems only, for the commands that
    /// check one input on the way to another output (`explain`, `build`,
    /// `import`, `diff`, `sim check`): unused suppressions are `lint`'s and
    /// `check`'s to report.
    pub fn config_reports(&self) -> Vec<Report> {
        let mut out = Vec::new();
        for (project, _) in &self.loaded {
            let mut report = project.report.clone();
            self.cli.apply(&mut report);
            if !report.diagnostics.is_empty() {
                out.push(report);
            }
        }
        out
    }

    /// Whether a directory search should skip `file`.
    pub fn is_excluded(&mut self, file: &Path) -> Result<bool, UsageError> {
        Ok(self
            .project_for(Some(file))?
            .is_some_and(|p| p.is_excluded(file)))
    }
}

/// The `stargate` of the project configuration nearest to `file` (`None`:
/// the working directory's), if any.
pub fn configured_target(file: Option<&Path>) -> Option<Target> {
    let dir = match file.and_then(Path::parent) {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    };
    Project::load(&discover(&dir)?).ok()?.settings.stargate
}

/// The target for `file` (`None`: the working directory): the command
/// line's, else the `stargate` of the nearest `routex.toml`, else the
/// newest (docs/cli.md "Project configuration").
pub fn target_for_file(file: Option<&std::path::Path>) -> Target {
    super::target::chosen()
        .or_else(|| configured_target(file))
        .unwrap_or(Target::NEWEST)
}
