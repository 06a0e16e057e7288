//! The real binary end to end: exit statuses, streams and output shapes.

use super::run::{routex, scratch};

#[test]
fn help_and_version_exit_0() {
    let help = routex(&["--help"]);
    assert_eq!(help.code, 0);
    for command in [
        "check", "explain", "lint", "fmt", "build", "import", "decide", "sim",
    ] {
        assert!(help.stdout.contains(command), "help lists {command}");
    }
    let version = routex(&["--version"]);
    assert_eq!((version.code, version.stdout.trim()), (0, "routex 0.1.0"));
}

#[test]
fn usage_errors_exit_2_with_a_message_on_stderr() {
    for args in [
        &[][..],
        &["frobnicate"],
        &["check"],
        &["check", "--format", "xml", "round-robin"],
        &["lint"],
        &["explain", "--format", "github", "round-robin"],
        &["explain", "--format", "sarif", "round-robin"],
    ] {
        let out = routex(args);
        assert_eq!(out.code, 2, "{args:?}: {out:?}");
        assert!(!out.stderr.trim().is_empty(), "{args:?} explains itself");
        assert!(out.stdout.is_empty(), "{args:?} prints nothing on stdout");
    }
}

#[test]
fn missing_files_exit_2_with_one_line() {
    let routes = "crates/cli/tests/inputs/cli/nope.routes";
    let json = "crates/cli/tests/inputs/cli/nope.json";
    for (args, missing) in [
        (&["lint", routes][..], routes),
        (&["build", routes], routes),
        (&["import", json], json),
        (&["check", "--config", json, "round-robin"], json),
        (&["explain", "--config", routes, "round-robin"], routes),
        (&["fmt", routes], routes),
    ] {
        let out = routex(args);
        assert_eq!(out.code, 2, "{args:?}: {out:?}");
        assert_eq!(
            out.stderr,
            format!("routex: {missing}: no such file or directory\n")
        );
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn a_directory_without_inputs_exits_2() {
    let dir = scratch("empty-dir");
    std::fs::write(dir.join("notes.txt"), "not a config").expect("write");
    std::fs::write(dir.join("scenario.json"), r#"{"workload": {}}"#).expect("write");
    let path = dir.display().to_string();
    let out = routex(&["lint", &path]);
    assert_eq!(out.code, 2, "{out:?}");
    assert_eq!(
        out.stderr,
        format!("routex: {path}: no *.routes or lb-config *.json files found\n")
    );
}

#[test]
fn oversized_files_are_refused_with_exit_2() {
    let dir = scratch("big");
    let big = dir.join("big.routes");
    // 10 MiB of comments: over the 4 MiB input limit.
    let line = "# padding padding padding padding padding padding padding padding\n";
    std::fs::write(&big, line.repeat(10 * 1024 * 1024 / line.len() + 1)).expect("write");
    let path = big.display().to_string();
    for args in [&["build", &path][..], &["fmt", "--check", &path]] {
        let out = routex(args);
        assert_eq!(out.code, 2, "{args:?}");
        assert_eq!(
            out.stderr,
            format!("routex: {path}: file is larger than the 4 MiB input limit\n")
        );
    }
    // lint reports it as a finding of that file and goes on.
    let out = routex(&["lint", "--format", "github", &path, "examples/fleet.routes"]);
    assert_eq!(out.code, 1);
    assert_eq!(
        out.stdout,
        format!("::error file={path},line=1,col=1,endLine=1,endColumn=1,title=unreadable_file::the file is larger than the 4 MiB input limit; the file was not linted%0Ahelp: exclude it in routex.toml (`exclude = [\"GLOB\"]`), or name only the files to lint\n")
    );
}

#[test]
fn invalid_utf8_exits_2() {
    let dir = scratch("utf8");
    let file = dir.join("bad.routes");
    std::fs::write(&file, b"default = round-robin\n# \xff\xfe\n").expect("write");
    let path = file.display().to_string();
    let out = routex(&["build", &path]);
    assert_eq!(out.code, 2);
    assert_eq!(
        out.stderr,
        format!("routex: {path}: not valid UTF-8 (byte 24)\n")
    );
    // lint: an unreadable_file finding, exit 1 by the usual rule.
    let out = routex(&["lint", "--format", "json", &path]);
    assert_eq!(out.code, 1);
    let doc = super::run::json(&out.stdout);
    assert_eq!(doc["diagnostics"][0]["code"], "unreadable_file");
    assert_eq!(
        doc["diagnostics"][0]["message"],
        "not valid UTF-8 (byte 24); the file was not linted"
    );
}

#[test]
fn fmt_refuses_files_it_cannot_format() {
    let out = routex(&["fmt", "Cargo.toml"]);
    assert_eq!(out.code, 2);
    assert_eq!(
        out.stderr,
        "routex: Cargo.toml: fmt formats *.routes files and expressions\n"
    );
    let dir = scratch("fmt-header");
    let file = dir.join("a.routes");
    std::fs::write(&file, "default = round-robin\n").expect("write");
    let path = file.display().to_string();
    let out = routex(&["fmt", "--header", &path]);
    assert_eq!(out.code, 2);
    assert_eq!(
        out.stderr,
        format!("routex: {path}: --header applies to expressions, not route files\n")
    );
}

#[test]
fn directories_where_files_are_expected_exit_2() {
    for (args, message) in [
        (
            &["check", "--config", "examples", "round-robin"][..],
            "routex: examples: is a directory\n",
        ),
        (&["build", "examples"], "routex: examples: is a directory\n"),
        (
            &["import", "examples"],
            "routex: examples: is a directory\n",
        ),
        (
            &["fmt", "examples"],
            "routex: examples: fmt formats *.routes files and expressions\n",
        ),
    ] {
        let out = routex(args);
        assert_eq!((out.code, out.stderr.as_str()), (2, message), "{args:?}");
    }
}
