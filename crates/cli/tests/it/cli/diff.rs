//! `routex diff` through the binary: the three formats on the bundled pairs
//! (tests/inputs/diff, snapshots under snapshots/cli), exit statuses, kinds,
//! inputs with errors, the input limit, and `--git` on a scratch repository.

use super::run::{json, root, routex, scratch, Output};
use std::path::Path;
use std::process::Command;

const OLD: &str = "tests/inputs/diff/old.json";
const NEW: &str = "tests/inputs/diff/new.json";

fn settings() -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("../../snapshots/cli");
    settings.set_prepend_module_to_snapshot(false);
    settings
}

fn ok(args: &[&str]) -> String {
    let out = routex(args);
    assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
    assert_eq!(out.stderr, "", "{args:?}");
    out.stdout
}

#[test]
fn lb_config_pair_in_every_format() {
    let human = ok(&["diff", OLD, NEW]);
    let document = ok(&["diff", "--format", "json", OLD, NEW]);
    let github = ok(&["diff", "--format", "github", OLD, NEW]);
    settings().bind(|| {
        insta::assert_snapshot!("diff_json_pair_human", human);
        insta::assert_snapshot!("diff_json_pair_json", document);
        insta::assert_snapshot!("diff_json_pair_github", github);
    });
}

#[test]
fn route_file_pair_in_every_format() {
    let (old, new) = (
        "tests/inputs/diff/old.routes",
        "tests/inputs/diff/new.routes",
    );
    let human = ok(&["diff", old, new]);
    let github = ok(&["diff", "--format", "github", old, new]);
    settings().bind(|| {
        insta::assert_snapshot!("diff_routes_pair_human", human);
        insta::assert_snapshot!("diff_routes_pair_github", github);
    });
}

#[test]
fn json_document_names_fields_provenance_and_rejections() {
    let doc = json(&ok(&["diff", "--format", "json", OLD, NEW]));
    assert_eq!(doc["version"], 1);
    assert_eq!(
        (doc["old"].as_str(), doc["new"].as_str()),
        (Some(OLD), Some(NEW))
    );
    assert_eq!(
        doc["summary"],
        serde_json::json!({"changed": 2, "added": 1, "removed": 1, "unchanged": 2, "rejected": 4})
    );
    let models = doc["models"].as_array().cloned().unwrap_or_default();
    let ids: Vec<(&str, &str)> = models
        .iter()
        .map(|m| {
            (
                m["model"].as_str().unwrap_or("-"),
                m["change"].as_str().unwrap_or("-"),
            )
        })
        .collect();
    assert_eq!(
        ids,
        [
            ("llama-3-70b", "changed"),
            ("mixtral-8x7b", "changed"),
            ("retired", "removed"),
            ("qwen-2-72b", "added"),
        ]
    );
    let pww = &models[0]["algorithms"][0];
    assert_eq!(pww["algorithm"], "pulsar-wait-and-widen");
    assert_eq!(pww["before"]["from"], "model_entry");
    // The full policies, with explain's provenance per field.
    assert_eq!(
        pww["after"]["policy"]["settings"]["cache_affinity_wait_ms"],
        400
    );
    assert_eq!(
        pww["after"]["provenance"]["cache_affinity_wait_ms"],
        "config"
    );
    assert_eq!(pww["after"]["provenance"]["n"], "default");
    let wait = pww["changes"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["field"] == "cache_affinity_wait_ms"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        wait,
        serde_json::json!({
            "field": "cache_affinity_wait_ms",
            "before": {"value": 300, "from": "config"},
            "after": {"value": 400, "from": "config"},
        })
    );
    let rejected = &models[1]["algorithms"][0]["rejected"][0];
    assert_eq!(rejected["code"], "inert_combination");
    assert_eq!(
        rejected["expressions"],
        "wait-and-widen;max_queue_time_ceil_ms=... without max_queue_time_floor_ms"
    );
}

