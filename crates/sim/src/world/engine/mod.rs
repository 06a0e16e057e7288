//! The engine models (docs/simulator-model.md A4; docs/simulator.md,
//! "Engine v2"): how a backend serves the requests its Pylon accepted.
//! The run loop sees only [`EngineModel`]: it hands a request over
//! (`accept`), gives the engine the timers it asked for (`timer`) and
//! cancels a request whose client gave up (`cancel`); the engine answers
//! with [`Action`]s (a request started, produced its first token, is done;
//! a timer to set), which the run loop applies in order.
//!
//! One implementation per model:
//!
//! - v1, `mockdynamo-v1` ([`slots::EngineV1`]): slots, a FIFO, independent
//!   per-request prefill and a per-key LRU sized in tokens ([`kv`]);
//! - v2, `block-cache-v2` ([`slots::EngineV2`]): the same slots and timings
//!   over an LRU of prefix blocks ([`blocks`]);
//! - v3, `batched-v3` ([`batched::BatchedEngine`]): workers with
//!   iteration-level steps, chunked prefill sharing each step with decode,
//!   admission by sequences and memory, a pinned per-key prefix cache.

pub mod batched;
pub mod bench_mock;
pub mod blocks;
pub mod kv;
pub mod overrides;
pub mod slots;

use crate::kernel::events::ReqId;
use crate::kernel::time::{from_ms, from_secs, Micros};
pub use crate::workload::BlockSpan;
use blocks::KvEvent;
use indexmap::IndexMap;
use std::sync::Arc;

/// The model names a scenario's `engine.model` accepts.
pub const V1: &str = "mockdynamo-v1";
pub const V2: &str = "block-cache-v2";
pub const V3: &str = "batched-v3";

/// A [`Job`]'s `key` when the request has no affinity key (nothing is
/// cached for it).
pub const NO_KEY: u32 = u32::MAX;

/// Parameters of one engine profile (A4.1).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EngineParams {
    #[serde(default = "default_model")]
    pub model: String,
    pub slots: u32,
    /// Per request; concurrent prefills do not share compute.
    pub prefill_tps: f64,
    pub ttft_base_ms: f64,
    pub ttft_jitter_ms: f64,
    /// Uniform range of the per-request decode rate.
    pub decode_tps: [f64; 2],
    pub kv_capacity_tokens: u64,
    #[serde(default = "default_speed")]
    pub backend_speed: f64,
    /// stargate-bench's mock backend (set by the stargate-bench reader,
    /// never read from a scenario file): replaces every other field.
    #[serde(skip)]
    pub mock: Option<bench_mock::MockParams>,
    /// Engine v3's steps, workers and sequences (its preset when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batched: Option<batched::BatchedParams>,
    /// Per-region profiles, by region name ([`overrides`]).
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub regions: IndexMap<String, overrides::EngineOverride>,
    /// Per-backend profiles, by cluster or backend id ([`overrides`]).
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub backends: IndexMap<String, overrides::EngineOverride>,
}

fn default_model() -> String {
    V1.into()
}
fn default_speed() -> f64 {
    1.0
}

impl EngineParams {
    /// Profile A, "parity" (the default).
    pub fn profile_a() -> Self {
        EngineParams {
            model: default_model(),
            slots: 25,
            prefill_tps: 7_000.0,
            ttft_base_ms: 10.0,
            ttft_jitter_ms: 20.0,
            decode_tps: [128.0, 200.0],
            kv_capacity_tokens: 400_000,
            backend_speed: 1.0,
            mock: None,
            batched: None,
            regions: IndexMap::new(),
            backends: IndexMap::new(),
        }
    }

    /// Profile B, "capacity-250".
    pub fn profile_b() -> Self {
        EngineParams {
            prefill_tps: 13_250.0,
            decode_tps: [110.0, 150.0],
            ..EngineParams::profile_a()
        }
    }

    /// The shortest service a request can get (a cached prefill with
    /// one output token), in ms: bounds how many requests a closed loop
    /// can start.
    pub fn min_service_ms(&self) -> f64 {
        let ms = match self.model.as_str() {
            V3 => self.batched.clone().unwrap_or_default().step_fixed_ms,
            _ => self.ttft_base_ms,
        };
        ms / self.backend_speed.max(f64::MIN_POSITIVE)
    }

    /// Requests the engine serves at once (the Pylon's
    /// `max_engine_concurrency`): the slots, or for engine v3 the workers
    /// x `max_num_seqs`.
    pub fn max_concurrency(&self) -> u64 {
        match self.model.as_str() {
            V3 => {
                let b = self.batched.clone().unwrap_or_default();
                u64::from(b.num_gpu_workers) * u64::from(b.max_num_seqs)
            }
            _ => match &self.mock {
                Some(m) => u64::from(m.slots),
                None => u64::from(self.slots),
            },
        }
    }

    /// The Pylon's initial input TPS: slots x prefill rate x speed.
    pub fn initial_tps(&self) -> f64 {
        f64::from(self.slots) * self.prefill_tps * self.backend_speed
    }

    /// Prefill time of `uncached` tokens.
    pub fn prefill_us(&self, uncached: u64) -> Micros {
        if uncached == 0 {
            return 0;
        }
        from_secs(uncached as f64 / (self.prefill_tps * self.backend_speed))
    }

    /// From prefill end to the first token: base + this request's jitter.
    pub fn settle_us(&self, jitter_ms: f64) -> Micros {
        from_ms(self.ttft_base_ms + jitter_ms)
    }

