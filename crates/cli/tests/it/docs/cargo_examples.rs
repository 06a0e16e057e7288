//! The `cargo run/build --example NAME` commands the docs and the examples'
//! headers give: the workspace's default member is the command line's
//! crate, so a command without `-p routex` fails at the root ("no example
//! target named ..."), and one without the example's required features
//! fails too. These commands are not run (each builds the core anew, or
//! serves forever); their form is checked against the root Cargo.toml.

use std::path::Path;

/// Each `[[example]]` of the root manifest with its `required-features`
/// (an example without the key requires none).
fn required_features(manifest: &str) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    let mut in_example = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_example = line == "[[example]]";
            if in_example {
                out.push((String::new(), Vec::new()));
            }
            continue;
        }
        let Some(entry) = out.last_mut().filter(|_| in_example) else {
            continue;
        };
        if let Some(v) = line.strip_prefix("name = ") {
            entry.0 = v.trim_matches('"').to_owned();
        } else if let Some(v) = line.strip_prefix("required-features = ") {
            entry.1 = v
                .trim_matches(|c| c == '[' || c == ']')
                .split(',')
                .map(|f| f.trim().trim_matches('"').to_owned())
                .filter(|f| !f.is_empty())
                .collect();
        }
    }
    out
}

/// What is wrong with one command line (`words` from `cargo` on), if
/// anything.
fn check_command(words: &[String], examples: &[(String, Vec<String>)]) -> Option<String> {
    let at = words.iter().position(|w| w == "--example")?;
    let name = words.get(at + 1)?;
    let has_package = words
        .windows(2)
        .any(|w| (w[0] == "-p" || w[0] == "--package") && w[1] == "routex");
    if !has_package {
        return Some(format!("`--example {name}` without `-p routex`"));
    }
    let given: Vec<&str> = words
        .windows(2)
        .filter(|w| w[0] == "--features" || w[0] == "-F")
        .flat_map(|w| w[1].split([',', ' ']))
        .collect();
    let all = words.iter().any(|w| w == "--all-features");
    let Some((_, required)) = examples.iter().find(|(n, _)| n == name) else {
        // Examples without an `[[example]]` entry are auto-discovered and
        // require nothing; a name that does not exist at all is caught by
        // its file's absence.
        return (!Path::new(&crate::repo().join("examples").join(format!("{name}.rs"))).exists())
            .then(|| format!("no example `{name}`"));
    };
    let missing: Vec<&String> = required
        .iter()
        .filter(|f| !all && !given.contains(&f.as_str()))
        .collect();
    (!missing.is_empty()).then(|| format!("`--example {name}` without the features {missing:?}"))
}

/// The lines of `text` that run cargo on an example, as words from `cargo`.
fn commands(text: &str) -> Vec<(usize, Vec<String>)> {
    text.lines()
        .enumerate()
        .filter_map(|(i, line)| {
            let start = line.find("cargo ")?;
            line.contains("--example ").then_some(())?;
            // Up to a closing backtick or a shell comment.
            let rest = &line[start..];
            let end = rest.find(['`', '#']).unwrap_or(rest.len());
            let words = super::shell::split(rest[..end].trim()).ok()?;
            Some((i + 1, words))
        })
        .collect()
}

fn files() -> Vec<std::path::PathBuf> {
    let root = crate::repo();
    let mut out = super::documents();
    let mut stack = vec![root.join("examples")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("examples").flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn every_example_command_names_the_package_and_its_features() {
    let root = crate::repo();
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).expect("Cargo.toml");
    let examples = required_features(&manifest);
    assert!(
        examples.iter().any(|(n, f)| n == "proxy" && f.len() == 3),
        "{examples:?}"
    );
    let mut problems = Vec::new();
    let mut seen = 0;
    for path in files() {
        let text = std::fs::read_to_string(&path).expect("read");
        for (line, words) in commands(&text) {
            seen += 1;
            if let Some(p) = check_command(&words, &examples) {
                let shown = path.strip_prefix(root).unwrap_or(&path).display();
                problems.push(format!("{shown}:{line}: {p}"));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // The docs' and headers' commands at the time of writing: embed (2),
    // proxy (3), compile_loop (2), router_loop (3).
    assert!(seen >= 10, "{seen} commands found");
}

#[test]
fn the_check_finds_what_fails_at_the_root() {
    let examples = vec![(
        "proxy".to_owned(),
        vec!["tokio".to_owned(), "http".to_owned(), "metrics".to_owned()],
    )];
    let words = |s: &str| super::shell::split(s).expect("words");
    assert_eq!(
        check_command(
            &words("cargo run --example proxy --features tokio,http,metrics"),
            &examples
        ),
        Some("`--example proxy` without `-p routex`".into())
    );
    assert_eq!(
        check_command(
            &words("cargo run -p routex --example proxy --features tokio,http -- --demo"),
            &examples
        ),
        Some("`--example proxy` without the features [\"metrics\"]".into())
    );
    assert_eq!(
        check_command(
            &words("cargo run -p routex --example proxy --all-features"),
            &examples
        ),
        None
    );
    assert_eq!(
        check_command(
            &words("cargo run -p routex --example proxy --features \"tokio http metrics\""),
            &examples
        ),
        None
    );
    assert_eq!(
        check_command(&words("cargo test --workspace"), &examples),
        None
    );
}
