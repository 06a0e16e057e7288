//! The session-selection counter of the `sessions` target
//! (docs/stargate.md 3.10) at the router: one row per (target,
//! algorithm), summed over the target's balancer instances of that
//! algorithm. The counts live in the instances (`Balancer::
//! session_selections`, striped per thread); this module only reads them
//! for an exporter. An instance retired from the expression cache takes
//! its counts with it.

use super::runtime::Router;
use crate::balancer::{SessionCounts, SessionSelection, SessionState};
use crate::ir::Algorithm;

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
