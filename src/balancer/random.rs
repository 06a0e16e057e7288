//! random (docs/stargate.md 3.4): uniform over the non-excluded
//! candidates; a few rejection probes when exclusions are rare, then an
//! exact reservoir choice.

use super::{is_excluded, primary, ClusterSnapshot, Decision, Request};
use rand::{Rng, RngCore};

/// Rejection-sampling probes tried before the reservoir choice.
const PROBES: usize = 8;

pub fn decide(
    request: &Request<'_>,
    clusters: &[ClusterSnapshot],
    rng: &mut dyn RngCore,
) -> Decision {
    let n = clusters.len();
    if n == 0 {
        return Decision::Unavailable;
    }
    if request.excluded.is_empty() {
        return primary(rng.random_range(0..n));
    }
    if request.excluded.len() <= n / 4 {
        for _ in 0..PROBES {
            let i = rng.random_range(0..n);
            if !is_excluded(request, &clusters[i].id) {
                return primary(i);
            }
        }
    }
    let mut seen = 0u64;
    let mut pick = None;
    for (i, c) in clusters.iter().enumerate() {
        if is_excluded(request, &c.id) {
            continue;
        }
        seen += 1;
        if rng.random_range(0..seen) == 0 {
            pick = Some(i);
        }
    }
    pick.map_or(Decision::Unavailable, primary)
}
