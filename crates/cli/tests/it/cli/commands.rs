//! Every command on real inputs through the binary: exit statuses, which
//! stream carries what, and the JSON shapes of docs/contract.md 5.1 and 5.2.

use super::run::{json, routex, scratch};

/// Checks the 5.1 document shape; returns (errors, warnings).
fn diagnostics_shape(value: &serde_json::Value) -> (u64, u64) {
    assert_eq!(value["version"], 1);
    let diagnostics = value["diagnostics"].as_array().cloned().unwrap_or_default();
    for d in &diagnostics {
        for key in ["code", "severity", "message", "source"] {
            assert!(d[key].is_string(), "{key} is a string in {d}");
        }
        for key in ["line", "column"] {
            assert!(
                d[key].as_u64().is_some_and(|n| n >= 1),
                "{key} is 1-based in {d}"
            );
        }
        assert!(d["span"]["start"].is_u64() && d["span"]["end"].is_u64());
        assert!(d["help"].is_string() || d["help"].is_null());
    }
    let summary = &value["summary"];
    let (errors, warnings) = (
        summary["errors"].as_u64().unwrap_or(u64::MAX),
        summary["warnings"].as_u64().unwrap_or(u64::MAX),
    );
    assert_eq!(errors + warnings, diagnostics.len() as u64);
    (errors, warnings)
}

