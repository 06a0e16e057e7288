//! The session-selection counter of the `sessions` target
//! (docs/stargate.md 3.10) at the router, two ways: the router's own
//! monotonic counts per algorithm ([`SessionTally`], what the collector
//! exports), and per-target rows read from the balancer instances
//! (`Router::session_selections`), which an evicted, expired or rebuilt
//! target takes with it.

use super::runtime::Router;
use crate::balancer::{SessionCount, SessionCounts, SessionSelection, SessionState};
use crate::ir::Algorithm;
use crate::sync::{stripe_of_this_thread, STRIPES};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// The counter's name as a stargate router exports it.
pub const SESSION_SELECTIONS_TOTAL: &str = "stargate_routing_session_selections_total";

/// One target's and algorithm's six counts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionSelections {
    /// The target's model id (the `model` label).
    pub model: String,
    /// The target's routing key, `None` without one.
    pub routing_key: Option<String>,
    /// The algorithm whose instances made the selections.
    pub algorithm: Algorithm,
    /// `[state][selection]`, in the order of [`SessionState::ALL`] and
    /// [`SessionSelection::ALL`].
    pub counts: SessionCounts,
}

impl SessionSelections {
    /// The count of one (state, selection) pair.
    pub fn count(&self, state: SessionState, selection: SessionSelection) -> u64 {
        self.counts[state as usize][selection as usize]
    }

    /// The six (state, selection, count) series, in label order.
    pub fn series(&self) -> impl Iterator<Item = (SessionState, SessionSelection, u64)> + '_ {
        SessionState::ALL.into_iter().flat_map(move |state| {
            SessionSelection::ALL
                .into_iter()
                .map(move |selection| (state, selection, self.count(state, selection)))
        })
    }
}

/// The algorithms that classify sessions (`last_cluster_affinity` is a
/// wait-and-widen and pulsar-wait-and-widen field), in tally order.
const SESSION_ALGORITHMS: [Algorithm; 2] = [Algorithm::WaitAndWiden, Algorithm::PulsarWaitAndWiden];

/// The algorithm's place in [`SESSION_ALGORITHMS`] (a match, not a
/// search: every classified decision asks).
fn tally_index(algorithm: Algorithm) -> Option<usize> {
    match algorithm {
        Algorithm::WaitAndWiden => Some(0),
        Algorithm::PulsarWaitAndWiden => Some(1),
        _ => None,
    }
}

/// One stripe of the router's session counts, `[algorithm][state]
/// [selection]`, on its own cache lines (crate::sync).
#[derive(Debug, Default)]
#[repr(align(64))]
struct Stripe([[[AtomicU64; 2]; 3]; 2]);

/// The router's own `stargate_routing_session_selections_total`: counts
/// per (algorithm, state, selection) summed over every target, kept by
/// the router rather than by its balancer instances, so a scrape never
/// sees it fall when a target is evicted, expires or is rebuilt (the
/// instances' own counts go with them). Striped like the other counters
/// (counters.rs): a decision adds 1 to its thread's stripe, with no lock,
/// lookup or allocation. Every balancer instance the router builds holds
/// the same `Arc`, so `Resolved::decide` counts too.
#[derive(Debug, Default)]
pub(crate) struct SessionTally {
    /// Per algorithm: a request was classified (its six series exist).
    classified: [AtomicBool; 2],
    stripes: [Stripe; STRIPES],
}

impl SessionTally {
    /// Adds one decision of an instance of `algorithm`, as the instance
    /// counted it: a selection by its (state, selection); a classified
    /// request without one only makes the algorithm's series exist.
    #[inline]
    pub(crate) fn count(&self, algorithm: Algorithm, counted: SessionCount) {
        let (state, selection) = match counted {
            SessionCount::Unclassified => return,
            SessionCount::Classified => {
                if let Some(index) = tally_index(algorithm) {
                    self.classified(index);
                }
                return;
            }
            SessionCount::Selected(state, selection) => (state, selection),
        };
        let Some(index) = tally_index(algorithm) else {
            return;
        };
        self.classified(index);
        let stripe = &self.stripes[stripe_of_this_thread()];
        stripe.0[index][state as usize][selection as usize].fetch_add(1, Ordering::Relaxed);
    }

    /// Written once per algorithm; later calls only read the flag.
    fn classified(&self, index: usize) {
        if !self.classified[index].load(Ordering::Relaxed) {
            self.classified[index].store(true, Ordering::Relaxed);
        }
    }

    /// The sums over every stripe, for the algorithms that classified a
    /// request.
    pub(crate) fn totals(&self) -> Vec<(Algorithm, SessionCounts)> {
        SESSION_ALGORITHMS
            .iter()
            .enumerate()
            .filter(|(i, _)| self.classified[*i].load(Ordering::Relaxed))
            .map(|(i, &algorithm)| {
                let mut counts = [[0u64; 2]; 3];
                for stripe in &self.stripes {
                    for (row, atomics) in counts.iter_mut().zip(&stripe.0[i]) {
                        for (total, n) in row.iter_mut().zip(atomics) {
                            *total = total.wrapping_add(n.load(Ordering::Relaxed));
                        }
                    }
                }
                (algorithm, counts)
            })
            .collect()
    }
}

impl Router {
    /// Every target's session-selection counts, for the targets whose
    /// instances classified a request (the six series then exist, at 0).
    /// Takes each target's read lock in turn; meant for a scrape, not the
    /// request path.
    pub fn session_selections(&self) -> Vec<SessionSelections> {
        let mut out: Vec<SessionSelections> = Vec::new();
        for handle in self.targets.handles() {
            let Some(target) = self.targets.slot(handle.index) else {
                continue;
            };
            let slot = target.read();
            let Some((model, routing_key)) = &slot.key else {
                continue;
            };
            if slot.generation != handle.generation {
                continue;
            }
            let first = out.len();
            for instance in &slot.instances {
                let Some(counts) = instance.balancer.session_selections() else {
                    continue;
                };
                let algorithm = instance.definition.policy.algorithm;
                match out[first..].iter_mut().find(|s| s.algorithm == algorithm) {
                    Some(row) => add(&mut row.counts, &counts),
                    None => out.push(SessionSelections {
                        model: model.to_string(),
                        routing_key: routing_key.as_deref().map(str::to_string),
                        algorithm,
                        counts,
                    }),
                }
            }
        }
        out
    }
}

fn add(total: &mut SessionCounts, counts: &SessionCounts) {
    for (row, counts) in total.iter_mut().zip(counts) {
        for (t, c) in row.iter_mut().zip(counts) {
            *t = t.wrapping_add(*c);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tally_indexes_follow_the_algorithm_order() {
        for (i, a) in SESSION_ALGORITHMS.iter().enumerate() {
            assert_eq!(tally_index(*a), Some(i));
        }
        assert_eq!(tally_index(Algorithm::Pulsar), None);
        assert_eq!(tally_index(Algorithm::RoundRobin), None);
    }
}
