//! `routex diff --git`: a file's text at a git revision, through
//! `git show REV:./FILE` run in the file's directory (so a relative or an
//! absolute path names the same file as on the command line). Read under
//! the same 4 MiB limit and UTF-8 rule as a file; every failure (git not
//! installed, not a repository, a bad revision, a path the revision does
//! not have) is a one-line usage error, exit 2.

use super::input::{UsageError, MAX_INPUT_BYTES};
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};

/// The text of `path` at revision `rev`; `name` is how errors call it
/// (`REV:PATH`).
pub fn show(rev: &str, path: &Path, name: &str) -> Result<String, UsageError> {
    if rev.is_empty() || rev.starts_with('-') {
        return Err(UsageError::new(format!(
            "--git: '{rev}' is not a revision (write REV, REV..REV2 or REV...REV2, e.g. HEAD~1 or main..HEAD)"
        )));
    }
    let file = path
        .file_name()
        .and_then(|f| f.to_str())
        .ok_or_else(|| UsageError::new(format!("{name}: --git needs the path of a file")))?;
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let mut child = Command::new("git")
        .arg("-C")
        .arg(dir)
        .arg("show")
        .arg(format!("{rev}:./{file}"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => {
                UsageError::new("--git: git is not installed (no `git` on PATH)")
            }
            _ => UsageError::new(format!("--git: cannot run git: {e}")),
        })?;
    let mut bytes = Vec::new();
    let read = child
        .stdout
        .take()
        .map(|out| out.take(MAX_INPUT_BYTES + 1).read_to_end(&mut bytes));
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        let _ = child.kill();
        let _ = child.wait();
        return Err(UsageError::new(format!(
            "{name}: file is larger than the {} MiB input limit",
            MAX_INPUT_BYTES / (1024 * 1024)
        )));
    }
    let output = child
        .wait_with_output()
        .map_err(|e| UsageError::new(format!("{name}: git: {e}")))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let reason = stderr
            .lines()
            .find(|l| !l.trim().is_empty())
            .map(|l| l.trim().trim_start_matches("fatal: ").to_string())
            .unwrap_or_else(|| format!("git show failed ({})", output.status));
        return Err(UsageError::new(format!("{name}: git: {reason}")));
    }
    if let Some(Err(e)) = read {
        return Err(UsageError::new(format!("{name}: git: {e}")));
    }
    String::from_utf8(bytes).map_err(|e| {
        UsageError::new(format!(
            "{name}: not valid UTF-8 (byte {})",
            e.utf8_error().valid_up_to()
        ))
    })
}

/// What `--git` compares.
#[derive(Debug, PartialEq, Eq)]
pub enum Revisions<'a> {
    /// `REV`: REV's version against the working file.
    One(&'a str),
    /// `REV..REV2`: the two revisions.
    Two(&'a str, &'a str),
    /// `REV...REV2`: REV2 against the merge base of the two, as `git diff
    /// REV...REV2` compares (what REV2 changed since it left REV).
    MergeBase(&'a str, &'a str),
}

/// Parses `REV`, `REV..REV2` or `REV...REV2`.
pub fn revisions(spec: &str) -> Result<Revisions<'_>, UsageError> {
    let bad = || {
        UsageError::new(format!(
            "--git: '{spec}' is not REV, REV..REV2 or REV...REV2 (both revisions are needed, e.g. main..HEAD)"
        ))
    };
    let both = |old: &str, new: &str| !old.is_empty() && !new.is_empty() && !new.contains("..");
    if let Some((old, new)) = spec.split_once("...") {
        return match both(old, new) && !old.contains("..") {
            true => Ok(Revisions::MergeBase(old, new)),
            false => Err(bad()),
        };
    }
    match spec.split_once("..") {
        None => Ok(Revisions::One(spec)),
        Some((old, new)) if both(old, new) => Ok(Revisions::Two(old, new)),
        Some(_) => Err(bad()),
    }
}

/// The merge base of `a` and `b` in the repository holding `path`
/// (`git merge-base`), as a commit id.
pub fn merge_base(a: &str, b: &str, path: &Path) -> Result<String, UsageError> {
    for rev in [a, b] {
        if rev.starts_with('-') {
            return Err(UsageError::new(format!("--git: '{rev}' is not a revision")));
        }
    }
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let output = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["merge-base", a, b])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => {
                UsageError::new("--git: git is not installed (no `git` on PATH)")
            }
            _ => UsageError::new(format!("--git: cannot run git: {e}")),
        })?;
    let id = String::from_utf8_lossy(&output.stdout).trim().to_string();
    if !output.status.success() || id.is_empty() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let reason = stderr
            .lines()
            .find(|l| !l.trim().is_empty())
            .map(|l| l.trim().trim_start_matches("fatal: ").to_string())
            .unwrap_or_else(|| "the revisions have no common ancestor".to_string());
        return Err(UsageError::new(format!(
            "--git {a}...{b}: git merge-base: {reason}"
        )));
    }
    Ok(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn revision_specs() {
        assert_eq!(revisions("HEAD~1"), Ok(Revisions::One("HEAD~1")));
        assert_eq!(revisions("main..HEAD"), Ok(Revisions::Two("main", "HEAD")));
        assert_eq!(
            revisions("main...HEAD"),
            Ok(Revisions::MergeBase("main", "HEAD"))
        );
        for bad in [
            "..HEAD",
            "main..",
            "a..b..c",
            "..",
            "...",
            "a...",
            "...b",
            "a...b...c",
            "a..b...c",
        ] {
            assert!(revisions(bad).is_err(), "{bad}");
        }
    }
}
