//! The balancer core: interprets a [`Policy`] exactly as stargate decides.
//! Never sees source text or spans. Randomness and time are inputs.
//!
//! One module per algorithm; `estimate` (3.1-3.2), `bucket` (3.6.3),
//! `hash`, `ring` (3.6.6) and `ranking` (3.7) are shared. After warm-up a
//! decision allocates nothing: working vectors live in the caller's
//! [`Scratch`], caches reuse their storage on hits.

mod bucket;
// The estimates and hashes are internals; the `testing` feature opens
// them to the project's integration tests, which pin their numbers
// (docs/stargate.md 3.1-3.2, 3.6.6). Not part of the API.
#[cfg(feature = "testing")]
pub mod estimate;
#[cfg(not(feature = "testing"))]
mod estimate;
mod fifo;
#[cfg(feature = "testing")]
pub mod hash;
#[cfg(not(feature = "testing"))]
mod hash;
mod id_index;
mod legacy;
mod membership;
mod power_of_n;
mod pulsar;
mod pulsar_wait_and_widen;
mod random;
mod ranking;
mod ring;
mod round_robin;
mod session;
mod target;
mod wait_and_widen;

pub use estimate::has_capacity;
pub use membership::Membership;
pub use pulsar_wait_and_widen::open_prefix;
// The Pulsar ranking primitives: the router's admission reads them; the
// tests pin their numbers.
#[cfg(feature = "testing")]
pub use ranking::{
    feasibility as pulsar_feasibility, score as pulsar_score, weight as pulsar_weight, Feasibility,
};
#[cfg(not(feature = "testing"))]
pub(crate) use ranking::{feasibility as pulsar_feasibility, weight as pulsar_weight, Feasibility};
pub use session::{classify as classify_session, SessionCounts, SessionSelection, SessionState};
pub(crate) use session::{unflatten as unflatten_session_counts, SERIES, SESSION_ALGORITHMS};

use crate::ir::{Policy, PulsarWaitAndWidenSettings, Settings};
use rand::RngCore;
use std::time::Duration;

/// The per-decision request (docs/stargate.md 1.2).
#[derive(Clone, Debug, Default)]
pub struct Request<'a> {
    /// The model id (`x-model`); part of the target, so it keys the
    /// per-target state and is hashed into every ring and ranking.
    pub model: &'a str,
    /// `x-routing-key` (`None` when absent or blank): scopes the
    /// per-target state and is hashed into every ring and ranking.
    pub routing_key: Option<&'a str>,
    /// `x-cache-affinity-key` (`None` when absent or blank): hashed into
    /// wait-and-widen's ring lookup and every Pulsar ranking, so requests
    /// with one key prefer the same clusters. Without one, wait-and-widen
    /// has no affinity and Pulsar hashes `""` (docs/stargate.md 3.6.6,
    /// 3.7.2).
    pub cache_affinity_key: Option<&'a str>,
    /// `x-input-tokens`, the prompt's token count (always present behind
    /// the HTTP front end); drives prefill estimates and KV feasibility.
    pub input_tokens: Option<u64>,
    /// `x-priority` (default 0): selects the published queue-time estimate
    /// of the greatest priority <= it.
    pub priority: u32,
    /// `x-request-slo-ms`, in ms: stretches the queue-SLO limit from floor
    /// to ceiling over this time; `None` or 0 = no SLO (the ceiling).
    pub request_slo_ms: Option<u64>,
    /// now - arrival on the caller's clock (virtual time in the simulator).
    pub elapsed: Duration,
    /// Cluster ids that failed earlier attempts of this request.
    pub excluded: &'a [&'a str],
    /// `x-stargate-last-cluster-id`: the cluster that served this session
    /// last, as the gateway remembers it (docs/stargate.md 3.10); `None`
    /// without a hint.
    pub last_cluster_id: Option<&'a str>,
    /// The session's classification when the caller made it already
    /// ([`Balancer::classify`] on the first attempt); `None` lets each
    /// decision classify the hint itself.
    pub session: Option<SessionState>,
}