#[test]
fn no_difference_exits_0_and_says_so() {
    let out = ok(&["diff", "examples/lb-config.json", "examples/lb-config.json"]);
    assert!(
        out.ends_with("request_algorithms: 0 entries changed; models: 0 changed, 0 added, 0 removed, 6 unchanged; 0 classes of expressions now rejected\n"),
        "{out}"
    );
    assert_eq!(
        ok(&[
            "diff",
            "--format",
            "github",
            "examples/lb-config.json",
            "examples/lb-config.json"
        ]),
        ""
    );
    let doc = json(&ok(&[
        "diff",
        "--format",
        "json",
        "examples/fleet.routes",
        "examples/fleet.routes",
    ]));
    assert_eq!(doc["models"], serde_json::json!([]));
    assert_eq!(doc["request_algorithms"], serde_json::json!([]));
}

#[test]
fn mismatched_kinds_are_usage_errors_naming_both_files() {
    for (old, new, message) in [
        (
            "examples/fleet.routes",
            "examples/lb-config.json",
            "routex: diff: examples/fleet.routes is a route file and examples/lb-config.json an lb-config.json: compare two files of one kind (`routex build examples/fleet.routes` writes the route file's lb-config.json)\n",
        ),
        (
            "examples/lb-config.json",
            "examples/fleet.routes",
            "routex: diff: examples/lb-config.json is an lb-config.json and examples/fleet.routes a route file: compare two files of one kind (`routex build examples/fleet.routes` writes the route file's lb-config.json)\n",
        ),
        (
            "examples/lb-config.json",
            "examples/scenario-zipf-z1.json",
            "routex: examples/scenario-zipf-z1.json: not an lb-config.json (none of `default`, `request_algorithms`, `models` at the top level)\n",
        ),
    ] {
        let out = routex(&["diff", old, new]);
        assert_eq!((out.code, out.stdout.as_str()), (2, ""), "{old} {new}");
        assert_eq!(out.stderr, message);
    }
}

#[test]
fn wrong_argument_counts_are_usage_errors() {
    let cases: [&[&str]; 3] = [
        &["diff", OLD],
        &["diff", "--git", "HEAD", OLD, NEW],
        &["diff", "-", "-"],
    ];
    for args in cases {
        let out = routex(args);
        assert_eq!(out.code, 2, "{args:?}");
        assert!(
            out.stderr.starts_with("routex: diff"),
            "{args:?}: {}",
            out.stderr
        );
    }
    // Three files: clap's own usage error.
    assert_eq!(routex(&["diff", OLD, NEW, OLD]).code, 2);
    // A diff is not a list of findings: no SARIF.
    assert_eq!(routex(&["diff", "--format", "sarif", OLD, NEW]).code, 2);
}

#[test]
fn an_input_with_errors_shows_its_diagnostics_instead_of_a_diff() {
    let broken = "tests/inputs/diff/broken.json";
    for (old, new) in [(OLD, broken), (broken, NEW)] {
        let out = routex(&["diff", "--format", "json", old, new]);
        assert_eq!(out.code, 1, "{old} {new}");
        let doc = json(&out.stdout);
        assert!(doc.get("models").is_none());
        assert_eq!(doc["diagnostics"][0]["code"], "unknown_field");
        assert_eq!(doc["diagnostics"][0]["source"], broken);
        assert_eq!(doc["summary"]["errors"], 1);
    }
    let out = routex(&["diff", "--format", "github", OLD, broken]);
    assert_eq!(out.code, 1);
    assert!(
        out.stdout
            .starts_with("::error file=tests/inputs/diff/broken.json,line=4,col=34,"),
        "{}",
        out.stdout
    );
    // Both broken: both reported.
    let out = routex(&["diff", "--format", "json", broken, broken]);
    assert_eq!(json(&out.stdout)["summary"]["errors"], 2);
}

