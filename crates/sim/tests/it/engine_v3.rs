//! Engine v3, `batched-v3`: hand-computed step sequences, the jumps against
//! single steps, and the calibration of the overflow-guard workload
//! (about 320 RPS warm and 49 RPS cold over 20 backends).

use routex_sim::world::calibrate::closed_loop;
use routex_sim::world::engine::batched::{BatchedEngine, BatchedParams};
use routex_sim::world::engine::{Action, EngineModel, EngineParams, Job, Timer, V3};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

fn params(kv: u64) -> EngineParams {
    EngineParams {
        model: V3.into(),
        kv_capacity_tokens: kv,
        batched: Some(BatchedParams::default()),
        ..EngineParams::profile_a()
    }
}

fn job(id: u32, key: u32, input: u64, output: u64) -> Job {
    Job {
        id,
        key,
        input,
        output,
        jitter_ms: 0.0,
        decode_tps: 0.0,
        blocks: Default::default(),
    }
}

/// Drives an engine: requests sent at given times, every action logged
/// with its instant (timers are not logged, only followed).
struct Driver {
    engine: BatchedEngine,
    timers: BinaryHeap<Reverse<(u64, u64, u32, u32)>>,
    seq: u64,
    log: Vec<(u64, Action)>,
}

impl Driver {
    fn new(engine: BatchedEngine) -> Self {
        Driver {
            engine,
            timers: BinaryHeap::new(),
            seq: 0,
            log: Vec::new(),
        }
    }

    fn take(&mut self, now: u64, out: Vec<Action>) {
        for a in out {
            match a {
                Action::Schedule { at, timer } => {
                    self.seq += 1;
                    self.timers
                        .push(Reverse((at, self.seq, timer.id, timer.tag)));
                }
                other => self.log.push((now, other)),
            }
        }
    }

    fn send(&mut self, now: u64, j: Job) {
        self.run_until(now);
        let mut out = Vec::new();
        self.engine.accept(now, j, &mut out);
        self.take(now, out);
    }

    fn cancel(&mut self, now: u64, id: u32) {
        self.run_until(now);
        let mut out = Vec::new();
        self.engine.cancel(now, id, &mut out);
        self.take(now, out);
    }

    /// Fires every timer due before `until`.
    fn run_until(&mut self, until: u64) {
        while let Some(&Reverse((at, _, id, tag))) = self.timers.peek() {
            if at >= until {
                break;
            }
            self.timers.pop();
            let mut out = Vec::new();
            self.engine.timer(at, Timer { id, tag }, &mut out);
            self.take(at, out);
        }
    }

    fn finish(&mut self) -> Vec<(u64, Action)> {
        self.run_until(u64::MAX);
        std::mem::take(&mut self.log)
    }
}

#[test]
fn one_decode_is_one_step_per_token() {
    // Cached input: every step decodes (4 + 0.085 ms = 4 085 us); the first
    // step gives the first token, the next two are one jump.
    let mut e = BatchedEngine::new(&params(400_000));
    e.warm(&job(0, 7, 1_000, 1));
    let mut d = Driver::new(e);
    d.send(0, job(1, 7, 1_000, 3));
    assert_eq!(
        d.finish(),
        vec![
            (
                0,
                Action::Started {
                    id: 1,
                    reused: 1_000
                }
            ),
            (4_085, Action::FirstToken(1)),
            (12_255, Action::Done(1)),
        ]
    );
}

#[test]
fn a_chunked_prefill_takes_two_steps_and_slows_a_running_decode() {
    // 3 000 cold tokens: 2 048 in step 1 (4 + 102.4 ms), 952 in step 2
    // (4 + 47.6 ms); the first token ends step 2, the second one step 3.
    let mut d = Driver::new(BatchedEngine::new(&params(400_000)));
    d.send(0, job(1, 1, 3_000, 2));
    let log = d.finish();
    assert_eq!(
        log,
        vec![
            (0, Action::Started { id: 1, reused: 0 }),
            (158_000, Action::FirstToken(1)),
            (162_085, Action::Done(1)),
        ]
    );
    // A warm decode sharing those steps: it takes 1 token of the budget, so
    // step 1 prefills 2 047 tokens: 4 + 0.085 + 102.35 ms = 106 435 us.
    let mut e = BatchedEngine::new(&params(400_000));
    e.warm(&job(0, 9, 500, 1));
    let mut d = Driver::new(e);
    d.send(0, job(1, 1, 3_000, 2));
    d.send(0, job(2, 9, 500, 2));
    let log = d.finish();
    // Request 1 composed its first step alone (106 400 us); request 2
    // joins at its end: step 2 decodes 2 and prefills 952:
    // 4 + 0.085 + 47.6 = 51.685 ms.
    assert_eq!(
        log,
        vec![
            (0, Action::Started { id: 1, reused: 0 }),
            (106_400, Action::Started { id: 2, reused: 500 }),
            (158_085, Action::FirstToken(1)),
            (158_085, Action::FirstToken(2)),
            (162_255, Action::Done(1)),
            (162_255, Action::Done(2)),
        ]
    );
}

