//! The router's own counters beyond the expression cache's: targets,
//! routing outcomes, waits, rejections, failed attempts and backend
//! health. Striped like the cache counters (metrics.rs): each thread adds
//! to its own stripe, so counting writes no cache line another request
//! thread writes, takes no lock, looks up no label and allocates nothing.
//! A scrape sums the stripes ([`RouterCounters::snapshot`]).
//!
//! Decisions per (model, algorithm, cluster, rank depth) are not here:
//! they are counted by the candidate view that the decision reserved on
//! (view.rs), under the write lock the reservation takes anyway.

use crate::balancer::{SessionCounts, SessionSelection, SessionState};
use crate::diag::Code;
use crate::ir::Algorithm;
use crate::router::rejection::RejectionCode;
use crate::sync::{stripe_of_this_thread, STRIPES};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Something the router counts (the `event` of [`CounterSnapshot::events`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Event {
    /// A new target (routing key, model) took a slot.
    TargetCreated,
    /// A target lost its slot to a new one past `cache_capacity`.
    TargetEvicted,
    /// A target was forgotten after `idle_timeout` without use.
    TargetExpired,
    /// A cached expression went with an evicted target.
    ExpressionEvicted,
    /// A cached expression went with an idle target.
    ExpressionExpired,
    /// A balancer instance was built (a target's first use of a definition).
    InstanceBuilt,
    /// A routing ended with a reserved backend (`Routed`).
    Routed,
    /// A routing ended in a rejection.
    Rejected,
    /// A send failed (`Routing::failed`): the request is routed again.
    FailedAttempt,
    /// A cluster had no usable backend left for a request and was excluded.
    ClusterExcluded,
    /// A timed wait (the balancer's Wait) slept.
    RecheckSleep,
    /// A generic retry (after Unavailable) slept.
    RetrySleep,
    /// Consecutive failures ejected a backend (passive outlier ejection).
    BackendEjected,
    /// An ejection was refused by the cap on a cluster's ejected share.
    EjectionCapped,
    /// The route table was replaced (`Router::reload`).
    Reload,
}

impl Event {
    /// Every event, in index order.
    pub const ALL: [Event; 15] = [
        Event::TargetCreated,
        Event::TargetEvicted,
        Event::TargetExpired,
        Event::ExpressionEvicted,
        Event::ExpressionExpired,
        Event::InstanceBuilt,
        Event::Routed,
        Event::Rejected,
        Event::FailedAttempt,
        Event::ClusterExcluded,
        Event::RecheckSleep,
        Event::RetrySleep,
        Event::BackendEjected,
        Event::EjectionCapped,
        Event::Reload,
    ];

    fn index(self) -> usize {
        self as usize
    }
}

/// Upper bounds (inclusive, seconds) of the wait histogram's buckets: from
/// "did not wait" (a decision on arrival takes microseconds) to the 60 s
/// cap of every routing wait (docs/stargate.md 2.2).
pub const WAIT_BUCKETS: [f64; 14] = [
    0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0,
];

/// The rejection codes routex answers outside expressions, in index order.
const PLAIN_CODES: [RejectionCode; 7] = [
    RejectionCode::InvalidHeader,
    RejectionCode::MissingCacheAffinityKey,
    RejectionCode::NoEligibleCandidates,
    RejectionCode::CandidatesExhausted,
    RejectionCode::InputWorkLimitExceeded,
    RejectionCode::InputWorkCapacityUnavailable,
    RejectionCode::RoutingUnavailable,
];

const CODES: usize = PLAIN_CODES.len() + Code::ALL.len();
/// Wait buckets plus the overflow bucket (over 60 s: a caller's elapsed).
const BUCKETS: usize = WAIT_BUCKETS.len() + 1;

fn code_index(code: RejectionCode) -> usize {
    match code {
        RejectionCode::Expression(code) => PLAIN_CODES.len() + code as usize,
        plain => PLAIN_CODES
            .iter()
            .position(|c| *c == plain)
            .expect("every other code is listed"),
    }
}

fn code_at(index: usize) -> RejectionCode {
    match PLAIN_CODES.get(index) {
        Some(code) => *code,
        None => RejectionCode::Expression(Code::ALL[index - PLAIN_CODES.len()]),
    }
}

#[derive(Debug)]
#[repr(align(64))]
struct Stripe {
    events: [AtomicU64; Event::ALL.len()],
    rejections: [AtomicU64; CODES],
    /// Per outcome (0 routed, 1 rejected): bucket counts and the sum in ns.
    waits: [[AtomicU64; BUCKETS]; 2],
    wait_ns: [AtomicU64; 2],
}

impl Default for Stripe {
    fn default() -> Self {
        Stripe {
            events: std::array::from_fn(|_| AtomicU64::new(0)),
            rejections: std::array::from_fn(|_| AtomicU64::new(0)),
            waits: std::array::from_fn(|_| std::array::from_fn(|_| AtomicU64::new(0))),
            wait_ns: std::array::from_fn(|_| AtomicU64::new(0)),
        }
    }
}

/// The striped counters of one router.
#[derive(Debug, Default)]
pub(crate) struct RouterCounters {
    stripes: [Stripe; STRIPES],
}

fn add(counter: &AtomicU64, n: u64) {
    counter.fetch_add(n, Ordering::Relaxed);
}

impl RouterCounters {
    fn stripe(&self) -> &Stripe {
        &self.stripes[stripe_of_this_thread()]
    }

    pub(crate) fn count(&self, event: Event) {
        add(&self.stripe().events[event.index()], 1);
    }

    pub(crate) fn count_n(&self, event: Event, n: u64) {
        if n > 0 {
            add(&self.stripe().events[event.index()], n);
        }
    }

    /// The driver's (feature `tokio`), as are `routed` and `waited`.
    #[cfg_attr(not(feature = "tokio"), allow(dead_code))]
    pub(crate) fn rejected(&self, code: RejectionCode, waited: Duration) {
        let stripe = self.stripe();
        add(&stripe.events[Event::Rejected.index()], 1);
        add(&stripe.rejections[code_index(code)], 1);
        self.waited(stripe, 1, waited);
    }

    /// A rejection made before any routing (no wait to record).
    pub(crate) fn rejected_before_routing(&self, code: RejectionCode) {
        add(&self.stripe().rejections[code_index(code)], 1);
    }

    #[cfg_attr(not(feature = "tokio"), allow(dead_code))]
    pub(crate) fn routed(&self, waited: Duration) {
        let stripe = self.stripe();
        add(&stripe.events[Event::Routed.index()], 1);
        self.waited(stripe, 0, waited);
    }

    #[cfg_attr(not(feature = "tokio"), allow(dead_code))]
    fn waited(&self, stripe: &Stripe, outcome: usize, waited: Duration) {
        let seconds = waited.as_secs_f64();
        let bucket = WAIT_BUCKETS
            .iter()
            .position(|&b| seconds <= b)
            .unwrap_or(WAIT_BUCKETS.len());
        add(&stripe.waits[outcome][bucket], 1);
        let ns = u64::try_from(waited.as_nanos()).unwrap_or(u64::MAX);
        add(&stripe.wait_ns[outcome], ns);
    }

    /// The sums over every stripe.
    pub(crate) fn snapshot(&self) -> CounterSnapshot {
        let sum = |f: &dyn Fn(&Stripe) -> &AtomicU64| {
            self.stripes
                .iter()
                .map(|s| f(s).load(Ordering::Relaxed))
                .fold(0u64, u64::wrapping_add)
        };
        let events = Event::ALL
            .iter()
            .map(|&e| (e, sum(&|s| &s.events[e.index()])))
            .collect();
        let rejections = (0..CODES)
            .map(|i| (code_at(i), sum(&|s| &s.rejections[i])))
            .filter(|(_, n)| *n > 0)
            .collect();
        let waits = [0, 1].map(|outcome| {
            let mut cumulative = 0u64;
            let buckets = (0..BUCKETS)
                .map(|b| {
                    cumulative = cumulative.wrapping_add(sum(&|s| &s.waits[outcome][b]));
                    cumulative
                })
                .collect::<Vec<u64>>();
            WaitHistogram {
                count: *buckets.last().expect("at least one bucket"),
                cumulative: buckets[..WAIT_BUCKETS.len()].to_vec(),
                sum: Duration::from_nanos(sum(&|s| &s.wait_ns[outcome])),
            }
        });
        let [routed, rejected] = waits;
        CounterSnapshot {
            events,
            rejections,
            waits_routed: routed,
            waits_rejected: rejected,
            sessions: Vec::new(),
        }
    }
}

/// Time waited by routings of one outcome: cumulative counts at the upper
/// bounds of [`WAIT_BUCKETS`], as Prometheus histograms count.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WaitHistogram {
    /// Routings that waited at most `WAIT_BUCKETS[i]`, for each `i`.
    pub cumulative: Vec<u64>,
    /// Every routing of this outcome (the `+Inf` bucket).
    pub count: u64,
    /// Time waited, summed.
    pub sum: Duration,
}

/// The router's counters at one scrape (part of [`crate::router::Metrics`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CounterSnapshot {
    /// Every [`Event`] with its count, in [`Event::ALL`] order.
    pub events: Vec<(Event, u64)>,
    /// Rejections by code (each code has one status), non-zero ones.
    pub rejections: Vec<(RejectionCode, u64)>,
    /// Time from arrival to a reserved backend.
    pub waits_routed: WaitHistogram,
    /// Time from arrival to a rejection.
    pub waits_rejected: WaitHistogram,
    /// Session selections over every target (`last_cluster_affinity`,
    /// docs/stargate.md 3.10), per algorithm that classified a request:
    /// `[state][selection]` in the order of [`SessionState::ALL`] and
    /// [`SessionSelection::ALL`]. Kept by the router: they never fall.
    pub sessions: Vec<(Algorithm, SessionCounts)>,
}

