//! The heartbeat a backend pushes to the proxy (`POST /v1/heartbeat`): who
//! it is, where it listens, which models it serves, and its engine's
//! statistics in the units of routex's `BackendStats` (docs/embedding.md,
//! "Filling the view from engine metrics", says where a real engine
//! publishes each one).

use routex::router::BackendStats;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The proxy's heartbeat path.
pub const PATH: &str = "/v1/heartbeat";

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Heartbeat {
    pub cluster: String,
    pub backend: String,
    /// Base URL of the backend, e.g. `http://127.0.0.1:41234`.
    pub url: String,
    pub models: Vec<String>,
    pub stats: Stats,
}

/// One report. Absent fields are 0 (or absent), as `BackendStats` treats
/// fields a backend does not report.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Stats {
    /// Prompt tokens per second (mean prefill throughput).
    pub last_mean_input_tps: f64,
    /// Peak prompt tokens per second; Pulsar's default weight.
    pub max_input_tps: Option<f64>,
    /// Requests accepted but not yet producing output.
    pub queue_size: u64,
    /// Prompt tokens of those requests.
    pub queued_input_size: u64,
    /// Prompt tokens of every request the engine holds.
    pub total_query_input_size: u64,
    /// Requests in the engine.
    pub num_running_queries: u64,
    /// Engine slots; 0 = unknown.
    pub max_engine_concurrency: u64,
    /// Published queue-time estimates, ms by priority (JSON keys are text).
    pub queue_time_estimate_ms_by_priority: BTreeMap<u32, u64>,
    pub kv_cache_capacity_tokens: u64,
    pub kv_cache_used_tokens: u64,
    pub kv_cache_free_tokens: u64,
}

impl Stats {
    pub fn to_backend_stats(&self) -> BackendStats {
        BackendStats {
            last_mean_input_tps: self.last_mean_input_tps,
            max_input_tps: self.max_input_tps,
            queue_size: self.queue_size,
            queued_input_size: self.queued_input_size,
            total_query_input_size: self.total_query_input_size,
            num_running_queries: self.num_running_queries,
            max_engine_concurrency: self.max_engine_concurrency,
            queue_time_estimate_ms_by_priority: self
                .queue_time_estimate_ms_by_priority
                .iter()
                .map(|(&p, &ms)| (p, ms))
                .collect(),
            kv_cache_capacity_tokens: self.kv_cache_capacity_tokens,
            kv_cache_used_tokens: self.kv_cache_used_tokens,
            kv_cache_free_tokens: self.kv_cache_free_tokens,
        }
    }
}