#[test]
fn admission_blocks_on_memory_until_a_completion_frees_it() {
    // 10 000 tokens of KV: request 1 reserves 6 000 + 100; request 2 needs
    // 6 100 more and waits (head of line) until request 1 completes and its
    // entry, now unpinned, is evicted.
    let mut e = BatchedEngine::new(&params(10_000));
    let mut d = Driver::new(e);
    d.send(0, job(1, 1, 6_000, 100));
    d.send(0, job(2, 2, 6_000, 100));
    d.send(0, job(3, 3, 10, 1));
    let log = d.finish();
    // Request 1: 2 048 + 2 048 + 1 904 prefill tokens (106.4 + 106.4 +
    // 99.2 ms), first token at 312 000, 99 decode steps of 4 085 us.
    let done_1 = 312_000 + 99 * 4_085;
    assert_eq!(log[0], (0, Action::Started { id: 1, reused: 0 }));
    assert_eq!(log[1], (312_000, Action::FirstToken(1)));
    assert_eq!(log[2], (done_1, Action::Done(1)));
    assert_eq!(log[3], (done_1, Action::Started { id: 2, reused: 0 }));
    // Request 3 is small but waits behind request 2 (FIFO).
    assert_eq!(log[4], (done_1, Action::Started { id: 3, reused: 0 }));
    e = d.engine;
    assert_eq!(e.evictions(), 1);
    assert_eq!(e.cached_for(1), 0, "request 1's entry made room");
    assert_eq!(e.cached_for(2), 6_100);
    assert!(e.is_idle());
}

#[test]
fn eviction_takes_the_unpinned_entry_even_when_a_pinned_one_is_older() {
    let mut e = BatchedEngine::new(&params(10_000));
    e.warm(&job(0, 1, 4_000, 1)); // key 1, least recent
    e.warm(&job(0, 2, 4_000, 1)); // key 2
    let mut d = Driver::new(e);
    // Key 1 runs (pinned): it needs its 100 output tokens only.
    d.send(0, job(1, 1, 4_000, 100));
    // Key 3 needs 3 000 + 100 with 1 900 free: key 2 goes, not key 1.
    d.send(0, job(2, 3, 3_000, 100));
    d.run_until(5_000);
    assert_eq!(d.engine.cached_for(1), 4_000);
    assert_eq!(d.engine.cached_for(2), 0);
    assert_eq!(d.engine.evictions(), 1);
    let log = d.finish();
    assert!(log.contains(&(4_085, Action::Started { id: 2, reused: 0 })));
    assert_eq!(
        d.engine.cached_for(1),
        4_100,
        "input + output at completion"
    );
}

#[test]
fn a_cancelled_sequence_frees_its_seat_for_the_next_step() {
    let mut p = params(400_000);
    p.batched = Some(BatchedParams {
        max_num_seqs: 1,
        ..BatchedParams::default()
    });
    let mut d = Driver::new(BatchedEngine::new(&p));
    d.send(0, job(1, 1, 100, 1_000));
    d.send(0, job(2, 2, 100, 1));
    // Request 1's first step: 4 + 5 ms; then it jumps. The cancel at
    // 20 ms cuts the jump after the step in progress.
    d.cancel(20_000, 1);
    let log = d.finish();
    assert_eq!(log[1], (9_000, Action::FirstToken(1)));
    // Steps of 4 085 us from 9 000: the one in progress at 20 000 ends at
    // 21 255, where request 2 is admitted.
    assert_eq!(log[2], (21_255, Action::Started { id: 2, reused: 0 }));
    assert!(d.engine.is_idle());
}

