//! Runs every example in `docs/*.md` and `README.md` (fence conventions at
//! the top of docs/cli.md):
//!
//! - ```` ```console ````: each `$ routex ARGS` line runs the real binary in
//!   the crate root; the lines up to the next `$` line are its stdout
//!   (trailing whitespace and trailing blank lines ignored), or its stdout
//!   then its stderr when the line ends with `2>&1`;
//! - ```` ```routex-check ````: every line compiles with no error;
//! - ```` ```routex-error ````: every line fails with an error;
//! - ```` ```routes ````: the block is a route file with no diagnostics;
//! - ```` ```json lb-config ````: the block is an lb-config.json with no
//!   diagnostics.
//!
//! Blank lines and lines starting with `#` inside the two expression fences
//! are skipped.
//!
//! ```` ```rust ```` blocks are doctests: `docs/embedding.md` is included in
//! the crate's documentation (src/router/mod.rs), so `cargo test --doc` runs
//! them. This test checks that they can only be in that file and are run,
//! not just compiled: no `no_run` or `ignore`, and no hidden `async fn`
//! that nothing calls (an async example runs on a runtime's `block_on`).

use std::path::{Path, PathBuf};

mod cargo_examples;
mod shell;

/// One fenced block: the info string, the line of its first content line,
/// and its content lines.
struct Block {
    info: String,
    line: usize,
    lines: Vec<String>,
}

fn root() -> &'static Path {
    crate::repo()
}

/// `docs/*.md` (sorted) and `README.md`, those that exist.
fn documents() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "md"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    let readme = root().join("README.md");
    if readme.exists() {
        files.push(readme);
    }
    files
}

/// Fenced blocks of a markdown text (fences of three or more backticks).
fn blocks(text: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut open: Option<(String, Block)> = None;
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        let fence: String = trimmed.chars().take_while(|c| *c == '`').collect();
        match &mut open {
            None if fence.len() >= 3 => {
                let info = trimmed[fence.len()..].trim().to_string();
                open = Some((
                    fence,
                    Block {
                        info,
                        line: i + 2,
                        lines: Vec::new(),
                    },
                ));
            }
            None => {}
            Some((opening, _)) if fence.len() >= opening.len() && trimmed.trim() == fence => {
                if let Some((_, block)) = open.take() {
                    blocks.push(block);
                }
            }
            Some((_, block)) => block.lines.push(line.to_string()),
        }
    }
    blocks
}

/// Output with what depends on the checkout replaced, as docs/cli.md says:
/// the crate root's `file:` URI is `file:///work/routex/` and every SARIF
/// fingerprint is `FINGERPRINT`.
fn machine_independent(text: &str) -> String {
    let root_uri = format!("file://{}/", root().display());
    let mut text = text.replace(&root_uri, "file:///work/routex/");
    let key = "\"routexDiagnostic/v1\": \"";
    let mut from = 0;
    while let Some(found) = text[from..].find(key) {
        let start = from + found + key.len();
        let end = text[start..].find('"').map_or(text.len(), |e| start + e);
        text.replace_range(start..end, "FINGERPRINT");
        from = start;
    }
    text
}

/// Trailing whitespace per line and trailing blank lines removed.
fn normalise(text: &str) -> String {
    let lines: Vec<&str> = text.lines().map(str::trim_end).collect();
    let mut text = lines.join("\n");
    text.truncate(text.trim_end().len());
    text
}

fn expressions(block: &Block) -> impl Iterator<Item = (usize, &str)> {
    block
        .lines
        .iter()
        .enumerate()
        .map(move |(i, l)| (block.line + i, l.trim()))
        .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'))
}

/// Checks one block; returns the failures, each naming `file:line`.
fn run_block(file: &str, block: &Block) -> Vec<String> {
    let mut failures = Vec::new();
    let source = block.lines.join("\n") + "\n";
    match block.info.as_str() {
        "console" => failures.extend(run_console(file, block)),
        "routex-check" => {
            for (line, expr) in expressions(block) {
                let (_, report) = routex::check::check_expression("doc", expr, None, None);
                if report.has_errors() {
                    failures.push(format!(
                        "{file}:{line}: `{expr}` should compile: {:?}",
                        report.diagnostics
                    ));
                }
            }
        }
        "routex-error" => {
            for (line, expr) in expressions(block) {
                let (_, report) = routex::check::check_expression("doc", expr, None, None);
                if !report.has_errors() {
                    failures.push(format!("{file}:{line}: `{expr}` should fail"));
                }
            }
        }
        "routes" => {
            let (_, report) = routex::check::check_route_file("doc.routes", &source);
            if !report.diagnostics.is_empty() {
                failures.push(format!(
                    "{file}:{}: route file should lint clean: {:?}",
                    block.line, report.diagnostics
                ));
            }
        }
        info if info == "rust" || info.starts_with("rust,") => {
            failures.extend(check_doctest(file, block));
        }
        "json lb-config" => {
            let (_, report) = routex::config::check_lb_config("lb-config.json", &source);
            if !report.diagnostics.is_empty() {
                failures.push(format!(
                    "{file}:{}: lb-config.json should lint clean: {:?}",
                    block.line, report.diagnostics
                ));
            }
        }
        _ => {}
    }
    failures
}

/// The files whose ```` ```rust ```` blocks are doctests.
const DOCTESTED: [&str; 1] = ["docs/embedding.md"];

