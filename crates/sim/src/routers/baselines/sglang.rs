//! SGLang router's `cache_aware` policy (docs/simulator.md "Baselines").
//! Loads are the router's own in-flight request counts per worker.
//!
//! - Imbalanced (max - min > `balance_abs_threshold` and max > min x
//!   `balance_rel_threshold`): the least-loaded worker.
//! - Otherwise: the worker with the longest prefix match in the router's
//!   approximate tree, if its match rate (matched / input tokens) exceeds
//!   `cache_threshold`; else the worker whose tree is smallest.
//!
//! Either way the request's blocks are then inserted for the chosen worker.

/// The policy's thresholds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SglangParams {
    pub balance_abs_threshold: u64,
    pub balance_rel_threshold: f64,
    pub cache_threshold: f64,
}

impl SglangParams {
    /// `sglang_router.launch_router`'s command-line defaults.
    pub const CLI: SglangParams = SglangParams {
        balance_abs_threshold: 64,
        balance_rel_threshold: 1.5,
        cache_threshold: 0.3,
    };
    /// The Rust library's `CacheAwareConfig::default()`.
    pub const LIBRARY: SglangParams = SglangParams {
        balance_abs_threshold: 32,
        balance_rel_threshold: 1.1,
        cache_threshold: 0.5,
    };
}

/// Why a worker was chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    /// Loads were imbalanced: the shortest queue.
    Imbalanced,
    /// The longest prefix match, above the threshold.
    CacheHit,
    /// Match at or below the threshold: the smallest tree.
    SmallestTree,
}

/// One candidate (`None` = not a candidate).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Worker {
    pub load: u64,
    pub matched_blocks: u64,
    pub tree_blocks: u64,
}

pub fn imbalanced(min: u64, max: u64, p: &SglangParams) -> bool {
    max.saturating_sub(min) > p.balance_abs_threshold
        && max as f64 > min as f64 * p.balance_rel_threshold
}

/// The choice for a request of `input` tokens over blocks of
/// `block_tokens`. Ties go to the first candidate in topology order.
pub fn choose(
    workers: &[Option<Worker>],
    input: u64,
    block_tokens: u64,
    p: &SglangParams,
) -> Option<(usize, Reason)> {
    let live = || {
        workers
            .iter()
            .enumerate()
            .filter_map(|(i, w)| w.map(|w| (i, w)))
    };
    let min = live().map(|(_, w)| w.load).min()?;
    let max = live().map(|(_, w)| w.load).max()?;
    let first_min =
        |key: fn(&Worker) -> u64| live().min_by_key(|(i, w)| (key(w), *i)).map(|(i, _)| i);
    if imbalanced(min, max, p) {
        return first_min(|w| w.load).map(|i| (i, Reason::Imbalanced));
    }
    let (best, matched) = live()
        .map(|(i, w)| (i, w.matched_blocks))
        .max_by_key(|&(i, m)| (m, std::cmp::Reverse(i)))?;
    let matched_tokens = matched.saturating_mul(block_tokens).min(input);
    let rate = if input == 0 {
        0.0
    } else {
        matched_tokens as f64 / input as f64
    };
    if rate > p.cache_threshold {
        Some((best, Reason::CacheHit))
    } else {
        first_min(|w| w.tree_blocks).map(|i| (i, Reason::SmallestTree))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(load: u64, matched_blocks: u64, tree_blocks: u64) -> Option<Worker> {
        Some(Worker {
            load,
            matched_blocks,
            tree_blocks,
        })
    }

    #[test]
    fn imbalance_needs_both_thresholds() {
        let cli = SglangParams::CLI;
        assert!(!imbalanced(10, 74, &cli), "difference 64 is not > 64");
        assert!(imbalanced(10, 75, &cli));
        assert!(!imbalanced(200, 270, &cli), "270 < 1.5 x 200");
        assert!(imbalanced(200, 301, &cli));
        let lib = SglangParams::LIBRARY;
        assert!(imbalanced(100, 133, &lib), "33 > 32 and 133 > 110");
        assert!(!imbalanced(400, 433, &lib), "433 < 440");
        assert!(imbalanced(0, 33, &lib), "0 x 1.1 = 0");
    }

    #[test]
    fn the_three_branches_by_hand() {
        let p = SglangParams::CLI;
        // Imbalanced: 0 vs 80 -> shortest queue (worker 2), whatever the cache.
        let ws = [w(80, 4, 10), w(5, 0, 0), w(0, 0, 50), None];
        assert_eq!(choose(&ws, 2_048, 512, &p), Some((2, Reason::Imbalanced)));
        // Balanced: worker 0 matches 2 of 4 blocks (1 024 of 2 048 tokens,
        // rate 0.5 > 0.3).
        let ws = [w(3, 2, 10), w(1, 1, 4), w(2, 0, 2)];
        assert_eq!(choose(&ws, 2_048, 512, &p), Some((0, Reason::CacheHit)));
        // With the library's 0.5 threshold, 0.5 is not enough: smallest tree.
        assert_eq!(
            choose(&ws, 2_048, 512, &SglangParams::LIBRARY),
            Some((2, Reason::SmallestTree))
        );
        // Ties: the first in topology order.
        let ws = [w(1, 0, 3), w(1, 0, 3)];
        assert_eq!(choose(&ws, 100, 512, &p), Some((0, Reason::SmallestTree)));
        let ws = [w(1, 1, 9), w(1, 1, 3)];
        assert_eq!(choose(&ws, 1_000, 512, &p), Some((0, Reason::CacheHit)));
        // A match longer than the input is capped at rate 1.
        assert_eq!(
            choose(&[w(0, 9, 0)], 100, 512, &p),
            Some((0, Reason::CacheHit))
        );
        assert_eq!(choose(&[None], 100, 512, &p), None);
        assert_eq!(
            choose(&[w(0, 0, 0)], 0, 512, &p),
            Some((0, Reason::SmallestTree))
        );
    }
}
