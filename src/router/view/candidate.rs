//! The candidate view (docs/stargate.md 1.3): a router's clusters and their
//! backends, the last stats report of each backend and the router's own
//! pending reservations, aggregated into ready-made [`ClusterSnapshot`]s.
//!
//! Every change (a report, a reservation, a release, an RTT) recomputes
//! only the cluster it touches, into storage that is reused, so a decision
//! reads [`CandidateView::snapshots`] as it is: no rebuild, clone or
//! allocation per decision.
//!
//! Candidates keep their registration order while membership is
//! unchanged. The balancers' ranking and ring caches are keyed by the
//! ordered candidate ids (docs/algorithms.md), so an order that moved on
//! every report would miss them on every decision.
//!
//! This type is single-owner (`&mut self`), as the simulator drives it;
//! [`crate::router::SharedView`] wraps it for request threads.

use crate::balancer::{ClusterSnapshot, Membership};
use crate::ir::Algorithm;
use crate::router::view::health::{BackendHealth, ViewHealth};
use crate::router::view::stats::BackendStats;
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

/// Why the view refused an input: every variant means nothing changed.
/// An input applied with one field ignored is not an error: it is
/// [`Applied::ignored`]. Nothing panics.
#[derive(Clone, Debug, PartialEq)]
pub enum ReportError {
    /// No cluster with this id is registered.
    UnknownCluster(String),
    /// The cluster has no backend with this id (or, from
    /// [`crate::router::ModelViews`], no view holds the backend).
    UnknownBackend {
        /// The cluster id given.
        cluster: String,
        /// The backend id given.
        backend: String,
    },
    /// An RTT that is NaN, infinite or negative; the previous one stays.
    InvalidValue {
        /// The backend's cluster.
        cluster: String,
        /// The backend.
        backend: String,
        /// The field's name (`rtt_ms`).
        field: &'static str,
        /// The refused value.
        value: f64,
    },
}

impl fmt::Display for ReportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReportError::UnknownCluster(c) => write!(f, "stats for unknown cluster {c:?}"),
            ReportError::UnknownBackend { cluster, backend } => {
                write!(
                    f,
                    "stats for unknown backend {backend:?} of cluster {cluster:?}"
                )
            }
            ReportError::InvalidValue {
                cluster,
                backend,
                field,
                value,
            } => write!(
                f,
                "backend {backend:?} of cluster {cluster:?}: {field} = {value} refused"
            ),
        }
    }
}

impl std::error::Error for ReportError {}

/// What an accepted report or registration did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Applied {
    /// Views it changed: 0 or 1 from one view (a registration with the
    /// rates already registered changes nothing), the number of views from
    /// [`crate::router::ModelViews`].
    pub views: usize,
    /// A float field that was NaN, infinite or negative (or, for a
    /// registered rate, zero), treated as not given while the rest
    /// applied: a mean rate keeps the last valid one, a peak counts as
    /// absent. The first one found.
    pub ignored: Option<Ignored>,
}

impl Applied {
    /// Whether it changed any view.
    pub fn changed(&self) -> bool {
        self.views > 0
    }
}

/// A refused float field of an applied input ([`Applied::ignored`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ignored {
    /// The field's name in [`crate::router::BackendStats`] or [`BackendRates`].
    pub field: &'static str,
    /// The refused value.
    pub value: f64,
}

impl fmt::Display for Ignored {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} = {} ignored", self.field, self.value)
    }
}

/// Where a reservation lives; returned by [`CandidateView::reserve`].
/// Public because a caller that owns a [`CandidateView`] (the simulator)
/// keeps it with its request and hands it back to
/// [`CandidateView::release`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ReservationId {
    cluster: u32,
    backend: u32,
    seq: u64,
    /// The membership epoch it was made in.
    epoch: u64,
    /// It is its backend's half-open probe (health.rs).
    probe: bool,
}

