//! Paths as the configuration's globs see them: relative to the directory
//! of the configuration file, `/`-separated, `.` and `..` resolved
//! lexically (symlinks are not followed, so a path means what it says).

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use std::path::{Component, Path, PathBuf};

/// `path` made absolute against the working directory, lexically
/// normalised.
pub fn absolute(path: &Path) -> PathBuf {
    let joined = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut out = PathBuf::new();
    for component in joined.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// `file` relative to `dir` with `/` separators; the absolute path when
/// `file` is outside `dir`.
pub fn relative_to(dir: &Path, file: &Path) -> String {
    let file = absolute(file);
    let shown = file.strip_prefix(dir).unwrap_or(&file);
    shown.to_string_lossy().replace('\\', "/")
}

/// A list of globs as the configuration file writes them. A pattern with a
/// `/` matches the path relative to the configuration file's directory
/// (`*` within one directory, `**` across any number); one without `/`
/// matches a file name in any directory, as in .gitignore.
#[derive(Clone, Debug, Default)]
pub struct Globs {
    full: GlobSet,
    names: GlobSet,
    /// The patterns as written.
    pub patterns: Vec<String>,
}

impl Globs {
    /// Compiles `patterns`; the error names the pattern that does not parse.
    pub fn new(patterns: &[String]) -> Result<Globs, (usize, String)> {
        let mut full = GlobSetBuilder::new();
        let mut names = GlobSetBuilder::new();
        for (i, pattern) in patterns.iter().enumerate() {
            let trimmed = pattern.strip_prefix("./").unwrap_or(pattern);
            let glob = GlobBuilder::new(trimmed)
                .literal_separator(true)
                .build()
                .map_err(|e| (i, e.kind().to_string()))?;
            if trimmed.contains('/') {
                full.add(glob);
            } else {
                names.add(glob);
            }
        }
        let build = |b: GlobSetBuilder| b.build().map_err(|e| (0, e.to_string()));
        Ok(Globs {
            full: build(full)?,
            names: build(names)?,
            patterns: patterns.to_vec(),
        })
    }

    /// Whether the relative path (see `relative_to`) matches.
    pub fn matches(&self, relative: &str) -> bool {
        if self.full.is_match(relative) {
            return true;
        }
        let name = relative.rsplit('/').next().unwrap_or(relative);
        self.names.is_match(name)
    }
}

/// Whether `globs` match the relative path.
pub fn matches(globs: &Globs, relative: &str) -> bool {
    globs.matches(relative)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_use_slashes_and_resolve_dots() {
        let dir = Path::new("/repo");
        assert_eq!(
            relative_to(dir, Path::new("/repo/a/./b/../c.routes")),
            "a/c.routes"
        );
        assert_eq!(
            relative_to(dir, Path::new("/elsewhere/x.json")),
            "/elsewhere/x.json"
        );
    }

    #[test]
    fn globs_match_paths_and_names() {
        let globs =
            Globs::new(&["legacy/**".into(), "*.json".into(), "a/*/x.routes".into()]).unwrap();
        assert!(globs.matches("legacy/deep/er/f.routes"));
        assert!(globs.matches("any/where/lb-config.json"));
        assert!(globs.matches("a/b/x.routes"));
        assert!(!globs.matches("a/b/c/x.routes"));
        assert!(!globs.matches("other/f.routes"));
        assert!(Globs::new(&["a/[".into()]).is_err());
    }
}
