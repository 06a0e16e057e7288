//! Tests for the sim layer (docs/simulator-model.md A12).

mod baselines;
mod calibration;
mod calibration_policies;
mod cli;
mod core;
mod determinism;
mod engine_v2;
mod fast;
mod invariants;
mod publish;
mod robustness;
mod scenario;
mod shard;
mod snapshots;
mod support;
mod trace;
mod tune;
