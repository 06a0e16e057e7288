//! Reading `routex.toml` into [`Settings`], every problem a diagnostic at
//! its place: `invalid_toml`, `unknown_setting` (with a did-you-mean),
//! `invalid_setting` (docs/cli.md "Project configuration" lists the keys).

use crate::paths::Globs;
use crate::settings::{ExternalSuppression, Override, Settings, FORMATS};
use routex::diag::{Code, Diagnostic, Level, Levels, Report, Span};
use std::path::{Path, PathBuf};
use toml::de::{DeTable, DeValue};
use toml::Spanned;

/// A project configuration file, read.
#[derive(Clone, Debug)]
pub struct Project {
    /// The file, as found or given.
    pub path: PathBuf,
    /// Its directory, absolute: the base of every glob.
    pub dir: PathBuf,
    /// What it says (the parts without problems).
    pub settings: Settings,
    /// Its own diagnostics.
    pub report: Report,
}

impl Project {
    /// Reads the file at `path`; `Err` is an I/O error in one line.
    pub fn load(path: &Path) -> Result<Project, String> {
        let text = routex::config::read_source(path).map_err(|e| e.to_string())?;
        let absolute = crate::paths::absolute(path);
        let dir = absolute.parent().map(Path::to_path_buf).unwrap_or_default();
        let name = display_name(path);
        let mut project = parse(&name, &text);
        project.path = path.to_path_buf();
        project.dir = dir;
        Ok(project)
    }

    /// Whether the file has errors (reported with the run's findings; the
    /// settings that read cleanly still apply).
    pub fn has_errors(&self) -> bool {
        self.report.has_errors()
    }
}

/// The file's name in reports: relative to the working directory when it
/// is under it (discovery finds absolute paths), as given otherwise.
fn display_name(path: &Path) -> String {
    let cwd = std::env::current_dir().map(|d| crate::paths::absolute(&d));
    let absolute = crate::paths::absolute(path);
    let shown = match cwd {
        Ok(cwd) if path.is_absolute() => absolute
            .strip_prefix(&cwd)
            .map(Path::to_path_buf)
            .unwrap_or(absolute.clone()),
        _ => path.to_path_buf(),
    };
    let text = shown.to_string_lossy().replace('\\', "/");
    text.strip_prefix("./").unwrap_or(&text).to_string()
}

/// The top-level keys.
const TOP: [&str; 6] = [
    "stargate",
    "format",
    "exclude",
    "levels",
    "overrides",
    "suppressions",
];
const OVERRIDE_KEYS: [&str; 2] = ["files", "levels"];
const SUPPRESSION_KEYS: [&str; 4] = ["files", "models", "codes", "reason"];

/// Reads a configuration text named `name` (its directory is the working
/// directory until [`Project::load`] sets it).
pub fn parse(name: &str, text: &str) -> Project {
    let mut reader = Reader {
        report: Report::new(name, text),
    };
    let mut settings = Settings::default();
    match DeTable::parse(text) {
        Err(error) => {
            let span = error
                .span()
                .map_or(Span::new(0, 0), |r| Span::new(r.start, r.end));
            reader.push(Diagnostic::new(
                Code::InvalidToml,
                span,
                format!("not valid TOML: {}", error.message().trim_end()),
            ));
        }
        Ok(root) => reader.top(root.get_ref(), &mut settings),
    }
    Project {
        path: PathBuf::from(name),
        dir: std::env::current_dir()
            .map(|d| crate::paths::absolute(&d))
            .unwrap_or_default(),
        settings,
        report: reader.report,
    }
}

struct Reader {
    report: Report,
}

fn span_of<T>(s: &Spanned<T>) -> Span {
    let r = s.span();
    Span::new(r.start, r.end)
}