impl ReservationId {
    /// The cluster's position when the reservation was made.
    pub fn cluster(&self) -> usize {
        self.cluster as usize
    }

    /// The backend's position in its cluster when the reservation was made.
    pub fn backend(&self) -> usize {
        self.backend as usize
    }

    /// Whether the request is its backend's half-open probe (docs/embedding.md,
    /// "Backend health").
    pub fn is_probe(&self) -> bool {
        self.probe
    }
}

#[derive(Clone, Copy, Debug)]
pub(super) struct Pending {
    seq: u64,
    priority: u32,
    tokens: u64,
}

#[derive(Debug)]
pub(super) struct Backend {
    pub(super) id: Arc<str>,
    pub(super) reported: bool,
    /// Sticky: the last valid measured mean rate, 0 before any.
    tps: f64,
    /// Valid peak rate of the last report.
    max_tps: Option<f64>,
    /// The rates it registered with: stand-ins until measured ones arrive.
    registered: BackendRates,
    queue_size: u64,
    queued_input: u64,
    total_input: u64,
    rtt_ms: Option<f64>,
    pub(super) pending: Vec<Pending>,
    /// The view's report sequence number of its last report.
    last_report: u64,
    /// The reservation sequence number when its last report arrived: a
    /// reservation at or below it was in flight for that report, which
    /// counted its request ([`CandidateView::complete`]).
    reported_through: u64,
    /// Eligibility across requests (health.rs).
    pub(super) health: BackendHealth,
}

impl Backend {
    fn new(id: Arc<str>, health: BackendHealth) -> Self {
        Backend {
            id,
            reported: false,
            tps: 0.0,
            max_tps: None,
            registered: BackendRates::default(),
            queue_size: 0,
            queued_input: 0,
            total_input: 0,
            rtt_ms: None,
            pending: Vec::new(),
            last_report: 0,
            reported_through: 0,
            health,
        }
    }
}

impl Backend {
    /// Whether its rates count in the cluster's aggregate: from its first
    /// report, or from a registration with a rate.
    fn counts(&self) -> bool {
        self.reported
            || self.registered.input_tps.is_some()
            || self.registered.max_input_tps.is_some()
    }

    /// The measured mean rate, else the registered one, else 0.
    fn mean_tps(&self) -> f64 {
        if self.tps > 0.0 {
            self.tps
        } else {
            self.registered.input_tps.unwrap_or(0.0)
        }
    }

    /// The last report's peak, else the registered one.
    fn peak_tps(&self) -> Option<f64> {
        self.max_tps.or(self.registered.max_input_tps)
    }
}

/// The rates a backend registers with before it has served anything (a
/// benchmarked or calibrated prefill rate, as stargate's backends register
/// with one): what the view uses until reports carry measured ones.
///
/// A report without a valid mean rate (an idle engine reports 0) keeps the
/// last measured one, else this `input_tps`; a report without a peak uses
/// this `max_input_tps`. So a fleet registered with rates is routable from
/// its first request, and a peak that is only ever registered, never
/// reported, pins the Pulsar weight (`rendezvous_weight` =
/// `max_input_tps`, the default) whatever the load: keys do not move.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BackendRates {
    /// Mean prefill rate, input tokens per second.
    pub input_tps: Option<f64>,
    /// Peak prefill rate, input tokens per second (Pulsar's default weight).
    pub max_input_tps: Option<f64>,
}

impl BackendRates {
    /// Both rates the same: a benchmarked prefill rate.
    pub fn pinned(tps: f64) -> Self {
        BackendRates {
            input_tps: Some(tps),
            max_input_tps: Some(tps),
        }
    }
}

/// The cluster-scoped values of the latest report of any backend.
#[derive(Debug, Default)]
struct Scoped {
    running: u64,
    slots: u64,
    /// Sorted by priority, unique.
    estimates: Vec<(u32, u64)>,
    kv_capacity: u64,
    kv_used: u64,
    kv_free: u64,
}

