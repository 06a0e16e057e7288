//! The Dynamo KV router's worker selection (docs/simulator.md "Baselines"):
//! cost = `overlap_score_weight` x prefill blocks + decode blocks, lowest
//! wins. Prefill blocks are the worker's in-flight prefill tokens plus the
//! request's uncached tokens, over the block size; decode blocks are the
//! distinct blocks of the worker's active requests plus the request's
//! blocks not among them. The cached overlap comes from the worker's KV
//! events, the active requests from the router's own dispatches.

use std::collections::BTreeMap;

/// The router's parameters; defaults are Dynamo's (`--kv-overlap-score-weight`
/// 1.0, `--router-temperature` 0).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DynamoParams {
    pub overlap_score_weight: f64,
    pub temperature: f64,
}

impl Default for DynamoParams {
    fn default() -> Self {
        DynamoParams {
            overlap_score_weight: 1.0,
            temperature: 0.0,
        }
    }
}

/// What the router knows of one worker for one request.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct WorkerLoad {
    /// Leading request blocks the worker holds (from its KV events).
    pub cached_blocks: u64,
    /// Uncached tokens of the worker's requests still in prefill.
    pub active_prefill_tokens: u64,
    /// Distinct blocks of the worker's active requests.
    pub active_blocks: u64,
    /// Request blocks not among them.
    pub new_blocks: u64,
}

/// The cost ("logit") of sending a request of `input` tokens to a worker.
pub fn logit(p: &DynamoParams, block_tokens: u64, input: u64, w: &WorkerLoad) -> f64 {
    let block = block_tokens.max(1) as f64;
    let uncached = input.saturating_sub(w.cached_blocks.saturating_mul(block_tokens));
    let prefill_blocks = w.active_prefill_tokens.saturating_add(uncached) as f64 / block;
    let decode_blocks = w.active_blocks.saturating_add(w.new_blocks) as f64;
    p.overlap_score_weight * prefill_blocks + decode_blocks
}

/// Picks a worker from the costs (`None` = not a candidate).
///
/// Temperature 0: the lowest cost; among ties the one whose KV-event index
/// is smallest (`tree_sizes`), the first such; if every tied worker has the
/// same size, the tie is broken uniformly by `u` in [0, 1).
/// Temperature t > 0: softmax sampling with probabilities proportional to
/// exp(-(cost / range) / t), range = max - min cost (uniform when all costs
/// are equal), `u` the sample.
pub fn select(
    costs: &[Option<f64>],
    tree_sizes: &[u64],
    temperature: f64,
    u: f64,
) -> Option<usize> {
    let live = || {
        costs
            .iter()
            .enumerate()
            .filter_map(|(i, c)| c.map(|c| (i, c)))
    };
    let (lo, hi) = live().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), (_, c)| {
        (lo.min(c), hi.max(c))
    });
    live().next()?;
    let u = u.clamp(0.0, 1.0 - f64::EPSILON);
    if temperature <= 0.0 {
        let ties: Vec<usize> = live().filter(|&(_, c)| c == lo).map(|(i, _)| i).collect();
        let size = |i: usize| tree_sizes.get(i).copied().unwrap_or(0);
        let first = size(ties[0]);
        if ties.iter().all(|&i| size(i) == first) {
            return Some(ties[(u * ties.len() as f64) as usize]);
        }
        return ties.iter().copied().min_by_key(|&i| size(i));
    }
    let range = hi - lo;
    let weight = |c: f64| {
        if range > 0.0 {
            // Shifted by the lowest cost for stability; the ratios are the same.
            (-((c - lo) / range) / temperature).exp()
        } else {
            1.0
        }
    };
    let total: f64 = live().map(|(_, c)| weight(c)).sum();
    let mut acc = 0.0;
    let mut last = None;
    for (i, c) in live() {
        acc += weight(c) / total;
        last = Some(i);
        if u <= acc {
            return Some(i);
        }
    }
    last
}

/// The router's record of one worker's active requests (Dynamo's active
/// sequences): added at dispatch, prefill ended at the first token,
/// removed at completion. Bounded by the requests in flight.
#[derive(Clone, Debug, Default)]
pub struct ActiveSequences {
    /// block -> how many active requests hold it.
    blocks: BTreeMap<u32, u32>,
    /// request -> (its blocks, its uncached prefill tokens while in prefill).
    requests: BTreeMap<u32, (Vec<u32>, u64)>,
    prefill_tokens: u64,
}

impl ActiveSequences {
    pub fn active_blocks(&self) -> u64 {
        self.blocks.len() as u64
    }

    pub fn prefill_tokens(&self) -> u64 {
        self.prefill_tokens
    }

    /// Request blocks not held by an active request.
    pub fn new_blocks(&self, blocks: &[u32]) -> u64 {
        blocks
            .iter()
            .filter(|b| !self.blocks.contains_key(b))
            .count() as u64
    }

    pub fn add(&mut self, request: u32, blocks: &[u32], prefill_tokens: u64) {
        self.remove(request);
        for &b in blocks {
            *self.blocks.entry(b).or_insert(0) += 1;
        }
        self.prefill_tokens += prefill_tokens;
        self.requests
            .insert(request, (blocks.to_vec(), prefill_tokens));
    }

