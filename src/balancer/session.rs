//! Session affinity of the `sessions` target (docs/stargate.md 3.10):
//! `last_cluster_affinity` classifies a keyed request by the cluster that
//! served its session last (`x-stargate-last-cluster-id`) and reorders the
//! affinity order for it. The classification is made once per request and
//! carried in [`Request::session`]; the reorder happens in the caller's
//! scratch space, per decision, and is never cached.

use super::{Choice, ClusterSnapshot, Request};
use crate::ir::Algorithm;
use std::sync::atomic::{AtomicU64, Ordering};

/// How a request's session was classified.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SessionState {
    /// No hint: the request has no last cluster.
    New,
    /// The hint names a current candidate.
    Returning,
    /// The hint names no current candidate (unknown, differently cased,
    /// over-long or unreadable).
    Stale,
}

impl SessionState {
    /// Every state, in the order of the metric's label values.
    pub const ALL: [SessionState; 3] = [
        SessionState::New,
        SessionState::Returning,
        SessionState::Stale,
    ];

    /// The `session_state` label value.
    pub const fn as_str(self) -> &'static str {
        match self {
            SessionState::New => "new",
            SessionState::Returning => "returning",
            SessionState::Stale => "stale",
        }
    }
}

/// Whether a classified request's selection counts as primary.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SessionSelection {
    /// A returning request on its last cluster, or a new or stale one
    /// within the affinity group (`rank_depth` <= group size).
    Primary,
    /// Any other selection: the session's cluster or group could not take
    /// the request.
    Fallback,
}

impl SessionSelection {
    /// Both selections, in the order of the metric's label values.
    pub const ALL: [SessionSelection; 2] = [SessionSelection::Primary, SessionSelection::Fallback];

    /// The `selection` label value.
    pub const fn as_str(self) -> &'static str {
        match self {
            SessionSelection::Primary => "primary",
            SessionSelection::Fallback => "fallback",
        }
    }
}

/// The six (state, selection) counts of one balancer instance, indexed
/// `[state][selection]` in the order of [`SessionState::ALL`] and
/// [`SessionSelection::ALL`].
pub type SessionCounts = [[u64; 2]; 3];

/// The algorithms that classify sessions (`last_cluster_affinity` is a
/// wait-and-widen and pulsar-wait-and-widen field), in the order of their
/// slots in a [`SessionCount`](super::SessionCount).
pub(crate) const SESSION_ALGORITHMS: [Algorithm; 2] =
    [Algorithm::WaitAndWiden, Algorithm::PulsarWaitAndWiden];

/// Counts per algorithm: the six (state, selection) series, flat
/// (`state * 2 + selection`, the order of [`SessionCounts`]), then
/// [`CLASSIFIED_ONLY`].
pub(crate) const SERIES: usize = 7;

/// The count of a classified request that was not selected (yet): it
/// only makes the six series exist, so a set of counts exists (is
/// exported) once any of its seven is above 0, with no flag to test on
/// the request path.
pub(crate) const CLASSIFIED_ONLY: usize = 6;

/// The flat place of a (state, selection) series among [`SERIES`].
pub(crate) const fn series(state: SessionState, selection: SessionSelection) -> usize {
    state as usize * 2 + selection as usize
}

/// The six series of flat counts, `None` while all seven are 0 (no
/// request classified yet).
pub(crate) fn unflatten(counts: &[u64; SERIES]) -> Option<SessionCounts> {
    if counts.iter().all(|&n| n == 0) {
        return None;
    }
    let mut out = [[0u64; 2]; 3];
    for state in SessionState::ALL {
        for selection in SessionSelection::ALL {
            out[state as usize][selection as usize] = counts[series(state, selection)];
        }
    }
    Some(out)
}

