//! Reading user files for the CLI: every failure is a one-line usage or I/O
//! error (exit 2), never a panic. Files over [`MAX_INPUT_BYTES`] are refused
//! without reading them whole: configurations are small, and a huge file is
//! almost certainly the wrong argument.

use routex::render::STDIN_NAME;
use std::fmt;
use std::io::Read;
use std::path::{Component, Path};

pub use routex::config::MAX_INPUT_BYTES;

/// A usage or I/O error: printed as one line on stderr, exit status 2.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UsageError(pub String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl UsageError {
    pub fn new(message: impl Into<String>) -> Self {
        UsageError(message.into())
    }
}

/// The name a file goes by in every output format: the path as given with
/// `.` components dropped, so `lint .` and `lint tests` name
/// `./tests/x.routes` and `tests/x.routes` alike (`tests/x.routes`), and
/// `/` as the separator on every platform. `-` is [`STDIN_NAME`].
pub fn source_name(path: &Path) -> String {
    if is_stdin(path) {
        return STDIN_NAME.to_string();
    }
    let mut name = String::new();
    for component in path.components() {
        match component {
            Component::CurDir => continue,
            Component::RootDir => {
                if !name.ends_with('/') {
                    name.push('/');
                }
                continue;
            }
            Component::Prefix(prefix) => name.push_str(&prefix.as_os_str().to_string_lossy()),
            Component::ParentDir => name.push_str(".."),
            Component::Normal(part) => name.push_str(&part.to_string_lossy()),
        }
        name.push('/');
    }
    if name.len() > 1 && name.ends_with('/') {
        name.pop();
    }
    if name.is_empty() {
        name.push('.');
    }
    name
}

/// Whether a path argument means standard input (`-`).
pub fn is_stdin(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// Reads a UTF-8 text file of at most [`MAX_INPUT_BYTES`]; `-` reads
/// standard input under the same limit and rules.
pub fn read_text(path: &Path) -> Result<String, UsageError> {
    if is_stdin(path) {
        return read_stdin();
    }
    routex::config::read_source(path).map_err(|e| UsageError::new(e.to_string()))
}

/// Standard input, bounded like a file: errors name it `<stdin>`.
fn read_stdin() -> Result<String, UsageError> {
    let mut bytes = Vec::new();
    std::io::stdin()
        .lock()
        .take(MAX_INPUT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| {
            UsageError::new(format!(
                "{STDIN_NAME}: {}",
                routex::config::file_io_reason(&e)
            ))
        })?;
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(UsageError::new(format!(
            "{STDIN_NAME}: input is larger than the {} MiB input limit",
            MAX_INPUT_BYTES / (1024 * 1024)
        )));
    }
    String::from_utf8(bytes).map_err(|e| {
        UsageError::new(format!(
            "{STDIN_NAME}: not valid UTF-8 (byte {})",
            e.utf8_error().valid_up_to()
        ))
    })
}

/// Writes `-o OUT`, or stdout when no path is given.
pub fn write_output(path: Option<&Path>, text: &str) -> Result<(), UsageError> {
    match path {
        Some(path) => std::fs::write(path, text).map_err(|e| {
            UsageError::new(format!(
                "{}: {}",
                path.display(),
                routex::config::file_io_reason(&e)
            ))
        }),
        None => {
            super::output::stdout(text);
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_names_drop_dot_components() {
        let name = |p: &str| source_name(Path::new(p));
        assert_eq!(name("./tests/x.routes"), "tests/x.routes");
        assert_eq!(name("tests/./x.routes"), "tests/x.routes");
        assert_eq!(name("tests/"), "tests");
        assert_eq!(name("."), ".");
        assert_eq!(name("./"), ".");
        assert_eq!(name("../a/x.json"), "../a/x.json");
        assert_eq!(name("/tmp/./a b.routes"), "/tmp/a b.routes");
        assert_eq!(name("/"), "/");
        assert_eq!(name("-"), STDIN_NAME);
    }
}
