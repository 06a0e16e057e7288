//! Tests for the sim layer (docs/simulator-model.md A12).

mod admission;
mod arrivals;
mod baselines;
mod bench;
mod calibration;
mod calibration_policies;
mod capacity;
mod conversations;
mod core;
mod determinism;
mod engine_v2;
mod engine_v3;
mod fast;
mod faults;
mod fleets;
mod gateway;
mod input_work;
mod invariants;
mod parity;
mod plot;
mod publish;
mod reuse;
mod robustness;
mod scenario;
mod snapshots;
mod steady;
mod support;
mod timeline;
mod trace;
mod tune;
mod warm;

/// The repository root, where the inputs, examples, docs and snapshots
/// are (canonical, so `file:` URIs built from it match the binary's).
pub fn repo() -> &'static std::path::Path {
    static ROOT: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    ROOT.get_or_init(|| {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
        std::fs::canonicalize(root).unwrap_or_else(|e| panic!("{root}: {e}"))
    })
}
