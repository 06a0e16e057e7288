//! The heartbeat a backend pushes to the proxy (`POST /v1/heartbeat`): who
//! it is, where it listens, which models it serves, and its engine's
//! statistics as routex's `BackendStats` reads them from JSON (field
//! names, defaults and the priority map: docs/embedding.md, "The candidate
//! view"; "Filling the view from engine metrics" says where a real engine
//! publishes each one).

use routex::router::{BackendRates, BackendStats};
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
    /// The rates the backend registers with before it has measured any
    /// (a benchmarked prefill rate): what the router uses while reports
    /// carry none (docs/embedding.md, "Registration and a cold start").
    #[serde(default)]
    pub registration: Registration,
    /// The backend is shutting down: no new requests, in-flight ones finish.
    #[serde(default)]
    pub draining: bool,
    pub stats: BackendStats,
}

/// A heartbeat's registration rates, tokens per second.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Registration {
    pub input_tps: Option<f64>,
    pub max_input_tps: Option<f64>,
}

impl From<Registration> for BackendRates {
    fn from(r: Registration) -> BackendRates {
        BackendRates {
            input_tps: r.input_tps,
            max_input_tps: r.max_input_tps,
        }
    }
}
