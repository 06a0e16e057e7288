//! The generated parts of docs/diagnostics.md against the table of codes
//! (`routex::diag::CODES`): the index, each section's lead paragraph and
//! its **Fix:** line. With `ROUTEX_UPDATE_DOCS=1` the file is rewritten;
//! otherwise a difference fails.

use routex::diag::{CodeInfo, Level, Origin, CODES};
use std::fmt::Write;
use std::path::PathBuf;

const BEGIN: &str = "<!-- generated from src/diag/codes.rs: begin";
const END: &str = "<!-- generated: end -->";

fn docs_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/diagnostics.md")
}

/// The index table.
fn index() -> String {
    let mut out = String::from(
        "| Code | Severity | Default level | From | Summary |\n| --- | --- | --- | --- | --- |\n",
    );
    for row in CODES {
        let level = match row.fixed {
            Some(_) => format!("`{}` (fixed)", row.level.name()),
            None => format!("`{}`", row.level.name()),
        };
        let _ = writeln!(
            out,
            "| [`{0}`](#{0}) | {1} | {level} | {2} | {3} |",
            row.name,
            severity(row),
            row.origin.name(),
            row.title.replace('|', "\\|"),
        );
    }
    out
}

fn severity(row: &CodeInfo) -> &'static str {
    match row.level {
        Level::Deny => "error",
        Level::Warn | Level::Allow => "warning",
    }
}

/// A section's first paragraph: severity, origin, level, description.
fn lead(row: &CodeInfo) -> String {
    let origin = match row.origin {
        Origin::Stargate => ", stargate code",
        Origin::Routex => "",
    };
    let level = match row.fixed {
        Some(why) => format!("always `{}` ({why})", row.level.name()),
        None => format!("default level `{}`", row.level.name()),
    };
    format!(
        "**{}**{origin}, {level}. {}",
        severity(row),
        row.description
    )
}

/// The catalogue with every generated part rewritten from the table.
fn regenerate(text: &str) -> Result<String, String> {
    let begin = text.find(BEGIN).ok_or("no generated index marker")?;
    let begin_end = begin
        + text[begin..]
            .find('\n')
            .ok_or("marker without a line end")?
        + 1;
    let end = text.find(END).ok_or("no end marker")?;
    let mut out = format!("{}{}{}", &text[..begin_end], index(), &text[end..]);
    for row in CODES {
        let heading = format!("\n## {}\n", row.name);
        let at = out
            .find(&heading)
            .ok_or_else(|| format!("docs/diagnostics.md has no section `{}`", row.name))?;
        let body = at + heading.len();
        let next = out[body..].find("\n## ").map_or(out.len(), |i| body + i);
        let mut section = out[body..next].to_string();
        // The lead paragraph: the first non-blank line after the heading.
        let start = section.len() - section.trim_start_matches('\n').len();
        let stop = section[start..]
            .find('\n')
            .map_or(section.len(), |i| start + i);
        section.replace_range(start..stop, &lead(row));
        let fix = section
            .find("\n**Fix:**")
            .ok_or_else(|| format!("section `{}` has no **Fix:** line", row.name))?
            + 1;
        let fix_end = section[fix..].find('\n').map_or(section.len(), |i| fix + i);
        section.replace_range(fix..fix_end, &format!("**Fix:** {}", row.help));
        out.replace_range(body..next, &section);
    }
    Ok(out)
}

#[test]
fn generated_docs_match_the_table() {
    let path = docs_path();
    let text = std::fs::read_to_string(&path).expect("docs/diagnostics.md");
    let fresh = regenerate(&text).unwrap_or_else(|e| panic!("{e}"));
    if fresh == text {
        return;
    }
    if std::env::var_os("ROUTEX_UPDATE_DOCS").is_some() {
        std::fs::write(&path, &fresh).expect("write docs/diagnostics.md");
        return;
    }
    let first = text
        .lines()
        .zip(fresh.lines())
        .position(|(a, b)| a != b)
        .unwrap_or(text.lines().count().min(fresh.lines().count()));
    panic!(
        "docs/diagnostics.md differs from src/diag/codes.rs from line {}:\n  docs:  {}\n  table: {}\nrun `ROUTEX_UPDATE_DOCS=1 cargo test -p routex --test it diag::generated` and review the change",
        first + 1,
        text.lines().nth(first).unwrap_or(""),
        fresh.lines().nth(first).unwrap_or(""),
    );
}

#[test]
fn regeneration_is_stable() {
    let text = std::fs::read_to_string(docs_path()).expect("docs/diagnostics.md");
    let once = regenerate(&text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(regenerate(&once).as_deref(), Ok(once.as_str()));
}
