//! The command-line messages a new user ran into: each
//! mistake is one `routex: ...` line on stderr with exit 2 that says what to
//! do instead, never a pile of diagnostics or a silent wrong answer.

use super::run::{routex, scratch};

/// Exit 2, nothing on stdout, exactly `line` on stderr.
fn usage(args: &[&str], line: &str) {
    let out = routex(args);
    assert_eq!(out.code, 2, "{args:?}: {out:?}");
    assert_eq!(out.stdout, "", "{args:?}");
    assert_eq!(out.stderr, format!("routex: {line}\n"), "{args:?}");
}

#[test]
fn build_and_import_name_the_other_command_for_the_other_file_type() {
    usage(
        &["build", "examples/lb-config.json"],
        "examples/lb-config.json: build reads a route file (*.routes) and this is an lb-config.json: run `routex import examples/lb-config.json` for its route file",
    );
    usage(
        &["import", "./examples/fleet.routes"],
        "examples/fleet.routes: import reads an lb-config.json and this is a route file: run `routex build examples/fleet.routes` for its lb-config.json",
    );
}

#[test]
fn an_unlisted_model_is_a_typo_with_a_did_you_mean() {
    usage(
        &["check", "--config", "examples/fleet.routes", "--model", "llama-3-70B", "round-robin"],
        "model 'llama-3-70B' is not listed in examples/fleet.routes; did you mean 'llama-3-70b'? (omit --model for an unlisted model)",
    );
    usage(
        &[
            "explain",
            "--config",
            "examples/fleet.routes",
            "--model",
            "nope",
            "round-robin",
        ],
        "model 'nope' is not listed in examples/fleet.routes; it lists 'llama-3-70b', 'mixtral-8x7b', 'llama-3-8b', 'embedding-small', 'qwen-2-72b' (omit --model for an unlisted model)",
    );
    // A listed model still works.
    let out = routex(&[
        "check",
        "--config",
        "examples/fleet.routes",
        "--model",
        "llama-3-70b",
        "round-robin",
    ]);
    assert_eq!(out.code, 0, "{out:?}");
}

#[test]
fn model_without_config_is_an_error() {
    for command in ["check", "explain"] {
        usage(
            &[command, "--model", "x", "round-robin"],
            "--model x needs --config: without a configuration every model gets the permissive default",
        );
    }
}