fn codes(value: &serde_json::Value) -> Vec<String> {
    value["diagnostics"]
        .as_array()
        .map(|ds| {
            ds.iter()
                .filter_map(|d| d["code"].as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn lint_examples_is_clean() {
    let out = routex(&["lint", "--deny-warnings", "examples/"]);
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert!(
        out.stdout.starts_with("0 errors, 0 warnings in "),
        "{}",
        out.stdout
    );
    let out = routex(&["lint", "--format", "json", "examples"]);
    assert_eq!(diagnostics_shape(&json(&out.stdout)), (0, 0));
}

#[test]
fn lint_warnings_pass_unless_denied() {
    let out = routex(&["lint", "crates/cli/tests/inputs/cli/warn.routes"]);
    assert_eq!(out.code, 0);
    assert!(out.stdout.contains("deprecated_alias"));
    assert!(
        out.stdout.ends_with("0 errors, 1 warning in 1 file\n"),
        "{}",
        out.stdout
    );
    let out = routex(&[
        "lint",
        "--deny-warnings",
        "crates/cli/tests/inputs/cli/warn.routes",
    ]);
    assert_eq!(out.code, 1);
}

#[test]
fn lint_garbage_and_empty_json_is_invalid_json() {
    for file in [
        "crates/cli/tests/inputs/cli/garbage.json",
        "crates/cli/tests/inputs/cli/empty.json",
    ] {
        let out = routex(&["lint", "--format", "json", file]);
        assert_eq!(out.code, 1, "{file}");
        let value = json(&out.stdout);
        assert_eq!(diagnostics_shape(&value), (1, 0));
        assert_eq!(codes(&value), ["invalid_json"]);
        assert_eq!(value["diagnostics"][0]["source"], file);
    }
    let out = routex(&["lint", "crates/cli/tests/inputs/cli/empty.routes"]);
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (0, "0 errors, 0 warnings in 1 file\n")
    );
}

#[test]
fn lint_every_format_reports_the_same_problems() {
    let files = [
        "crates/cli/tests/inputs/cli/warn.routes",
        "crates/cli/tests/inputs/cli/garbage.json",
    ];
    let run = |format: &str| routex(&["lint", "--format", format, files[0], files[1]]);
    let json_out = run("json");
    assert_eq!(json_out.code, 1);
    let value = json(&json_out.stdout);
    assert_eq!(diagnostics_shape(&value), (1, 1));
    assert_eq!(codes(&value), ["deprecated_alias", "invalid_json"]);

    let github = run("github");
    assert_eq!(github.code, 1);
    let lines: Vec<&str> = github.stdout.lines().collect();
    assert_eq!(lines.len(), 2);
    assert!(lines[0].starts_with(
        "::warning file=crates/cli/tests/inputs/cli/warn.routes,line=2,col=11,endLine=2,endColumn=19,title=deprecated_alias::"
    ));
    assert!(lines[1]
        .starts_with("::error file=crates/cli/tests/inputs/cli/garbage.json,line=1,col=23,"));

    let sarif = run("sarif");
    assert_eq!(sarif.code, 1);
    let value = json(&sarif.stdout);
    assert_eq!(value["version"], "2.1.0");
    let results = &value["runs"][0]["results"];
    assert_eq!(results[0]["ruleId"], "deprecated_alias");
    assert_eq!(results[0]["level"], "warning");
    assert_eq!(results[1]["ruleId"], "invalid_json");
    assert_eq!(
        results[1]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        files[1]
    );

    let human = run("human");
    assert_eq!(human.code, 1);
    assert!(human
        .stdout
        .contains("[crates/cli/tests/inputs/cli/warn.routes:2:11]"));
    assert!(human.stdout.ends_with("1 error, 1 warning in 2 files\n"));
    assert!(!human.stdout.contains('\u{1b}'), "no colours when piped");
}

#[test]
fn check_reports_each_argument_with_its_source() {
    let out = routex(&["check", "round-robin", "pulsar;seed=v1"]);
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (0, "0 errors, 0 warnings in 2 expressions\n")
    );
    let out = routex(&[
        "check",
        "--format",
        "json",
        "round-robin",
        "wait-and-widen(band_widen_interval_ms=300)",
    ]);
    assert_eq!(out.code, 1);
    let value = json(&out.stdout);
    assert_eq!(diagnostics_shape(&value), (1, 0));
    let d = &value["diagnostics"][0];
    assert_eq!(d["code"], "not_applicable");
    assert_eq!(d["source"], "arg:2");
    assert_eq!(
        d["message"],
        "band_widen_interval_ms is not applicable to wait-and-widen"
    );
    assert_eq!(d["span"], serde_json::json!({"start": 15, "end": 37}));
    assert_eq!(
        (d["line"].as_u64(), d["column"].as_u64()),
        (Some(1), Some(16))
    );
    assert_eq!(
        d["help"],
        "band_widen_interval_ms applies to: pulsar-wait-and-widen"
    );
}

#[test]
fn check_with_a_config_sees_unavailable_algorithms() {
    let config = "tests/inputs/diagnostics/context/unavailable.routes";
    let out = routex(&[
        "check",
        "--format",
        "json",
        "--config",
        config,
        "pulsar;seed=x",
    ]);
    assert_eq!(out.code, 1);
    assert_eq!(codes(&json(&out.stdout)), ["unavailable"]);
    let out = routex(&["check", "--config", config, "round-robin"]);
    assert_eq!(out.code, 0);
    // The fleet's big model may ask for pulsar; an unlisted model may not
    // ask for round-robin.
    let fleet = "examples/fleet.routes";
    let ok = routex(&[
        "check",
        "--config",
        fleet,
        "--model",
        "llama-3-70b",
        "round-robin",
    ]);
    assert_eq!(ok.code, 0, "{}", ok.stdout);
    let no = routex(&[
        "check",
        "--format",
        "json",
        "--config",
        fleet,
        "round-robin",
    ]);
    assert_eq!(codes(&json(&no.stdout)), ["unavailable"]);
}

#[test]
fn check_with_a_broken_config_reports_the_config() {
    let out = routex(&[
        "check",
        "--format",
        "json",
        "--config",
        "crates/cli/tests/inputs/cli/garbage.json",
        "round-robin",
    ]);
    assert_eq!(out.code, 1);
    let value = json(&out.stdout);
    assert_eq!(codes(&value), ["invalid_json"]);
    assert_eq!(
        value["diagnostics"][0]["source"],
        "crates/cli/tests/inputs/cli/garbage.json"
    );
}

#[test]
fn explain_json_has_policy_and_provenance() {
    let out = routex(&[
        "explain",
        "--format",
        "json",
        "--config",
        "examples/fleet.routes",
        "--model",
        "llama-3-70b",
        "pulsar-wait-and-widen(seed=\"x\", n=3)",
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.is_empty());
    let value = json(&out.stdout);
    assert_eq!(value["version"], 1);
    assert_eq!(value["policy"]["version"], 1);
    assert_eq!(value["policy"]["algorithm"], "pulsar-wait-and-widen");
    assert_eq!(value["policy"]["settings"]["seed"], "x");
    assert_eq!(value["policy"]["settings"]["n"], 3);
    assert_eq!(value["policy"]["settings"]["cache_affinity_wait_ms"], 300);
    let provenance = &value["provenance"];
    assert_eq!(provenance["seed"], "expression");
    assert_eq!(provenance["n"], "expression");
    // The contract's `config` (docs/contract.md 5.2), the place beside it.
    assert_eq!(provenance["cache_affinity_wait_ms"], "config");
    assert_eq!(value["config_from"], "model_entry");
    assert_eq!(provenance["ttft_bucket_size_ms"], "default");
    // The model's entry sets band_widen_interval_ms: nothing follows.
    assert_eq!(value["follows"], serde_json::json!({}));
    let out = routex(&[
        "explain",
        "--format",
        "json",
        "pulsar-wait-and-widen;cache_affinity_wait_ms=40",
    ]);
    let value = json(&out.stdout);
    assert_eq!(value["provenance"]["band_widen_interval_ms"], "default");
    assert_eq!(value["policy"]["settings"]["band_widen_interval_ms"], 40);
    assert_eq!(
        value["follows"],
        serde_json::json!({"band_widen_interval_ms": "cache_affinity_wait_ms"})
    );
}

#[test]
fn explain_human_is_a_table_and_errors_go_to_stderr() {
    let out = routex(&["explain", "pulsar(seed=\"v2\")"]);
    assert_eq!(out.code, 0);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines[0], "arg:1: pulsar");
    assert!(lines[1].starts_with("  field") && lines[1].ends_with("from"));
    let row = |field: &str| {
        lines
            .iter()
            .map(|l| l.split_whitespace().collect::<Vec<_>>())
            .find(|words| words.first() == Some(&field))
    };
    assert_eq!(row("seed"), Some(vec!["seed", "\"v2\"", "expression"]));
    assert_eq!(
        row("consider_kv_free_tokens"),
        Some(vec!["consider_kv_free_tokens", "false", "default"])
    );
    assert_eq!(
        row("max_input_work_seconds"),
        Some(vec!["max_input_work_seconds", "unset", "default"])
    );

    let bad = routex(&["explain", "--format", "json", "pulsar;seed=1"]);
    assert_eq!(bad.code, 1);
    assert!(bad.stdout.is_empty());
    assert_eq!(codes(&json(&bad.stderr)), ["invalid_value"]);
}

#[test]
fn fmt_prints_canonical_forms() {
    let out = routex(&["fmt", "pulsar;seed=a", "  round-robin()"]);
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (0, "pulsar(seed=a)\nround-robin\n")
    );
    let out = routex(&["fmt", "--header", "pulsar(seed=\"a\")"]);
    assert_eq!((out.code, out.stdout.as_str()), (0, "pulsar;seed=\"a\"\n"));
    let out = routex(&["fmt", "--header", "pulsar(seed=\"a;b\")"]);
    assert_eq!(out.code, 1);
    assert!(out.stdout.is_empty());
    assert!(
        out.stderr.contains("not_representable_in_header"),
        "{}",
        out.stderr
    );
}

#[test]
fn fmt_check_names_unformatted_files_and_exits_1() {
    let file = "crates/cli/tests/inputs/cli/unformatted.routes";
    let out = routex(&["fmt", "--check", file]);
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (1, format!("{file}: not formatted\n").as_str())
    );
    // Its formatted text passes the check.
    let formatted = routex(&["fmt", file]);
    assert_eq!(formatted.code, 0);
    let dir = scratch("fmt-check");
    let path = dir.join("formatted.routes");
    std::fs::write(&path, &formatted.stdout).expect("write");
    let path = path.display().to_string();
    let out = routex(&["fmt", "--check", &path]);
    assert_eq!((out.code, out.stdout.as_str()), (0, ""));
    let out = routex(&["fmt", "--check", "round-robin", "round-robin()"]);
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (1, "arg:2: not formatted\n")
    );
}