    /// From first token to the last: (out - 1) / (decode rate x speed).
    pub fn decode_us(&self, output_tokens: u64, decode_tps: f64) -> Micros {
        let rest = output_tokens.saturating_sub(1);
        if rest == 0 {
            return 0;
        }
        from_secs(rest as f64 / (decode_tps * self.backend_speed))
    }
}

/// What an engine is told of a request when its Pylon accepts it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Job {
    pub id: ReqId,
    /// The affinity key's index (the per-key caches' key).
    pub key: u32,
    pub input: u64,
    pub output: u64,
    /// This request's draws (engines v1 and v2): TTFT jitter and decode rate.
    pub jitter_ms: f64,
    pub decode_tps: f64,
    /// The request's prefix blocks in the plan's block list.
    pub blocks: BlockSpan,
}

/// A timer an engine asked for, handed back to it when due. What `id` and
/// `tag` mean is the engine's business.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timer {
    pub id: u32,
    pub tag: u32,
}

/// What the run loop must do after an engine call, in this order.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Action {
    /// The request holds a slot from now; `reused` tokens came from the
    /// prefix cache.
    Started { id: ReqId, reused: u64 },
    /// The request's first token left the engine now.
    FirstToken(ReqId),
    /// The request's last token left the engine now; its slot is free.
    Done(ReqId),
    /// Call [`EngineModel::timer`] with `timer` at `at`.
    Schedule { at: Micros, timer: Timer },
}

/// How a backend serves. Instances are per backend and per run.
pub trait EngineModel: std::fmt::Debug + Send {
    /// Pylon accepted `job` at `now`: start it or queue it.
    fn accept(&mut self, now: Micros, job: Job, out: &mut Vec<Action>);

    /// A timer this engine scheduled is due (stale ones are ignored).
    fn timer(&mut self, now: Micros, timer: Timer, out: &mut Vec<Action>);

    /// The client gave up on `id`: drop it, queued or running, and free
    /// what it held.
    fn cancel(&mut self, now: Micros, id: ReqId, out: &mut Vec<Action>);

    /// Caches `job`'s prefix as if it had just been served (calibration
    /// and tests start warm with it).
    fn warm(&mut self, job: &Job);

    /// Serves `factor` times slower than its profile from now on (1: the
    /// profile's speed again; a fault, docs/simulator.md "Faults"). Work
    /// already scheduled keeps its time: engines v1 and v2 (and the
    /// stargate-bench mock) take `factor` times as long for each prefill
    /// and decode that starts from now, engine v3 for each step that starts
    /// from now (a jump over several steps is cut at the step in
    /// progress; the actions go to `out`).
    fn slow_down(&mut self, now: Micros, factor: f64, out: &mut Vec<Action>);

    /// Engines v2 and v3: log block stores and removals from now on, for
    /// routers that follow KV events.
    fn log_kv_events(&mut self) {}

    /// Moves the logged KV events into `out`.
    fn take_kv_events(&mut self, _out: &mut Vec<KvEvent>) {}

    /// Tokens the prefix cache holds.
    fn cached_tokens(&self) -> u64;

    /// KV tokens the engine can hold (the cache's capacity; engine v3:
    /// every worker's memory).
    fn kv_capacity(&self) -> u64;

    /// KV tokens in use (the cache, and engine v3's reservations).
    fn kv_used(&self) -> u64 {
        self.cached_tokens()
    }

    /// Prefix-cache entries evicted so far.
    fn evictions(&self) -> u64 {
        0
    }

    /// Requests holding a slot (a running sequence, for the batched engine).
    fn slots_in_use(&self) -> u32;

    /// Requests waiting for a slot.
    fn waiting(&self) -> usize;

    fn is_idle(&self) -> bool;
}

/// Sizes of the run's prefix blocks, shared by every engine of a run.
#[derive(Clone, Debug, Default)]
pub struct BlockPlan {
    /// Every request's blocks; a [`Job`]'s `blocks` point into it.
    pub blocks: Arc<[u32]>,
    /// One past the largest block id.
    pub block_ids: u32,
    pub block_tokens: u64,
}

impl BlockPlan {
    /// The blocks of `span`, empty when out of range.
    pub fn of(&self, span: BlockSpan) -> &[u32] {
        let start = span.start as usize;
        self.blocks
            .get(start..start + span.len as usize)
            .unwrap_or(&[])
    }
}

/// An idle engine of the model `params.model` names.
pub fn build(params: &EngineParams, blocks: &BlockPlan) -> Box<dyn EngineModel> {
    if let Some(mock) = &params.mock {
        return Box::new(bench_mock::mock_engine(mock));
    }
    match params.model.as_str() {
        V2 => Box::new(slots::EngineV2::v2(params, blocks)),
        V3 => Box::new(batched::BatchedEngine::with_blocks(params, blocks)),
        _ => Box::new(slots::EngineV1::v1(params, blocks)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profile_a_timings_are_exact() {
        let p = EngineParams::profile_a();
        assert_eq!(p.prefill_us(6_661), 951_571); // 6661 / 7000 s
        assert_eq!(p.prefill_us(0), 0);
        assert_eq!(p.settle_us(0.0), 10_000);
        assert_eq!(p.settle_us(20.0), 30_000);
        assert_eq!(p.decode_us(256, 128.0), 1_992_188); // 255 / 128 s
        assert_eq!(p.decode_us(1, 128.0), 0);
        assert_eq!(p.initial_tps(), 175_000.0);
        assert_eq!(EngineParams::profile_b().initial_tps(), 331_250.0);
    }
}
