//! What the router counts and how it is exported: the expression cache's
//! counters (`expression_cache`), the router's own counters and wait histogram
//! (`counters`), the session-selection counter (`sessions`) and the
//! prometheus-client collector over all of them (`prometheus`, feature
//! `metrics`).

pub(super) mod counters;
pub(super) mod expression_cache;
#[cfg(feature = "metrics")]
pub(super) mod prometheus;
pub(super) mod sessions;
