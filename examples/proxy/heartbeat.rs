//! The heartbeat a backend pushes to the proxy (`POST /v1/heartbeat`): who
//! it is, where it listens, which models it serves, and its engine's
//! statistics as routex's `BackendStats` reads them from JSON (field
//! names, defaults and the priority map: docs/embedding.md, "The candidate
//! view"; "Filling the view from engine metrics" says where a real engine
//! publishes each one).

use routex::router::BackendStats;
use serde::{Deserialize, Serialize};

/// The proxy's heartbeat path.
pub const PATH: &str = "/v1/heartbeat";

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Heartbeat {
    pub cluster: String,
    pub backend: String,
    /// Base URL of the backend, e.g. `http://127.0.0.1:41234`.
    pub url: String,
    pub models: Vec<String>,
    pub stats: BackendStats,
}
