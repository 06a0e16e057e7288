//! The peers' routers as simulator-only baselines (docs/simulator.md
//! "Baselines"): each rule is a pure function with hand-computed tests;
//! the router-side state they read (indexes of sent blocks, in-flight
//! counts, KV-event mirrors) is bounded.

pub mod chwbl;
pub mod dynamo;
pub mod gie;
pub mod index;
pub mod sglang;
pub mod spec;
