//! Engines v1 and v2 (docs/simulator-model.md A4; docs/simulator.md,
//! "Engine v2"): slots with a FIFO wait queue, prefill of the uncached
//! tokens at a fixed per-request rate (concurrent prefills do not share
//! compute), then `ttft_base + jitter`, the first token, and
//! `(out - 1) / decode_rate` to the last. The two models differ only in
//! their prefix cache, a [`PrefixCache`]: v1's per-key token LRU
//! ([`KvLru`]) or v2's block LRU ([`BlockLru`]).
//!
//! The timings are a [`Timing`]: the scenario's engine parameters (v1 and
//! v2: per-request jitter and decode rate drawn in the plan) or
//! stargate-bench's mock backends ([`super::bench_mock`]).
//!
//! Timers: `tag` is the stage that ends ([`PREFILL_DONE`], [`FIRST_TOKEN`],
//! [`COMPLETE`]) and `id` the request; a timer of a request that is no
//! longer in that stage (cancelled) is stale and ignored.

use super::blocks::{BlockLru, KvEvent};
use super::kv::KvLru;
use super::{Action, BlockPlan, EngineModel, EngineParams, Job, Timer};
use crate::kernel::events::ReqId;
use crate::kernel::time::Micros;
use std::collections::VecDeque;

/// Timer tags: the stage that ends when the timer fires.
pub const PREFILL_DONE: u32 = 0;
pub const FIRST_TOKEN: u32 = 1;
pub const COMPLETE: u32 = 2;

/// What the slot engines need of a prefix cache.
pub trait PrefixCache: std::fmt::Debug + Send {
    /// Prefill starts: the tokens reused (touching what it reuses).
    fn reuse(&mut self, job: &Job, blocks: &[u32]) -> u64;
    /// Prefill is done: the request's prefix is cached.
    fn store(&mut self, job: &Job, blocks: &[u32]);
    fn used_tokens(&self) -> u64;
    /// The capacity in tokens.
    fn capacity_tokens(&self) -> u64;
    /// Entries evicted so far (v1's keys; v2 counts none).
    fn evictions(&self) -> u64 {
        0
    }
    fn log_events(&mut self) {}
    fn take_events(&mut self, _out: &mut Vec<KvEvent>) {}
}

impl PrefixCache for KvLru {
    fn reuse(&mut self, job: &Job, blocks: &[u32]) -> u64 {
        self.access_with(job.key, job.input, blocks)
    }
    fn store(&mut self, job: &Job, blocks: &[u32]) {
        KvLru::store_with(self, job.key, job.input, blocks);
    }
    fn used_tokens(&self) -> u64 {
        KvLru::used_tokens(self)
    }
    fn evictions(&self) -> u64 {
        KvLru::evictions(self)
    }
    fn capacity_tokens(&self) -> u64 {
        KvLru::capacity_tokens(self)
    }
}

impl PrefixCache for BlockLru {
    fn reuse(&mut self, job: &Job, blocks: &[u32]) -> u64 {
        BlockLru::reuse(self, blocks, job.input)
    }
    fn store(&mut self, _job: &Job, blocks: &[u32]) {
        BlockLru::store(self, blocks);
    }
    fn used_tokens(&self) -> u64 {
        BlockLru::used_tokens(self)
    }
    fn capacity_tokens(&self) -> u64 {
        BlockLru::capacity_tokens(self)
    }
    fn log_events(&mut self) {
        BlockLru::log_events(self);
    }
    fn take_events(&mut self, out: &mut Vec<KvEvent>) {
        BlockLru::take_events(self, out);
    }
}

/// How long a slot engine's stages last.
pub trait Timing: std::fmt::Debug + Send {
    /// Prefill of `uncached` tokens.
    fn prefill_us(&self, uncached: u64) -> Micros;
    /// From prefill end to the first token.
    fn settle_us(&self, job: &Job) -> Micros;
    /// From the first token to the last.
    fn decode_us(&self, job: &Job) -> Micros;
}

impl Timing for EngineParams {
    fn prefill_us(&self, uncached: u64) -> Micros {
        EngineParams::prefill_us(self, uncached)
    }
    fn settle_us(&self, job: &Job) -> Micros {
        EngineParams::settle_us(self, job.jitter_ms)
    }
    fn decode_us(&self, job: &Job) -> Micros {
        EngineParams::decode_us(self, job.output, job.decode_tps)
    }
}

