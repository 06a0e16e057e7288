//! `routex sim run`: exit codes, the bundled scenarios and the output files.

use routex_cli::sim::{run, RunArgs, ScenarioArgs, SimArgs, SimCommand};
use routex_sim::scenario::{load_with, LoadOptions};
use std::path::{Path, PathBuf};

fn args(scenario: Option<PathBuf>, out: Option<PathBuf>) -> SimArgs {
    SimArgs {
        command: SimCommand::Run(RunArgs {
            scenario,
            manifest: None,
            options: ScenarioArgs {
                quick: false,
                rng_seed: Some(7),
                mode: Some("faithful".into()),
                trace: None,
            },
            out,
            jobs: 2,
            shard: None,
            per_seed: false,
        }),
    }
}

fn manifest(path: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join(path)
}

#[test]
fn bundled_scenarios_are_valid() {
    let mut seen = Vec::new();
    for path in bundled_scenarios() {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("")
            .to_string();
        let text = std::fs::read_to_string(&path).expect("read");
        let dir = path.parent().expect("a file's folder").to_path_buf();
        let options = LoadOptions {
            dir: Some(&dir),
            trace: None,
            ..LoadOptions::default()
        };
        let p = load_with(&name, &text, options)
            .unwrap_or_else(|r| panic!("{name}: {:?}", r.reports()));
        assert!(p.warnings.diagnostics.is_empty(), "{name}");
        // The default scenario's variants keep its seven policies (A7.3);
        // the other files choose their own.
        if SEVEN_POLICIES.contains(&name.as_str()) {
            assert_eq!(p.policies.len(), 7, "{name}");
        }
        if name.starts_with("scenario-conversations") {
            // The two overflow-guard policies on growing conversations.
            assert_eq!(p.policies.len(), 2, "{name}");
            assert!(p.file.conversations.is_some(), "{name}");
        }
        seen.push(name);
    }
    for name in SEVEN_POLICIES {
        assert!(seen.iter().any(|s| s == name), "{name} is bundled");
    }
    assert!(seen.len() > SEVEN_POLICIES.len(), "{seen:?}");
}