/// One candidate cluster's statistics (docs/stargate.md 1.3).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClusterSnapshot {
    /// The cluster id: matched against exclusions and the session hint,
    /// hashed into rings and rankings, and used by several tie-breaks.
    pub id: String,
    /// Health round-trip time, in ms (fractional); NaN counts as the worst.
    pub rtt_ms: f64,
    /// Last valid mean prefill throughput, input tokens per second; valid
    /// when finite and > 0. Feeds every queue and prefill estimate.
    pub last_mean_input_tps: f64,
    /// Peak input tokens per second, the default Pulsar weight; `None`
    /// when not reported.
    pub max_input_tps: Option<f64>,
    /// Requests not yet producing output (pending reservations included):
    /// the `num-requests-queued` score.
    pub queue_size: u64,
    /// Queued prompt tokens (reservations' tokens included): the queue
    /// estimate without a published one, and input-work admission.
    pub queued_input_size: u64,
    /// Requests running on the engine (pending reservations included),
    /// compared with `max_engine_concurrency` for free slots and capacity.
    pub num_running_queries: u64,
    /// 0 = unknown.
    pub max_engine_concurrency: u64,
    /// (priority, estimate ms), sorted by priority, unique priorities.
    pub queue_time_estimate_ms_by_priority: Vec<(u32, u64)>,
    /// KV-cache capacity, in tokens. The three KV fields all 0 mean "no
    /// KV metrics": Pulsar's KV check then skips the cluster.
    pub kv_cache_capacity_tokens: u64,
    /// KV-cache tokens in use.
    pub kv_cache_used_tokens: u64,
    /// Free KV-cache tokens: with `consider_kv_free_tokens`, a cluster
    /// with fewer than the request's input tokens is skipped.
    pub kv_cache_free_tokens: u64,
    /// Prompt tokens of every request the cluster holds; carried, never
    /// read by the algorithms (docs/stargate.md 1.3).
    pub total_query_input_size: u64,
}

/// A selection (docs/stargate.md 2.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Choice {
    /// Position in the caller's candidate slice.
    pub index: usize,
    /// 1 = primary, > 1 = fallback.
    pub rank_depth: u32,
    /// Whether a higher-ranked cluster was skipped for KV free tokens
    /// before this one was selected (pulsar and PWW only).
    pub selected_after_kv_free_tokens_skip: bool,
}

/// What the core answers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Decision {
    /// A cluster was selected.
    Selected(Choice),
    /// Nothing selectable now; something may become selectable within this.
    Wait(Duration),
    /// Nothing selectable and no timed event known: the routing loop
    /// retries after a short sleep while `x-max-wait-ms` allows, else
    /// answers 503 (docs/stargate.md 2.2).
    Unavailable,
}

/// Reusable buffers, owned by the caller (one per thread), so a decision
/// does not allocate after warm-up.
#[derive(Debug, Default)]
pub struct Scratch {
    /// Candidate positions of the current phase (group, band, open set).
    members: Vec<usize>,
    entries: Vec<bucket::Entry>,
    /// Pulsar ranking: candidate positions, best first.
    ranking: Vec<usize>,
    scored: Vec<(f64, usize)>,
    /// Hash input buffer.
    bytes: Vec<u8>,
    /// Ring walk: which candidate positions are already in the group.
    taken: Vec<bool>,
}

impl Scratch {
    /// Empty buffers; they grow to the largest candidate list seen and keep
    /// their storage.
    pub fn new() -> Self {
        Scratch::default()
    }
}

/// How one decision counted in the session-selection counter
/// (docs/stargate.md 3.10), as one flat place for the router's tally to
/// add 1 at without matching: 0 for a request not classified (the policy
/// does not turn `last_cluster_affinity` on, or no affinity key), else
/// `1 + slot * SERIES + series`, the algorithm's slot in
/// `SESSION_ALGORITHMS` and the series a selection or a classified request
/// without one counts in (session.rs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SessionCount(u8);

impl SessionCount {
    /// A request that was not classified.
    pub(crate) const UNCLASSIFIED: SessionCount = SessionCount(0);

    fn new(slot: usize, series: usize) -> Self {
        // At most 2 * SERIES: fits.
        SessionCount((1 + slot * session::SERIES + series) as u8)
    }

    /// The flat place among `SESSION_ALGORITHMS.len() * SERIES` counts,
    /// `None` when not classified.
    #[inline]
    pub(crate) fn place(self) -> Option<usize> {
        usize::from(self.0).checked_sub(1)
    }
}

/// One balancer instance: a policy plus its state (round-robin counter,
/// ring and ranking caches). `Send + Sync`.
#[derive(Debug)]
pub struct Balancer {
    kind: Kind,
    /// The session-selection counter, for a policy that turns
    /// `last_cluster_affinity` on (docs/stargate.md 3.10).
    sessions: Option<Box<session::SessionCounters>>,
}