#[derive(Clone, Copy, Debug)]
struct Running {
    job: Job,
    /// The timer tag this request waits for.
    stage: u32,
}

/// Slots, wait queue and prefix cache of one backend.
#[derive(Debug)]
pub struct SlotEngine<C, T = EngineParams> {
    timing: T,
    slots: u32,
    fifo: VecDeque<Job>,
    /// At most `slots` requests: lookups scan it.
    running: Vec<Running>,
    cache: C,
    blocks: BlockPlan,
    /// Prefill and decode last this many times their profile's time (a
    /// slow-down fault); 1 otherwise.
    slow: f64,
}

/// Engine v1, `mockdynamo-v1`.
pub type EngineV1 = SlotEngine<KvLru>;
/// Engine v2, `block-cache-v2`.
pub type EngineV2 = SlotEngine<BlockLru>;

impl EngineV1 {
    pub fn v1(params: &EngineParams, blocks: &BlockPlan) -> Self {
        let cache = KvLru::following_blocks(params.kv_capacity_tokens, blocks.block_tokens);
        SlotEngine::with_cache(params, blocks, cache)
    }
}

impl EngineV2 {
    pub fn v2(params: &EngineParams, blocks: &BlockPlan) -> Self {
        let block_tokens = blocks.block_tokens.max(1);
        let capacity = params.kv_capacity_tokens / block_tokens;
        let cache = BlockLru::new(capacity, block_tokens, blocks.block_ids);
        SlotEngine::with_cache(params, blocks, cache)
    }
}

impl<C: PrefixCache> SlotEngine<C> {
    fn with_cache(params: &EngineParams, blocks: &BlockPlan, cache: C) -> Self {
        SlotEngine::new(params.clone(), params.slots, blocks, cache)
    }
}

impl<C: PrefixCache, T: Timing> SlotEngine<C, T> {
    /// An idle engine of `slots` slots.
    pub fn new(timing: T, slots: u32, blocks: &BlockPlan, cache: C) -> Self {
        SlotEngine {
            timing,
            slots,
            fifo: VecDeque::new(),
            running: Vec::with_capacity(slots.min(1_024) as usize),
            cache,
            blocks: blocks.clone(),
            slow: 1.0,
        }
    }

    /// A prefill or decode time under the slow-down, rounded to the µs
    /// (untouched at speed 1).
    fn slowed(&self, us: Micros) -> Micros {
        if self.slow == 1.0 {
            us
        } else {
            (us as f64 * self.slow).round() as Micros
        }
    }

    /// `job` holds a slot from now: reuse the cache, prefill the rest.
    fn start(&mut self, now: Micros, job: Job, out: &mut Vec<Action>) {
        let reused = self.cache.reuse(&job, self.blocks.of(job.blocks));
        self.running.push(Running {
            job,
            stage: PREFILL_DONE,
        });
        out.push(Action::Started { id: job.id, reused });
        let at = now + self.slowed(self.timing.prefill_us(job.input - reused.min(job.input)));
        out.push(schedule(at, job.id, PREFILL_DONE));
    }

    /// Frees the slot of the request at `pos`; the FIFO head takes it over.
    fn release(&mut self, now: Micros, pos: usize, out: &mut Vec<Action>) {
        self.running.swap_remove(pos);
        if let Some(next) = self.fifo.pop_front() {
            self.start(now, next, out);
        }
    }
}

fn schedule(at: Micros, id: ReqId, tag: u32) -> Action {
    Action::Schedule {
        at,
        timer: Timer { id, tag },
    }
}

impl<C: PrefixCache, T: Timing> EngineModel for SlotEngine<C, T> {
    fn accept(&mut self, now: Micros, job: Job, out: &mut Vec<Action>) {
        if self.running.len() < self.slots as usize {
            self.start(now, job, out);
        } else {
            self.fifo.push_back(job);
        }
    }

