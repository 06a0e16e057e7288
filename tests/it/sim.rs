//! Tests for the sim layer (simulator.md A12).

mod calibration;
mod scenario;
