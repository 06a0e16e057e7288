//! The llm-d / Gateway API Inference Extension default scheduling profile
//! (docs/simulator.md "Baselines"): a weighted sum of three scorers, the
//! highest total wins, ties broken at random.
//!
//! - queue scorer: (max - q) / (max - min) over the candidates' waiting
//!   queues, 1 when all are equal;
//! - KV-utilisation scorer: 1 - usage;
//! - prefix-cache scorer: matched leading blocks / the request's blocks,
//!   over the router's approximate index of what it sent to each backend.

/// Scorer weights; the defaults are the profile's (queue 2, KV 2, prefix 3).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GieWeights {
    pub queue: f64,
    pub kv_cache: f64,
    pub prefix: f64,
}

impl Default for GieWeights {
    fn default() -> Self {
        GieWeights {
            queue: 2.0,
            kv_cache: 2.0,
            prefix: 3.0,
        }
    }
}

/// One candidate's inputs to the scorers.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Endpoint {
    pub waiting: u64,
    /// KV cache usage in [0, 1].
    pub kv_usage: f64,
    pub matched_blocks: u64,
}

/// The queue scorer over the candidates.
pub fn queue_score(waiting: u64, min: u64, max: u64) -> f64 {
    if max == min {
        1.0
    } else {
        (max - waiting) as f64 / (max - min) as f64
    }
}

pub fn kv_score(usage: f64) -> f64 {
    1.0 - usage.clamp(0.0, 1.0)
}

pub fn prefix_score(matched: u64, total: u64) -> f64 {
    if total == 0 {
        0.0
    } else {
        matched.min(total) as f64 / total as f64
    }
}

/// Fills `scores` with each candidate's weighted total (`None` = not a
/// candidate) for a request of `total_blocks` blocks.
pub fn score(
    w: &GieWeights,
    endpoints: &[Option<Endpoint>],
    total_blocks: u64,
    scores: &mut Vec<Option<f64>>,
) {
    let live = endpoints.iter().flatten();
    let min = live.clone().map(|e| e.waiting).min().unwrap_or(0);
    let max = live.map(|e| e.waiting).max().unwrap_or(0);
    scores.clear();
    scores.extend(endpoints.iter().map(|e| {
        e.map(|e| {
            w.queue * queue_score(e.waiting, min, max)
                + w.kv_cache * kv_score(e.kv_usage)
                + w.prefix * prefix_score(e.matched_blocks, total_blocks)
        })
    }));
}

/// The highest score; ties uniformly by `u` in [0, 1).
pub fn pick(scores: &[Option<f64>], u: f64) -> Option<usize> {
    let best = scores
        .iter()
        .flatten()
        .copied()
        .fold(f64::NEG_INFINITY, f64::max);
    let ties: Vec<usize> = scores
        .iter()
        .enumerate()
        .filter(|(_, s)| **s == Some(best))
        .map(|(i, _)| i)
        .collect();
    if ties.is_empty() {
        return None;
    }
    let u = u.clamp(0.0, 1.0 - f64::EPSILON);
    Some(ties[(u * ties.len() as f64) as usize])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scorers_by_hand() {
        assert_eq!(queue_score(3, 3, 3), 1.0, "all equal");
        assert_eq!(queue_score(0, 0, 4), 1.0);
        assert_eq!(queue_score(1, 0, 4), 0.75);
        assert_eq!(queue_score(4, 0, 4), 0.0);
        assert_eq!(kv_score(0.25), 0.75);
        assert_eq!(kv_score(1.5), 0.0, "clamped");
        assert_eq!(prefix_score(3, 4), 0.75);
        assert_eq!(prefix_score(0, 0), 0.0);
        assert_eq!(prefix_score(9, 4), 1.0);
    }

    #[test]
    fn weighted_total_and_pick() {
        let e = |waiting, kv_usage, matched_blocks| {
            Some(Endpoint {
                waiting,
                kv_usage,
                matched_blocks,
            })
        };
        // Waiting 0 / 2 / 4 (range 4), usage 0.5 / 0.1 / 0.0, matches 4 / 0 / 2 of 4.
        let endpoints = [e(0, 0.5, 4), e(2, 0.1, 0), e(4, 0.0, 2), None];
        let mut s = Vec::new();
        score(&GieWeights::default(), &endpoints, 4, &mut s);
        // 2 x 1 + 2 x 0.5 + 3 x 1 = 6; 2 x 0.5 + 2 x 0.9 + 0 = 2.8; 0 + 2 + 1.5 = 3.5.
        let want = [6.0, 2.8, 3.5];
        for (got, want) in s.iter().zip(want) {
            assert!((got.unwrap() - want).abs() < 1e-12, "{got:?} vs {want}");
        }
        assert_eq!(s[3], None);
        assert_eq!(pick(&s, 0.9), Some(0));
        // Without the prefix scorer the cold, idle backend wins.
        let no_prefix = GieWeights {
            prefix: 0.0,
            ..GieWeights::default()
        };
        score(&no_prefix, &endpoints, 4, &mut s);
        assert_eq!(pick(&s, 0.0), Some(0), "3.0 vs 2.8 vs 2.0");
        // Ties are uniform.
        let tied = [Some(1.0), Some(2.0), Some(2.0), None];
        assert_eq!(pick(&tied, 0.4), Some(1));
        assert_eq!(pick(&tied, 0.6), Some(2));
        assert_eq!(pick(&[None, None], 0.5), None);
    }
}