#[derive(Debug)]
pub(super) struct Cluster {
    pub(super) id: Arc<str>,
    pub(super) backends: Vec<Backend>,
    scoped: Scoped,
    /// The report sequence number of the report `scoped` is from.
    scoped_report: u64,
    /// Requests that report counted as running and that completed since:
    /// taken off its running count until the next report.
    completed: u64,
    /// Routed decisions by rank depth (index depth - 1), then algorithm.
    pub(super) decisions: Vec<[u64; Algorithm::ALL.len()]>,
}

/// A router's candidate view. See the module documentation.
#[derive(Debug)]
pub struct CandidateView {
    pub(super) clusters: Vec<Cluster>,
    snapshots: Vec<ClusterSnapshot>,
    index: HashMap<Box<str>, usize>,
    next_seq: u64,
    /// Reports applied, for [`Cluster::scoped_report`].
    reports: u64,
    membership: u64,
    /// Names the snapshots' ids; fresh at every membership change.
    ids: Membership,
    /// Expiry, ejection and draining settings and state (health.rs).
    pub(super) health: ViewHealth,
}

impl Default for CandidateView {
    fn default() -> Self {
        CandidateView {
            clusters: Vec::new(),
            snapshots: Vec::new(),
            index: HashMap::new(),
            next_seq: 0,
            reports: 0,
            membership: 0,
            ids: Membership::fresh(),
            health: ViewHealth::default(),
        }
    }
}

impl CandidateView {
    /// An empty view (no cluster) with the default health settings.
    pub fn new() -> Self {
        CandidateView::default()
    }

    /// The candidates, in registration order, with reservations counted.
    pub fn snapshots(&self) -> &[ClusterSnapshot] {
        &self.snapshots
    }

    /// The position of a cluster in [`CandidateView::snapshots`].
    pub fn position(&self, cluster: &str) -> Option<usize> {
        self.index.get(cluster).copied()
    }

    /// Counts membership changes; positions are stable between two.
    pub fn membership_epoch(&self) -> u64 {
        self.membership
    }

    /// The name of the snapshots' current ids and order, for
    /// [`Balancer::decide_named`](crate::balancer::Balancer::decide_named):
    /// unique to this view and this membership epoch.
    pub fn membership(&self) -> Membership {
        self.ids
    }

    /// Registers a backend, and its cluster if new (appended last), without
    /// rates: its statistics count from its first report. Returns the
    /// cluster's position; registering an existing backend changes nothing.
    ///
    /// Backend ids are scoped by cluster: the pair (cluster id, backend id)
    /// names a backend, and the same backend id in two clusters is two
    /// backends. Every operation on a backend takes both.
    pub fn add_backend(&mut self, cluster: &str, backend: &str) -> usize {
        self.ensure(cluster, backend).0
    }