    /// The request produced its first token: its prefill no longer counts.
    pub fn prefill_done(&mut self, request: u32) {
        if let Some((_, tokens)) = self.requests.get_mut(&request) {
            self.prefill_tokens -= *tokens;
            *tokens = 0;
        }
    }

    /// The request ended (completed, failed or rejected).
    pub fn remove(&mut self, request: u32) {
        let Some((blocks, tokens)) = self.requests.remove(&request) else {
            return;
        };
        self.prefill_tokens -= tokens;
        for b in blocks {
            if let Some(n) = self.blocks.get_mut(&b) {
                *n -= 1;
                if *n == 0 {
                    self.blocks.remove(&b);
                }
            }
        }
    }

    pub fn len(&self) -> usize {
        self.requests.len()
    }

    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.requests.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cost_by_hand() {
        let p = DynamoParams::default();
        // 2 000 tokens in blocks of 512 (4 blocks), 2 cached: 976 uncached
        // tokens, plus 1 024 in flight = 2 000 / 512 = 3.906 prefill blocks;
        // decode blocks 10 active + 2 new = 12.
        let w = WorkerLoad {
            cached_blocks: 2,
            active_prefill_tokens: 1_024,
            active_blocks: 10,
            new_blocks: 2,
        };
        assert!((logit(&p, 512, 2_000, &w) - (2_000.0 / 512.0 + 12.0)).abs() < 1e-12);
        let heavy = DynamoParams {
            overlap_score_weight: 2.0,
            ..p
        };
        assert!((logit(&heavy, 512, 2_000, &w) - (2.0 * 2_000.0 / 512.0 + 12.0)).abs() < 1e-12);
        // Cached more than the input: no negative prefill.
        let all = WorkerLoad {
            cached_blocks: 9,
            ..WorkerLoad::default()
        };
        assert_eq!(logit(&p, 512, 2_000, &all), 0.0);
    }

    #[test]
    fn temperature_zero_is_argmin_with_tree_size_then_uniform_ties() {
        let costs = [Some(5.0), Some(3.0), None, Some(3.0), Some(7.0)];
        // Tied at 3.0: workers 1 and 3; equal tree sizes -> u decides.
        assert_eq!(select(&costs, &[0; 5], 0.0, 0.0), Some(1));
        assert_eq!(select(&costs, &[0; 5], 0.0, 0.49), Some(1));
        assert_eq!(select(&costs, &[0; 5], 0.0, 0.5), Some(3));
        assert_eq!(select(&costs, &[0; 5], 0.0, 1.0), Some(3), "u = 1 clamps");
        // Different tree sizes: the smaller wins whatever u.
        assert_eq!(select(&costs, &[0, 9, 0, 4, 0], 0.0, 0.0), Some(3));
        // The excluded worker never wins, even at the lowest cost.
        assert_eq!(select(&[None, Some(1.0)], &[0, 0], 0.0, 0.0), Some(1));
        assert_eq!(select(&[None, None], &[0, 0], 0.0, 0.3), None);
        assert_eq!(select(&[], &[], 1.0, 0.3), None);
    }

    #[test]
    fn softmax_probabilities_by_hand() {
        // Costs 0, 3, 9: range 9, t = 1: weights e^0, e^-1/3, e^-1.
        let costs = [Some(0.0), Some(3.0), Some(9.0)];
        let w = [1.0, (-1.0f64 / 3.0).exp(), (-1.0f64).exp()];
        let total: f64 = w.iter().sum();
        let p0 = w[0] / total; // 1 / 2.08441 = 0.47975
        let p1 = w[1] / total; // 0.71653 / 2.08441 = 0.34376
        assert!((p0 - 0.47975).abs() < 1e-5 && (p1 - 0.34376).abs() < 1e-5);
        assert_eq!(select(&costs, &[0; 3], 1.0, p0 - 1e-9), Some(0));
        assert_eq!(select(&costs, &[0; 3], 1.0, p0 + 1e-9), Some(1));
        assert_eq!(select(&costs, &[0; 3], 1.0, p0 + p1 + 1e-9), Some(2));
        // Equal costs: uniform.
        let flat = [Some(4.0); 4];
        assert_eq!(select(&flat, &[0; 4], 0.5, 0.26), Some(1));
        assert_eq!(select(&flat, &[0; 4], 0.5, 0.99), Some(3));
        // A very low temperature approaches the argmin.
        assert_eq!(select(&costs, &[0; 3], 1e-3, 0.999), Some(0));
    }

    #[test]
    fn active_sequences_track_blocks_and_prefill() {
        let mut a = ActiveSequences::default();
        a.add(1, &[0, 1, 2], 1_000);
        a.add(2, &[0, 1, 5], 300);
        assert_eq!((a.active_blocks(), a.prefill_tokens()), (4, 1_300));
        assert_eq!(a.new_blocks(&[0, 1, 7, 8]), 2);
        a.prefill_done(1);
        a.prefill_done(1); // idempotent
        assert_eq!(a.prefill_tokens(), 300);
        a.remove(2);
        assert_eq!((a.active_blocks(), a.prefill_tokens(), a.len()), (3, 0, 1));
        a.remove(1);
        a.remove(1);
        assert!(a.is_empty());
        assert_eq!(a.active_blocks(), 0);
    }
}
