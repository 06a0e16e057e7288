//! Tests for the router layer: resolution (docs/stargate.md 4.4),
//! the expression cache (5.6, 7.3), admission (3.9), rejections (5.5) and
//! the routing loop's timing (2.2, 7.7).

mod bounds;
mod concurrency;
#[cfg(feature = "tokio")]
mod driver;
mod headers;
mod health;
mod merge;
mod rejection;
mod reload;
mod sessions;
mod view;
mod wait;

// The routers of these tests decide with `Balancer::stand_in` (feature
// `testing`), or share their helpers.
#[cfg(feature = "testing")]
mod admission;
#[cfg(feature = "testing")]
mod cache;
#[cfg(feature = "testing")]
mod properties;
#[cfg(feature = "testing")]
mod resolution;
#[cfg(feature = "testing")]
mod round_robin;
#[cfg(feature = "testing")]
mod support;