impl CounterSnapshot {
    /// The count of one event.
    pub fn event(&self, event: Event) -> u64 {
        self.events
            .iter()
            .find(|(e, _)| *e == event)
            .map_or(0, |(_, n)| *n)
    }

    /// The router's count of one (algorithm, state, selection) series of
    /// [`CounterSnapshot::sessions`]; 0 for an algorithm without one.
    pub fn session_selections(
        &self,
        algorithm: Algorithm,
        state: SessionState,
        selection: SessionSelection,
    ) -> u64 {
        self.sessions
            .iter()
            .find(|(a, _)| *a == algorithm)
            .map_or(0, |(_, counts)| counts[state as usize][selection as usize])
    }

    /// The count of one rejection code.
    pub fn rejections_of(&self, code: RejectionCode) -> u64 {
        self.rejections
            .iter()
            .find(|(c, _)| *c == code)
            .map_or(0, |(_, n)| *n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indices_round_trip_and_events_are_in_order() {
        for (i, e) in Event::ALL.into_iter().enumerate() {
            assert_eq!(e.index(), i, "{e:?}");
        }
        for i in 0..CODES {
            assert_eq!(code_index(code_at(i)), i);
        }
    }

    #[test]
    fn waits_land_in_cumulative_buckets() {
        let c = RouterCounters::default();
        c.routed(Duration::ZERO);
        c.routed(Duration::from_millis(30));
        c.routed(Duration::from_secs(61));
        c.rejected(
            RejectionCode::RoutingUnavailable,
            Duration::from_millis(300),
        );
        let s = c.snapshot();
        assert_eq!(s.event(Event::Routed), 3);
        assert_eq!(s.waits_routed.count, 3);
        // <= 1 ms: 1; <= 50 ms: 2; <= 60 s: still 2 (61 s is over).
        assert_eq!(s.waits_routed.cumulative[0], 1);
        assert_eq!(s.waits_routed.cumulative[4], 2);
        assert_eq!(s.waits_routed.cumulative[13], 2);
        assert_eq!(s.waits_routed.sum, Duration::from_millis(61_030));
        assert_eq!(s.rejections_of(RejectionCode::RoutingUnavailable), 1);
        // 300 ms: over the 250 ms bound, within the 500 ms one.
        assert_eq!(s.waits_rejected.cumulative[7], 1);
        assert_eq!(s.waits_rejected.cumulative[6], 0);
    }
}
