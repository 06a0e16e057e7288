//! Shared helpers: scenarios from `crates/sim/tests/inputs/` and single runs.

use routex_sim::run::{run, RunResult, SimSettings};
use routex_sim::scenario::{load, Prepared, DEFAULT_SCENARIO};

pub fn input(name: &str) -> String {
    let path = format!(
        "{}/crates/sim/tests/inputs/{name}",
        concat!(env!("CARGO_MANIFEST_DIR"), "/../..")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

pub fn prepared(text: &str) -> Prepared {
    match load("test.json", text) {
        Ok(p) => p,
        Err(r) => panic!("invalid scenario: {:?}", r.diagnostics),
    }
}

pub fn small() -> Prepared {
    prepared(&input("small.json"))
}

/// The default scenario with only the given policies.
pub fn default_with(policies: &[(&str, &str)]) -> Prepared {
    let mut v: serde_json::Value = serde_json::from_str(DEFAULT_SCENARIO).expect("json");
    let map: serde_json::Map<_, _> = policies
        .iter()
        .map(|(k, p)| (k.to_string(), serde_json::Value::from(*p)))
        .collect();
    v["policies"] = serde_json::Value::Object(map);
    prepared(&serde_json::to_string(&v).expect("json"))
}

/// Runs the named policy of `p` once.
pub fn run_one(p: &Prepared, name: &str, rate: f64, seed: u64) -> RunResult {
    run_with(&p.settings, p, name, rate, seed)
}

/// Runs the named policy of `p` once under `settings` (a changed copy of
/// `p`'s).
pub fn run_with(
    settings: &SimSettings,
    p: &Prepared,
    name: &str,
    rate: f64,
    seed: u64,
) -> RunResult {
    let kind = &p
        .policies
        .iter()
        .find(|x| x.name == name)
        .unwrap_or_else(|| panic!("no policy {name}"))
        .kind;
    run(settings, kind, rate, seed)
}

/// insta's settings for the simulator's snapshots: `crates/sim/tests/snapshots/` at
/// the repository root, named without the module.
pub fn snapshot_settings() -> insta::Settings {
    let mut s = insta::Settings::clone_current();
    s.set_snapshot_path("../snapshots");
    s.set_prepend_module_to_snapshot(false);
    s
}
