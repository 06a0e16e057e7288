//! What ships around the binary: shell completions, the man page, `--color`
//! and the environment it honours, `fmt --write` and `fmt --check`'s diff,
//! and the GitHub Action and pre-commit hook definitions.

use super::run::{root, routex, scratch};
use routex_cli::human::Style;
use routex_cli::output::{style_for, ColorChoice};
use std::process::Command;

#[test]
fn completions_cover_every_command_for_each_shell() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let out = routex(&["completions", shell]);
        assert_eq!(out.code, 0, "{shell}: {}", out.stderr);
        for command in [
            "check", "explain", "lint", "fmt", "build", "import", "decide", "sim",
        ] {
            assert!(out.stdout.contains(command), "{shell} lacks {command}");
        }
    }
    let bad = routex(&["completions", "tcsh"]);
    assert_eq!(bad.code, 2);
}

#[test]
fn bash_completion_loads_in_bash() {
    // A real consumer: bash sources the script and registers the function.
    let script = routex(&["completions", "bash"]).stdout;
    let dir = scratch("completions");
    let file = dir.join("routex.bash");
    std::fs::write(&file, script).expect("write");
    let Ok(out) = Command::new("bash")
        .arg("-c")
        .arg(format!("source '{}' && complete -p routex", file.display()))
        .output()
    else {
        return; // no bash on this machine: the generation test above still ran
    };
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("_routex"));
}

#[test]
fn man_pages_are_roff_for_routex_and_each_command() {
    let page = routex(&["man"]);
    assert_eq!(page.code, 0);
    assert!(
        page.stdout.starts_with(".ie \\n(.g .ds Aq"),
        "{}",
        page.stdout
    );
    assert!(page.stdout.contains(".TH routex 1"));
    assert!(page.stdout.contains("\\-\\-color"));
    let lint = routex(&["man", "lint"]);
    assert!(
        lint.stdout
            .contains(".TH routex-lint 1  \"routex-lint 0.1.0\""),
        "{}",
        lint.stdout
    );
    assert!(lint.stdout.contains("routex\\-lint \\- Lint route files"));
    assert!(
        lint.stdout.contains("\\-\\-color"),
        "the global flag is listed"
    );
    assert!(lint.stdout.contains("\\-\\-deny\\-warnings"));
    let unknown = routex(&["man", "nope"]);
    assert_eq!(
        (unknown.code, unknown.stderr.as_str()),
        (2, "routex: man: no command `nope`\n")
    );
}

#[test]
fn color_choice_and_environment() {
    let style =
        |choice, terminal, no_color, force| style_for(choice, terminal, no_color, force, 80);
    let fancy = Style::Fancy { width: 80 };
    let unicode = Style::Unicode { width: 80 };
    use ColorChoice::*;
    assert_eq!(style(Auto, true, false, false), fancy);
    assert_eq!(style(Auto, false, false, false), Style::Plain);
    assert_eq!(
        style(Auto, true, true, false),
        unicode,
        "NO_COLOR on a terminal"
    );
    assert_eq!(
        style(Auto, false, false, true),
        fancy,
        "CLICOLOR_FORCE when piped"
    );
    assert_eq!(
        style(Auto, false, true, true),
        Style::Plain,
        "NO_COLOR wins"
    );
    assert_eq!(
        style(Always, false, true, false),
        fancy,
        "an explicit flag wins"
    );
    assert_eq!(style(Never, true, false, true), unicode);
    assert_eq!(style(Never, false, false, false), Style::Plain);
}

#[test]
fn color_flag_and_clicolor_force_reach_the_output() {
    let run = |args: &[&str], env: Option<(&str, &str)>| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_routex"));
        command
            .args(args)
            .current_dir(root())
            .env_remove("NO_COLOR")
            .env_remove("CLICOLOR_FORCE");
        if let Some((k, v)) = env {
            command.env(k, v);
        }
        String::from_utf8_lossy(&command.output().expect("runs").stdout).into_owned()
    };
    let check = ["check", "powerOf2"];
    assert!(!run(&check, None).contains('\u{1b}'), "piped: plain");
    let forced = ["--color", "always", "check", "powerOf2"];
    assert!(run(&forced, None).contains('\u{1b}'), "--color always");
    assert!(run(&check, Some(("CLICOLOR_FORCE", "1"))).contains('\u{1b}'));
    assert!(!run(&check, Some(("CLICOLOR_FORCE", "0"))).contains('\u{1b}'));
    let never = ["check", "--color", "never", "powerOf2"];
    assert!(
        !run(&never, Some(("CLICOLOR_FORCE", "1"))).contains('\u{1b}'),
        "global flag after the command"
    );
}

