//! The project configuration beyond `lint`: its `stargate` key (the
//! command line winning) and the commands that check on the way to another
//! output (`explain`, `build`, `import`, `diff`, `decide`, `sim check`)
//! following the same levels, format and target (docs/cli.md "Project
//! configuration").

use super::run::{json, routex_in, scratch, write, Output};

/// The codes of a JSON report document (the first argument of each).
fn codes(doc: &str) -> Vec<String> {
    json(doc)["diagnostics"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|d| d["code"].as_str().unwrap_or("").to_string())
        .collect()
}

/// Waits for the affinity group without a queue SLO: `no_queue_slo` under
/// `widening` (its shortcut, docs/stargate.md 3.8.3), clean under
/// `sessions`.
const SHORTCUT: &str = "pulsar-wait-and-widen;cache_affinity_wait_ms=300";
const SHORTCUT_FILE: &str = "default = pulsar-wait-and-widen(cache_affinity_wait_ms = 300)\n";

/// A field only `sessions` accepts (docs/stargate.md 3.10).
const STICKY: &str = "default = pulsar-wait-and-widen\nmodel \"m\" = pulsar-wait-and-widen(\
    cache_affinity_wait_ms = 300, max_queue_time_floor_ms = 1, max_queue_time_ceil_ms = 2, \
    last_cluster_affinity = true)\n";

#[test]
fn the_stargate_key_applies_and_the_command_line_wins() {
    let dir = scratch("project-stargate");
    write(&dir, "routex.toml", "stargate = \"widening\"\n");
    write(&dir, "fleet/a.routes", SHORTCUT_FILE);
    write(&dir, "other/routex.toml", "stargate = \"sessions\"\n");
    write(&dir, "other/b.routes", SHORTCUT_FILE);
    // No configuration: the newest target, no shortcut.
    let out = routex_in(
        &dir,
        &["check", "--no-config-file", "--format", "json", SHORTCUT],
    );
    assert_eq!(
        (out.code, codes(&out.stdout)),
        (0, vec![]),
        "{}",
        out.stderr
    );
    // The file says widening.
    let out = routex_in(&dir, &["check", "--format", "json", SHORTCUT]);
    assert_eq!(codes(&out.stdout), ["no_queue_slo"], "{}", out.stderr);
    // The command line wins over it.
    let out = routex_in(
        &dir,
        &[
            "check",
            "--stargate",
            "sessions",
            "--format",
            "json",
            SHORTCUT,
        ],
    );
    assert_eq!(codes(&out.stdout), Vec::<String>::new(), "{}", out.stderr);
    // lint: each file its nearest configuration's target.
    let out = routex_in(&dir, &["lint", "--format", "json", "."]);
    let doc = json(&out.stdout);
    let sources: Vec<(String, String)> = doc["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .map(|d| {
            (
                d["code"].as_str().unwrap_or("").into(),
                d["source"].as_str().unwrap_or("").into(),
            )
        })
        .collect();
    assert_eq!(
        sources,
        [("no_queue_slo".to_string(), "fleet/a.routes".to_string())]
    );
    // And --stargate wins for every file.
    let out = routex_in(
        &dir,
        &["lint", "--stargate", "widening", "--format", "json", "."],
    );
    assert_eq!(codes(&out.stdout), ["no_queue_slo", "no_queue_slo"]);
}

#[test]
fn an_unknown_stargate_target_in_the_file_is_invalid_setting() {
    let dir = scratch("project-stargate-unknown");
    write(&dir, "routex.toml", "stargate = \"newest\"\n");
    let out = routex_in(&dir, &["check", "--format", "json", "round-robin"]);
    assert_eq!(out.code, 1);
    let doc = json(&out.stdout);
    let bad = &doc["diagnostics"][0];
    assert_eq!(bad["code"], "invalid_setting");
    assert_eq!(bad["message"], "unknown stargate target `newest`");
    assert_eq!(
        bad["help"],
        "the targets: widening, sessions (docs/stargate.md 0.1)"
    );
}