#[test]
fn oversized_and_missing_inputs_exit_2_like_every_command() {
    let dir = scratch("diff-big");
    let big = dir.join("big.json");
    let line = "                                                                \n";
    let mut text = String::from("{\"default\": \"random\"\n");
    text.push_str(&line.repeat(5 * 1024 * 1024 / line.len()));
    text.push_str("}\n");
    std::fs::write(&big, &text).expect("write");
    let path = big.display().to_string();
    let out = routex(&["diff", OLD, &path]);
    assert_eq!(out.code, 2);
    assert_eq!(
        out.stderr,
        format!("routex: {path}: file is larger than the 4 MiB input limit\n")
    );
    let out = routex(&["diff", "tests/inputs/diff/nothere.json", NEW]);
    assert_eq!(out.code, 2);
    assert_eq!(
        out.stderr,
        "routex: tests/inputs/diff/nothere.json: no such file or directory\n"
    );
}

/// `git ARGS` in `dir`, which must succeed.
fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args([
            "-c",
            "user.name=routex",
            "-c",
            "user.email=routex@example.invalid",
        ])
        .args([
            "-c",
            "commit.gpgsign=false",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git is installed (CI has it)");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A repository with two commits of `lb-config.json` (the bundled pair)
/// and, in the working tree, a third version.
fn repository(name: &str) -> std::path::PathBuf {
    let dir = scratch(name);
    git(&dir, &["init", "-q"]);
    let file = dir.join("lb-config.json");
    for fixture in [OLD, NEW] {
        std::fs::copy(root().join(fixture), &file).expect("copy");
        git(&dir, &["add", "lb-config.json"]);
        git(&dir, &["commit", "-q", "-m", fixture]);
    }
    dir
}

#[test]
fn git_revisions_compare_like_the_files() {
    let dir = repository("diff-git");
    let file = dir.join("lb-config.json").display().to_string();
    let by_files = json(&ok(&["diff", "--format", "json", OLD, NEW]));
    let by_git = json(&ok(&[
        "diff",
        "--format",
        "json",
        "--git",
        "HEAD~1..HEAD",
        &file,
    ]));
    assert_eq!(by_git["old"], format!("HEAD~1:{file}"));
    assert_eq!(by_git["new"], format!("HEAD:{file}"));
    assert_eq!(by_git["models"], by_files["models"]);
    assert_eq!(by_git["summary"], by_files["summary"]);
    // One revision: against the working file (unchanged since HEAD).
    let against_work = json(&ok(&["diff", "--format", "json", "--git", "HEAD~1", &file]));
    assert_eq!(against_work["new"], file);
    assert_eq!(against_work["models"], by_files["models"]);
    assert_eq!(
        json(&ok(&["diff", "--format", "json", "--git", "HEAD", &file]))["models"],
        serde_json::json!([])
    );
    // github annotates the file itself, not `REV:FILE`.
    let github = ok(&["diff", "--format", "github", "--git", "HEAD~1..HEAD", &file]);
    assert!(
        github
            .lines()
            .all(|l| l.contains(&format!("file={},", file.replace(':', "%3A")))),
        "{github}"
    );
    // A relative path from inside the repository names the same file.
    let out = Command::new(env!("CARGO_BIN_EXE_routex"))
        .args([
            "diff",
            "--format",
            "json",
            "--git",
            "HEAD~1..HEAD",
            "lb-config.json",
        ])
        .current_dir(&dir)
        .output()
        .expect("routex runs");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        json(&String::from_utf8_lossy(&out.stdout))["models"],
        by_files["models"]
    );
}

#[test]
fn git_three_dots_compare_against_the_merge_base_as_git_diff_does() {
    let dir = repository("diff-git-merge-base");
    let file = dir.join("lb-config.json").display().to_string();
    // A branch that left at the first commit and changed nothing since.
    git(&dir, &["branch", "side", "HEAD~1"]);
    let by_files = json(&ok(&["diff", "--format", "json", OLD, NEW]));
    let diff = |spec: &str| json(&ok(&["diff", "--format", "json", "--git", spec, &file]));
    // What HEAD changed since side left it: the whole pair's change.
    let since = diff("side...HEAD");
    assert_eq!(since["old"], format!("merge-base(side,HEAD):{file}"));
    assert_eq!(since["new"], format!("HEAD:{file}"));
    assert_eq!(since["models"], by_files["models"]);
    // What side changed since it left HEAD's history: nothing, where the
    // two-dot form shows HEAD's change reversed.
    assert_eq!(diff("HEAD...side")["models"], serde_json::json!([]));
    assert_ne!(diff("HEAD..side")["models"], serde_json::json!([]));
    // Unrelated or unknown revisions: one line quoting git.
    let out = routex(&["diff", "--git", "nope...HEAD", &file]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr
            .starts_with("routex: --git nope...HEAD: git merge-base: "),
        "{}",
        out.stderr
    );
}

#[test]
fn git_failures_are_one_line_usage_errors() {
    let dir = repository("diff-git-errors");
    let file = dir.join("lb-config.json").display().to_string();
    let usage = |out: Output, message: String| {
        assert_eq!((out.code, out.stdout.as_str()), (2, ""), "{message}");
        assert_eq!(out.stderr, message);
    };
    usage(
        routex(&["diff", "--git", "nope", &file]),
        format!("routex: nope:{file}: git: invalid object name 'nope'.\n"),
    );
    usage(
        routex(&["diff", "--git", "HEAD~5..HEAD", &file]),
        format!("routex: HEAD~5:{file}: git: invalid object name 'HEAD~5'.\n"),
    );
    for spec in ["main..", "..HEAD", "-p", "a...", "...b", "a...b...c"] {
        let out = routex(&["diff", &format!("--git={spec}"), &file]);
        assert_eq!(out.code, 2, "{spec}");
        assert!(
            out.stderr.starts_with("routex: --git: "),
            "{spec}: {}",
            out.stderr
        );
    }
    let untracked = dir.join("other.json");
    std::fs::copy(root().join(OLD), &untracked).expect("copy");
    let untracked = untracked.display().to_string();
    let out = routex(&["diff", "--git", "HEAD", &untracked]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr
            .starts_with(&format!("routex: HEAD:{untracked}: git: "))
            && out.stderr.contains("other.json"),
        "{}",
        out.stderr
    );
    // Outside any repository.
    let outside = scratch("diff-no-repo").join("lb-config.json");
    std::fs::copy(root().join(OLD), &outside).expect("copy");
    let outside = outside.display().to_string();
    // The scratch directory is inside this crate's own checkout: stop git's
    // search for a repository at its parent.
    let ceiling = Path::new(&outside)
        .ancestors()
        .nth(2)
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let out = Command::new(env!("CARGO_BIN_EXE_routex"))
        .args(["diff", "--git", "HEAD", &outside])
        .env("GIT_CEILING_DIRECTORIES", ceiling)
        .output()
        .expect("routex runs");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with(&format!(
            "routex: HEAD:{outside}: git: not a git repository"
        )),
        "{stderr}"
    );
    // No git on PATH.
    let out = Command::new(env!("CARGO_BIN_EXE_routex"))
        .args(["diff", "--git", "HEAD", &file])
        .env("PATH", scratch("diff-empty-path"))
        .output()
        .expect("routex runs");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "routex: --git: git is not installed (no `git` on PATH)\n"
    );
}

#[test]
fn git_revisions_obey_the_input_limit() {
    let dir = scratch("diff-git-big");
    git(&dir, &["init", "-q"]);
    let line = "                                                                \n";
    let text = format!(
        "{{\"default\": \"random\"\n{}}}\n",
        line.repeat(5 * 1024 * 1024 / line.len())
    );
    std::fs::write(dir.join("lb-config.json"), text).expect("write");
    git(&dir, &["add", "lb-config.json"]);
    git(&dir, &["commit", "-q", "-m", "big"]);
    let file = dir.join("lb-config.json").display().to_string();
    let out = routex(&["diff", "--git", "HEAD..HEAD", &file]);
    assert_eq!(out.code, 2);
    assert_eq!(
        out.stderr,
        format!("routex: HEAD:{file}: file is larger than the 4 MiB input limit\n")
    );
}
