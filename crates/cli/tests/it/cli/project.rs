//! The project configuration end to end: discovery of `routex.toml`,
//! precedence (file, per-path override, command line), every level change
//! and its exit status, suppressions in route files and in the
//! configuration, the formats that say what was suppressed, and lint going
//! on past a file it cannot read.

use super::run::{json, routex_in, scratch, write, Output};

/// `(code, severity, source)` of every reported finding.
fn findings(out: &Output) -> Vec<(String, String, String)> {
    let doc = json(&out.stdout);
    doc["diagnostics"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|d| {
            (
                d["code"].as_str().unwrap_or("").to_string(),
                d["severity"].as_str().unwrap_or("").to_string(),
                d["source"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

fn f(code: &str, severity: &str, source: &str) -> (String, String, String) {
    (code.into(), severity.into(), source.into())
}

/// A route file with one deprecated alias (warning by default).
const ALIAS: &str = "default = powerOf2\n";

#[test]
fn the_nearest_configuration_wins_and_an_explicit_one_replaces_discovery() {
    let dir = scratch("project-discovery");
    write(
        &dir,
        "routex.toml",
        "[levels]\ndeprecated_alias = \"deny\"\n",
    );
    write(&dir, "a.routes", ALIAS);
    write(&dir, "nested/deeper/b.routes", ALIAS);
    write(
        &dir,
        "nested/routex.toml",
        "[levels]\ndeprecated_alias = \"allow\"\n",
    );
    write(&dir, "nested/deeper/c/d.routes", ALIAS);
    write(
        &dir,
        "elsewhere.toml",
        "[levels]\ndeprecated_alias = \"warn\"\n",
    );
    let out = routex_in(&dir, &["lint", "--format", "json", "."]);
    // a.routes: the root file (deny); nested/...: the nearest file (allow).
    assert_eq!(findings(&out), [f("deprecated_alias", "error", "a.routes")]);
    assert_eq!(out.code, 1);
    // From inside a subdirectory the same files find the same configuration.
    let out = routex_in(
        &dir.join("nested/deeper"),
        &["lint", "--format", "json", "b.routes", "../../a.routes"],
    );
    assert_eq!(
        findings(&out),
        [f("deprecated_alias", "error", "../../a.routes")]
    );
    // --config-file is used for every input, discovery is off.
    let out = routex_in(
        &dir,
        &[
            "lint",
            "--format",
            "json",
            "--config-file",
            "elsewhere.toml",
            "a.routes",
            "nested/deeper/b.routes",
        ],
    );
    assert_eq!(
        findings(&out),
        [
            f("deprecated_alias", "warning", "a.routes"),
            f("deprecated_alias", "warning", "nested/deeper/b.routes")
        ]
    );
    assert_eq!(out.code, 0);
    // --no-config-file: the defaults.
    let out = routex_in(
        &dir,
        &["lint", "--format", "json", "--no-config-file", "a.routes"],
    );
    assert_eq!(
        findings(&out),
        [f("deprecated_alias", "warning", "a.routes")]
    );
}

#[test]
fn levels_come_from_the_file_then_overrides_then_the_command_line() {
    let dir = scratch("project-precedence");
    write(
        &dir,
        "routex.toml",
        "[levels]\ndeprecated_alias = \"deny\"\n\n[[overrides]]\nfiles = [\"legacy/**\"]\nlevels = { deprecated_alias = \"warn\" }\n\n[[overrides]]\nfiles = [\"legacy/old/*.routes\"]\nlevels.deprecated_alias = \"allow\"\n",
    );
    write(&dir, "new.routes", ALIAS);
    write(&dir, "legacy/a.routes", ALIAS);
    write(&dir, "legacy/old/b.routes", ALIAS);
    let out = routex_in(&dir, &["lint", "--format", "json", "."]);
    assert_eq!(
        findings(&out),
        [
            f("deprecated_alias", "warning", "legacy/a.routes"),
            f("deprecated_alias", "error", "new.routes")
        ]
    );
    assert_eq!(out.code, 1);
    // The command line wins over the file and every override.
    let out = routex_in(
        &dir,
        &[
            "lint",
            "--format",
            "json",
            "--warn",
            "deprecated_alias",
            ".",
        ],
    );
    assert_eq!(findings(&out).len(), 3);
    assert!(findings(&out).iter().all(|(_, s, _)| s == "warning"));
    assert_eq!(out.code, 0);
    let out = routex_in(
        &dir,
        &[
            "lint",
            "--format",
            "json",
            "--allow",
            "deprecated_alias",
            ".",
        ],
    );
    assert_eq!(findings(&out), []);
    assert_eq!(out.code, 0);
    // --deny beats --allow for the same code.
    let out = routex_in(
        &dir,
        &[
            "lint",
            "--format",
            "json",
            "--allow",
            "deprecated_alias",
            "--deny",
            "deprecated_alias",
            "legacy/old/b.routes",
        ],
    );
    assert_eq!(
        findings(&out),
        [f("deprecated_alias", "error", "legacy/old/b.routes")]
    );
    assert_eq!(out.code, 1);
}

#[test]
fn every_level_change_has_its_exit_status() {
    let dir = scratch("project-levels");
    write(&dir, "a.routes", ALIAS);
    let run = |args: &[&str]| {
        let mut all = vec!["lint", "--no-config-file"];
        all.extend_from_slice(args);
        all.push("a.routes");
        routex_in(&dir, &all).code
    };
    assert_eq!(run(&[]), 0, "a warning passes");
    assert_eq!(run(&["--deny-warnings"]), 1, "unless warnings are denied");
    assert_eq!(run(&["--deny", "deprecated_alias"]), 1, "warn -> deny");
    assert_eq!(
        run(&["--allow", "deprecated_alias", "--deny-warnings"]),
        0,
        "warn -> allow"
    );
    assert_eq!(run(&["--warn", "deprecated_alias", "--deny-warnings"]), 1);
    // The same through the file.
    for (level, code) in [("allow", 0), ("warn", 0), ("deny", 1)] {
        write(
            &dir,
            "routex.toml",
            &format!("[levels]\ndeprecated_alias = \"{level}\"\n"),
        );
        assert_eq!(routex_in(&dir, &["lint", "a.routes"]).code, code, "{level}");
    }
    std::fs::remove_file(dir.join("routex.toml")).expect("rm");
    // An error of a fixed code cannot be lowered, and the refusal says why.
    let out = routex_in(&dir, &["lint", "--allow", "unknown_parameter", "a.routes"]);
    assert_eq!(out.code, 2);
    assert_eq!(
        out.stderr,
        "routex: --allow unknown_parameter: unknown_parameter is always `deny` (stargate rejects the request with it): it cannot be set to `allow`\n"
    );
    let out = routex_in(&dir, &["lint", "--warn", "deprecated_alis", "a.routes"]);
    assert_eq!(out.code, 2);
    assert_eq!(
        out.stderr,
        "routex: --warn deprecated_alis: unknown diagnostic code; did you mean `deprecated_alias`?\n"
    );
}

#[test]
fn the_configuration_file_reports_its_own_problems() {
    let dir = scratch("project-problems");
    write(&dir, "a.routes", ALIAS);
    write(
        &dir,
        "routex.toml",
        "formt = \"json\"\n[levels]\ndeprecated_alias = \"loud\"\nunknown_field = \"warn\"\nno_queue_sol = \"allow\"\n",
    );
    let out = routex_in(&dir, &["lint", "--format", "json", "a.routes"]);
    let doc = json(&out.stdout);
    let got: Vec<(String, String)> = doc["diagnostics"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|d| d["source"] == "routex.toml")
        .map(|d| {
            (
                d["code"].as_str().unwrap_or("").to_string(),
                format!(
                    "{} | {}",
                    d["message"].as_str().unwrap_or(""),
                    d["help"].as_str().unwrap_or("")
                ),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("unknown_setting".into(), "unknown key `formt` in the configuration | did you mean `format`?".into()),
            ("invalid_setting".into(), "unknown level `loud` | the levels: allow, warn, deny".into()),
            ("invalid_setting".into(), "unknown_field is always `deny` (stargate refuses to start with it): it cannot be set to `warn` | ".into()),
            ("unknown_setting".into(), "unknown diagnostic code `no_queue_sol` | did you mean `no_queue_slo`?".into()),
        ]
    );
    assert_eq!(out.code, 1);
    write(&dir, "routex.toml", "[levels\n");
    let out = routex_in(&dir, &["lint", "--format", "json", "a.routes"]);
    assert_eq!(findings(&out)[1], f("invalid_toml", "error", "routex.toml"));
}

#[test]
fn suppression_comments_in_route_files_are_used_unused_or_malformed() {
    let dir = scratch("project-comments");
    write(
        &dir,
        "s.routes",
        "default = power-of-n\n\
         # routex: allow(deprecated_alias) -- migrating in Q3\n\
         model \"b\" = powerOf2 {\n  allow pulsar-multiregion\n}\n\
         model \"c\" = powerOf2  # routex: allow(deprecated_alias)\n\
         model \"d\" = random  # routex: allow(no_queue_sol)\n\
         # routex: allow(shadowed_allow)\n\
         model \"e\" = random\n\
         model \"f\" = random  # routex: allow no_queue_slo\n\
         model \"g\" = random  # routex: allow(unknown_parameter)\n",
    );
    let out = routex_in(&dir, &["lint", "--format", "json", "s.routes"]);
    let doc = json(&out.stdout);
    let reported: Vec<(String, u64, String)> = doc["diagnostics"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|d| {
            (
                d["code"].as_str().unwrap_or("").to_string(),
                d["line"].as_u64().unwrap_or(0),
                d["message"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    assert_eq!(
        reported,
        [
            ("invalid_suppression".into(), 7, "unknown diagnostic code `no_queue_sol`".into()),
            ("unused_suppression".into(), 8, "the suppression of shadowed_allow matched no finding".into()),
            ("invalid_suppression".into(), 10, "`allow` must be followed by `(CODE, ...)`".into()),
            ("invalid_suppression".into(), 11, "unknown_parameter cannot be suppressed: it is always `deny` (stargate rejects the request with it)".into()),
        ]
    );
    // The entry comment covers the whole model block (its nested allow
    // too); the line comment its line.
    let suppressed: Vec<(u64, String)> = doc["suppressed"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|d| {
            (
                d["line"].as_u64().unwrap_or(0),
                d["suppression"]["justification"].to_string(),
            )
        })
        .collect();
    assert_eq!(
        suppressed,
        [
            (3, "\"migrating in Q3\"".to_string()),
            (4, "\"migrating in Q3\"".to_string()),
            (6, "null".to_string())
        ]
    );
    assert_eq!(doc["summary"]["suppressed"], 3);
    assert_eq!(doc["summary"]["warnings"], 4);
    assert_eq!(out.code, 0);
    // github: a notice per suppressed finding.
    let out = routex_in(&dir, &["lint", "--format", "github", "s.routes"]);
    assert!(out.stdout.contains(
        "::notice file=s.routes,line=3,col=13,endLine=3,endColumn=21,title=deprecated_alias (suppressed)::'powerOf2' is a deprecated alias of power-of-n%0Asuppressed by a comment: migrating in Q3\n"
    ), "{}", out.stdout);
}

#[test]
fn configuration_suppressions_cover_models_of_lb_config_json() {
    let dir = scratch("project-json-suppressions");
    write(
        &dir,
        "routex.toml",
        "[[suppressions]]\nfiles = [\"fleet/lb-config.json\"]\nmodels = [\"m1\"]\ncodes = [\"normalised_value\"]\nreason = \"n 0 means 1, on purpose\"\n\n[[suppressions]]\nfiles = [\"fleet/lb-config.json\"]\ncodes = [\"deprecated_alias\"]\n",
    );
    write(
        &dir,
        "fleet/lb-config.json",
        r#"{"models": {"m1": {"algorithm": "wait-and-widen", "n": 0}, "m2": {"algorithm": "wait-and-widen", "n": 0}}}"#,
    );
    let out = routex_in(&dir, &["lint", "--format", "sarif", "fleet"]);
    let log = json(&out.stdout);
    let results = log["runs"][0]["results"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let got: Vec<(String, serde_json::Value)> = results
        .iter()
        .map(|r| {
            (
                r["ruleId"].as_str().unwrap_or("").to_string(),
                r["suppressions"].clone(),
            )
        })
        .collect();
    assert_eq!(got.len(), 3, "{got:?}");
    // m2's finding is reported; m1's is suppressed with the reason; the
    // entry for deprecated_alias matched nothing and says so.
    assert_eq!(got[0], ("normalised_value".into(), serde_json::Value::Null));
    assert_eq!(
        got[1],
        (
            "normalised_value".into(),
            serde_json::json!([{"kind": "external", "status": "accepted", "justification": "n 0 means 1, on purpose"}])
        )
    );
    assert_eq!(got[2].0, "unused_suppression");
}

#[test]
fn lint_reports_an_unreadable_file_and_goes_on() {
    let dir = scratch("project-unreadable");
    write(&dir, "a.routes", ALIAS);
    std::fs::write(dir.join("big.json"), vec![b' '; 5 * 1024 * 1024]).expect("big");
    std::fs::write(dir.join("bad.routes"), [b'd', 0xff, b'\n']).expect("bad");
    let out = routex_in(&dir, &["lint", "--format", "json", "."]);
    let doc = json(&out.stdout);
    let got: Vec<(String, String)> = doc["diagnostics"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|d| {
            (
                d["source"].as_str().unwrap_or("").to_string(),
                d["message"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (
                "a.routes".to_string(),
                "'powerOf2' is a deprecated alias of power-of-n".to_string()
            ),
            (
                "bad.routes".to_string(),
                "not valid UTF-8 (byte 1); the file was not linted".to_string()
            ),
            (
                "big.json".to_string(),
                "the file is larger than the 4 MiB input limit; the file was not linted"
                    .to_string()
            ),
        ]
    );
    assert_eq!(out.code, 1);
    // Excluded in the configuration, it is not read at all.
    write(
        &dir,
        "routex.toml",
        "exclude = [\"big.json\", \"bad.routes\"]\n",
    );
    let out = routex_in(&dir, &["lint", "--format", "json", "."]);
    assert_eq!(
        findings(&out),
        [f("deprecated_alias", "warning", "a.routes")]
    );
    assert_eq!(out.code, 0);
}

#[test]
fn the_configuration_chooses_the_default_format() {
    let dir = scratch("project-format");
    write(&dir, "routex.toml", "format = \"github\"\n");
    write(&dir, "a.routes", ALIAS);
    let out = routex_in(&dir, &["lint", "a.routes"]);
    assert!(
        out.stdout.starts_with("::warning file=a.routes,"),
        "{}",
        out.stdout
    );
    let out = routex_in(&dir, &["lint", "--format", "json", "a.routes"]);
    assert!(out.stdout.starts_with('{'));
    // check finds it from the working directory.
    let out = routex_in(&dir, &["check", "powerOf2"]);
    assert!(
        out.stdout.starts_with("::warning file=arg%3A1,"),
        "{}",
        out.stdout
    );
}