#[derive(Debug)]
enum Kind {
    PowerOfN(crate::ir::PowerOfNSettings),
    WaitAndWiden(wait_and_widen::WaitAndWiden),
    RoundRobin(round_robin::RoundRobin),
    Random,
    Pulsar(pulsar::Pulsar),
    PulsarWaitAndWiden(pulsar_wait_and_widen::PulsarWaitAndWiden),
    LegacyBandWalk(legacy::LegacyBandWalk),
    #[cfg(feature = "testing")]
    StandIn(Box<dyn StandIn>),
}

/// A stand-in for an algorithm, for the project's router tests (feature
/// `testing`, no part of the API): it decides without a policy, for
/// example in turn like round-robin whatever the definition, so a test
/// sees which instance decided. A [`Balancer::stand_in`] wraps it; it
/// classifies no session.
#[cfg(feature = "testing")]
pub trait StandIn: std::fmt::Debug + Send + Sync + 'static {
    /// The decision for `request` among `clusters`, as
    /// [`Balancer::decide`] answers it.
    fn decide(
        &self,
        request: &Request<'_>,
        clusters: &[ClusterSnapshot],
        rng: &mut dyn RngCore,
        scratch: &mut Scratch,
    ) -> Decision;
}

impl Balancer {
    /// A fresh instance for `policy`: round-robin counter at 0, empty
    /// caches. The router keeps one per (target generation, definition).
    pub fn new(policy: &Policy) -> Self {
        let kind = match &policy.settings {
            Settings::PowerOfN(s) => Kind::PowerOfN(s.clone()),
            Settings::WaitAndWiden(s) => Kind::WaitAndWiden(wait_and_widen::WaitAndWiden::new(s)),
            Settings::RoundRobin {} => Kind::RoundRobin(round_robin::RoundRobin::default()),
            Settings::Random {} => Kind::Random,
            Settings::Pulsar(s) => Kind::Pulsar(pulsar::Pulsar::new(s)),
            Settings::PulsarWaitAndWiden(s) => {
                Kind::PulsarWaitAndWiden(pulsar_wait_and_widen::PulsarWaitAndWiden::new(s))
            }
        };
        let mut balancer = Balancer {
            kind,
            sessions: None,
        };
        if balancer.sessions_on() {
            balancer.sessions = Some(Box::default());
        }
        balancer
    }

    /// A balancer that decides with `stand_in` (feature `testing`: the
    /// router's tests, no part of the API).
    #[cfg(feature = "testing")]
    pub fn stand_in(stand_in: impl StandIn) -> Self {
        Balancer {
            kind: Kind::StandIn(Box::new(stand_in)),
            sessions: None,
        }
    }

    /// The legacy band walk of docs/stargate.md 3.8.5, a simulator
    /// baseline. `initial_wait_ms` (docs/simulator-model.md B2.6; 0 = off): until that
    /// much time has elapsed since arrival only rank 1 is tried (limit
    /// `max_queued`) and the answer is otherwise Wait for the remaining
    /// time; afterwards the walk runs unchanged. Of `settings` it reads
    /// the bucket settings, `seed`, `rendezvous_weight` and
    /// `consider_kv_free_tokens`; the affinity and band fields are unused.
    pub fn legacy_band_walk(settings: &PulsarWaitAndWidenSettings, initial_wait_ms: u64) -> Self {
        Balancer {
            kind: Kind::LegacyBandWalk(legacy::LegacyBandWalk::new(settings, initial_wait_ms)),
            sessions: None,
        }
    }

    /// Decides for `request` among `clusters` (the candidates in the
    /// caller's order) as stargate does (docs/stargate.md 2.1, 3). `rng`
    /// supplies every random draw; `scratch` holds the working vectors, so
    /// a decision does not allocate after warm-up.
    pub fn decide(
        &self,
        request: &Request<'_>,
        clusters: &[ClusterSnapshot],
        rng: &mut dyn RngCore,
        scratch: &mut Scratch,
    ) -> Decision {
        self.decide_inner(request, clusters, None, rng, scratch).0
    }

    /// [`Balancer::decide`] over a candidate list the caller names: `ids`
    /// must change whenever the ids or order of `clusters` do (see
    /// [`Membership`]). The decision is the same as `decide`'s; the ranking
    /// cache and the wait-and-widen ring then check the name instead of
    /// comparing every id.
    pub fn decide_named(
        &self,
        request: &Request<'_>,
        clusters: &[ClusterSnapshot],
        ids: Membership,
        rng: &mut dyn RngCore,
        scratch: &mut Scratch,
    ) -> Decision {
        self.decide_inner(request, clusters, Some(ids), rng, scratch)
            .0
    }

