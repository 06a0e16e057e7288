//! The balancer core: interprets a [`Policy`] exactly as stargate decides.
//! Never sees source text or spans. Randomness and time are inputs.

use crate::ir::Policy;
use rand::RngCore;
use std::time::Duration;

/// The per-decision request (reference-behaviour.md 1.2).
#[derive(Clone, Debug, Default)]
pub struct Request<'a> {
    pub model: &'a str,
    pub routing_key: Option<&'a str>,
    pub cache_affinity_key: Option<&'a str>,
    pub input_tokens: Option<u64>,
    pub priority: u32,
    pub request_slo_ms: Option<u64>,
    /// now - arrival on the caller's clock (virtual time in the simulator).
    pub elapsed: Duration,
    /// Cluster ids that failed earlier attempts of this request.
    pub excluded: &'a [&'a str],
}

/// One candidate cluster's statistics (reference-behaviour.md 1.3).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClusterSnapshot {
    pub id: String,
    pub rtt_ms: f64,
    pub last_mean_input_tps: f64,
    pub max_input_tps: Option<f64>,
    pub queue_size: u64,
    pub queued_input_size: u64,
    pub num_running_queries: u64,
    /// 0 = unknown.
    pub max_engine_concurrency: u64,
    /// (priority, estimate ms), sorted by priority, unique priorities.
    pub queue_time_estimate_ms_by_priority: Vec<(u32, u64)>,
    pub kv_cache_capacity_tokens: u64,
    pub kv_cache_used_tokens: u64,
    pub kv_cache_free_tokens: u64,
}

/// A selection (reference-behaviour.md 2.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Choice {
    /// Position in the caller's candidate slice.
    pub index: usize,
    /// 1 = primary, > 1 = fallback.
    pub rank_depth: u32,
    pub selected_after_kv_free_tokens_skip: bool,
}

/// What the core answers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Decision {
    Selected(Choice),
    /// Nothing selectable now; something may become selectable within this.
    Wait(Duration),
    Unavailable,
}

/// Reusable buffers, owned by the caller (one per thread), so a decision
/// does not allocate after warm-up.
#[derive(Debug, Default)]
pub struct Scratch {}

/// One balancer instance: a policy plus its state (round-robin counter,
/// ring and ranking caches). `Send + Sync`.
#[derive(Debug)]
pub struct Balancer {}

impl Balancer {
    pub fn new(policy: &Policy) -> Self {
        let _ = policy;
        todo!("balancer")
    }

    pub fn decide(
        &self,
        request: &Request<'_>,
        clusters: &[ClusterSnapshot],
        rng: &mut dyn RngCore,
        scratch: &mut Scratch,
    ) -> Decision {
        let _ = (request, clusters, rng, scratch);
        todo!("balancer")
    }
}
