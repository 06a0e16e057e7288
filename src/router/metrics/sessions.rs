//! The session-selection counter of the `sessions` target
//! (docs/stargate.md 3.10) at the router, two ways: the router's own
//! monotonic counts per algorithm ([`SessionTally`], what the collector
//! exports), and per-target rows read from the balancer instances
//! (`Router::session_selections`), which an evicted, expired or rebuilt
//! target takes with it.

use crate::balancer::{
    unflatten_session_counts, SessionCount, SessionCounts, SessionSelection, SessionState, SERIES,
    SESSION_ALGORITHMS,
};
use crate::ir::Algorithm;
use crate::sync::{stripe_of_this_thread, STRIPES};
use std::sync::atomic::{AtomicU64, Ordering};

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

/// Counts per stripe: every session algorithm's [`SERIES`].
const PLACES: usize = SESSION_ALGORITHMS.len() * SERIES;

/// One stripe of the router's session counts, flat as
/// [`SessionCount::place`] numbers them (per algorithm, the six
/// (state, selection) series then the classified requests not selected),
/// on its own cache lines (crate::sync).
#[derive(Debug, Default)]
#[repr(align(64))]
struct Stripe([AtomicU64; PLACES]);

/// The router's own `stargate_routing_session_selections_total`: counts
/// per (algorithm, state, selection) summed over every target, kept by
/// the router rather than by its balancer instances, so a scrape never
/// sees it fall when a target is evicted, expires or is rebuilt (the
/// instances' own counts go with them). Striped like the other counters
/// (counters.rs): a decision adds 1 to its thread's stripe, with no lock,
/// lookup, flag or allocation. An algorithm's six series exist once any
/// of its counts is above 0, a classified request without a selection
/// included. Every balancer instance the router builds holds the same
/// `Arc`, so `Resolved::decide` counts too.
#[derive(Debug, Default)]
pub(crate) struct SessionTally {
    stripes: [Stripe; STRIPES],
}

impl SessionTally {
    /// Adds one decision at the place its instance counted it in; a
    /// request that was not classified counts nowhere.
    #[inline]
    pub(crate) fn count(&self, counted: SessionCount) {
        let Some(place) = counted.place() else {
            return;
        };
        if let Some(n) = self.stripes[stripe_of_this_thread()].0.get(place) {
            n.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// The sums over every stripe, for the algorithms that classified a
    /// request.
    pub(crate) fn totals(&self) -> Vec<(Algorithm, SessionCounts)> {
        let mut sums = [0u64; PLACES];
        for stripe in &self.stripes {
            for (total, n) in sums.iter_mut().zip(&stripe.0) {
                *total = total.wrapping_add(n.load(Ordering::Relaxed));
            }
        }
        SESSION_ALGORITHMS
            .iter()
            .zip(sums.chunks_exact(SERIES))
            .filter_map(|(&algorithm, counts)| {
                let counts: &[u64; SERIES] = counts.try_into().ok()?;
                Some((algorithm, unflatten_session_counts(counts)?))
            })
            .collect()
    }
}

/// Adds one instance's counts to a target's row.
pub(in crate::router) fn add(total: &mut SessionCounts, counts: &SessionCounts) {
    for (row, counts) in total.iter_mut().zip(counts) {
        for (t, c) in row.iter_mut().zip(counts) {
            *t = t.wrapping_add(*c);
        }
    }
}