    /// Whether an [`Decision::Unavailable`] answer to `request` lasts: the
    /// same request over the same candidates (ids, order and every
    /// snapshot field) at any later `elapsed` is answered `Unavailable`
    /// again, with no random draw and nothing else a later decision reads
    /// changed. A caller that polls (the simulator's faithful mode) may
    /// then reuse the answer until its candidates change instead of
    /// deciding again. True for wait-and-widen and pulsar-wait-and-widen
    /// unless their queue-SLO limit still moves with elapsed (a request
    /// SLO stretching the limit from floor to ceiling); false for the
    /// others, whose answers are not examined this way.
    pub fn unavailable_lasts(&self, request: &Request<'_>) -> bool {
        match &self.kind {
            Kind::WaitAndWiden(b) => b.unavailable_lasts(request),
            Kind::PulsarWaitAndWiden(b) => b.unavailable_lasts(request),
            _ => false,
        }
    }

    /// [`Balancer::decide`], also saying how the decision counted in this
    /// instance's session counts, for the router to add to its own
    /// (src/router/metrics/sessions.rs) without classifying the request again.
    pub(crate) fn decide_counted(
        &self,
        request: &Request<'_>,
        clusters: &[ClusterSnapshot],
        rng: &mut dyn RngCore,
        scratch: &mut Scratch,
    ) -> (Decision, SessionCount) {
        self.decide_inner(request, clusters, None, rng, scratch)
    }

    fn decide_inner(
        &self,
        request: &Request<'_>,
        clusters: &[ClusterSnapshot],
        ids: Option<Membership>,
        rng: &mut dyn RngCore,
        scratch: &mut Scratch,
    ) -> (Decision, SessionCount) {
        // The session, once per decision: the algorithm's reorder and the
        // selection counters read the same classification and position.
        // Both algorithms find the hint's cluster while they read their
        // ranking cache or ring (the cache key's id index).
        let (decision, session) = match &self.kind {
            Kind::PowerOfN(s) => (
                power_of_n::decide(s, request, clusters, rng, &mut scratch.members),
                None,
            ),
            Kind::WaitAndWiden(b) => b.decide(request, clusters, ids, rng, scratch),
            Kind::RoundRobin(b) => (b.decide(request, clusters), None),
            Kind::Random => (random::decide(request, clusters, rng), None),
            Kind::Pulsar(b) => (b.decide(request, clusters, ids, scratch), None),
            Kind::PulsarWaitAndWiden(b) => b.decide(request, clusters, ids, rng, scratch),
            Kind::LegacyBandWalk(b) => (b.decide(request, clusters, ids, rng, scratch), None),
            #[cfg(feature = "testing")]
            Kind::StandIn(b) => (b.decide(request, clusters, rng, scratch), None),
        };
        let counted = match (&self.sessions, session) {
            (Some(counters), Some(s)) => self.count_session(counters, s, clusters, &decision),
            _ => SessionCount::UNCLASSIFIED,
        };
        (decision, counted)
    }

    /// Counts a classified request's selection; a classified request that
    /// is not selected (yet) only makes the six series exist.
    fn count_session(
        &self,
        counters: &session::SessionCounters,
        session: session::Session,
        clusters: &[ClusterSnapshot],
        decision: &Decision,
    ) -> SessionCount {
        // The slot in SESSION_ALGORITHMS and the group size, in one match.
        const _: () = assert!(
            matches!(
                session::SESSION_ALGORITHMS[0],
                crate::ir::Algorithm::WaitAndWiden
            ) && matches!(
                session::SESSION_ALGORITHMS[1],
                crate::ir::Algorithm::PulsarWaitAndWiden
            )
        );
        let (slot, group_size) = match &self.kind {
            Kind::WaitAndWiden(b) => (0, b.group_size(clusters.len())),
            Kind::PulsarWaitAndWiden(b) => (1, b.group_size()),
            _ => return SessionCount::UNCLASSIFIED,
        };
        let series = match decision {
            Decision::Selected(choice) => session::series(
                session.state,
                session.selection(choice, clusters, group_size),
            ),
            _ => session::CLASSIFIED_ONLY,
        };
        counters.add(series);
        SessionCount::new(slot, series)
    }

    /// `stargate_routing_session_selections_total` of this instance:
    /// `[state][selection]` in the order of [`SessionState::ALL`] and
    /// [`SessionSelection::ALL`]. `None` until a request is classified (the
    /// six series then exist, at 0), and for an instance whose policy does
    /// not turn `last_cluster_affinity` on.
    pub fn session_selections(&self) -> Option<SessionCounts> {
        self.sessions.as_ref().and_then(|c| c.get())
    }
}

