//! Source names as RFC 3986 URI references, for SARIF's `artifactLocation`.
//!
//! Every byte outside the unreserved set (`A-Z a-z 0-9 - . _ ~`) and the
//! segment separator `/` is percent-encoded, so a name with a space, `%`,
//! `#`, `?`, non-ASCII text or a `:` in its first segment stays one path
//! (RFC 3986 4.2: `a:b` would otherwise read as scheme `a`).

use std::fmt::Write;

/// Percent-encodes a path, keeping `/` as the segment separator.
pub fn encode_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for byte in path.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~' | b'/') {
            out.push(byte as char);
        } else {
            let _ = write!(out, "%{byte:02X}");
        }
    }
    out
}

/// A `file:` URI for an absolute path (`/a b` → `file:///a%20b`; a Windows
/// drive path `C:\x` → `file:///C:/x`). `None` for a relative path.
pub fn file_uri(path: &str) -> Option<String> {
    let bytes = path.as_bytes();
    let drive = bytes.len() >= 3
        && bytes[0].is_ascii_alphabetic()
        && bytes[1] == b':'
        && matches!(bytes[2], b'\\' | b'/');
    if drive {
        let rest = path[2..].replace('\\', "/");
        Some(format!("file:///{}:{}", &path[..1], encode_path(&rest)))
    } else if path.starts_with('/') {
        Some(format!("file://{}", encode_path(path)))
    } else {
        None
    }
}

/// A directory as a `file:` URI ending in `/`, as SARIF requires of a base
/// (`originalUriBaseIds`, `workingDirectory`).
pub fn directory_uri(path: &str) -> Option<String> {
    let mut uri = file_uri(path)?;
    if !uri.ends_with('/') {
        uri.push('/');
    }
    Some(uri)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_everything_but_unreserved_and_slash() {
        assert_eq!(encode_path("tests/a b.routes"), "tests/a%20b.routes");
        assert_eq!(encode_path("x#1?.routes"), "x%231%3F.routes");
        assert_eq!(encode_path("a:b,c/d%e"), "a%3Ab%2Cc/d%25e");
        assert_eq!(encode_path("modèle.json"), "mod%C3%A8le.json");
        assert_eq!(encode_path("~a-b_c.d"), "~a-b_c.d");
    }

    #[test]
    fn absolute_paths_become_file_uris() {
        assert_eq!(
            file_uri("/tmp/a b/x.routes").as_deref(),
            Some("file:///tmp/a%20b/x.routes")
        );
        assert_eq!(
            file_uri("C:\\w\\x y.json").as_deref(),
            Some("file:///C:/w/x%20y.json")
        );
        assert_eq!(file_uri("tests/x.routes"), None);
        assert_eq!(directory_uri("/work").as_deref(), Some("file:///work/"));
        assert_eq!(directory_uri("/").as_deref(), Some("file:///"));
    }
}