#[test]
fn build_and_import_round_trip() {
    let dir = scratch("round-trip");
    let built = dir.join("lb-config.json");
    let built_path = built.display().to_string();
    let out = routex(&["build", "examples/fleet.routes", "-o", &built_path]);
    assert_eq!(
        (out.code, out.stdout.as_str(), out.stderr.as_str()),
        (0, "", "")
    );
    let stdout_build = routex(&["build", "examples/fleet.routes"]);
    let text = std::fs::read_to_string(&built).unwrap_or_default();
    assert_eq!(
        stdout_build.stdout, text,
        "-o and stdout carry the same text"
    );
    assert_eq!(
        json(&text),
        json(
            &std::fs::read_to_string(crate::repo().join("examples/lb-config.json"))
                .unwrap_or_default()
        ),
        "the shipped lb-config.json is the build of the shipped route file"
    );

    let imported = dir.join("fleet.routes");
    let imported_path = imported.display().to_string();
    let out = routex(&["import", &built_path, "-o", &imported_path]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let rebuilt = routex(&["build", &imported_path]);
    assert_eq!(rebuilt.code, 0);
    assert_eq!(
        json(&rebuilt.stdout),
        json(&text),
        "import then build is the identity"
    );
    let relint = routex(&["lint", "--deny-warnings", &imported_path]);
    assert_eq!(relint.code, 0, "{}", relint.stdout);
}

#[test]
fn build_refuses_a_default_with_arguments() {
    let out = routex(&[
        "build",
        "tests/inputs/diagnostics/default_with_arguments.routes",
    ]);
    assert_eq!(out.code, 1);
    assert!(out.stdout.is_empty());
    assert!(
        out.stderr.contains("default_with_arguments"),
        "{}",
        out.stderr
    );
    let out = routex(&[
        "import",
        "--format",
        "json",
        "crates/cli/tests/inputs/cli/garbage.json",
    ]);
    assert_eq!(out.code, 1);
    assert_eq!(codes(&json(&out.stderr)), ["invalid_json"]);
}

#[cfg(unix)]
#[test]
fn invalid_utf8_arguments_are_usage_errors() {
    use std::os::unix::ffi::OsStrExt;
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_routex"))
        .arg("check")
        .arg(std::ffi::OsStr::from_bytes(b"pulsar;seed=\xff"))
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(!out.stderr.is_empty());
}

#[test]
fn explain_prints_warnings_on_stderr_and_the_table_on_stdout() {
    // no_queue_slo is the `widening` target's warning (docs/stargate.md 0.1).
    let out = routex(&[
        "explain",
        "--stargate",
        "widening",
        "--format",
        "json",
        "pulsar-wait-and-widen;cache_affinity_wait_ms=300",
    ]);
    assert_eq!(out.code, 0);
    let value = json(&out.stdout);
    assert_eq!(value["provenance"]["cache_affinity_wait_ms"], "expression");
    // S defaults to X.
    assert_eq!(value["policy"]["settings"]["band_widen_interval_ms"], 300);
    assert_eq!(value["policy"]["stargate"], "widening");
    assert_eq!(codes(&json(&out.stderr)), ["no_queue_slo"]);
    let out = routex(&[
        "explain",
        "--format",
        "json",
        "pulsar-wait-and-widen;cache_affinity_wait_ms=300",
    ]);
    assert_eq!((out.code, out.stderr.as_str()), (0, ""));
    assert_eq!(json(&out.stdout)["policy"]["stargate"], "sessions");
}

#[test]
fn a_closed_stdout_does_not_panic() {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_routex"))
        .args([
            "check",
            "--format",
            "sarif",
            "fastest",
            "pulsr",
            "round-robin;x=1",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("starts");
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("ends");
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stderr.is_empty());
}

#[test]
fn control_characters_never_reach_the_terminal() {
    let out = routex(&["check", "\u{1b}[31mfastest"]);
    assert_eq!(out.code, 1);
    assert!(!out.stdout.contains('\u{1b}'), "{}", out.stdout);
    let out = routex(&["lint", "no\u{1b}[31mfile.routes"]);
    assert_eq!(out.code, 2);
    assert_eq!(
        out.stderr,
        "routex: no\u{fffd}[31mfile.routes: no such file or directory\n"
    );
}

#[test]
fn explain_reports_a_broken_config_on_stderr() {
    let out = routex(&[
        "explain",
        "--format",
        "json",
        "--config",
        "crates/cli/tests/inputs/cli/garbage.json",
        "round-robin",
    ]);
    assert_eq!((out.code, out.stdout.as_str()), (1, ""));
    assert_eq!(codes(&json(&out.stderr)), ["invalid_json"]);
}

#[test]
fn lint_searches_directories_recursively_in_sorted_order() {
    let out = routex(&["lint", "--format", "json", "tests/inputs/diagnostics"]);
    assert_eq!(out.code, 1);
    let value = json(&out.stdout);
    let mut sources: Vec<String> = value["diagnostics"]
        .as_array()
        .map(|ds| {
            ds.iter()
                .filter_map(|d| d["source"].as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    sources.dedup();
    let mut expected: Vec<String> =
        std::fs::read_dir(crate::repo().join("tests/inputs/diagnostics"))
            .map(|entries| {
                entries
                    .flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| n.ends_with(".routes") || n.ends_with(".json"))
                    // Fixtures of another stargate target lint clean here.
                    .filter(|n| !n.contains(".widening."))
                    // Fixtures of build/import: they lint clean.
                    .filter(|n| n != "default_with_arguments.routes")
                    .filter(|n| n != "not_representable_in_route_file.json")
                    // Simulator scenarios: a search skips them.
                    .filter(|n| !n.ends_with(".scenario.json"))
                    .map(|n| format!("tests/inputs/diagnostics/{n}"))
                    .collect()
            })
            .unwrap_or_default();
    expected.sort();
    assert_eq!(sources, expected);
    // The clean context file in the subdirectory was linted too.
    let out = routex(&["lint", "tests/inputs/diagnostics/context"]);
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (0, "0 errors, 0 warnings in 1 file\n")
    );
}

#[test]
fn lint_skips_json_that_is_not_a_router_configuration() {
    let dir = scratch("mixed");
    std::fs::write(
        dir.join("scenario-b.json"),
        r#"{"name": "b", "policies": {}}"#,
    )
    .expect("write");
    std::fs::write(dir.join("lb-config.json"), r#"{"default": "random"}"#).expect("write");
    std::fs::write(dir.join("empty.json"), "{}").expect("write");
    std::fs::create_dir_all(dir.join(".hidden")).expect("mkdir");
    std::fs::write(dir.join(".hidden/bad.routes"), "default =").expect("write");
    let path = dir.display().to_string();
    let out = routex(&["lint", "--format", "github", "--deny-warnings", &path]);
    assert_eq!((out.code, out.stdout.as_str()), (0, ""));
    let out = routex(&["lint", &path]);
    assert_eq!(out.stdout, "0 errors, 0 warnings in 2 files\n");
    // Named explicitly, the scenario is a usage error that says what it is.
    let scenario = dir.join("scenario-b.json").display().to_string();
    let out = routex(&["lint", "--format", "json", &scenario]);
    assert_eq!((out.code, out.stdout.as_str()), (2, ""));
    assert!(
        out.stderr.contains("is a simulator scenario"),
        "{}",
        out.stderr
    );
}

#[test]
fn bundled_route_files_are_formatted() {
    // The examples are what users copy: they must be in canonical form.
    for file in ["examples/fleet.routes", "examples/embed.routes"] {
        let out = routex(&["fmt", "--check", file]);
        assert_eq!(out.code, 0, "{file}: {}", out.stdout);
    }
}

/// Compatibility: `consider_kv_free_tokens = true` in the base
/// implies `require_input_tokens` (docs/stargate.md 3.9). An expression
/// that sets it false is shown as what it set, not credited with the
/// resolved `true`.
#[test]
fn explain_shows_an_implied_value_and_what_the_expression_set() {
    let args = |format: &'static str| {
        [
            "explain",
            "--format",
            format,
            "--config",
            "examples/fleet.routes",
            "--model",
            "llama-3-70b",
            "pulsar-wait-and-widen;require_input_tokens=false",
        ]
    };
    let out = routex(&args("human"));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let row = out
        .stdout
        .lines()
        .find(|l| l.trim_start().starts_with("require_input_tokens"))
        .expect("a require_input_tokens row");
    assert_eq!(
        row.split_whitespace().collect::<Vec<_>>().join(" "),
        "require_input_tokens true implied by consider_kv_free_tokens from config (model entry); expression set false"
    );
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("../../snapshots/cli");
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| insta::assert_snapshot!("explain_implied_human", out.stdout));

    let out = routex(&args("json"));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let value = json(&out.stdout);
    assert_eq!(value["policy"]["admission"]["require_input_tokens"], true);
    assert_eq!(value["provenance"]["require_input_tokens"], "implied");
    assert_eq!(value["provenance"]["consider_kv_free_tokens"], "config");
    assert_eq!(value["config_from"], "model_entry");
    assert_eq!(
        value["implied"],
        serde_json::json!({"require_input_tokens": {
            "by": "consider_kv_free_tokens",
            "by_from": "config",
            "configured": false,
            "configured_from": "expression",
        }})
    );

    // Nothing is implied when the field is given true itself, or when
    // consider_kv_free_tokens is false: each shows its own origin.
    for (expression, value, from) in [
        (
            "pulsar-wait-and-widen;require_input_tokens=true",
            true,
            "expression",
        ),
        (
            "pulsar-wait-and-widen;consider_kv_free_tokens=false",
            false,
            "default",
        ),
    ] {
        let out = routex(&[
            "explain",
            "--format",
            "json",
            "--config",
            "examples/fleet.routes",
            "--model",
            "llama-3-70b",
            expression,
        ]);
        let doc = json(&out.stdout);
        assert_eq!(
            doc["policy"]["admission"]["require_input_tokens"], value,
            "{expression}"
        );
        assert_eq!(
            doc["provenance"]["require_input_tokens"], from,
            "{expression}"
        );
        assert_eq!(doc["implied"], serde_json::json!({}), "{expression}");
    }
}
