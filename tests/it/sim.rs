//! Tests for the sim layer (simulator.md A12).

mod calibration;
mod calibration_policies;
mod cli;
mod core;
mod determinism;
mod fast;
mod invariants;
mod publish;
mod scenario;
mod snapshots;
mod support;
mod tune;
