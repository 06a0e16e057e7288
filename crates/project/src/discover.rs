//! Finding the configuration file of an input, as ruff and taplo do: walk
//! up from the input's directory; the first directory holding one of
//! [`FILE_NAMES`] wins (the nearest file, no merging with files further up).

use std::path::{Path, PathBuf};

/// The names a project configuration file may have, in the order one
/// directory is searched (a dot file first, as ruff prefers `.ruff.toml`).
pub const FILE_NAMES: [&str; 2] = [".routex.toml", "routex.toml"];

/// The configuration file nearest to `start` (a directory): in it or in
/// its nearest ancestor that has one.
pub fn discover(start: &Path) -> Option<PathBuf> {
    let start = crate::paths::absolute(start);
    for dir in start.ancestors() {
        for name in FILE_NAMES {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return Some(candidate);
            }
        }
    }
    None
}
