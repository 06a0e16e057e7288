//! Reading user files for the CLI: every failure is a one-line usage or I/O
//! error (exit 2), never a panic. Files over [`MAX_INPUT_BYTES`] are refused
//! without reading them whole: configurations are small, and a huge file is
//! almost certainly the wrong argument.

use std::fmt;
use std::path::Path;

pub use crate::config::MAX_INPUT_BYTES;

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

/// Reads a UTF-8 text file of at most [`MAX_INPUT_BYTES`].
pub fn read_text(path: &Path) -> Result<String, UsageError> {
    crate::config::read_source(path).map_err(|e| UsageError::new(e.to_string()))
}

/// Writes `-o OUT`, or stdout when no path is given.
pub fn write_output(path: Option<&Path>, text: &str) -> Result<(), UsageError> {
    match path {
        Some(path) => std::fs::write(path, text).map_err(|e| {
            UsageError::new(format!(
                "{}: {}",
                path.display(),
                crate::config::file_io_reason(&e)
            ))
        }),
        None => {
            super::output::stdout(text);
            Ok(())
        }
    }
}
