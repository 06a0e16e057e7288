//! What a project configuration file says, once read.

use crate::paths::Globs;
use routex::diag::{Code, Levels, Span};

/// The values of `format`: the output formats of `check` and `lint`.
pub const FORMATS: [&str; 4] = ["human", "json", "github", "sarif"];

/// The settings of one `routex.toml`; absent keys keep routex's defaults.
#[derive(Clone, Debug, Default)]
pub struct Settings {
    /// `stargate`: the stargate target the files are checked against;
    /// `--stargate` wins.
    pub stargate: Option<routex::ir::Target>,
    /// `format`: the default output format of `check` and `lint` (one of
    /// [`FORMATS`]); `--format` wins.
    pub format: Option<String>,
    /// `exclude`: files and directories a directory search skips.
    pub exclude: Globs,
    /// `[levels]`: each code's level for every file.
    pub levels: Levels,
    /// `[[overrides]]`: levels for the files their globs match, applied in
    /// order after `[levels]`.
    pub overrides: Vec<Override>,
    /// `[[suppressions]]`: findings that are intended, in files without
    /// comments (lb-config.json) or for a whole file.
    pub suppressions: Vec<ExternalSuppression>,
}

/// One `[[overrides]]` entry.
#[derive(Clone, Debug, Default)]
pub struct Override {
    /// `files`: the globs of the files it applies to.
    pub files: Globs,
    /// `levels`: the levels it sets.
    pub levels: Levels,
}

/// One `[[suppressions]]` entry.
#[derive(Clone, Debug, Default)]
pub struct ExternalSuppression {
    /// `files`: the globs of the files it applies to.
    pub files: Globs,
    /// `models`: lb-config.json model ids it is limited to (every finding
    /// of the file when empty).
    pub models: Vec<String>,
    /// `codes`: the codes it suppresses.
    pub codes: Vec<Code>,
    /// `reason`: why, carried into SARIF's `justification`.
    pub reason: Option<String>,
    /// Where the entry is in the configuration file.
    pub span: Span,
}