/// Random arrivals and cancels on two workers: the jumps give exactly the
/// single steps' actions.
#[test]
fn jumps_change_nothing() {
    use rand::{Rng, SeedableRng};
    let mut p = params(60_000);
    p.batched = Some(BatchedParams {
        num_gpu_workers: 2,
        max_num_seqs: 6,
        ..BatchedParams::default()
    });
    let run = |jumps: bool| {
        let e = BatchedEngine::new(&p);
        let mut d = Driver::new(if jumps { e } else { e.without_jumps() });
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        let mut t = 0;
        for id in 1..300u32 {
            t += rng.random_range(1..40_000u64);
            let key = rng.random_range(0..20u32);
            let j = job(
                id,
                key,
                rng.random_range(1..6_000),
                rng.random_range(1..300),
            );
            d.send(t, j);
            if rng.random_range(0..10) == 0 {
                d.cancel(t + 7, id - 1);
            }
        }
        d.finish()
    };
    let (jumped, stepped) = (run(true), run(false));
    assert!(jumped.len() > 500);
    assert_eq!(jumped, stepped);
}

/// The overflow-guard workload (6 661 input, 256 output tokens) on one
/// worker with the preset, 25 clients in a closed loop, times 20 backends.
#[test]
fn overflow_guard_workload_capacities_are_320_warm_and_49_cold() {
    let p = params(400_000);
    let warm = 20.0 * closed_loop(&p, 25, 6_661, 256, true, 600.0, 1);
    let cold = 20.0 * closed_loop(&p, 25, 6_661, 256, false, 600.0, 1);
    println!("batched-v3 capacities: warm {warm:.1} RPS, cold {cold:.1} RPS");
    assert!((warm / 320.0 - 1.0).abs() < 0.10, "warm {warm} RPS");
    assert!((cold / 49.0 - 1.0).abs() < 0.10, "cold {cold} RPS");
    // Caching is worth about 6.5x here (1.6x under engine v1).
    assert!((5.5..7.5).contains(&(warm / cold)), "{}", warm / cold);
}

#[test]
fn a_slow_down_scales_the_steps_that_start_after_it() {
    // As `one_decode_is_one_step_per_token`, twice as slow from the start:
    // every step 2 x 4 085 us.
    let mut e = BatchedEngine::new(&params(400_000));
    e.warm(&job(0, 7, 1_000, 1));
    let mut d = Driver::new(e);
    let mut out = Vec::new();
    d.engine.slow_down(0, 2.0, &mut out);
    d.take(0, out);
    d.send(0, job(1, 7, 1_000, 3));
    let log = d.finish();
    assert_eq!(
        log[1..],
        [(8_170, Action::FirstToken(1)), (24_510, Action::Done(1))]
    );
    // Slowed at 5 000 us, in the jump over steps 2 and 3: step 2 (4 085 to
    // 8 170) keeps its time, step 3 takes 8 170 us; and back to speed 1 at
    // 10 000, in step 3, changes nothing before its end.
    let mut e = BatchedEngine::new(&params(400_000));
    e.warm(&job(0, 7, 1_000, 1));
    let mut d = Driver::new(e);
    d.send(0, job(1, 7, 1_000, 3));
    for (at, factor) in [(5_000, 2.0), (10_000, 1.0)] {
        d.run_until(at);
        let mut out = Vec::new();
        d.engine.slow_down(at, factor, &mut out);
        d.take(at, out);
    }
    let log = d.finish();
    assert_eq!(
        log[1..],
        [(4_085, Action::FirstToken(1)), (16_340, Action::Done(1))]
    );
}

