//! round-robin (docs/stargate.md 3.3): a per-instance counter,
//! incremented once per decision, picks among the non-excluded candidates.

use super::{is_excluded, primary, ClusterSnapshot, Decision, Request};
use std::sync::atomic::{AtomicU64, Ordering};

#[derive(Debug, Default)]
pub struct RoundRobin {
    counter: AtomicU64,
}

impl RoundRobin {
    pub fn decide(&self, request: &Request<'_>, clusters: &[ClusterSnapshot]) -> Decision {
        let turn = self.counter.fetch_add(1, Ordering::Relaxed);
        // The spec's three cases (no exclusions: mod N; 1-2 present
        // exclusions: mod (N - excluded) stepping over them; otherwise mod
        // the eligible count) all take the (turn mod E)-th eligible candidate
        // in candidate order, E the number of eligible candidates.
        let eligible = clusters
            .iter()
            .filter(|c| !is_excluded(request, &c.id))
            .count();
        if eligible == 0 {
            return Decision::Unavailable;
        }
        let nth = (turn % eligible as u64) as usize;
        clusters
            .iter()
            .enumerate()
            .filter(|(_, c)| !is_excluded(request, &c.id))
            .nth(nth)
            .map_or(Decision::Unavailable, |(index, _)| primary(index))
    }
}
