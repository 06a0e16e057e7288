//! The proxy example (examples/proxy) end to end over loopback, in one
//! test binary (one link of the HTTP stack instead of three):
//! `routing` (decisions, bursts, malformed headers, retries, sessions),
//! `ops` (a cold start, `/metrics`, backend health), `completion` (short
//! requests under a longer heartbeat), `health` (health per backend across
//! models, both metrics formats, bounded echoes) and `rss` (the target
//! bound in RSS: `#[ignore]`, its own step of .ci/run). The reload test
//! stays in tests/proxy_reload.rs: its SIGHUP goes to the whole process.
#![cfg(all(feature = "tokio", feature = "http", feature = "metrics"))]

// The tests use a part of the fake backend's controls.
#[allow(dead_code)]
#[path = "../../examples/proxy/backend.rs"]
mod backend;
#[path = "../../examples/proxy/client.rs"]
mod client;
// The tests use a part of the front end (not its reloads).
#[allow(dead_code)]
#[path = "../../examples/proxy/front.rs"]
mod front;
#[path = "../../examples/proxy/gateway.rs"]
mod gateway;
#[path = "../../examples/proxy/heartbeat.rs"]
mod heartbeat;

#[path = "../support/proxy_fleet.rs"]
mod fleet;

mod completion;
mod health;
mod ops;
mod routing;
mod rss;