/// A ```` ```rust ```` block is a doctest that runs (module doc).
fn check_doctest(file: &str, block: &Block) -> Vec<String> {
    let at = format!("{file}:{}", block.line);
    let mut failures = Vec::new();
    if !DOCTESTED.contains(&file) {
        failures.push(format!(
            "{at}: a rust block outside {DOCTESTED:?} is never compiled"
        ));
    }
    let flags = block.info.split(',').skip(1).map(str::trim);
    if let Some(flag) = flags.into_iter().find(|f| ["no_run", "ignore"].contains(f)) {
        failures.push(format!(
            "{at}: `{flag}` compiles the example without running it"
        ));
    }
    let hidden_async = block.lines.iter().any(|l| {
        let hidden = l.trim_start().strip_prefix("# ").unwrap_or_default();
        hidden.starts_with("async fn") || hidden.starts_with("pub async fn")
    });
    let runs = block.lines.iter().any(|l| l.contains("block_on("));
    if hidden_async && !runs {
        failures.push(format!(
            "{at}: a hidden async fn that no runtime calls is compiled, never run"
        ));
    }
    failures
}

fn run_console(file: &str, block: &Block) -> Vec<String> {
    let mut failures = Vec::new();
    let mut commands: Vec<(usize, &str, Vec<&str>)> = Vec::new();
    for (i, line) in block.lines.iter().enumerate() {
        if let Some(command) = line.strip_prefix("$ ") {
            commands.push((block.line + i, command, Vec::new()));
        } else if let Some((_, _, expected)) = commands.last_mut() {
            expected.push(line);
        }
    }
    for (line, command, expected) in commands {
        // A trailing `2>&1` compares stdout followed by stderr.
        let (command, with_stderr) = match command.trim_end().strip_suffix("2>&1") {
            Some(rest) => (rest.trim_end(), true),
            None => (command, false),
        };
        let words = match shell::split(command) {
            Ok(words) => words,
            Err(e) => {
                failures.push(format!("{file}:{line}: cannot split `{command}`: {e}"));
                continue;
            }
        };
        let Some(("routex", args)) = words.split_first().map(|(p, a)| (p.as_str(), a)) else {
            failures.push(format!("{file}:{line}: only `$ routex ...` commands run"));
            continue;
        };
        let mut args: Vec<&str> = args.iter().map(String::as_str).collect();
        // `< FILE` at the end feeds FILE (from the crate root) to stdin.
        let mut stdin = String::new();
        if let [.., "<", input] = args[..] {
            stdin = std::fs::read_to_string(root().join(input)).unwrap_or_default();
            args.truncate(args.len() - 2);
        }
        let out = super::cli::run::routex_with_stdin(&args, &stdin);
        let printed = if with_stderr {
            format!("{}{}", out.stdout, out.stderr)
        } else {
            out.stdout.clone()
        };
        let printed = machine_independent(&printed);
        let (got, want) = (normalise(&printed), normalise(&expected.join("\n")));
        if got != want {
            failures.push(format!(
                "{file}:{line}: `{command}` (exit {}) printed:\n{got}\n--- expected:\n{want}\n--- stderr:\n{}",
                out.code, out.stderr
            ));
        }
    }
    failures
}

#[test]
fn every_docs_example_runs() {
    let mut failures = Vec::new();
    let mut ran = 0;
    for path in documents() {
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let name = path
            .strip_prefix(root())
            .unwrap_or(&path)
            .display()
            .to_string();
        for block in blocks(&text) {
            ran += 1;
            failures.extend(run_block(&name, &block));
        }
    }
    assert!(ran > 0, "the docs have examples");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn diagnostics_catalogue_has_a_section_per_code() {
    let text = std::fs::read_to_string(root().join("docs/diagnostics.md")).unwrap_or_default();
    let headings: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("## "))
        .map(|h| h.trim().trim_matches('`'))
        .collect();
    let missing: Vec<&str> = routex::diag::Code::ALL
        .iter()
        .map(|c| c.as_str())
        .filter(|code| !headings.contains(code))
        .collect();
    assert!(missing.is_empty(), "docs/diagnostics.md lacks: {missing:?}");
}

#[test]
fn fences_and_commands_are_parsed() {
    let text = "x\n```console\n$ routex fmt 'a b' \"c \\\"d\\\"\" e\\ f\nout  \n\n```\n````routes\ndefault = random\n````\n";
    let found = blocks(text);
    assert_eq!(found.len(), 2);
    assert_eq!((found[0].info.as_str(), found[0].line), ("console", 3));
    assert_eq!(
        (found[1].info.as_str(), found[1].lines.len()),
        ("routes", 1)
    );
    assert_eq!(
        shell::split(&found[0].lines[0][2..]),
        Ok(vec!["routex", "fmt", "a b", "c \"d\"", "e f"]
            .into_iter()
            .map(String::from)
            .collect())
    );
    assert_eq!(normalise("out  \n\n"), "out");
    assert!(shell::split("routex 'open").is_err());
}

#[test]
fn rust_blocks_must_be_doctests_that_run() {
    let block = |info: &str, lines: &[&str]| Block {
        info: info.to_owned(),
        line: 7,
        lines: lines.iter().map(|l| (*l).to_owned()).collect(),
    };
    let compiled_only = block("rust", &["# async fn example() {", "f().await;", "# }"]);
    assert_eq!(
        check_doctest("docs/embedding.md", &compiled_only),
        ["docs/embedding.md:7: a hidden async fn that no runtime calls is compiled, never run"]
    );
    let run = block(
        "rust",
        &["# async fn example() {}", "# runtime.block_on(example());"],
    );
    assert!(check_doctest("docs/embedding.md", &run).is_empty());
    assert_eq!(
        check_doctest("docs/embedding.md", &block("rust,no_run", &["f();"])),
        ["docs/embedding.md:7: `no_run` compiles the example without running it"]
    );
    assert_eq!(
        check_doctest("docs/cli.md", &block("rust", &["f();"])).len(),
        1,
        "only the included file's blocks are doctests"
    );
}
