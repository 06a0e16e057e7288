//! Where requests come from (docs/simulator-model.md A8; docs/simulator.md,
//! codemap): a [`WorkloadSource`] turns an offered rate and a horizon into
//! the run's [`Plan`], every request with its arrival, affinity key, sizes,
//! entry router, engine draws and prefix blocks. The synthetic generator
//! lives in [`synthetic`] (its arrival laws and hot set in [`arrival`], its size classes in [`classes`]), the size laws in [`sizes`], trace replay in [`trace`] (Mooncake traces and,
//! through [`sessions`], request logs with session ids); every draw comes from the `WORKLOAD` stream, so
//! every policy sees the same plan.

pub mod arrival;
pub mod classes;
pub mod conversation_client;
pub mod conversations;
pub mod sessions;
pub mod sizes;
pub mod synthetic;
pub mod trace;
mod weighted;

pub use synthetic::WorkloadSpec;

use crate::kernel::time::Micros;

/// The most distinct prefix block ids one run's plan may hold: each engine
/// v2 cache indexes them with one `u32` per id. Every workload (synthetic
/// keys, traces, conversations) and every check of a scenario reads this.
pub const MAX_BLOCK_IDS: u64 = 1 << 24;
/// The most block references (block ids over all requests) one run's plan
/// may hold.
pub const MAX_BLOCK_REFS: u64 = 64 << 20;
use rand_chacha::ChaCha8Rng;
use std::sync::Arc;

/// A request's prefix blocks: a range of the plan's shared block list.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BlockSpan {
    pub start: u32,
    pub len: u32,
}

/// One request of the plan.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlannedRequest {
    pub arrival: Micros,
    /// Index into `Plan::key_names` (for the synthetic workloads, the
    /// popularity rank - 1: the affinity key is `k<key + 1>`).
    pub key: u32,
    pub input: u64,
    pub output: u64,
    /// Index into the active routers.
    pub router: u32,
    pub jitter_ms: f64,
    pub decode_tps: f64,
    pub blocks: BlockSpan,
}

/// Everything a run serves.
#[derive(Clone, Debug)]
pub struct Plan {
    pub requests: Vec<PlannedRequest>,
    /// The `x-cache-affinity-key` of each key index (a request whose index
    /// is past the end sends none).
    pub key_names: Arc<[String]>,
    /// Prefix block ids, dense in `0..block_ids`, shared by every run of a
    /// workload; requests point into it.
    pub blocks: Arc<[u32]>,
    pub block_ids: u32,
    /// Tokens per block (engine v2 and block-aware routers).
    pub block_tokens: u64,
    /// The end of the arrivals: the horizon, or the end of a shorter trace.
    pub end: Micros,
    /// Growing conversations: the later turns, which the run sends when
    /// the turn before completes (`requests` holds the first turns);
    /// `None` for every other workload.
    pub conversations: Option<Arc<conversations::ConversationPlan>>,
}

impl Plan {
    /// Request `r`'s prefix blocks, first block first (empty when the
    /// workload has none).
    pub fn blocks_of(&self, r: &PlannedRequest) -> &[u32] {
        let start = r.blocks.start as usize;
        self.blocks
            .get(start..start + r.blocks.len as usize)
            .unwrap_or(&[])
    }
}

/// Inputs of the plan beyond the workload itself.
pub struct PlanShape<'a> {
    pub rate_rps: f64,
    pub horizon_s: f64,
    /// Traffic weight of each active router.
    pub router_weights: &'a [f64],
    pub ttft_jitter_ms: f64,
    pub decode_tps: [f64; 2],
}

/// A source of requests.
pub trait WorkloadSource: std::fmt::Debug + Send + Sync {
    /// The plan for one run; `rng` is the run's `WORKLOAD` stream.
    fn plan(&self, shape: &PlanShape<'_>, rng: &mut ChaCha8Rng) -> Plan;
}
