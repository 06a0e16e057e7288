//! Tests for the router layer: resolution (docs/stargate.md 4.4),
//! the expression cache (5.6, 7.3), admission (3.9), rejections (5.5) and
//! the routing loop's timing (2.2, 7.7).

mod admission;
mod bounds;
mod cache;
mod concurrency;
#[cfg(feature = "tokio")]
mod driver;
mod headers;
mod health;
mod merge;
mod properties;
mod rejection;
mod reload;
mod resolution;
mod round_robin;
mod sessions;
mod support;
mod view;
mod wait;
