//! The simulator's inputs checked like `lint` checks lb-config.json
//! (docs/simulator.md, "Scenario files"): `sim check` in every format,
//! every structural problem at once, `base_config` by path, the model
//! rule, traces in the wrong format, session logs, `sim init`, and the
//! messages that point `sim` and `lint` at each other. Each diagnostic a
//! user reads is an insta snapshot (crates/sim/tests/snapshots/).

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// Runs the binary from the repository root: (status, stdout, stderr).
fn routex(args: &[&str]) -> (i32, String, String) {
    routex_in(&root(), args)
}

/// Runs the binary from `dir`: (status, stdout, stderr).
fn routex_in(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_routex"))
        .args(args)
        .current_dir(dir)
        .env_remove("CLICOLOR_FORCE")
        .env("NO_COLOR", "1")
        .output()
        .expect("run routex");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn settings() -> insta::Settings {
    let mut s = insta::Settings::clone_current();
    s.set_snapshot_path("../../snapshots/sim");
    s.set_prepend_module_to_snapshot(false);
    s
}

/// A scratch directory of this test process.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("routex-siminputs-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

fn small() -> serde_json::Value {
    let text =
        std::fs::read_to_string(root().join("crates/sim/tests/inputs/small.json")).expect("small");
    serde_json::from_str(&text).expect("json")
}

#[test]
fn every_structural_problem_at_once_with_did_you_mean() {
    let (code, stdout, _) = routex(&["sim", "check", "crates/sim/tests/inputs/typos.json"]);
    assert_eq!(code, 1);
    settings().bind(|| insta::assert_snapshot!("inputs_typos_human", stdout));
    let (_, json, _) = routex(&[
        "sim",
        "check",
        "--format",
        "json",
        "crates/sim/tests/inputs/typos.json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&json).expect("json output");
    let found: Vec<(String, u64, u64, String)> = v["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .map(|d| {
            (
                d["code"].as_str().unwrap_or("").to_string(),
                d["line"].as_u64().unwrap_or(0),
                d["column"].as_u64().unwrap_or(0),
                d["help"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    // The key itself (not its closing quote), the value itself, and the
    // did-you-mean.
    let row =
        |code: &str, line, column, help: &str| (code.to_string(), line, column, help.to_string());
    assert_eq!(
        found,
        vec![
            row("unknown_field", 4, 19, "did you mean `measure_s`?"),
            row("unknown_field", 14, 40, "did you mean `slots`?"),
            row(
                "missing_field",
                14,
                13,
                "the built-in default scenario has \"slots\": 25"
            ),
            row("invalid_value", 20, 30, "did you mean \"running-max\"?"),
            row("invalid_type", 25, 28, ""),
            row(
                "missing_field",
                1,
                1,
                "the built-in default scenario has \"measure_s\": 180"
            ),
        ],
        "{json}"
    );
    for format in ["github", "sarif"] {
        let (code, out, _) = routex(&[
            "sim",
            "check",
            "--format",
            format,
            "crates/sim/tests/inputs/typos.json",
        ]);
        assert_eq!(code, 1);
        assert!(
            out.contains("unknown_field") || out.contains("UnknownField"),
            "{out}"
        );
    }
}

#[test]
fn an_lb_config_given_to_sim_and_a_scenario_given_to_lint_point_at_each_other() {
    let (code, _, stderr) = routex(&["sim", "run", "examples/lb-config.json"]);
    assert_eq!(code, 1);
    assert!(!stderr.contains("unknown field `default`"), "{stderr}");
    settings().bind(|| insta::assert_snapshot!("inputs_lb_config_as_scenario", stderr));
    let (code, _, stderr) = routex(&["lint", "crates/sim/examples/scenario-sessions.json"]);
    assert_eq!(code, 2);
    assert_eq!(
        stderr,
        "routex: crates/sim/examples/scenario-sessions.json is a simulator scenario, not an lb-config.json: \
         `routex sim check crates/sim/examples/scenario-sessions.json` checks it and \
         `routex sim run crates/sim/examples/scenario-sessions.json` runs it\n"
    );
}

#[test]
fn a_csv_given_as_a_mooncake_trace_is_named_once_at_its_own_line() {
    let dir = scratch("csv-as-mooncake");
    let mut v = small();
    v.as_object_mut().expect("object").remove("workload");
    v.as_object_mut().expect("object").remove("rates_rps");
    v["engine"]["model"] = "block-cache-v2".into();
    // Relative paths from the scratch directory: the report's text (and
    // where miette wraps it) does not depend on where the clone lives.
    std::fs::copy(
        root().join("crates/sim/examples/sessions.csv"),
        dir.join("sessions.csv"),
    )
    .expect("copy");
    v["trace"] = serde_json::json!({"path": "sessions.csv", "speedups": [1]});
    std::fs::write(
        dir.join("s.json"),
        serde_json::to_string_pretty(&v).expect("text"),
    )
    .expect("write");
    let (code, stdout, _) = routex_in(&dir, &["sim", "check", "s.json"]);
    assert_eq!(code, 1);
    // One diagnostic in the scenario, one at line 1 of the CSV: not one
    // per line, and not at the scenario's path.
    assert_eq!(stdout.matches("invalid_trace").count(), 2, "{stdout}");
    assert!(stdout.contains("[sessions.csv:1:1]"), "{stdout}");
    let shown = stdout;
    settings().bind(|| insta::assert_snapshot!("inputs_csv_as_mooncake", shown));
}

#[test]
fn bad_lines_of_a_session_log_are_diagnostics_at_their_line() {
    let dir = scratch("bad-sessions");
    let log = dir.join("log.csv");
    std::fs::write(
        &log,
        "timestamp_ms,session_id,input_tokens,output_tokens\n\
         0,a,100,5\n\
         10,b,lots,5\n\
         20,c,100\n\
         30,a,300,5\n",
    )
    .expect("write");
    let mut v = small();
    v.as_object_mut().expect("object").remove("workload");
    v.as_object_mut().expect("object").remove("rates_rps");
    v["engine"]["model"] = "block-cache-v2".into();
    v["trace"] = serde_json::json!({"path": "log.csv", "format": "session-csv", "speedups": [1]});
    let scenario = dir.join("s.json");
    std::fs::write(&scenario, serde_json::to_string_pretty(&v).expect("text")).expect("write");
    let (code, stdout, _) = routex_in(&dir, &["sim", "check", "s.json"]);
    assert_eq!(code, 1);
    // Run from the scratch directory: relative paths, so the text (and
    // where it wraps) does not depend on the directory's name.
    let shown = stdout;
    settings().bind(|| insta::assert_snapshot!("inputs_bad_session_lines", shown));
}

#[test]
fn base_config_by_relative_path_and_its_errors_in_their_own_file() {
    let dir = scratch("base-config-path");
    std::fs::create_dir_all(dir.join("configs")).expect("dir");
    std::fs::write(
        dir.join("configs/fleet.routes"),
        "default = power-of-n\nmodel \"llama-3-70b\" = pulsar-wait-and-widen(seed = \"v1\", \
         max_queue_time_floor_ms = 1000, max_queue_time_ceil_ms = 2000)\n",
    )
    .expect("write");
    let mut v = small();
    v["base_config"] = "configs/fleet.routes".into();
    v["router"]["model"] = "llama-3-70b".into();
    v["policies"] = serde_json::json!({"configured": "pulsar-wait-and-widen"});
    let scenario = dir.join("s.json");
    std::fs::write(&scenario, serde_json::to_string_pretty(&v).expect("text")).expect("write");
    // Relative to the scenario, not to the current directory.
    let (code, stdout, stderr) = routex_in(&dir, &["sim", "check", "s.json"]);
    assert_eq!(
        (code, stdout.as_str()),
        (0, "0 errors, 0 warnings in 1 file\n"),
        "{stderr}"
    );
    // A typo in the model, with a did-you-mean.
    v["router"]["model"] = "llama-3-70B".into();
    std::fs::write(&scenario, serde_json::to_string_pretty(&v).expect("text")).expect("write");
    let (code, stdout, _) = routex_in(&dir, &["sim", "check", "s.json"]);
    assert_eq!(code, 1);
    assert!(stdout.contains("unlisted_model"), "{stdout}");
    assert!(
        stdout.contains("help: did you mean \"llama-3-70b\"?"),
        "{stdout}"
    );
    let (code, _, stderr) = routex_in(&dir, &["sim", "run", "--quick", "s.json"]);
    assert_eq!(code, 1, "sim run refuses it too");
    assert!(
        stderr.contains("is not listed in base_config file"),
        "{stderr}"
    );
    // Errors in the file are reported on the file, once in the scenario.
    std::fs::write(dir.join("configs/fleet.routes"), "default = pulsr\n").expect("write");
    let (code, stdout, _) = routex_in(&dir, &["sim", "check", "s.json"]);
    assert_eq!(code, 1);
    // Run from the scratch directory: relative paths, so the text (and
    // where it wraps) does not depend on the directory's name.
    let shown = stdout;
    settings().bind(|| insta::assert_snapshot!("inputs_base_config_file_errors", shown));
    // A missing file.
    v["base_config"] = "configs/nope.json".into();
    std::fs::write(&scenario, serde_json::to_string_pretty(&v).expect("text")).expect("write");
    let (code, stdout, _) = routex_in(&dir, &["sim", "check", "s.json"]);
    assert_eq!(code, 1);
    assert!(stdout.contains("cannot read base_config"), "{stdout}");
}

#[test]
fn sim_init_writes_a_scenario_that_loads_and_runs() {
    let dir = scratch("init");
    let out = dir.join("fleet-sim.json");
    let config = root().join("examples/lb-config.json");
    let (code, stdout, stderr) = routex(&[
        "sim",
        "init",
        "--config",
        config.to_str().expect("utf-8"),
        "--model",
        "mixtral-8x7b",
        "--trace",
        root()
            .join("crates/sim/examples/sessions.csv")
            .to_str()
            .expect("utf-8"),
        "-o",
        out.to_str().expect("utf-8"),
    ]);
    assert_eq!((code, stdout.as_str(), stderr.as_str()), (0, "", ""));
    let text = std::fs::read_to_string(&out).expect("written");
    let v: serde_json::Value = serde_json::from_str(&text).expect("json");
    assert_eq!(v["router"]["model"], "mixtral-8x7b");
    assert_eq!(v["trace"]["format"], "session-csv");
    assert_eq!(v["trace"]["speedups"], serde_json::json!([1]));
    assert_eq!(v["measure_s"], serde_json::json!(522), "the whole trace");
    assert_eq!(v["policies"]["configured"], "wait-and-widen");
    // Paths relative to the scenario's directory.
    let base = v["base_config"].as_str().expect("a path");
    assert!(!Path::new(base).is_absolute(), "{base}");
    assert_eq!(
        std::fs::canonicalize(dir.join(base)).expect("resolves"),
        std::fs::canonicalize(&config).expect("config")
    );
    // A comment per section.
    for section in [
        "trace", "topology", "engine", "pylon", "router", "client", "policies",
    ] {
        assert!(v[section]["//"].is_string(), "{section}");
    }
    let (code, stdout, stderr) = routex(&["sim", "run", "--quick", out.to_str().expect("utf-8")]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("configured"), "{stdout}");
    // Without a trace: the synthetic workload, printed on stdout.
    let (code, stdout, _) = routex(&[
        "sim",
        "init",
        "--config",
        "examples/lb-config.json",
        "--model",
        "mixtral-8x7b",
    ]);
    assert_eq!(code, 0);
    settings().bind(|| insta::assert_snapshot!("inputs_init_synthetic", stdout));
    let v: serde_json::Value = serde_json::from_str(&stdout).expect("json");
    assert_eq!(v["base_config"], "examples/lb-config.json");
    // --conversations: growing conversations on engine v2; the file
    // checks clean and runs, with the conversations' line per cell.
    let conv = dir.join("conv.json");
    let (code, stdout, stderr) = routex(&[
        "sim",
        "init",
        "--config",
        config.to_str().expect("utf-8"),
        "--model",
        "mixtral-8x7b",
        "--conversations",
        "-o",
        conv.to_str().expect("utf-8"),
    ]);
    assert_eq!((code, stdout.as_str(), stderr.as_str()), (0, "", ""));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&conv).expect("written")).expect("json");
    assert_eq!(v["engine"]["model"], "block-cache-v2");
    assert_eq!(v["conversations"]["mean_turns"], serde_json::json!(6));
    assert_eq!(v["rates_rps"], serde_json::json!([150, 200, 250]));
    assert!(v["conversations"]["//"].is_string());
    assert!(v.get("workload").is_none() && v.get("trace").is_none());
    let (code, stdout, _) = routex(&["sim", "check", conv.to_str().expect("utf-8")]);
    assert_eq!(
        (code, stdout.as_str()),
        (0, "0 errors, 0 warnings in 1 file\n")
    );
    let (code, stdout, stderr) = routex(&["sim", "run", "--quick", conv.to_str().expect("utf-8")]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("conversations: configured at 150: "),
        "{stdout}"
    );
    // A trace and conversations exclude each other: a usage error.
    let (code, _, stderr) = routex(&[
        "sim",
        "init",
        "--config",
        "examples/lb-config.json",
        "--model",
        "mixtral-8x7b",
        "--conversations",
        "--trace",
        "crates/sim/examples/sessions.csv",
    ]);
    assert_eq!(code, 2);
    assert!(stderr.contains("cannot be used with"), "{stderr}");
    // The model must be listed, with a did-you-mean.
    let (code, _, stderr) = routex(&[
        "sim",
        "init",
        "--config",
        "examples/lb-config.json",
        "--model",
        "mixtral-8x7B",
    ]);
    assert_eq!(
        (code, stderr.as_str()),
        (
            2,
            "routex: model 'mixtral-8x7B' is not listed in examples/lb-config.json; did you mean 'mixtral-8x7b'?\n"
        )
    );
}