/// `stargate_routing_session_selections_total` of one balancer instance
/// (one target and definition): its six series exist, at 0, from the
/// first classified request on.
///
/// Not striped per thread, unlike the router's counters: 56 bytes per
/// instance instead of 576 (docs/embedding.md, Bounds). The threads
/// deciding for one target share this cache line; the counts a scrape
/// exports are the router's, which are striped (src/router/metrics/sessions.rs).
#[derive(Debug, Default)]
pub(crate) struct SessionCounters {
    /// Flat, [`SERIES`] counts; [`CLASSIFIED_ONLY`] is only ever 0 or 1.
    counts: [AtomicU64; SERIES],
}

impl SessionCounters {
    /// Adds one decision at its flat place ([`series`] or
    /// [`CLASSIFIED_ONLY`]). A classified request that is not selected
    /// writes once; later ones only read (the line is shared by the
    /// instance's threads, and a waiting request decides again and again).
    #[inline]
    pub fn add(&self, series: usize) {
        let Some(n) = self.counts.get(series) else {
            return;
        };
        if series != CLASSIFIED_ONLY {
            n.fetch_add(1, Ordering::Relaxed);
        } else if n.load(Ordering::Relaxed) == 0 {
            n.store(1, Ordering::Relaxed);
        }
    }

    /// The counts, or `None` before the first classified request.
    pub fn get(&self) -> Option<SessionCounts> {
        unflatten(&self.counts.each_ref().map(|n| n.load(Ordering::Relaxed)))
    }
}

/// Classifies a hint against the candidates: ids compare exactly
/// (case-sensitive, untrimmed). Allocates nothing.
pub fn classify(hint: Option<&str>, clusters: &[ClusterSnapshot]) -> SessionState {
    match hint {
        None => SessionState::New,
        Some(id) if clusters.iter().any(|c| same_id(&c.id, id)) => SessionState::Returning,
        Some(_) => SessionState::Stale,
    }
}

/// `a == b`, testing the last byte before the rest: a fleet's cluster ids
/// tend to share their length and a prefix (`cluster-07`, `cluster-12`)
/// and differ at the end, so most candidates are told apart without a
/// `memcmp` call.
fn same_id(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.as_bytes().last() == b.as_bytes().last() && a == b
}

/// A request's session as one decision uses it: its state and, for a
/// returning request, the candidate position of its last cluster.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Session {
    pub state: SessionState,
    pub last: Option<usize>,
}

impl Session {
    /// The session of a request whose policy turns `last_cluster_affinity`
    /// on; `None` without an affinity key (the flag then does nothing).
    /// The state is [`Request::session`] when the caller classified the
    /// request already (every retry and timed wait reuses it), else the
    /// hint's classification now.
    /// One pass over the candidates' ids at most (a decision computes it
    /// once and hands it to the algorithm and the counter).
    pub fn of(request: &Request<'_>, clusters: &[ClusterSnapshot]) -> Option<Session> {
        Session::pending(request).map(|p| p.resolve(clusters, None))
    }

    /// What [`Session::of`] takes from the request, before the hint is
    /// looked up among the candidates; `None` without an affinity key.
    pub fn pending<'r>(request: &Request<'r>) -> Option<Pending<'r>> {
        request.cache_affinity_key?;
        let hint = match request.session {
            None | Some(SessionState::Returning) => request.last_cluster_id,
            Some(_) => None,
        };
        Some(Pending {
            state: request.session,
            hint,
        })
    }

    /// How this session's selection of `choice` counts: primary for a
    /// returning request on its last cluster (compared by id, as the hint
    /// names it) or a new/stale one within the group of `group_size`.
    pub fn selection(
        self,
        choice: &Choice,
        clusters: &[ClusterSnapshot],
        group_size: u64,
    ) -> SessionSelection {
        let primary = match (self.state, self.last) {
            (SessionState::Returning, Some(last)) => {
                last == choice.index
                    || clusters.get(choice.index).map(|c| &c.id)
                        == clusters.get(last).map(|c| &c.id)
            }
            // The hint named a candidate when the request was classified,
            // but none now: no selection is on it.
            (SessionState::Returning, None) => false,
            (SessionState::New | SessionState::Stale, _) => {
                u64::from(choice.rank_depth) <= group_size
            }
        };
        if primary {
            SessionSelection::Primary
        } else {
            SessionSelection::Fallback
        }
    }

    /// New and stale sessions skip the affinity wait and the prefill
    /// discount.
    pub fn keeps_affinity(self) -> bool {
        self.state == SessionState::Returning
    }
}

