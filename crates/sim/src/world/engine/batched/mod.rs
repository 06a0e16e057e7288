//! Engine v3, `batched-v3` (docs/simulator.md, "Engine v3"): a deployment
//! of `num_gpu_workers` workers with iteration-level steps, as stargate's
//! second-generation simulator and mock engine model an inference server.
//!
//! Per worker, every step: each decoding sequence produces one token; the
//! rest of the `max_batched_tokens` budget goes to chunked prefill of the
//! admitted sequences in admission order. A step lasts `step_fixed_ms` +
//! `step_decode_ms_per_seq` x decoders + `step_prefill_ms_per_token` x
//! prefill tokens, divided by `backend_speed`. Admission happens when a
//! step is composed: FIFO, at most `max_num_seqs` running, head-of-line
//! blocking on memory. KV memory (`kv_capacity_tokens` per worker) holds the
//! prefix cache and the running reservations (uncached input + output,
//! reserved at admission; no preemption). The cache keeps one entry per
//! affinity key: the prefilled input when prefill ends, input + output when
//! the sequence completes; entries in use are pinned, LRU evicts the others.
//! Memory moves from a sequence's reservation to its key's entry, so it is
//! never counted twice.
//!
//! With prefix blocks, an entry also remembers the blocks of the prompt it
//! holds: a prompt that no longer extends them (a growing conversation
//! that dropped an exchange) reuses only the blocks the two share, and
//! when no other sequence holds the entry it shrinks to them and follows
//! the new prompt (docs/simulator.md, "Growing conversations").
//!
//! Event-driven: an idle worker has no events, and while every running
//! sequence decodes (no prefill, nobody waiting for its first token) the
//! steps are identical, so one timer jumps to the step of the next
//! completion. A request arriving or leaving meanwhile cuts the jump after
//! the step in progress, as stepping one by one would.
//!
//! Timers: `id` is the worker, `tag` its step generation (a timer of an
//! earlier generation is stale).

use super::blocks::KvEvent;
use super::{Action, BlockPlan, EngineModel, EngineParams, Job, Timer, NO_KEY};
use crate::kernel::events::ReqId;
use crate::kernel::time::Micros;
use crate::workload::BlockSpan;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, VecDeque};

mod key_cache;
use key_cache::KeyCache;

/// The batched engine's parameters; the defaults are stargate's documented
/// preset (an H100 serving Llama-3.1-8B FP8 at TP1, an estimate: about
/// 163 tokens/s per sequence with 25 running, about 20k prefill tokens/s
/// per worker).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BatchedParams {
    pub num_gpu_workers: u32,
    pub max_num_seqs: u32,
    pub max_batched_tokens: u64,
    pub step_fixed_ms: f64,
    pub step_decode_ms_per_seq: f64,
    pub step_prefill_ms_per_token: f64,
}