fn kind(value: &DeValue<'_>) -> &'static str {
    match value {
        DeValue::String(_) => "a string",
        DeValue::Integer(_) => "an integer",
        DeValue::Float(_) => "a float",
        DeValue::Boolean(_) => "a boolean",
        DeValue::Datetime(_) => "a date-time",
        DeValue::Array(_) => "an array",
        DeValue::Table(_) => "a table",
    }
}

impl Reader {
    fn push(&mut self, d: Diagnostic) {
        self.report.diagnostics.push(d);
    }

    fn unknown(&mut self, key: &Spanned<std::borrow::Cow<'_, str>>, place: &str, known: &[&str]) {
        let word = key.get_ref().as_ref();
        let mut d = Diagnostic::new(
            Code::UnknownSetting,
            span_of(key),
            format!("unknown key `{word}` in {place}"),
        );
        let near = (word.len() <= 64)
            .then(|| routex::check::did_you_mean(word, known.iter().copied()))
            .flatten();
        d = match near {
            Some(near) => d
                .with_help(format!("did you mean `{near}`?"))
                .with_suggestion(near),
            None => d.with_help(format!("the keys of {place}: {}", known.join(", "))),
        };
        self.push(d);
    }

    fn invalid(&mut self, span: Span, message: String, help: Option<String>) {
        let mut d = Diagnostic::new(Code::InvalidSetting, span, message);
        if let Some(help) = help {
            d = d.with_help(help);
        }
        self.push(d);
    }

    fn top(&mut self, root: &DeTable<'_>, settings: &mut Settings) {
        for (key, value) in root {
            match key.get_ref().as_ref() {
                "stargate" => {
                    if let Some(name) = self.string(value, "stargate") {
                        match routex::ir::Target::from_name(&name) {
                            Some(target) => settings.stargate = Some(target),
                            None => self.invalid(
                                span_of(value),
                                format!("unknown stargate target `{name}`"),
                                Some(format!(
                                    "the targets: {} (docs/stargate.md 0.1)",
                                    routex::ir::Target::list()
                                )),
                            ),
                        }
                    }
                }
                "format" => {
                    if let Some(format) = self.string(value, "format") {
                        if FORMATS.contains(&format.as_str()) {
                            settings.format = Some(format);
                        } else {
                            self.invalid(
                                span_of(value),
                                format!("unknown format `{format}`"),
                                Some(format!("the formats: {}", FORMATS.join(", "))),
                            );
                        }
                    }
                }
                "exclude" => {
                    if let Some(globs) = self.globs(value, "exclude") {
                        settings.exclude = globs;
                    }
                }
                "levels" => settings.levels = self.levels(value, "levels"),
                "overrides" => {
                    for entry in self.tables(value, "overrides") {
                        settings.overrides.extend(self.override_entry(entry));
                    }
                }
                "suppressions" => {
                    for entry in self.tables(value, "suppressions") {
                        settings.suppressions.extend(self.suppression(entry));
                    }
                }
                _ => self.unknown(key, "the configuration", &TOP),
            }
        }
    }

    fn string(&mut self, value: &Spanned<DeValue<'_>>, key: &str) -> Option<String> {
        match value.get_ref() {
            DeValue::String(s) => Some(s.to_string()),
            other => {
                self.invalid(
                    span_of(value),
                    format!("`{key}` must be a string, found {}", kind(other)),
                    None,
                );
                None
            }
        }
    }

    fn strings(&mut self, value: &Spanned<DeValue<'_>>, key: &str) -> Option<Vec<Spanned<String>>> {
        let DeValue::Array(items) = value.get_ref() else {
            self.invalid(
                span_of(value),
                format!(
                    "`{key}` must be an array of strings, found {}",
                    kind(value.get_ref())
                ),
                None,
            );
            return None;
        };
        let mut out = Vec::new();
        for item in items {
            let text = self.string(item, key)?;
            out.push(Spanned::new(item.span(), text));
        }
        Some(out)
    }

    fn globs(&mut self, value: &Spanned<DeValue<'_>>, key: &str) -> Option<Globs> {
        let patterns = self.strings(value, key)?;
        let texts: Vec<String> = patterns.iter().map(|p| p.get_ref().clone()).collect();
        match Globs::new(&texts) {
            Ok(globs) => Some(globs),
            Err((i, why)) => {
                let span = patterns.get(i).map_or(span_of(value), span_of);
                self.invalid(span, format!("not a valid glob: {why}"), None);
                None
            }
        }
    }

    fn tables<'v, 'i>(
        &mut self,
        value: &'v Spanned<DeValue<'i>>,
        key: &str,
    ) -> Vec<&'v Spanned<DeValue<'i>>> {
        match value.get_ref() {
            DeValue::Array(items) => {
                let mut out = Vec::new();
                for item in items {
                    if matches!(item.get_ref(), DeValue::Table(_)) {
                        out.push(item);
                    } else {
                        self.invalid(
                            span_of(item),
                            format!(
                                "each `{key}` entry must be a table, found {}",
                                kind(item.get_ref())
                            ),
                            Some(format!("write each entry as `[[{key}]]`")),
                        );
                    }
                }
                out
            }
            other => {
                self.invalid(
                    span_of(value),
                    format!("`{key}` must be an array of tables, found {}", kind(other)),
                    Some(format!("write each entry as `[[{key}]]`")),
                );
                Vec::new()
            }
        }
    }

    /// A code name at `span`, or its diagnostic.
    fn code(&mut self, name: &str, span: Span) -> Option<Code> {
        if let Some(code) = Code::from_name(name) {
            return Some(code);
        }
        let mut d = Diagnostic::new(
            Code::UnknownSetting,
            span,
            format!("unknown diagnostic code `{name}`"),
        );
        let near = (name.len() <= 64)
            .then(|| routex::check::did_you_mean(name, routex::diag::CODES.iter().map(|c| c.name)))
            .flatten();
        d = match near {
            Some(near) => d
                .with_help(format!("did you mean `{near}`?"))
                .with_suggestion(near),
            None => d.with_help("the codes are listed in docs/diagnostics.md"),
        };
        self.push(d);
        None
    }

    fn levels(&mut self, value: &Spanned<DeValue<'_>>, key: &str) -> Levels {
        let mut levels = Levels::new();
        let DeValue::Table(table) = value.get_ref() else {
            self.invalid(
                span_of(value),
                format!(
                    "`{key}` must be a table of CODE = \"allow\" | \"warn\" | \"deny\", found {}",
                    kind(value.get_ref())
                ),
                None,
            );
            return levels;
        };
        for (code_key, level_value) in table {
            let Some(code) = self.code(code_key.get_ref(), span_of(code_key)) else {
                continue;
            };
            let Some(word) = self.string(level_value, code_key.get_ref()) else {
                continue;
            };
            let Some(level) = Level::from_name(&word) else {
                self.invalid(
                    span_of(level_value),
                    format!("unknown level `{word}`"),
                    Some("the levels: allow, warn, deny".into()),
                );
                continue;
            };
            if let Err(fixed) = levels.set(code, level) {
                self.invalid(span_of(level_value), fixed.to_string(), None);
            }
        }
        levels
    }

    fn override_entry(&mut self, entry: &Spanned<DeValue<'_>>) -> Option<Override> {
        let DeValue::Table(table) = entry.get_ref() else {
            return None;
        };
        let mut files = None;
        let mut levels = Levels::new();
        for (key, value) in table {
            match key.get_ref().as_ref() {
                "files" => files = self.globs(value, "files"),
                "levels" => levels = self.levels(value, "levels"),
                _ => self.unknown(key, "an `[[overrides]]` entry", &OVERRIDE_KEYS),
            }
        }
        let Some(files) = files else {
            if !table.keys().any(|k| k.get_ref() == "files") {
                self.invalid(
                    span_of(entry),
                    "an `[[overrides]]` entry needs `files`".into(),
                    Some("files = [\"GLOB\", ...]".into()),
                );
            }
            return None;
        };
        Some(Override { files, levels })
    }

    fn suppression(&mut self, entry: &Spanned<DeValue<'_>>) -> Option<ExternalSuppression> {
        let DeValue::Table(table) = entry.get_ref() else {
            return None;
        };
        let mut out = ExternalSuppression {
            span: span_of(entry),
            ..ExternalSuppression::default()
        };
        let (mut has_files, mut has_codes) = (false, false);
        for (key, value) in table {
            match key.get_ref().as_ref() {
                "files" => {
                    out.files = self.globs(value, "files")?;
                    has_files = true;
                }
                "models" => {
                    out.models = self
                        .strings(value, "models")?
                        .into_iter()
                        .map(Spanned::into_inner)
                        .collect();
                }
                "codes" => {
                    for name in self.strings(value, "codes")? {
                        let code = self.code(name.get_ref(), span_of(&name))?;
                        if let Some(why) = code.info().fixed {
                            self.invalid(
                                span_of(&name),
                                format!(
                                    "{} cannot be suppressed: it is always `{}` ({why})",
                                    code.as_str(),
                                    code.default_level().name()
                                ),
                                None,
                            );
                            return None;
                        }
                        out.codes.push(code);
                    }
                    has_codes = true;
                }
                "reason" => out.reason = self.string(value, "reason"),
                _ => self.unknown(key, "a `[[suppressions]]` entry", &SUPPRESSION_KEYS),
            }
        }
        if !(has_files && has_codes) {
            self.invalid(
                span_of(entry),
                "a `[[suppressions]]` entry needs `files` and `codes`".into(),
                Some("files = [\"GLOB\", ...] and codes = [\"CODE\", ...]".into()),
            );
            return None;
        }
        Some(out)
    }
}
