//! Reading user files for the CLI: every failure is a one-line usage or I/O
//! error (exit 2), never a panic. Files over [`MAX_INPUT_BYTES`] are refused
//! without reading them whole: configurations are small, and a huge file is
//! almost certainly the wrong argument.

use std::fmt;
use std::io::Read;
use std::path::Path;

/// Largest input file accepted: 4 MiB.
pub const MAX_INPUT_BYTES: u64 = 4 * 1024 * 1024;

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
    let shown = path.display();
    let file = std::fs::File::open(path)
        .map_err(|e| UsageError::new(format!("{shown}: {}", io_reason(&e))))?;
    let mut bytes = Vec::new();
    file.take(MAX_INPUT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| UsageError::new(format!("{shown}: {}", io_reason(&e))))?;
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(UsageError::new(format!(
            "{shown}: file is larger than the {} MiB input limit",
            MAX_INPUT_BYTES / (1024 * 1024)
        )));
    }
    String::from_utf8(bytes).map_err(|e| {
        UsageError::new(format!(
            "{shown}: not valid UTF-8 (byte {})",
            e.utf8_error().valid_up_to()
        ))
    })
}

/// Writes `-o OUT`, or stdout when no path is given.
pub fn write_output(path: Option<&Path>, text: &str) -> Result<(), UsageError> {
    match path {
        Some(path) => std::fs::write(path, text)
            .map_err(|e| UsageError::new(format!("{}: {}", path.display(), io_reason(&e)))),
        None => {
            super::output::stdout(text);
            Ok(())
        }
    }
}

/// The OS reason without the "(os error N)" suffix, lower-case like the rest.
fn io_reason(error: &std::io::Error) -> String {
    match error.kind() {
        std::io::ErrorKind::NotFound => "no such file or directory".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        std::io::ErrorKind::IsADirectory => "is a directory".into(),
        _ => {
            let text = error.to_string();
            match text.find(" (os error") {
                Some(end) => text[..end].to_string(),
                None => text,
            }
        }
    }
}