#[test]
fn explain_follows_the_target_and_the_levels() {
    let dir = scratch("project-explain");
    write(
        &dir,
        "routex.toml",
        "stargate = \"widening\"\n[levels]\ndeprecated_alias = \"deny\"\n",
    );
    // widening's shortcut is reported on stderr; the explanation still
    // prints (a warning).
    let out = routex_in(&dir, &["explain", "--format", "json", SHORTCUT]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains("no_queue_slo"), "{}", out.stderr);
    let policy = &json(&out.stdout)["policy"];
    assert_eq!(policy["algorithm"], "pulsar-wait-and-widen");
    assert_eq!(policy["stargate"], "widening");
    // The file denies the alias: no explanation, exit 1.
    let out = routex_in(&dir, &["explain", "powerOf2"]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert_eq!(out.stdout, "");
    assert!(out.stderr.contains("deprecated_alias"), "{}", out.stderr);
    // The command line wins over both.
    let out = routex_in(
        &dir,
        &[
            "explain",
            "--stargate",
            "sessions",
            "--allow",
            "deprecated_alias",
            "powerOf2",
        ],
    );
    assert_eq!((out.code, out.stderr.as_str()), (0, ""));
}

#[test]
fn build_and_import_follow_the_file_levels_format_and_target() {
    let dir = scratch("project-convert");
    write(
        &dir,
        "routex.toml",
        "stargate = \"widening\"\nformat = \"json\"\n[levels]\ndeprecated_alias = \"deny\"\n",
    );
    write(&dir, "alias.routes", "default = powerOf2\n");
    write(
        &dir,
        "wait.routes",
        "default = round-robin\nmodel \"m\" = pulsar-wait-and-widen(cache_affinity_wait_ms = 300)\n",
    );
    // Denied by the file: nothing written, the finding in the file's format.
    let out = routex_in(&dir, &["build", "alias.routes"]);
    assert_eq!((out.code, out.stdout.as_str()), (1, ""));
    assert_eq!(codes(&out.stderr), ["deprecated_alias"]);
    // --allow wins; --format human wins over the file's json.
    let out = routex_in(
        &dir,
        &["build", "--allow", "deprecated_alias", "alias.routes"],
    );
    assert_eq!((out.code, out.stderr.as_str()), (0, ""));
    // The file's target: widening's shortcut, as a warning in JSON.
    let out = routex_in(&dir, &["build", "-o", "lb-config.json", "wait.routes"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(codes(&out.stderr), ["no_queue_slo"]);
    let out = routex_in(&dir, &["import", "lb-config.json"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(codes(&out.stderr), ["no_queue_slo"]);
    let out = routex_in(
        &dir,
        &["import", "--stargate", "sessions", "lb-config.json"],
    );
    assert_eq!((out.code, out.stderr.as_str()), (0, ""));
}

#[test]
fn diff_follows_the_target_and_levels_of_the_new_file() {
    let dir = scratch("project-diff");
    write(&dir, "old.routes", "default = round-robin\n");
    write(&dir, "new.routes", STICKY);
    // The newest target knows last_cluster_affinity.
    let out = routex_in(&dir, &["diff", "old.routes", "new.routes"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    // widening does not: the new side has no policy to compare.
    write(&dir, "routex.toml", "stargate = \"widening\"\n");
    let out = routex_in(
        &dir,
        &["diff", "--format", "json", "old.routes", "new.routes"],
    );
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert_eq!(codes(&out.stdout), ["not_in_target"]);
    // The help names both ways to choose the target: the flag and the key
    // of the file that chose this one.
    let doc = json(&out.stdout);
    assert_eq!(
        doc["diagnostics"][0]["help"],
        "accepted by stargate target sessions (choose it with `--stargate sessions`, \
         or `stargate = \"sessions\"` in routex.toml)"
    );
    let out = routex_in(
        &dir,
        &["diff", "--stargate", "sessions", "old.routes", "new.routes"],
    );
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
}

#[test]
fn decide_and_sim_check_follow_the_target() {
    let dir = scratch("project-decide");
    write(&dir, "routex.toml", "stargate = \"widening\"\n");
    write(&dir, "fleet.routes", STICKY);
    let input = super::run::root().join("crates/cli/tests/inputs/decide/spec-example.json");
    let input = input.to_str().expect("a UTF-8 path");
    let out = routex_in(
        &dir,
        &["decide", "--config", "fleet.routes", "--input", input],
    );
    assert_eq!(out.code, 2, "{}{}", out.stdout, out.stderr);
    assert!(out.stderr.contains("not_in_target"), "{}", out.stderr);
    let out = routex_in(
        &dir,
        &[
            "decide",
            "--stargate",
            "sessions",
            "--config",
            "fleet.routes",
            "--input",
            input,
        ],
    );
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    // sim check: a scenario without its own `stargate` takes the file's
    // for its base configuration.
    let out = routex_in(
        &dir,
        &[
            "build",
            "--stargate",
            "sessions",
            "-o",
            "lb.json",
            "fleet.routes",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let example = super::run::root().join("examples/scenario-zipf-z1.json");
    let mut scenario = json(&std::fs::read_to_string(example).expect("the example"));
    assert!(scenario.get("stargate").is_none());
    scenario["base_config"] = "lb.json".into();
    write(&dir, "scenario.json", &scenario.to_string());
    let has_target_error = |out: &Output| codes(&out.stdout).iter().any(|c| c == "not_in_target");
    let out = routex_in(&dir, &["sim", "check", "--format", "json", "scenario.json"]);
    assert!(has_target_error(&out), "{}", out.stdout);
    let out = routex_in(
        &dir,
        &[
            "sim",
            "check",
            "--stargate",
            "sessions",
            "--format",
            "json",
            "scenario.json",
        ],
    );
    assert!(!has_target_error(&out), "{}", out.stdout);
}

/// The project file's own findings are shown, but `check` and `explain`
/// count only the expressions given (docs/cli.md "Output formats").
#[test]
fn the_summary_counts_the_expressions_given_not_the_project_file() {
    let dir = scratch("project-summary");
    write(&dir, "routex.toml", "formt = \"json\"\n");
    let out = routex_in(&dir, &["check", "round-robin"]);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("unknown_setting"), "{}", out.stdout);
    assert!(
        out.stdout
            .ends_with("1 error, 0 warnings in 1 expression\n"),
        "{}",
        out.stdout
    );
    let out = routex_in(&dir, &["check", "round-robin", "powerOf2"]);
    assert!(
        out.stdout
            .ends_with("1 error, 1 warning in 2 expressions\n"),
        "{}",
        out.stdout
    );
    let out = routex_in(&dir, &["explain", "round-robin"]);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stderr
            .ends_with("1 error, 0 warnings in 1 expression\n"),
        "{}",
        out.stderr
    );
}
