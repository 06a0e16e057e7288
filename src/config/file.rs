//! Reading a configuration from a path, for embedders and the CLI alike:
//! a bounded read (a huge file is almost certainly the wrong argument, and
//! must not cost its size in memory), UTF-8 checked with the offending byte
//! named, and one error type an embedder can log or match.

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::diag::Report;
use crate::ir::RouteTable;

/// Largest input file accepted: 4 MiB.
pub const MAX_INPUT_BYTES: u64 = 4 * 1024 * 1024;

/// Why a configuration could not be loaded from a path.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The file could not be opened or read.
    #[error("{}: {}", path.display(), io_reason(source))]
    Io {
        /// The path as given.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// The file is larger than [`MAX_INPUT_BYTES`]; it was not read whole.
    #[error("{}: file is larger than the {} MiB input limit", path.display(), MAX_INPUT_BYTES / (1024 * 1024))]
    TooLarge {
        /// The path as given.
        path: PathBuf,
    },
    /// The file is not UTF-8; `byte` is the offset of the first invalid byte.
    #[error("{}: not valid UTF-8 (byte {byte})", path.display())]
    NotUtf8 {
        /// The path as given.
        path: PathBuf,
        /// Byte offset of the first byte that is not valid UTF-8.
        byte: usize,
    },
    /// The file was read but has errors; the report holds every diagnostic
    /// (its `Display` prints one line per diagnostic).
    #[error("{0}")]
    Invalid(Box<Report>),
}

/// Reads a UTF-8 text file of at most [`MAX_INPUT_BYTES`].
pub fn read_source(path: &Path) -> Result<String, LoadError> {
    let io = |source| LoadError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let mut bytes = Vec::new();
    file.take(MAX_INPUT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(LoadError::TooLarge {
            path: path.to_path_buf(),
        });
    }
    String::from_utf8(bytes).map_err(|e| LoadError::NotUtf8 {
        path: path.to_path_buf(),
        byte: e.utf8_error().valid_up_to(),
    })
}

/// Loads a route table from a path (`*.routes` as a route file, anything
/// else as lb-config.json). On success the report carries the warnings,
/// which an embedder may log; any error is [`LoadError::Invalid`].
pub fn load_table_path(path: impl AsRef<Path>) -> Result<(RouteTable, Report), LoadError> {
    load_table_path_for(path, crate::ir::Target::NEWEST)
}

/// [`load_table_path`] for the stargate `target`.
pub fn load_table_path_for(
    path: impl AsRef<Path>,
    target: crate::ir::Target,
) -> Result<(RouteTable, Report), LoadError> {
    let path = path.as_ref();
    let text = read_source(path)?;
    let (table, report) = super::load_table_for(&path.to_string_lossy(), &text, target);
    match table {
        Some(table) if !report.has_errors() => Ok((table, report)),
        _ => Err(LoadError::Invalid(Box::new(report))),
    }
}

/// The OS reason without the "(os error N)" suffix, lower-case like the rest.
pub fn io_reason(error: &std::io::Error) -> String {
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
