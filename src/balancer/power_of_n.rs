//! power-of-n (docs/stargate.md 3.5): sample up to `sample_count`
//! distinct non-excluded candidates, take the best score, random ties.
//! No capacity check.

use super::estimate::{self, Score};
use super::{is_excluded, primary, ClusterSnapshot, Decision, Request};
use crate::ir::PowerOfNSettings;
use rand::{Rng, RngCore};
use std::cmp::Ordering;

pub fn decide(
    settings: &PowerOfNSettings,
    request: &Request<'_>,
    clusters: &[ClusterSnapshot],
    rng: &mut dyn RngCore,
    pool: &mut Vec<usize>,
) -> Decision {
    pool.clear();
    pool.extend(
        clusters
            .iter()
            .enumerate()
            .filter(|(_, c)| !is_excluded(request, &c.id))
            .map(|(i, _)| i),
    );
    let m = usize::try_from(settings.sample_count.max(1))
        .unwrap_or(usize::MAX)
        .min(pool.len());
    // A partial shuffle draws a uniform subset (one pick, a distinct pair,
    // all, or any size in between).
    for i in 0..m {
        let j = rng.random_range(i..pool.len());
        pool.swap(i, j);
    }
    let mut best: Option<(usize, Score)> = None;
    let mut ties = 0u64;
    for &i in &pool[..m] {
        let s = estimate::score(settings.comparator, &clusters[i], request);
        match best.map(|(_, b)| s.compare(b)) {
            None | Some(Ordering::Less) => {
                best = Some((i, s));
                ties = 1;
            }
            Some(Ordering::Equal) => {
                // The k-th tied candidate wins with probability 1/k.
                ties += 1;
                if rng.random_range(0..ties) == 0 {
                    best = Some((i, s));
                }
            }
            Some(Ordering::Greater) => {}
        }
    }
    best.map_or(Decision::Unavailable, |(i, _)| primary(i))
}
