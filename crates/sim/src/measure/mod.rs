//! Measurement: per-request records, per-run metrics from them, the
//! steady-state test of a measured window, and each backend's timeline.

pub(crate) mod metrics;
pub(crate) mod record;
pub mod steady;
#[doc(hidden)]
pub mod timeline;