#[test]
fn fmt_write_rewrites_only_files_that_change() {
    let dir = scratch("fmt-write");
    let messy = dir.join("messy.routes");
    let clean = dir.join("clean.routes");
    std::fs::write(
        &messy,
        "model \"m\"   =   pulsar( seed=\"a\" )\ndefault=random\n",
    )
    .expect("write");
    std::fs::write(&clean, "default = random\n").expect("write");
    let before = std::fs::metadata(&clean)
        .and_then(|m| m.modified())
        .expect("mtime");
    std::thread::sleep(std::time::Duration::from_millis(20));
    let out = routex(&[
        "fmt",
        "--write",
        messy.to_str().unwrap(),
        clean.to_str().unwrap(),
    ]);
    assert_eq!(
        (out.code, out.stdout.as_str(), out.stderr.as_str()),
        (0, "", "")
    );
    assert_eq!(
        std::fs::read_to_string(&messy).unwrap(),
        "model \"m\" = pulsar(seed=\"a\")\ndefault = random\n"
    );
    let after = std::fs::metadata(&clean)
        .and_then(|m| m.modified())
        .expect("mtime");
    assert_eq!(before, after, "a formatted file is not touched");
    let check = routex(&["fmt", "--check", messy.to_str().unwrap()]);
    assert_eq!(check.code, 0);
    let expr = routex(&["fmt", "--write", "pulsar;seed=a"]);
    assert_eq!(expr.code, 2);
    assert_eq!(
        expr.stderr,
        "routex: arg:1: --write rewrites route files; an expression has no file to write\n"
    );
}

#[test]
fn fmt_check_prints_a_unified_diff_on_stderr() {
    let out = routex(&[
        "fmt",
        "--check",
        "crates/cli/tests/inputs/cli/unformatted.routes",
    ]);
    assert_eq!(out.code, 1);
    assert_eq!(
        out.stdout,
        "crates/cli/tests/inputs/cli/unformatted.routes: not formatted\n"
    );
    assert_eq!(
        out.stderr,
        "--- crates/cli/tests/inputs/cli/unformatted.routes\n\
         +++ crates/cli/tests/inputs/cli/unformatted.routes (formatted)\n\
         @@ -1,2 +1,2 @@\n\
         -model \"m\"   =   pulsar( seed=\"a\" )\n\
         -default=random\n\
         +model \"m\" = pulsar(seed=\"a\")\n\
         +default = random\n"
    );
}

#[test]
fn the_action_and_the_hook_run_routex_as_documented() {
    let action = std::fs::read_to_string(root().join("action.yml")).expect("action.yml");
    for needle in [
        "using: composite",
        "cargo install --locked --quiet --path \"$GITHUB_ACTION_PATH/crates/cli\"",
        "--format github",
        "--format sarif",
        "github/codeql-action/upload-sarif",
    ] {
        assert!(action.contains(needle), "action.yml lacks {needle}");
    }
    let hooks = std::fs::read_to_string(root().join(".pre-commit-hooks.yaml")).expect("hooks");
    for needle in [
        "id: routex-lint",
        "entry: scripts/pre-commit-routex lint",
        "id: routex-fmt",
        "language: script",
    ] {
        assert!(
            hooks.contains(needle),
            ".pre-commit-hooks.yaml lacks {needle}"
        );
    }
    // The hooks' commands work on the files pre-commit would pass.
    let lint = routex(&[
        "lint",
        "--deny-warnings",
        "examples/fleet.routes",
        "examples/lb-config.json",
    ]);
    assert_eq!(lint.code, 0, "{lint:?}");
    let fmt = routex(&["fmt", "--check", "examples/fleet.routes"]);
    assert_eq!(fmt.code, 0, "{fmt:?}");
}