#[test]
fn explain_offers_only_the_formats_it_prints() {
    let help = routex(&["explain", "--help"]);
    assert_eq!(help.code, 0);
    assert!(
        help.stdout.contains("- human: The field table"),
        "{}",
        help.stdout
    );
    assert!(help
        .stdout
        .contains("- json:  The version-1 explanation document"));
    assert!(!help.stdout.contains("sarif") && !help.stdout.contains("github"));
    let out = routex(&["explain", "--format", "sarif", "round-robin"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("invalid value 'sarif'"),
        "{}",
        out.stderr
    );
}

#[test]
fn sim_reads_like_every_command() {
    usage(
        &["sim", "run", "no-such-scenario.json"],
        "no-such-scenario.json: no such file or directory",
    );
    let dir = scratch("messages-sim");
    let latin1 = dir.join("latin1.json");
    std::fs::write(&latin1, b"{\"name\": \"caf\xe9\"}").expect("write");
    let path = latin1.to_str().expect("utf-8 path");
    usage(
        &["sim", "run", path],
        &format!("{path}: not valid UTF-8 (byte 13)"),
    );
    let huge = dir.join("huge.json");
    std::fs::write(&huge, vec![b' '; 4 * 1024 * 1024 + 1]).expect("write");
    let path = huge.to_str().expect("utf-8 path");
    usage(
        &["sim", "run", path],
        &format!("{path}: file is larger than the 4 MiB input limit"),
    );
}

#[test]
fn sim_jobs_zero_is_rejected() {
    for args in [
        &["sim", "run", "--quick", "--jobs", "0"][..],
        &["sim", "tune", "--jobs", "0"],
    ] {
        let out = routex(args);
        assert_eq!(out.code, 2, "{args:?}");
        assert!(
            out.stderr.contains("at least 1 worker thread is needed"),
            "{}",
            out.stderr
        );
    }
}

#[test]
fn fmt_check_agrees_with_fmt_on_an_empty_route_file() {
    let formatted = routex(&["fmt", "crates/cli/tests/inputs/cli/empty.routes"]);
    assert_eq!((formatted.code, formatted.stdout.as_str()), (0, ""));
    let checked = routex(&["fmt", "--check", "crates/cli/tests/inputs/cli/empty.routes"]);
    assert_eq!((checked.code, checked.stdout.as_str()), (0, ""));
}

#[test]
fn a_simulator_scenario_named_to_lint_gets_a_hint() {
    usage(
        &["lint", "examples/scenario-zipf-z1.json"],
        "examples/scenario-zipf-z1.json is a simulator scenario, not an lb-config.json: `routex sim check examples/scenario-zipf-z1.json` checks it and `routex sim run examples/scenario-zipf-z1.json` runs it",
    );
    // An lb-config.json with a model named like a scenario section is linted.
    let dir = scratch("messages-lint");
    let file = dir.join("lb-config.json");
    std::fs::write(
        &file,
        r#"{"default": "random", "models": {"topology": "random"}}"#,
    )
    .expect("write");
    let out = routex(&["lint", file.to_str().expect("utf-8")]);
    assert_eq!(out.code, 0, "{out:?}");
}

/// Words no message may use: Rust type names and serde's names of values.
const SERDE_WORDS: [&str; 8] = [
    "u64",
    "u32",
    "f64",
    "18446744073709551615",
    "4294967295",
    "floating point",
    "variant",
    "sequence",
];

#[test]
fn decide_input_errors_use_no_rust_or_serde_words() {
    let dir = scratch("messages-decide");
    let input = dir.join("input.json");
    let path = input.to_str().expect("utf-8 path");
    for (request, cluster, want) in [
        (
            r#""priority": -1"#,
            "",
            "invalid value: integer `-1` is negative, expected an integer from 0 to 2^32-1",
        ),
        (
            r#""priority": 4294967296"#,
            "",
            "invalid value: integer `4294967296` is too large, expected an integer from 0 to 2^32-1",
        ),
        (
            r#""input_tokens": 1e23"#,
            "",
            "invalid type: integer `1e+23` is too large, expected an integer from 0 to 2^64-1",
        ),
        (
            r#""input_tokens": 1.5"#,
            "",
            "invalid type: number `1.5`, expected an integer from 0 to 2^64-1",
        ),
        (
            r#""elapsed_ms": "x""#,
            "",
            "invalid type: string \"x\", expected a number",
        ),
        (
            r#""excluded": {}"#,
            "",
            "invalid type: object, expected an array",
        ),
        (
            "",
            r#", "queue_size": -2"#,
            "invalid value: integer `-2` is negative, expected an integer from 0 to 2^64-1",
        ),
        (
            "",
            r#", "queue_time_estimate_ms_by_priority": {"x": 1}"#,
            "cluster c: queue_time_estimate_ms_by_priority key \"x\" is not a priority (an integer from 0 to 2^32-1)",
        ),
    ] {
        let comma = if request.is_empty() { "" } else { ", " };
        std::fs::write(
            &input,
            format!(
                r#"{{"request": {{"model": "m"{comma}{request}}}, "clusters": [{{"id": "c"{cluster}}}]}}"#
            ),
        )
        .expect("write");
        let out = routex(&["decide", "--input", path]);
        assert_eq!(out.code, 2, "{request}{cluster}: {out:?}");
        assert!(
            out.stderr.starts_with(&format!("routex: {path}")) && out.stderr.ends_with(&format!(": {want}\n")),
            "{request}{cluster}: {}",
            out.stderr
        );
        for word in SERDE_WORDS {
            assert!(!out.stderr.contains(word), "{word}: {}", out.stderr);
        }
    }
}

#[test]
fn scenario_errors_use_no_rust_or_serde_words() {
    let scenario = std::fs::read_to_string(
        crate::repo().join("crates/sim/examples/scenario-fast-validation.json"),
    )
    .expect("read");
    for (from, to, want) in [
        (
            r#""seeds": [1, 2, 3]"#,
            r#""seeds": [1.5]"#,
            "invalid type: number `1.5`, expected an integer from 0 to 2^64-1 for `seeds.0`",
        ),
        (
            r#""routers": 3"#,
            r#""routers": 1e23"#,
            "invalid type: number `1e23`, expected an integer from 0 to 2^32-1 for `topology.regions.0.routers`",
        ),
        (
            r#""rates_rps": [240, 280, 320]"#,
            r#""rates_rps": {}"#,
            "invalid type: object, expected an array of numbers for `rates_rps`",
        ),
    ] {
        assert!(scenario.contains(from), "{from}");
        let text = scenario.replacen(from, to, 1);
        let report = routex_sim::scenario::load("s.json", &text).expect_err("an error");
        let message = &report.diagnostics[0].message;
        assert_eq!(message, want, "{to}");
        for word in SERDE_WORDS {
            assert!(!message.contains(word), "{word}: {message}");
        }
    }
}
