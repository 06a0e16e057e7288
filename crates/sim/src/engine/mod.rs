//! The engine model (docs/simulator-model.md A4; docs/simulator.md, "Engine
//! v2"): how a backend serves requests. Slots with a FIFO wait queue, independent
//! per-request prefill of the uncached tokens and a per-request decode rate
//! are common to both models; they differ in the prefix cache:
//!
//! - v1, `mockdynamo-v1`: a per-key LRU sized in tokens ([`kv`]);
//! - v2, `block-cache-v2`: an LRU of prefix blocks sized in tokens, reused
//!   up to the longest cached prefix of the request's blocks ([`blocks`]).
//!
//! The run loop sees only [`Engine`]: `admit`, `reuse` (when prefill
//! starts), `store` (when it ends), `release_slot`. This type holds
//! the state; the run loop schedules the events with the timings computed
//! here.

pub mod blocks;
pub mod kv;

use super::events::ReqId;
use super::time::{from_ms, from_secs, Micros};
use blocks::{BlockLru, KvEvent};
use kv::KvLru;
use std::collections::VecDeque;

/// The model names a scenario's `engine.model` accepts.
pub const V1: &str = "mockdynamo-v1";
pub const V2: &str = "block-cache-v2";

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

/// What the prefix cache needs to know of a request.
#[derive(Clone, Copy, Debug)]
pub struct CacheKey<'a> {
    /// The affinity key's index (v1's cache key).
    pub key: u32,
    pub input: u64,
    /// The request's prefix blocks, first block first (v2).
    pub blocks: &'a [u32],
}

#[derive(Clone, Debug)]
enum Cache {
    PerKey(KvLru),
    Blocks(BlockLru),
}

/// Slots, wait queue and prefix cache of one backend.
#[derive(Clone, Debug)]
pub struct Engine {
    slots: u32,
    free_slots: u32,
    fifo: VecDeque<ReqId>,
    cache: Cache,
}

impl Engine {
    /// An idle engine. `block_tokens` and `block_ids` (one past the largest
    /// block id of the workload) size engine v2's cache; v1 ignores them.
    pub fn new(params: &EngineParams, block_tokens: u64, block_ids: u32) -> Self {
        let cache = if params.model == V2 {
            let capacity = params.kv_capacity_tokens / block_tokens.max(1);
            Cache::Blocks(BlockLru::new(capacity, block_tokens, block_ids))
        } else {
            Cache::PerKey(KvLru::new(params.kv_capacity_tokens))
        };
        Engine {
            slots: params.slots,
            free_slots: params.slots,
            fifo: VecDeque::new(),
            cache,
        }
    }

    /// Prefill starts: the tokens reused from the cache (touching what it
    /// reuses).
    pub fn reuse(&mut self, req: &CacheKey<'_>) -> u64 {
        match &mut self.cache {
            Cache::PerKey(kv) => kv.access(req.key, req.input),
            Cache::Blocks(b) => b.reuse(req.blocks, req.input),
        }
    }

    /// Prefill is done: the request's prefix is cached.
    pub fn store(&mut self, req: &CacheKey<'_>) {
        match &mut self.cache {
            Cache::PerKey(kv) => kv.store(req.key, req.input),
            Cache::Blocks(b) => b.store(req.blocks),
        }
    }

    /// Engine v2 only: log block stores and removals from now on, for
    /// routers that follow KV events.
    pub fn log_kv_events(&mut self) {
        if let Cache::Blocks(b) = &mut self.cache {
            b.log_events();
        }
    }

    /// Moves the logged KV events into `out`.
    pub fn take_kv_events(&mut self, out: &mut Vec<KvEvent>) {
        if let Cache::Blocks(b) = &mut self.cache {
            b.take_events(out);
        }
    }

    /// Tokens the prefix cache holds.
    pub fn cached_tokens(&self) -> u64 {
        match &self.cache {
            Cache::PerKey(kv) => kv.used_tokens(),
            Cache::Blocks(b) => b.used_tokens(),
        }
    }

    /// Admits a request: `true` if it took a free slot (prefill starts now),
    /// `false` if it waits in the FIFO.
    pub fn admit(&mut self, req: ReqId) -> bool {
        if self.free_slots > 0 {
            self.free_slots -= 1;
            true
        } else {
            self.fifo.push_back(req);
            false
        }
    }

    /// Frees one slot. The FIFO head, if any, takes it over and must start
    /// prefill now.
    pub fn release_slot(&mut self) -> Option<ReqId> {
        match self.fifo.pop_front() {
            Some(next) => Some(next),
            None => {
                debug_assert!(self.free_slots < self.slots, "slot released twice");
                self.free_slots = (self.free_slots + 1).min(self.slots);
                None
            }
        }
    }

    /// Removes a waiting request (client timeout); `false` if it was not waiting.
    pub fn remove_waiting(&mut self, req: ReqId) -> bool {
        match self.fifo.iter().position(|&r| r == req) {
            Some(i) => {
                self.fifo.remove(i);
                true
            }
            None => false,
        }
    }

    pub fn slots_in_use(&self) -> u32 {
        self.slots - self.free_slots
    }

    pub fn waiting(&self) -> usize {
        self.fifo.len()
    }

    pub fn is_idle(&self) -> bool {
        self.free_slots == self.slots && self.fifo.is_empty()
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

    #[test]
    fn fifo_hands_slots_over_in_order() {
        let mut p = EngineParams::profile_a();
        p.slots = 2;
        let mut e = Engine::new(&p, 1, 0);
        assert!(e.admit(1));
        assert!(e.admit(2));
        assert!(!e.admit(3));
        assert!(!e.admit(4));
        assert_eq!(e.waiting(), 2);
        assert!(e.remove_waiting(4));
        assert!(!e.remove_waiting(4));
        assert_eq!(e.release_slot(), Some(3));
        assert_eq!(e.slots_in_use(), 2);
        assert_eq!(e.release_slot(), None);
        assert_eq!(e.release_slot(), None);
        assert!(e.is_idle());
    }
}