/// KV events (for routers that follow them, as Dynamo's does): a key's
/// entry stores its chain's blocks when its prefill ends and removes them
/// when it is evicted; nothing is logged until asked.
#[test]
fn a_keys_entry_stores_and_removes_its_whole_chain_of_blocks() {
    use routex_sim::world::engine::blocks::KvEvent;
    use routex_sim::world::engine::BlockPlan;
    use routex_sim::world::engine::BlockSpan;
    let plan = BlockPlan {
        blocks: vec![10, 11, 12, 20, 21].into(),
        block_ids: 22,
        block_tokens: 1_000,
    };
    let with_chain = |id, key, start, len, input| Job {
        blocks: BlockSpan { start, len },
        ..job(id, key, input, 2)
    };
    let mut e = BatchedEngine::with_blocks(&params(5_000), &plan);
    e.log_kv_events();
    let mut d = Driver::new(e);
    d.send(0, with_chain(1, 1, 0, 3, 3_000));
    d.finish();
    let mut events = Vec::new();
    d.engine.take_kv_events(&mut events);
    assert_eq!(
        events,
        [
            KvEvent::Stored(10),
            KvEvent::Stored(11),
            KvEvent::Stored(12)
        ]
    );
    // Key 2 needs 2 000 + 2 with 5 000 - 3 002 free: key 1 is evicted.
    d.send(100_000, with_chain(2, 2, 3, 2, 2_000));
    d.finish();
    events.clear();
    d.engine.take_kv_events(&mut events);
    assert_eq!(
        events,
        [
            KvEvent::Removed(10),
            KvEvent::Removed(11),
            KvEvent::Removed(12),
            KvEvent::Stored(20),
            KvEvent::Stored(21)
        ]
    );
    // A warm start's entry stores its chain too (Dynamo's index learns
    // the warm caches with the first reports).
    let mut warm = BatchedEngine::with_blocks(&params(5_000), &plan);
    warm.log_kv_events();
    warm.warm(&with_chain(0, 2, 3, 2, 2_000));
    events.clear();
    warm.take_kv_events(&mut events);
    assert_eq!(events, [KvEvent::Stored(20), KvEvent::Stored(21)]);
    // Without logging, no events.
    let mut quiet = Driver::new(BatchedEngine::with_blocks(&params(5_000), &plan));
    quiet.send(0, with_chain(1, 1, 0, 3, 3_000));
    quiet.finish();
    events.clear();
    quiet.engine.take_kv_events(&mut events);
    assert!(events.is_empty());
}

/// A prompt that leaves its key's chain (a conversation that dropped an
/// exchange) reuses only the blocks it shares with the entry's prompt, and
/// the entry follows it; a prompt that extends the chain reuses the entry.
#[test]
fn a_prompt_that_leaves_the_chain_reuses_the_shared_blocks_only() {
    use routex_sim::world::engine::{BlockPlan, BlockSpan};
    // Blocks of 100 tokens: turn 1 [1..6] (620 tokens); turn 2 dropped an
    // exchange: [1 2 9 10 11] (580 tokens); turn 3 extends it (700).
    let plan = BlockPlan {
        blocks: vec![1, 2, 3, 4, 5, 6, 1, 2, 9, 10, 11, 1, 2, 9, 10, 11, 12, 13].into(),
        block_ids: 14,
        block_tokens: 100,
    };
    let span = |start, len| BlockSpan { start, len };
    let turn = |id, input, blocks| Job {
        blocks,
        ..job(id, 7, input, 1)
    };
    let mut d = Driver::new(BatchedEngine::with_blocks(&params(400_000), &plan));
    d.send(0, turn(1, 620, span(0, 6)));
    d.run_until(1_000_000);
    assert_eq!(d.engine.cached_for(7), 621, "input + output");
    d.send(1_000_000, turn(2, 580, span(6, 5)));
    d.run_until(2_000_000);
    assert_eq!(
        d.engine.cached_for(7),
        581,
        "the entry follows the new prompt"
    );
    d.send(2_000_000, turn(3, 700, span(11, 7)));
    let reused: Vec<(u32, u64)> = d
        .finish()
        .into_iter()
        .filter_map(|(_, a)| match a {
            Action::Started { id, reused } => Some((id, reused)),
            _ => None,
        })
        .collect();
    // Turn 2 shares blocks 1 and 2 only: 200 tokens, not min(621, 580).
    assert_eq!(reused, [(1, 0), (2, 200), (3, 581)]);
    // Without blocks the plain rule: min(cached, input).
    let mut d = Driver::new(BatchedEngine::new(&params(400_000)));
    d.send(0, job(1, 7, 620, 1));
    d.run_until(1_000_000);
    d.send(1_000_000, job(2, 7, 580, 1));
    let started: Vec<_> = d
        .finish()
        .into_iter()
        .filter(|(_, a)| matches!(a, Action::Started { .. }))
        .collect();
    assert_eq!(started[1].1, Action::Started { id: 2, reused: 580 });
}