    /// Registers a backend with the rates it knows before serving
    /// ([`BackendRates`]), or updates the rates of a registered one. A
    /// backend registered with a rate counts from now (its load is 0 until
    /// its first report). Says whether the view changed; a NaN,
    /// infinite, zero or negative rate is [`Applied::ignored`] and treated
    /// as not given (the rest applies). Never fails.
    pub fn register_backend(
        &mut self,
        cluster: &str,
        backend: &str,
        rates: BackendRates,
    ) -> Applied {
        let (c, added) = self.ensure(cluster, backend);
        let b = self
            .backend_position(c, backend)
            .expect("ensured just above");
        let mut invalid = None;
        let mut valid = |field: &'static str, value: Option<f64>| match value {
            Some(v) if !(v.is_finite() && v > 0.0) => {
                invalid = invalid.or(Some((field, v)));
                None
            }
            v => v,
        };
        let rates = BackendRates {
            input_tps: valid("input_tps", rates.input_tps),
            max_input_tps: valid("max_input_tps", rates.max_input_tps),
        };
        let slot = &mut self.clusters[c].backends[b].registered;
        let changed = *slot != rates;
        if changed {
            *slot = rates;
            self.refresh(c);
        }
        Applied {
            views: usize::from(added || changed),
            ignored: invalid.map(|(field, value)| Ignored { field, value }),
        }
    }

    /// The rates a backend registered with.
    pub fn registered_rates(&self, cluster: usize, backend: usize) -> Option<BackendRates> {
        let c = self.clusters.get(cluster)?;
        c.backends.get(backend).map(|b| b.registered)
    }

    /// The cluster's position, and whether the backend was new.
    fn ensure(&mut self, cluster: &str, backend: &str) -> (usize, bool) {
        let c = match self.position(cluster) {
            Some(c) => c,
            None => {
                let c = self.clusters.len();
                self.clusters.push(Cluster {
                    id: cluster.into(),
                    backends: Vec::new(),
                    scoped: Scoped::default(),
                    scoped_report: 0,
                    completed: 0,
                    decisions: Vec::new(),
                });
                self.snapshots.push(ClusterSnapshot::new(cluster));
                self.index.insert(cluster.into(), c);
                self.membership += 1;
                self.ids = Membership::fresh();
                c
            }
        };
        if self.clusters[c].backends.iter().any(|b| *b.id == *backend) {
            return (c, false);
        }
        let id: Arc<str> = backend.into();
        let record = self.health.board.record(&self.clusters[c].id, &id);
        let health = BackendHealth::new(record, self.health.now_ns());
        let backends = &mut self.clusters[c].backends;
        let mut added = Backend::new(id, health);
        // The registration is its first sign of life (stats expiry).
        added.health.reported_at(self.health.report_time());
        backends.push(added);
        self.refresh(c);
        self.health_changed();
        (c, true)
    }

    /// Counts a routed decision of `algorithm` at `rank_depth` on the
    /// cluster at `cluster` (the decisions metric). Depths past the view's
    /// cluster count (not produced by the balancers) are not counted.
    pub(crate) fn count_decision(&mut self, cluster: usize, algorithm: Algorithm, rank_depth: u32) {
        let limit = self.clusters.len();
        let Some(c) = self.clusters.get_mut(cluster) else {
            return;
        };
        let depth = rank_depth.max(1) as usize;
        if depth > limit {
            return;
        }
        if c.decisions.len() < depth {
            c.decisions.resize(depth, [0; Algorithm::ALL.len()]);
        }
        let n = &mut c.decisions[depth - 1][algorithm as usize];
        *n = n.saturating_add(1);
    }

    /// Routed decisions counted on the cluster at `cluster`: (rank depth,
    /// algorithm, count), non-zero ones, by depth then algorithm.
    pub fn decisions(&self, cluster: usize) -> Vec<(u32, Algorithm, u64)> {
        let Some(c) = self.clusters.get(cluster) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for (d, row) in c.decisions.iter().enumerate() {
            for (a, &n) in Algorithm::ALL.iter().zip(row) {
                if n > 0 {
                    out.push((u32::try_from(d + 1).unwrap_or(u32::MAX), *a, n));
                }
            }
        }
        out
    }

    /// Unregisters a backend (its reservations go with it); a cluster
    /// without backends stops being a candidate. Later clusters move up
    /// one position. Returns whether the backend was registered.
    pub fn remove_backend(&mut self, cluster: &str, backend: &str) -> bool {
        let Some(c) = self.position(cluster) else {
            return false;
        };
        let backends = &mut self.clusters[c].backends;
        let Some(b) = backends.iter().position(|x| *x.id == *backend) else {
            return false;
        };
        backends.remove(b);
        self.health.board.forget_unused(cluster, backend);
        if backends.is_empty() {
            self.remove_cluster(cluster);
        } else {
            self.refresh(c);
        }
        self.health_changed();
        true
    }

    /// Unregisters a cluster and its backends.
    pub fn remove_cluster(&mut self, cluster: &str) -> bool {
        let Some(c) = self.index.remove(cluster) else {
            return false;
        };
        let removed = self.clusters.remove(c);
        for b in removed.backends {
            drop(b.health);
            self.health.board.forget_unused(cluster, &b.id);
        }
        self.snapshots.remove(c);
        for p in self.index.values_mut() {
            if *p > c {
                *p -= 1;
            }
        }
        self.membership += 1;
        self.ids = Membership::fresh();
        self.health_changed();
        true
    }

    /// The id of the cluster at `cluster`.
    pub fn cluster_id(&self, cluster: usize) -> Option<&Arc<str>> {
        self.clusters.get(cluster).map(|c| &c.id)
    }

    /// The id of a backend by positions.
    pub fn backend_id(&self, cluster: usize, backend: usize) -> Option<&Arc<str>> {
        self.clusters
            .get(cluster)?
            .backends
            .get(backend)
            .map(|b| &b.id)
    }

    /// The backends of the cluster at `cluster`, in registration order.
    pub fn backends(&self, cluster: usize) -> impl Iterator<Item = &str> {
        self.clusters
            .get(cluster)
            .into_iter()
            .flat_map(|c| c.backends.iter().map(|b| &*b.id))
    }

    /// The position of a backend in its cluster.
    pub fn backend_position(&self, cluster: usize, backend: &str) -> Option<usize> {
        let c = self.clusters.get(cluster)?;
        c.backends.iter().position(|b| *b.id == *backend)
    }

    /// Pending reservations on the cluster at `cluster`.
    pub fn pending(&self, cluster: usize) -> usize {
        self.clusters
            .get(cluster)
            .map_or(0, |c| c.backends.iter().map(|b| b.pending.len()).sum())
    }

    /// Pending reservations on one backend.
    pub fn pending_on(&self, cluster: usize, backend: usize) -> usize {
        self.clusters
            .get(cluster)
            .and_then(|c| c.backends.get(backend))
            .map_or(0, |b| b.pending.len())
    }

    /// The backend of `cluster` to send a request to: the one with the
    /// fewest pending reservations, the first registered on a tie, among
    /// the eligible ones (not stale, ejected or draining: health.rs) that
    /// `usable` accepts (by position in the cluster).
    pub fn pick_backend(&self, cluster: usize, usable: impl Fn(usize) -> bool) -> Option<usize> {
        let c = self.clusters.get(cluster)?;
        (0..c.backends.len())
            .filter(|&b| c.backends[b].health.eligible() && usable(b))
            .min_by_key(|&b| c.backends[b].pending.len())
    }

    /// A stats report from `backend` of `cluster`: replaces that backend's
    /// values and the cluster-scoped ones, and clears the backend's pending
    /// reservations (the report counts their requests). Fails only for an
    /// unknown cluster or backend; a refused field is
    /// [`Applied::ignored`].
    pub fn report(
        &mut self,
        cluster: &str,
        backend: &str,
        stats: &BackendStats,
    ) -> Result<Applied, ReportError> {
        let (c, b) = self.locate(cluster, backend)?;
        self.report_at(c, b, stats)
    }

    /// [`CandidateView::report`] by positions.
    pub fn report_at(
        &mut self,
        cluster: usize,
        backend: usize,
        stats: &BackendStats,
    ) -> Result<Applied, ReportError> {
        let Some(c) = self.clusters.get_mut(cluster) else {
            return Err(ReportError::UnknownCluster(format!("#{cluster}")));
        };
        let Some(b) = c.backends.get_mut(backend) else {
            return Err(ReportError::UnknownBackend {
                cluster: self.snapshots[cluster].id.clone(),
                backend: format!("#{backend}"),
            });
        };
        let mut invalid = None;
        let tps = stats.last_mean_input_tps;
        if tps.is_finite() && tps > 0.0 {
            b.tps = tps;
        } else if tps != 0.0 {
            invalid = Some(("last_mean_input_tps", tps));
        }
        b.max_tps = match stats.max_input_tps {
            Some(m) if m.is_finite() && m > 0.0 => Some(m),
            Some(0.0) => None,
            Some(m) => {
                invalid = invalid.or(Some(("max_input_tps", m)));
                None
            }
            None => None,
        };
        b.reported = true;
        let revived = b.health.reported_at(self.health.report_time());
        b.queue_size = stats.queue_size;
        b.queued_input = stats.queued_input_size;
        b.total_input = stats.total_query_input_size;
        // The report counts the requests in flight: their reservations
        // end (a completion afterwards takes one off its count).
        b.pending.clear();
        b.reported_through = self.next_seq;
        self.reports += 1;
        b.last_report = self.reports;
        c.scoped_report = self.reports;
        c.completed = 0;
        let s = &mut c.scoped;
        s.running = stats.num_running_queries;
        s.slots = stats.max_engine_concurrency;
        s.kv_capacity = stats.kv_cache_capacity_tokens;
        s.kv_used = stats.kv_cache_used_tokens;
        s.kv_free = stats.kv_cache_free_tokens;
        s.estimates.clear();
        s.estimates
            .extend_from_slice(&stats.queue_time_estimate_ms_by_priority);
        s.estimates.sort_by_key(|&(p, _)| p);
        // Keep the last estimate of a repeated priority.
        s.estimates.dedup_by(|later, earlier| {
            let same = later.0 == earlier.0;
            if same {
                earlier.1 = later.1;
            }
            same
        });
        self.refresh(cluster);
        if revived {
            self.health_changed();
        }
        Ok(Applied {
            views: 1,
            ignored: invalid.map(|(field, value)| Ignored { field, value }),
        })
    }

    /// The RTT last set for a backend, by positions.
    pub fn rtt_of(&self, cluster: usize, backend: usize) -> Option<f64> {
        self.clusters.get(cluster)?.backends.get(backend)?.rtt_ms
    }

    /// Where a pending reservation's backend is now (positions).
    /// A reservation a report already cleared is at its positions, unless
    /// membership changed since (then it is not found).
    pub(crate) fn locate_reservation(&self, id: ReservationId) -> Option<(usize, usize)> {
        let pending = self
            .find(id.cluster(), id.backend(), id.seq)
            .or_else(|| self.search(id.seq))
            .map(|(c, b, _)| (c, b));
        pending.or_else(|| {
            (id.epoch == self.membership && self.backend_id(id.cluster(), id.backend()).is_some())
                .then_some((id.cluster(), id.backend()))
        })
    }

    /// The health-check RTT of one backend, in ms.
    pub fn set_rtt(
        &mut self,
        cluster: &str,
        backend: &str,
        rtt_ms: f64,
    ) -> Result<(), ReportError> {
        let (c, b) = self.locate(cluster, backend)?;
        if !(rtt_ms.is_finite() && rtt_ms >= 0.0) {
            return Err(self.invalid(c, b, "rtt_ms", rtt_ms));
        }
        self.clusters[c].backends[b].rtt_ms = Some(rtt_ms);
        self.refresh(c);
        Ok(())
    }

    /// A reservation of `tokens` input tokens at `priority` on a chosen
    /// backend, counted until that backend's next report or
    /// [`CandidateView::release`]. `None` when there is no such backend.
    pub fn reserve(
        &mut self,
        cluster: usize,
        backend: usize,
        priority: u32,
        tokens: u64,
    ) -> Option<ReservationId> {
        // An ejected backend with its probe open takes this request as the
        // probe; another view may have taken it meanwhile.
        let probe = self.take_probe(cluster, backend)?;
        let b = self.clusters.get_mut(cluster)?.backends.get_mut(backend)?;
        self.next_seq += 1;
        let seq = self.next_seq;
        b.pending.push(Pending {
            seq,
            priority,
            tokens,
        });
        self.refresh(cluster);
        Some(ReservationId {
            cluster: u32::try_from(cluster).ok()?,
            backend: u32::try_from(backend).ok()?,
            seq,
            epoch: self.membership,
            probe,
        })
    }

    /// Releases a reservation (a cancelled attempt; a backend's half-open
    /// probe opens again). False when a report already cleared it.
    pub fn release(&mut self, id: ReservationId) -> bool {
        let probe = if id.probe {
            self.locate_reservation(id)
        } else {
            None
        };
        let released = self.remove_pending(id);
        if let Some((c, b)) = probe {
            self.probe_cancelled(c, b);
        }
        released
    }

    /// Removes a pending reservation; false when a report cleared it.
    pub(super) fn remove_pending(&mut self, id: ReservationId) -> bool {
        let at = self
            .find(id.cluster(), id.backend(), id.seq)
            .or_else(|| self.search(id.seq));
        let Some((c, b, i)) = at else {
            return false;
        };
        self.clusters[c].backends[b].pending.swap_remove(i);
        self.refresh(c);
        true
    }

    /// The request of a reservation has completed at its backend (the
    /// answer is in): a pending reservation is released; one that a report
    /// already cleared, counted by that report as running, takes one
    /// request off the report's running count until the next report.
    /// Returns whether the view changed.
    pub fn complete(&mut self, id: ReservationId) -> bool {
        if self.remove_pending(id) {
            return true;
        }
        // Cleared by a report: the backend is where the reservation was
        // made unless membership changed since (then nothing is known).
        if id.epoch != self.membership {
            return false;
        }
        let (c, b) = (id.cluster(), id.backend());
        let Some(cluster) = self.clusters.get_mut(c) else {
            return false;
        };
        let Some(backend) = cluster.backends.get(b) else {
            return false;
        };
        // Only the report the cluster's running count is from, and only if
        // the request was in flight when it was taken.
        if id.seq > backend.reported_through || backend.last_report != cluster.scoped_report {
            return false;
        }
        cluster.completed = cluster.completed.saturating_add(1);
        self.refresh(c);
        true
    }

    pub(super) fn find(&self, c: usize, b: usize, seq: u64) -> Option<(usize, usize, usize)> {
        let backend = self.clusters.get(c)?.backends.get(b)?;
        let i = backend.pending.iter().position(|p| p.seq == seq)?;
        Some((c, b, i))
    }

    /// After a membership change moved the backend: a scan.
    pub(super) fn search(&self, seq: u64) -> Option<(usize, usize, usize)> {
        self.clusters.iter().enumerate().find_map(|(c, cluster)| {
            cluster
                .backends
                .iter()
                .enumerate()
                .find_map(|(b, backend)| {
                    let i = backend.pending.iter().position(|p| p.seq == seq)?;
                    Some((c, b, i))
                })
        })
    }

    pub(super) fn locate(
        &self,
        cluster: &str,
        backend: &str,
    ) -> Result<(usize, usize), ReportError> {
        let c = self
            .position(cluster)
            .ok_or_else(|| ReportError::UnknownCluster(cluster.to_owned()))?;
        let b = self
            .backend_position(c, backend)
            .ok_or_else(|| ReportError::UnknownBackend {
                cluster: cluster.to_owned(),
                backend: backend.to_owned(),
            })?;
        Ok((c, b))
    }

    pub(super) fn invalid(
        &self,
        c: usize,
        b: usize,
        field: &'static str,
        value: f64,
    ) -> ReportError {
        ReportError::InvalidValue {
            cluster: self.snapshots[c].id.clone(),
            backend: self.clusters[c].backends[b].id.to_string(),
            field,
            value,
        }
    }

    /// Recomputes one snapshot from its backends (docs/stargate.md 1.3).
    pub(super) fn refresh(&mut self, cluster: usize) {
        let (Some(c), Some(s)) = (self.clusters.get(cluster), self.snapshots.get_mut(cluster))
        else {
            return;
        };
        let mut tps = 0.0;
        let mut max_tps: Option<f64> = None;
        let mut all_peaks = true;
        let (mut queue, mut queued, mut total, mut reserved) = (0u64, 0u64, 0u64, 0u64);
        let (mut rtt_sum, mut rtt_n) = (0.0, 0u32);
        let mut any_reported = false;
        for b in &c.backends {
            if let Some(rtt) = b.rtt_ms {
                rtt_sum += rtt;
                rtt_n += 1;
            }
            let n = b.pending.len() as u64;
            let tokens = b
                .pending
                .iter()
                .fold(0u64, |acc, p| acc.saturating_add(p.tokens));
            reserved = reserved.saturating_add(n);
            queue = queue.saturating_add(n);
            queued = queued.saturating_add(tokens);
            total = total.saturating_add(tokens);
            if !(b.counts() && b.health.eligible()) {
                continue;
            }
            any_reported = true;
            tps += b.mean_tps();
            match b.peak_tps() {
                Some(m) => max_tps = Some(max_tps.map_or(m, |x: f64| x.max(m))),
                None => all_peaks = false,
            }
            queue = queue.saturating_add(b.queue_size);
            queued = queued.saturating_add(b.queued_input);
            total = total.saturating_add(b.total_input);
        }
        s.rtt_ms = match rtt_n {
            0 => 0.0,
            1 => rtt_sum,
            // A mean of durations, floored to whole nanoseconds.
            n => (rtt_sum / f64::from(n) * 1e6).floor() / 1e6,
        };
        s.last_mean_input_tps = tps;
        s.max_input_tps = max_tps.filter(|_| all_peaks && any_reported);
        s.queue_size = queue;
        s.queued_input_size = queued;
        s.total_query_input_size = total;
        let scoped = &c.scoped;
        s.num_running_queries = scoped
            .running
            .saturating_sub(c.completed)
            .saturating_add(reserved);
        s.max_engine_concurrency = scoped.slots;
        s.kv_cache_capacity_tokens = scoped.kv_capacity;
        s.kv_cache_used_tokens = scoped.kv_used;
        s.kv_cache_free_tokens = scoped.kv_free;
        let map = &mut s.queue_time_estimate_ms_by_priority;
        map.clear();
        map.extend_from_slice(&scoped.estimates);
        if map.is_empty() {
            return; // the aggregate estimate already counts reserved tokens
        }
        let rate = (tps.is_finite() && tps > 0.0).then_some(tps);
        for p in c.backends.iter().flat_map(|b| &b.pending) {
            let Some(ms) = reserved_ms(p.tokens, rate) else {
                map.clear();
                return;
            };
            add_from(map, p.priority, ms);
        }
    }
}

/// ceil(tokens / tps x 1000); `None` when tokens > 0 and there is no valid
/// rate (or the result does not fit).
fn reserved_ms(tokens: u64, rate: Option<f64>) -> Option<u64> {
    if tokens == 0 {
        return Some(0);
    }
    let ms = (tokens as f64 / rate? * 1000.0).ceil();
    (ms.is_finite() && ms < u64::MAX as f64).then_some(ms as u64)
}

/// Adds `ms` to the entry for `priority` (created from the nearest lower
/// entry, else 0) and to every higher one. `map` is sorted and unique.
fn add_from(map: &mut Vec<(u32, u64)>, priority: u32, ms: u64) {
    let at = match map.binary_search_by_key(&priority, |&(p, _)| p) {
        Ok(i) => i,
        Err(i) => {
            let base = if i == 0 { 0 } else { map[i - 1].1 };
            map.insert(i, (priority, base));
            i
        }
    };
    for entry in &mut map[at..] {
        entry.1 = entry.1.saturating_add(ms);
    }
}