/// Every bundled scenario file (`scenario-*.json`): the simulator's
/// examples, the repository's examples and the studies' under
/// `experiments/`, at any depth.
fn bundled_scenarios() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries {
            let path = entry.expect("entry").path();
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if path.is_dir() {
                walk(&path, out);
            } else if name.starts_with("scenario-") && name.ends_with(".json") {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    for dir in ["crates/sim/examples", "examples", "experiments"] {
        walk(&manifest(dir), &mut out);
    }
    out.sort();
    out
}

/// The bundled scenarios that vary the default one and keep its policies.
const SEVEN_POLICIES: [&str; 5] = [
    "scenario-ablation-overflow-depth.json",
    "scenario-profile-b.json",
    "scenario-trace-conversation.json",
    "scenario-zipf-z1.json",
    "scenario-zipf-z2.json",
];

#[test]
fn exit_codes() {
    assert_eq!(
        run(&args(
            Some(manifest("crates/sim/tests/inputs/missing.json")),
            None
        )),
        2
    );
    let dir = std::env::temp_dir().join(format!("routex-sim-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("tmp");
    let bad = dir.join("bad.json");
    std::fs::write(&bad, "{\"name\": 1}").expect("write");
    assert_eq!(run(&args(Some(bad), None)), 1);
}

#[test]
fn writes_the_six_files() {
    let dir = std::env::temp_dir().join(format!("routex-sim-out-{}", std::process::id()));
    let text =
        std::fs::read_to_string(manifest("crates/sim/tests/inputs/small.json")).expect("read");
    let short = text.replace(
        "\"warmup_s\": 10, \"measure_s\": 20",
        "\"warmup_s\": 2, \"measure_s\": 4",
    );
    let scenario =
        std::env::temp_dir().join(format!("routex-sim-small-{}.json", std::process::id()));
    std::fs::write(&scenario, short).expect("write");
    assert_eq!(run(&args(Some(scenario), Some(dir.clone()))), 0);
    let summary = std::fs::read_to_string(dir.join("summary.json")).expect("summary");
    let v: serde_json::Value = serde_json::from_str(&summary).expect("json");
    let runs = v["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 6, "3 policies x 2 rates x seed 7");
    assert_eq!(runs[0]["seed"], 7);
    for key in [
        "goodput_rps",
        "token_reuse",
        "ttft_p99_ms",
        "off_primary",
        "retries_exhausted",
    ] {
        assert!(runs[0][key].is_number(), "{key}");
    }
    assert_eq!(v["aggregates"].as_array().map(Vec::len), Some(6));
    let csv = std::fs::read_to_string(dir.join("summary.csv")).expect("csv");
    assert_eq!(csv.lines().count(), 7);
    let series = std::fs::read_to_string(dir.join("timeseries.csv")).expect("series");
    assert!(series.starts_with("policy,rate_rps,seed,bin_start_s"));
    // backends.csv: a row per run, 10 s bin and backend.
    let backends = std::fs::read_to_string(dir.join("backends.csv")).expect("backends");
    let rows: Vec<&str> = backends.lines().skip(1).collect();
    let bins = series.lines().count() - 1;
    let members = v["backends"].as_array().map_or(0, Vec::len);
    assert_eq!(
        rows.len(),
        bins * members,
        "{members} backends x {bins} bins"
    );
    assert!(
        rows[0].starts_with(&format!(
            "guard,8,7,0,{},",
            v["backends"][0].as_str().unwrap_or("")
        )),
        "{}",
        rows[0]
    );
    let svg = std::fs::read_to_string(dir.join("plot.svg")).expect("svg");
    assert!(svg.starts_with("<svg") && svg.contains("guard"));
    // Provenance: the version, the scenario's hash, and per policy what
    // `routex explain` resolves (the legacy baseline is no expression).
    assert_eq!(v["routex_version"], env!("CARGO_PKG_VERSION"));
    assert!(v["scenario_hash"]
        .as_str()
        .is_some_and(|h| h.starts_with("xxh3-64:")));
    let policies = v["policies"].as_array().expect("policies");
    assert_eq!(policies[0]["name"], "guard");
    assert_eq!(
        policies[0]["resolved"]["policy"]["settings"]["max_queued"],
        2
    );
    assert_eq!(
        policies[0]["resolved"]["provenance"]["max_queued"],
        "expression"
    );
    assert_eq!(policies[1]["resolved"], serde_json::Value::Null);
    assert!(runs[0]["steady"].is_boolean());
    assert!(v["warnings"].is_array());
}

/// Ctrl-C: the real binary stops starting runs, writes the finished ones
/// marked incomplete, ends its progress line and exits 130.
#[cfg(unix)]
#[test]
fn an_interrupt_writes_the_finished_runs_and_exits_130() {
    use std::process::{Command, Stdio};
    let dir = std::env::temp_dir().join(format!("routex-sim-int-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    // The default scenario, faithful quick sweep: 49 runs, far longer
    // than the wait below even in a release build.
    let child = Command::new(env!("CARGO_BIN_EXE_routex"))
        .args([
            "sim", "run", "--quick", "--mode", "faithful", "--jobs", "1", "--out",
        ])
        .arg(&dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
    let out = child.wait_with_output().expect("wait");
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("interrupted after"), "{stderr}");
    assert!(stderr.ends_with('\n'), "the last line is ended: {stderr:?}");
    let summary = std::fs::read_to_string(dir.join("summary.json")).expect("summary");
    let v: serde_json::Value = serde_json::from_str(&summary).expect("json");
    assert_eq!(v["incomplete"], true);
    let runs = v["runs"].as_array().map_or(0, Vec::len);
    assert!(runs < 49, "{runs} runs");
    let warnings = v["warnings"].as_array().expect("warnings");
    assert!(warnings.iter().any(|w| w
        .as_str()
        .is_some_and(|w| w.starts_with(&format!("interrupted: {runs} of 49 runs")))));
    // The table of the finished runs is on stdout, one row per cell.
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.starts_with("policy"), "{stdout}");
    for f in [
        "summary.csv",
        "timeseries.csv",
        "backends.csv",
        "plot.svg",
        "backends.svg",
    ] {
        assert!(dir.join(f).exists(), "{f}");
    }
}

/// A stargate-bench file runs every algorithm and writes bench.json; a bad
/// one exits 1.
#[test]
fn a_stargate_bench_file_runs_every_algorithm() {
    let dir = std::env::temp_dir().join(format!("routex-bench-{}", std::process::id()));
    let file = manifest("crates/sim/tests/inputs/bench/two-tier.yaml");
    assert_eq!(run(&args(Some(file), Some(dir.clone()))), 0);
    let text = std::fs::read_to_string(dir.join("bench.json")).expect("bench.json");
    let v: serde_json::Value = serde_json::from_str(&text).expect("json");
    let names: Vec<&str> = v["algorithms"]
        .as_array()
        .expect("algorithms")
        .iter()
        .filter_map(|a| a["algorithm"].as_str())
        .collect();
    assert_eq!(names, vec!["power-of-n", "pulsar"]);
    assert_eq!(v["algorithms"][0]["scores"]["success_rate"], 1.0);
    let bad = manifest("crates/sim/tests/inputs/bench/bad-keys.yaml");
    assert_eq!(run(&args(Some(bad), None)), 1);
    let _ = std::fs::remove_dir_all(dir);
}