impl Balancer {
    /// Classifies the request's session once, for the caller to keep in
    /// [`Request::session`] across retries and timed waits: `None` when
    /// the policy does not classify this request (`last_cluster_affinity`
    /// off, no affinity key, or wait-and-widen without an affinity group
    /// size).
    pub fn classify(
        &self,
        request: &Request<'_>,
        clusters: &[ClusterSnapshot],
    ) -> Option<SessionState> {
        self.sessions_on()
            .then(|| session::Session::of(request, clusters))
            .flatten()
            .map(|s| s.state)
    }

    /// How a selection of a classified request counts in
    /// `stargate_routing_session_selections_total`; `None` when the request
    /// is not classified (see [`Balancer::classify`]).
    pub fn session_selection(
        &self,
        request: &Request<'_>,
        clusters: &[ClusterSnapshot],
        choice: &Choice,
    ) -> Option<(SessionState, SessionSelection)> {
        let s = self
            .sessions_on()
            .then(|| session::Session::of(request, clusters))
            .flatten()?;
        let group_size = self.group_size(clusters)?;
        Some((s.state, s.selection(choice, clusters, group_size)))
    }

    /// The affinity group's size for the session selection rule; `None`
    /// for the algorithms without sessions.
    fn group_size(&self, clusters: &[ClusterSnapshot]) -> Option<u64> {
        match &self.kind {
            Kind::WaitAndWiden(b) => Some(b.group_size(clusters.len())),
            Kind::PulsarWaitAndWiden(b) => Some(b.group_size()),
            _ => None,
        }
    }

    /// Whether this instance's policy turns `last_cluster_affinity` on
    /// (and, for wait-and-widen, has an affinity group).
    pub fn sessions_on(&self) -> bool {
        match &self.kind {
            Kind::WaitAndWiden(b) => b.sessions_on(),
            Kind::PulsarWaitAndWiden(b) => b.sessions_on(),
            _ => false,
        }
    }

    /// The candidates this instance prefers for the request's affinity key
    /// (positions, best first): the whole Pulsar ranking for pulsar,
    /// pulsar-wait-and-widen and the legacy band walk; the ring group for
    /// wait-and-widen with affinity on; `None` otherwise. A read-only query
    /// through the same caches as `decide`: the simulator's fast mode uses
    /// it to know which candidates a parked request is waiting for.
    pub fn affinity_order<'s>(
        &self,
        request: &Request<'_>,
        clusters: &[ClusterSnapshot],
        scratch: &'s mut Scratch,
    ) -> Option<&'s [usize]> {
        // A returning session's order leads with its last cluster, as in
        // `decide` (docs/stargate.md 3.10).
        let last = self
            .sessions_on()
            .then(|| session::Session::of(request, clusters))
            .flatten()
            .and_then(|s| s.last);
        let ranker = match &self.kind {
            Kind::Pulsar(b) => b.ranker(),
            Kind::PulsarWaitAndWiden(b) => b.ranker(),
            Kind::LegacyBandWalk(b) => b.ranker(),
            Kind::WaitAndWiden(b) => {
                if !b.group(request, clusters, scratch) {
                    return None;
                }
                if let Some(last) = last {
                    session::lead_group(&mut scratch.members, last);
                }
                return Some(&scratch.members[..]);
            }
            _ => return None,
        };
        ranker.rank(request, clusters, None, scratch);
        if let Some(last) = last {
            session::promote(&mut scratch.ranking, last);
        }
        Some(&scratch.ranking)
    }
}

/// Whether `id` failed an earlier attempt of this request.
pub(crate) fn is_excluded(request: &Request<'_>, id: &str) -> bool {
    request.excluded.contains(&id)
}

/// A primary selection (rank_depth 1) without a KV skip.
pub(crate) fn primary(index: usize) -> Decision {
    Decision::Selected(Choice {
        index,
        rank_depth: 1,
        selected_after_kv_free_tokens_skip: false,
    })
}

/// The earlier of two optional waits.
pub(crate) fn min_wait(a: Option<Duration>, b: Option<Duration>) -> Option<Duration> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, None) => a,
        (None, b) => b,
    }
}

impl ClusterSnapshot {
    /// A cluster with this id and zero statistics; set the rest with
    /// struct update syntax.
    pub fn new(id: impl Into<String>) -> Self {
        ClusterSnapshot {
            id: id.into(),
            ..ClusterSnapshot::default()
        }
    }
}