impl Default for BatchedParams {
    fn default() -> Self {
        BatchedParams {
            num_gpu_workers: 1,
            max_num_seqs: 25,
            max_batched_tokens: 2_048,
            step_fixed_ms: 4.0,
            step_decode_ms_per_seq: 0.085,
            step_prefill_ms_per_token: 0.05,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    /// Not in the step being computed (its prefill got no budget).
    Idle,
    Decode,
    Prefill(u64),
}

#[derive(Clone, Copy, Debug)]
struct Seq {
    job: Job,
    /// Uncached input tokens still to prefill.
    left: u64,
    produced: u64,
    /// Memory this sequence holds outside the cache.
    reserved: u64,
    role: Role,
}

/// The step in progress: `steps` identical steps of `dt` from `start`.
#[derive(Clone, Copy, Debug)]
struct Step {
    start: Micros,
    dt: Micros,
    steps: u64,
}

#[derive(Clone, Debug, Default)]
struct Worker {
    running: Vec<Seq>,
    fifo: VecDeque<Job>,
    cache: KeyCache,
    reserved: u64,
    step: Option<Step>,
    generation: u32,
}

/// Engine v3: the workers of one backend.
#[derive(Debug)]
pub struct BatchedEngine {
    p: BatchedParams,
    speed: f64,
    /// The profile's speed (`speed` is it divided by a slow-down).
    base_speed: f64,
    capacity: u64,
    workers: Vec<Worker>,
    /// Off only in tests that compare the jumps with single steps.
    jumps: bool,
    /// The run's prefix blocks, for the KV events of routers that follow
    /// them: a key's entry stores or removes its whole chain of blocks.
    blocks: BlockPlan,
    /// By key: the blocks of its chain (the last request's) and how many
    /// workers cache it (a block is stored while one does).
    chains: Vec<(BlockSpan, u32)>,
    logging: bool,
}

impl BatchedEngine {
    pub fn new(params: &EngineParams) -> Self {
        Self::with_blocks(params, &BlockPlan::default())
    }

    /// An engine whose KV events name the blocks of `blocks`.
    pub fn with_blocks(params: &EngineParams, blocks: &BlockPlan) -> Self {
        let p = params.batched.clone().unwrap_or_default();
        let workers = vec![Worker::default(); p.num_gpu_workers.max(1) as usize];
        BatchedEngine {
            speed: params.backend_speed,
            base_speed: params.backend_speed,
            capacity: params.kv_capacity_tokens,
            workers,
            p,
            jumps: true,
            blocks: blocks.clone(),
            chains: Vec::new(),
            logging: false,
        }
    }

    /// Steps one at a time (tests check that the jumps change nothing).
    pub fn without_jumps(mut self) -> Self {
        self.jumps = false;
        self
    }

    /// Prefix-cache entries evicted so far, over every worker.
    pub fn evictions(&self) -> u64 {
        self.workers.iter().map(|w| w.cache.evictions).sum()
    }

    /// Tokens worker 0 caches for `key` (tests).
    pub fn cached_for(&self, key: u32) -> u64 {
        self.workers.first().map_or(0, |w| w.cache.tokens(key))
    }

    /// Step duration for `decoders` decoding sequences and `prefill` tokens.
    fn step_us(&self, decoders: u64, prefill: u64) -> Micros {
        let ms = self.p.step_fixed_ms
            + self.p.step_decode_ms_per_seq * decoders as f64
            + self.p.step_prefill_ms_per_token * prefill as f64;
        ((ms * 1_000.0 / self.speed).round() as Micros).max(1)
    }

    /// The worker caching the most of `key`, else the least loaded one.
    fn pick(&self, key: u32) -> usize {
        let cached = |w: &Worker| {
            if key == NO_KEY {
                0
            } else {
                w.cache.tokens(key)
            }
        };
        let best =
            (0..self.workers.len()).max_by_key(|&i| (cached(&self.workers[i]), usize::MAX - i));
        match best {
            Some(i) if cached(&self.workers[i]) > 0 => i,
            _ => (0..self.workers.len())
                .min_by_key(|&i| {
                    (
                        self.workers[i].running.len() + self.workers[i].fifo.len(),
                        i,
                    )
                })
                .unwrap_or(0),
        }
    }

    /// Admits from worker w's FIFO while seats and memory allow.
    fn admit(&mut self, w: usize, out: &mut Vec<Action>) {
        let (seats, capacity) = (self.p.max_num_seqs.max(1) as usize, self.capacity);
        let plan = &self.blocks;
        let worker = &mut self.workers[w];
        while let Some(&job) = worker.fifo.front() {
            if worker.running.len() >= seats {
                break;
            }
            let key = job.key;
            // What the entry's prompt and this one share: everything when
            // one extends the other, else their common blocks.
            let shared = (key != NO_KEY)
                .then(|| diverged(plan, worker.cache.span(key), job.blocks))
                .flatten();
            let reused = if key == NO_KEY {
                0
            } else {
                worker
                    .cache
                    .tokens(key)
                    .min(job.input)
                    .min(shared.unwrap_or(u64::MAX))
            };
            let need = job.input - reused + job.output;
            worker.cache.pin(key);
            if key != NO_KEY {
                let held_by_others = worker.cache.entries[key as usize].pins > 1;
                match shared {
                    // The entry follows the new prompt unless another
                    // sequence still uses what it holds.
                    Some(to) if !held_by_others => {
                        worker.cache.shrink(key, to);
                        worker.cache.set_span(key, job.blocks);
                    }
                    Some(_) => {}
                    None if job.blocks.len > worker.cache.span(key).len => {
                        worker.cache.set_span(key, job.blocks);
                    }
                    None => {}
                }
            }
            let free = |wk: &Worker| capacity.saturating_sub(wk.cache.used + wk.reserved);
            while need > free(worker) && worker.cache.evict_one() {}
            // A request larger than the whole memory runs alone rather than
            // block its worker for ever.
            if need > free(worker) && !worker.running.is_empty() {
                worker.cache.unpin(key, false);
                break;
            }
            worker.fifo.pop_front();
            worker.reserved += need;
            worker.running.push(Seq {
                job,
                left: job.input - reused,
                produced: 0,
                reserved: need,
                role: Role::Idle,
            });
            out.push(Action::Started { id: job.id, reused });
        }
    }

    /// Admits and composes worker w's next step at `now`, scheduling its end.
    fn compose(&mut self, w: usize, now: Micros, out: &mut Vec<Action>) {
        self.admit(w, out);
        let budget_total = self.p.max_batched_tokens;
        let worker = &mut self.workers[w];
        if worker.running.is_empty() {
            worker.step = None;
            return;
        }
        let decoders = worker.running.iter().filter(|s| s.left == 0).count() as u64;
        let mut budget = budget_total.saturating_sub(decoders);
        let mut prefill = 0;
        let mut all_started = true;
        let mut steps = u64::MAX;
        for s in &mut worker.running {
            if s.left == 0 {
                s.role = Role::Decode;
                all_started &= s.produced > 0;
                steps = steps.min(s.job.output - s.produced);
            } else {
                let chunk = s.left.min(budget);
                budget -= chunk;
                prefill += chunk;
                s.role = if chunk > 0 {
                    Role::Prefill(chunk)
                } else {
                    Role::Idle
                };
            }
        }
        let jump = self.jumps && prefill == 0 && all_started;
        let steps = if jump { steps.max(1) } else { 1 };
        let dt = self.step_us(decoders, prefill);
        let worker = &mut self.workers[w];
        worker.generation = worker.generation.wrapping_add(1);
        worker.step = Some(Step {
            start: now,
            dt,
            steps,
        });
        out.push(schedule(now + dt * steps, w, worker.generation));
    }

    /// A request arrives at or leaves worker w while it jumps: keep only
    /// the step in progress, so the change counts at its end.
    fn cut_jump(&mut self, w: usize, now: Micros, out: &mut Vec<Action>) {
        let worker = &mut self.workers[w];
        let Some(step) = worker.step.as_mut() else {
            return;
        };
        if step.steps <= 1 {
            return;
        }
        // A step ending exactly now is still in progress: its timer comes
        // after this change, as a single step's would.
        let done = ((now - step.start).saturating_sub(1) / step.dt).min(step.steps - 1);
        for s in &mut worker.running {
            if s.role == Role::Decode {
                s.produced += done;
            }
        }
        step.start += done * step.dt;
        step.steps -= done;
        if step.steps > 1 {
            step.steps = 1;
            worker.generation = worker.generation.wrapping_add(1);
            out.push(schedule(step.start + step.dt, w, worker.generation));
        }
    }

    /// The step(s) of worker w end at `now`.
    fn end_step(&mut self, w: usize, now: Micros, out: &mut Vec<Action>) {
        let Some(step) = self.workers[w].step.take() else {
            return;
        };
        let worker = &mut self.workers[w];
        let mut i = 0;
        while i < worker.running.len() {
            let s = &mut worker.running[i];
            let mut done = false;
            match s.role {
                Role::Idle => {}
                Role::Decode => {
                    s.produced += step.steps;
                    if s.produced == 1 {
                        out.push(Action::FirstToken(s.job.id));
                    }
                    done = s.produced >= s.job.output;
                }
                Role::Prefill(chunk) => {
                    s.left -= chunk;
                    if s.left == 0 {
                        // The input is cached now: the reservation keeps
                        // only the output.
                        worker.cache.grow(s.job.key, s.job.input);
                        worker.reserved -= s.reserved - s.job.output;
                        s.reserved = s.job.output;
                        s.produced = 1;
                        out.push(Action::FirstToken(s.job.id));
                        done = s.produced >= s.job.output;
                    }
                }
            }
            if done {
                let s = worker.running.remove(i);
                worker.cache.grow(s.job.key, s.job.input + s.job.output);
                worker.reserved -= s.reserved;
                worker.cache.unpin(s.job.key, true);
                out.push(Action::Done(s.job.id));
            } else {
                i += 1;
            }
        }
        self.compose(w, now, out);
    }
}

fn schedule(at: Micros, worker: usize, generation: u32) -> Action {
    Action::Schedule {
        at,
        timer: Timer {
            id: worker as u32,
            tag: generation,
        },
    }
}

impl BatchedEngine {
    /// When KV events are logged: the chain a key's events name is its
    /// latest request's.
    fn name_chain(&mut self, job: &Job) {
        if self.logging && job.key != NO_KEY {
            let k = job.key as usize;
            if self.chains.len() <= k {
                self.chains.resize(k + 1, (BlockSpan::default(), 0));
            }
            self.chains[k].0 = job.blocks;
        }
    }
}

/// The tokens two prompts share when one does not extend the other (their
/// common full blocks); `None` when one extends the other (or either has
/// no blocks): then the plain per-key rule holds.
fn diverged(plan: &BlockPlan, held: BlockSpan, new: BlockSpan) -> Option<u64> {
    let (a, b) = (plan.of(held), plan.of(new));
    let common = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    (common < a.len().min(b.len())).then(|| common as u64 * plan.block_tokens)
}

impl EngineModel for BatchedEngine {
    fn accept(&mut self, now: Micros, mut job: Job, out: &mut Vec<Action>) {
        job.output = job.output.max(1);
        self.name_chain(&job);
        let w = self.pick(job.key);
        self.workers[w].fifo.push_back(job);
        if self.workers[w].step.is_none() {
            self.compose(w, now, out);
        } else {
            self.cut_jump(w, now, out);
        }
    }

    fn timer(&mut self, now: Micros, timer: Timer, out: &mut Vec<Action>) {
        let w = timer.id as usize;
        match self.workers.get(w) {
            Some(worker) if worker.step.is_some() && worker.generation == timer.tag => {
                self.end_step(w, now, out);
            }
            _ => {} // stale
        }
    }

    fn cancel(&mut self, now: Micros, id: ReqId, out: &mut Vec<Action>) {
        for w in 0..self.workers.len() {
            let worker = &mut self.workers[w];
            if let Some(i) = worker.fifo.iter().position(|j| j.id == id) {
                worker.fifo.remove(i);
                return;
            }
            if let Some(i) = worker.running.iter().position(|s| s.job.id == id) {
                // Its part of the step in progress is wasted; its seat and
                // memory are free for the next step.
                let s = worker.running.remove(i);
                worker.reserved -= s.reserved;
                worker.cache.unpin(s.job.key, false);
                self.cut_jump(w, now, out);
                return;
            }
        }
    }

    fn slow_down(&mut self, now: Micros, factor: f64, out: &mut Vec<Action>) {
        // The steps left of each jump were timed at the old speed: keep only
        // the step in progress.
        for w in 0..self.workers.len() {
            self.cut_jump(w, now, out);
        }
        self.speed = self.base_speed / factor;
    }

    fn warm(&mut self, job: &Job) {
        if job.key == NO_KEY {
            return;
        }
        let w = self.pick(job.key);
        let worker = &mut self.workers[w];
        let tokens = job.input.min(
            self.capacity
                .saturating_sub(worker.cache.used + worker.reserved),
        );
        worker.cache.put(job.key, tokens);
        worker.cache.set_span(job.key, job.blocks);
        // The entry's KV events name its chain, as a served request's do.
        self.name_chain(job);
    }

    fn log_kv_events(&mut self) {
        self.logging = true;
        for w in &mut self.workers {
            w.cache.changes.get_or_insert_with(Vec::new);
        }
    }

    /// A key's entry appearing in the first worker stores its chain's
    /// blocks; its eviction from the last worker removes them.
    fn take_kv_events(&mut self, out: &mut Vec<KvEvent>) {
        for w in &mut self.workers {
            let Some(changes) = &mut w.cache.changes else {
                continue;
            };
            for (key, stored) in changes.drain(..) {
                let Some((span, holders)) = self.chains.get_mut(key as usize) else {
                    continue;
                };
                let event: fn(u32) -> KvEvent = if stored {
                    *holders += 1;
                    if *holders > 1 {
                        continue;
                    }
                    KvEvent::Stored
                } else {
                    *holders = holders.saturating_sub(1);
                    if *holders > 0 {
                        continue;
                    }
                    KvEvent::Removed
                };
                out.extend(self.blocks.of(*span).iter().map(|&b| event(b)));
            }
        }
    }

    fn cached_tokens(&self) -> u64 {
        self.workers.iter().map(|w| w.cache.used).sum()
    }

    fn evictions(&self) -> u64 {
        BatchedEngine::evictions(self)
    }

    fn kv_capacity(&self) -> u64 {
        self.capacity.saturating_mul(self.workers.len() as u64)
    }

    fn kv_used(&self) -> u64 {
        self.workers.iter().map(|w| w.cache.used + w.reserved).sum()
    }

    fn slots_in_use(&self) -> u32 {
        self.workers.iter().map(|w| w.running.len() as u32).sum()
    }

    fn waiting(&self) -> usize {
        self.workers.iter().map(|w| w.fifo.len()).sum()
    }

    fn is_idle(&self) -> bool {
        self.workers
            .iter()
            .all(|w| w.running.is_empty() && w.fifo.is_empty())
    }
}