    fn timer(&mut self, now: Micros, timer: Timer, out: &mut Vec<Action>) {
        let Some(pos) = self
            .running
            .iter()
            .position(|r| r.job.id == timer.id && r.stage == timer.tag)
        else {
            return; // stale: the request was cancelled
        };
        let job = self.running[pos].job;
        match timer.tag {
            PREFILL_DONE => {
                self.cache.store(&job, self.blocks.of(job.blocks));
                self.running[pos].stage = FIRST_TOKEN;
                let at = now + self.timing.settle_us(&job);
                out.push(schedule(at, job.id, FIRST_TOKEN));
            }
            FIRST_TOKEN => {
                self.running[pos].stage = COMPLETE;
                let at = now + self.slowed(self.timing.decode_us(&job));
                out.push(schedule(at, job.id, COMPLETE));
                out.push(Action::FirstToken(job.id));
            }
            _ => {
                out.push(Action::Done(job.id));
                self.release(now, pos, out);
            }
        }
    }

    fn cancel(&mut self, now: Micros, id: ReqId, out: &mut Vec<Action>) {
        if let Some(i) = self.fifo.iter().position(|j| j.id == id) {
            self.fifo.remove(i);
        } else if let Some(pos) = self.running.iter().position(|r| r.job.id == id) {
            // No KV store when prefill had not finished.
            self.release(now, pos, out);
        }
    }

    fn slow_down(&mut self, _now: Micros, factor: f64, _out: &mut Vec<Action>) {
        self.slow = factor;
    }

    fn warm(&mut self, job: &Job) {
        self.cache.store(job, self.blocks.of(job.blocks));
    }

    fn log_kv_events(&mut self) {
        self.cache.log_events();
    }

    fn take_kv_events(&mut self, out: &mut Vec<KvEvent>) {
        self.cache.take_events(out);
    }

    fn cached_tokens(&self) -> u64 {
        self.cache.used_tokens()
    }

    fn evictions(&self) -> u64 {
        self.cache.evictions()
    }

    fn kv_capacity(&self) -> u64 {
        self.cache.capacity_tokens()
    }

    fn slots_in_use(&self) -> u32 {
        self.running.len() as u32
    }

    fn waiting(&self) -> usize {
        self.fifo.len()
    }

    fn is_idle(&self) -> bool {
        self.running.is_empty() && self.fifo.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(id: ReqId) -> Job {
        Job {
            id,
            key: id,
            input: 7_000,
            output: 2,
            jitter_ms: 0.0,
            decode_tps: 100.0,
            blocks: Default::default(),
        }
    }

    #[test]
    fn fifo_hands_slots_over_in_order() {
        let mut p = EngineParams::profile_a();
        p.slots = 2;
        let mut e = EngineV1::v1(&p, &BlockPlan::default());
        let mut out = Vec::new();
        for id in 1..=4 {
            e.accept(0, job(id), &mut out);
        }
        assert_eq!(e.waiting(), 2);
        e.cancel(0, 4, &mut out);
        assert_eq!(e.waiting(), 1);
        out.clear();
        // Request 1: prefill 1 s, first token after 10 ms, done 10 ms later.
        e.timer(
            1_000_000,
            Timer {
                id: 1,
                tag: PREFILL_DONE,
            },
            &mut out,
        );
        e.timer(
            1_010_000,
            Timer {
                id: 1,
                tag: FIRST_TOKEN,
            },
            &mut out,
        );
        assert_eq!(
            out,
            vec![
                schedule(1_010_000, 1, FIRST_TOKEN),
                schedule(1_020_000, 1, COMPLETE),
                Action::FirstToken(1),
            ]
        );
        out.clear();
        e.timer(
            1_020_000,
            Timer {
                id: 1,
                tag: COMPLETE,
            },
            &mut out,
        );
        assert_eq!(
            out,
            vec![
                Action::Done(1),
                Action::Started { id: 3, reused: 0 },
                schedule(2_020_000, 3, PREFILL_DONE),
            ]
        );
        assert_eq!(e.slots_in_use(), 2);
        out.clear();
        e.timer(
            1_020_000,
            Timer {
                id: 1,
                tag: COMPLETE,
            },
            &mut out,
        );
        assert!(out.is_empty(), "a stale timer is ignored");
        e.cancel(1_500_000, 2, &mut out);
        e.cancel(1_500_000, 3, &mut out);
        assert!(e.is_idle());
        assert_eq!(e.cached_tokens(), 7_000, "only request 1 finished prefill");
    }
}
