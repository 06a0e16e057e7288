//! The closed-loop engine calibration of A4.1: one backend, a fixed number of
//! clients each sending its next request when the previous one completes.
//! It drives any engine model through [`EngineModel`], with its own small
//! timer heap.

use crate::kernel::rng::{stream, Stream};
use crate::kernel::time::{from_secs, Micros};
use crate::workload::BlockSpan;
use crate::world::engine::{self, Action, BlockPlan, EngineModel, EngineParams, Job};
use rand::Rng;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Completed requests per second over `duration_s` of virtual time. `warm`:
/// each client reuses one pre-cached key; otherwise every request has a
/// fresh key. Under engine v2 (`block-cache-v2`) a key is a chain of
/// `block_tokens`-token blocks of its own.
pub fn closed_loop(
    params: &EngineParams,
    clients: u32,
    input: u64,
    output: u64,
    warm: bool,
    duration_s: f64,
    seed: u64,
) -> f64 {
    let block_tokens = 512;
    let chain = input.div_ceil(block_tokens).max(1) as u32;
    // Fresh keys: at most one per started request, bounded by the slots'
    // fastest turnover (a prefill-free request still takes ttft_base, or
    // one step of the batched engine).
    let fastest_ms = params.min_service_ms().max(1.0);
    let max_keys = clients + (duration_s * f64::from(clients) * 1_000.0 / fastest_ms) as u32;
    let ids = max_keys.saturating_add(2).saturating_mul(chain);
    let plan = BlockPlan {
        blocks: (0..ids).collect::<Vec<u32>>().into(),
        block_ids: ids,
        block_tokens,
    };
    let mut engine = engine::build(params, &plan);
    let mut rng = stream(seed, Stream::Workload);
    let job = |id: u32, key: u32, rng: &mut rand_chacha::ChaCha8Rng| {
        let jitter_ms = params.ttft_jitter_ms * Rng::random::<f64>(rng);
        let [lo, hi] = params.decode_tps;
        Job {
            id,
            key,
            input,
            output,
            jitter_ms,
            decode_tps: lo + (hi - lo) * Rng::random::<f64>(rng),
            blocks: BlockSpan {
                start: key.saturating_mul(chain),
                len: chain,
            },
        }
    };
    if warm {
        for c in 0..clients {
            engine.warm(&job(u32::MAX, c, &mut rng));
        }
    }
    let end = from_secs(duration_s);
    let mut fresh_key = clients;
    let mut client_of: Vec<u32> = Vec::new();
    let mut timers: BinaryHeap<Reverse<(Micros, u64, u32, u32)>> = BinaryHeap::new();
    let mut seq = 0u64;
    let mut out = Vec::new();
    let mut completed = 0u64;
    let mut send = |engine: &mut Box<dyn EngineModel>,
                    t: Micros,
                    client: u32,
                    client_of: &mut Vec<u32>,
                    out: &mut Vec<Action>,
                    rng: &mut _| {
        let id = client_of.len() as u32;
        client_of.push(client);
        let key = if warm {
            client
        } else {
            fresh_key += 1;
            fresh_key
        };
        engine.accept(t, job(id, key, rng), out);
    };
    for client in 0..clients {
        send(&mut engine, 0, client, &mut client_of, &mut out, &mut rng);
    }
    let mut now = 0;
    loop {
        // Apply the last calls' actions at `now`: a completion sends its
        // client's next request at once.
        while !out.is_empty() {
            let actions = std::mem::take(&mut out);
            for action in actions {
                match action {
                    Action::Schedule { at, timer } => {
                        seq += 1;
                        timers.push(Reverse((at, seq, timer.id, timer.tag)));
                    }
                    Action::Done(id) => {
                        completed += 1;
                        let client = client_of[id as usize];
                        send(&mut engine, now, client, &mut client_of, &mut out, &mut rng);
                    }
                    Action::Started { .. } | Action::FirstToken(_) => {}
                }
            }
        }
        let Some(Reverse((t, _, id, tag))) = timers.pop() else {
            break;
        };
        if t >= end {
            break;
        }
        now = t;
        engine.timer(now, engine::Timer { id, tag }, &mut out);
    }
    completed as f64 / duration_s
}
