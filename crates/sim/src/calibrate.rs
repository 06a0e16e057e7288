//! The closed-loop engine calibration of A4.1: one backend, a fixed number of
//! clients each sending its next request when the previous one completes.

use super::engine::{CacheKey, Engine, EngineParams};
use super::rng::{stream, Stream};
use super::time::{from_secs, Micros};
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
    // fastest turnover (a prefill-free request still takes ttft_base).
    let max_keys =
        clients + (duration_s * f64::from(clients) * 1_000.0 / params.ttft_base_ms.max(1.0)) as u32;
    let ids = max_keys.saturating_add(2).saturating_mul(chain);
    let mut engine = Engine::new(params, block_tokens, ids);
    let blocks: Vec<u32> = (0..ids).collect();
    let key_of = |key: u32| CacheKey {
        key,
        input,
        blocks: blocks
            .get((key * chain) as usize..((key + 1) * chain) as usize)
            .unwrap_or(&[]),
    };
    let mut rng = stream(seed, Stream::Workload);
    if warm {
        for c in 0..clients {
            engine.store(&key_of(c));
        }
    }
    let end = from_secs(duration_s);
    let mut fresh_key = clients;
    // (completion time, request id, client)
    let mut running: BinaryHeap<Reverse<(Micros, u32, u32)>> = BinaryHeap::new();
    let mut queued: std::collections::VecDeque<(u32, u32)> = Default::default();
    let mut next_id = 0u32;
    let mut completed = 0u64;
    let mut start = |engine: &mut Engine, t: Micros, id: u32, client: u32, rng: &mut _| {
        let key = if warm {
            client
        } else {
            fresh_key += 1;
            fresh_key
        };
        let reused = engine.reuse(&key_of(key));
        let jitter = params.ttft_jitter_ms * Rng::random::<f64>(rng);
        let [lo, hi] = params.decode_tps;
        let decode = lo + (hi - lo) * Rng::random::<f64>(rng);
        let prefill_end = t + params.prefill_us(input - reused);
        engine.store(&key_of(key));
        let done = prefill_end + params.settle_us(jitter) + params.decode_us(output, decode);
        (done, id, client)
    };
    for client in 0..clients {
        next_id += 1;
        if engine.admit(next_id) {
            running.push(Reverse(start(&mut engine, 0, next_id, client, &mut rng)));
        } else {
            queued.push_back((next_id, client));
        }
    }
    while let Some(Reverse((t, _, client))) = running.pop() {
        if t >= end {
            break;
        }
        completed += 1;
        if let Some(id) = engine.release_slot() {
            if let Some(pos) = queued.iter().position(|&(q, _)| q == id) {
                if let Some((qid, qc)) = queued.remove(pos) {
                    running.push(Reverse(start(&mut engine, t, qid, qc, &mut rng)));
                }
            }
        }
        next_id += 1;
        if engine.admit(next_id) {
            running.push(Reverse(start(&mut engine, t, next_id, client, &mut rng)));
        } else {
            queued.push_back((next_id, client));
        }
    }
    completed as f64 / duration_s
}