/// A request's session before its hint is looked up ([`Session::pending`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Pending<'r> {
    /// The caller's classification, if it made one.
    state: Option<SessionState>,
    /// The id whose candidate position the session needs: the hint of a
    /// request not classified yet or classified returning.
    pub hint: Option<&'r str>,
}

impl Pending<'_> {
    /// The session over `clusters`, the hint's position given by an index
    /// when `found` is `Some` (an
    /// [`IdIndex::position`](super::id_index::IdIndex::position) answer),
    /// else found by a scan. Inlined (once per decision, and `found`
    /// mostly decides it); the scan is not.
    #[inline(always)]
    pub fn resolve(self, clusters: &[ClusterSnapshot], found: Option<Option<usize>>) -> Session {
        let position = |id: &str| found.unwrap_or_else(|| scan(clusters, id));
        let (state, last) = match (self.state, self.hint) {
            (Some(SessionState::Returning), Some(id)) => (SessionState::Returning, position(id)),
            (Some(state), _) => (state, None),
            (None, None) => (SessionState::New, None),
            (None, Some(id)) => match position(id) {
                Some(at) => (SessionState::Returning, Some(at)),
                None => (SessionState::Stale, None),
            },
        };
        Session { state, last }
    }
}

/// The first candidate position of `id`, by a pass over every id.
#[inline(never)]
fn scan(clusters: &[ClusterSnapshot], id: &str) -> Option<usize> {
    clusters.iter().position(|c| same_id(&c.id, id))
}

/// Moves `last` to the front of `order` by rotating the prefix up to it
/// (the others keep their relative order). `false` when it is not in
/// `order`.
pub(crate) fn promote(order: &mut [usize], last: usize) -> bool {
    match order.iter().position(|&p| p == last) {
        Some(i) => {
            order[..=i].rotate_right(1);
            true
        }
        None => false,
    }
}

/// Puts `last` at the front of wait-and-widen's ring group: promoted when
/// a member, else inserted first with the group's last member dropped (the
/// size stays). An empty group stays empty. Never grows the vector's
/// storage.
pub(crate) fn lead_group(group: &mut Vec<usize>, last: usize) {
    if !group.is_empty() && !promote(group, last) {
        group.pop();
        group.insert(0, last);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn promote_rotates_the_prefix_up_to_the_cluster() {
        let mut order = [4, 7, 1, 9];
        assert!(promote(&mut order, 1));
        assert_eq!(order, [1, 4, 7, 9]);
        assert!(promote(&mut order, 1));
        assert_eq!(order, [1, 4, 7, 9]);
        assert!(!promote(&mut order, 5));
        assert_eq!(order, [1, 4, 7, 9]);
    }

    #[test]
    fn a_group_outsider_is_inserted_first_and_the_last_member_dropped() {
        let mut group = vec![3, 0, 2];
        lead_group(&mut group, 5);
        assert_eq!(group, [5, 3, 0]);
        lead_group(&mut group, 0);
        assert_eq!(group, [0, 5, 3]);
        let mut empty = Vec::new();
        lead_group(&mut empty, 1);
        assert!(empty.is_empty());
    }

    #[test]
    fn hints_compare_exactly() {
        let clusters = [ClusterSnapshot::new("a"), ClusterSnapshot::new("B")];
        assert_eq!(classify(None, &clusters), SessionState::New);
        assert_eq!(classify(Some("a"), &clusters), SessionState::Returning);
        assert_eq!(classify(Some("A"), &clusters), SessionState::Stale);
        assert_eq!(classify(Some("b"), &clusters), SessionState::Stale);
        assert_eq!(classify(Some(" a"), &clusters), SessionState::Stale);
        assert_eq!(classify(Some(""), &clusters), SessionState::Stale);
    }
}
