//! Measurement: per-run metrics from per-request records, the
//! steady-state test of a measured window, and each backend's timeline.

pub(crate) mod metrics;
pub mod steady;
#[doc(hidden)]
pub mod timeline;
