//! Backend health across requests, in the candidate view: stats expiry,
//! passive outlier ejection and draining (docs/embedding.md, "Backend
//! health").
//!
//! None of them changes membership: an ineligible backend keeps its
//! position, its cluster keeps its position, and its pending reservations
//! stay counted until they are released or its next report clears them.
//! An ineligible backend is not picked and its reported statistics leave
//! its cluster's aggregate; a cluster with no eligible backend is listed
//! by [`CandidateView::unavailable`], which the async driver adds to each
//! decision's excluded clusters (an embedder's own loop does the same).
//!
//! Time comes from the view's [`Clock`] ([`HealthOptions::clock`]), so tests
//! and the simulator drive it by hand. Nothing runs in the background:
//! expiry and the end of an ejection take effect at the next
//! [`CandidateView::maintain`], which the driver calls before a decision
//! once [`CandidateView::health_due`] says a deadline has passed.

use crate::router::clock::{Clock, SystemClock};
use crate::router::view::candidate::{CandidateView, ReportError};
use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// Heartbeats a backend may miss: with [`HealthOptions::for_heartbeat`] a
/// report older than this many periods is stale.
pub const STALE_HEARTBEATS: u32 = 3;

/// How a view judges its backends' health.
#[derive(Clone)]
pub struct HealthOptions {
    /// A backend whose last report (or registration) is older than this is
    /// ineligible until it reports again. `None`: reports never expire.
    pub stats_ttl: Option<Duration>,
    /// Consecutive failed sends that eject a backend; 0 turns ejection off.
    pub consecutive_failures: u32,
    /// An ejection lasts this long times the backend's ejection multiplier:
    /// 1 for a first ejection, one more for each ejection that follows
    /// before the multiplier decays (by one per `base_ejection` the backend
    /// stays in service), as Envoy's outlier detection does.
    pub base_ejection: Duration,
    /// The longest one ejection lasts, however many came before it
    /// (default 300 s).
    pub max_ejection: Duration,
    /// At most this share of a cluster's backends is ejected at once, but
    /// always at least one (so a one-backend cluster can be ejected): past
    /// it, failures are counted and nothing is ejected.
    pub max_ejected_share: f64,
    /// The half-open probe: this long after an ejection began (or after a
    /// failed probe), one request is let through to the ejected backend.
    /// Its success returns the backend at once; its failure ejects it
    /// again, for longer. `None`: no probe (the ejection ends by time or by
    /// a passed health check only).
    pub probe_after: Option<Duration>,
    /// The time source for report ages and ejection ends (default: the
    /// system clock; tests and the simulator pass a [`crate::router::ManualClock`]).
    pub clock: Arc<dyn Clock>,
}

impl Default for HealthOptions {
    /// No expiry (a view does not know its backends' heartbeat); ejection
    /// after 5 consecutive failures for 30 s times the multiplier, at most
    /// 300 s, at most half of a cluster; a probe 5 s into each ejection;
    /// the system clock.
    fn default() -> Self {
        HealthOptions {
            stats_ttl: None,
            consecutive_failures: 5,
            base_ejection: Duration::from_secs(30),
            max_ejection: Duration::from_secs(300),
            max_ejected_share: 0.5,
            probe_after: Some(Duration::from_secs(5)),
            clock: Arc::new(SystemClock::new()),
        }
    }
}

impl HealthOptions {
    /// The defaults, with reports expiring after [`STALE_HEARTBEATS`]
    /// heartbeat periods.
    pub fn for_heartbeat(period: Duration) -> Self {
        HealthOptions {
            stats_ttl: Some(period.saturating_mul(STALE_HEARTBEATS)),
            ..HealthOptions::default()
        }
    }

    /// These options with `clock` as the time source.
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    fn ejection(&self, multiplier: u32) -> Duration {
        self.base_ejection
            .saturating_mul(multiplier.max(1))
            .min(self.max_ejection)
    }
}

impl fmt::Debug for HealthOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HealthOptions")
            .field("stats_ttl", &self.stats_ttl)
            .field("consecutive_failures", &self.consecutive_failures)
            .field("base_ejection", &self.base_ejection)
            .field("max_ejection", &self.max_ejection)
            .field("max_ejected_share", &self.max_ejected_share)
            .field("probe_after", &self.probe_after)
            .finish_non_exhaustive()
    }
}

/// Whether a backend may take new requests, and if not why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackendState {
    /// The backend may take new requests.
    Eligible,
    /// Its last report is older than `stats_ttl`.
    Stale,
    /// Ejected for consecutive failures.
    Ejected {
        /// How long the ejection still lasts (it ends at the first
        /// maintenance after that), read from [`HealthOptions::clock`]
        /// when the state was asked for.
        remaining: Duration,
    },
    /// Ejected, with its half-open probe due: the next request may go to
    /// it (one at a time), and its outcome returns or ejects the backend.
    Probing,
    /// Draining: in-flight requests finish, no new ones.
    Draining,
}

impl BackendState {
    /// The state's name in the metrics (`eligible`, `stale`, `ejected`,
    /// `probing`, `draining`).
    pub fn as_str(&self) -> &'static str {
        match self {
            BackendState::Eligible => "eligible",
            BackendState::Stale => "stale",
            BackendState::Ejected { .. } => "ejected",
            BackendState::Probing => "probing",
            BackendState::Draining => "draining",
        }
    }

    /// Every state's name, in the order of [`BackendState::as_str`].
    pub const NAMES: [&'static str; 5] = ["eligible", "stale", "ejected", "probing", "draining"];
}

/// What a failed send did to its backend ([`crate::router::Reservation::fail`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailureOutcome {
    /// Counted towards the consecutive failures; no ejection (yet).
    Counted,
    /// The backend was ejected (a failed probe ejects it again).
    Ejected,
    /// The threshold was reached but the cluster's ejected share is full.
    Capped,
}

/// One backend's health as every view that holds it sees it: a row of
/// [`crate::router::ModelViews::backend_health`] and of the per-backend metrics.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BackendHealthRow {
    /// The backend's cluster.
    pub cluster: Arc<str>,
    /// The backend.
    pub backend: Arc<str>,
    /// Its state now.
    pub state: BackendState,
    /// Ejections since it was registered.
    pub ejections: u64,
    /// Failed sends since its last success or ejection.
    pub consecutive_failures: u32,
}

/// The health record of one backend, shared by every view that holds it
/// (through their [`Board`]): failures, ejections and the probe.
#[derive(Debug, Default)]
pub(super) struct Record {
    state: Mutex<RecordState>,
}

#[derive(Clone, Copy, Debug, Default)]
struct RecordState {
    /// Consecutive failed sends since the last success or ejection.
    failures: u32,
    /// The ejection multiplier (decays while in service).
    multiplier: u32,
    /// Ejections since registration (the metric).
    ejections: u64,
    ejected_until_ns: Option<u64>,
    /// When the backend last went back into service (multiplier decay).
    returned_ns: u64,
    /// From this reading one probe request is let through.
    probe_at_ns: Option<u64>,
    probe_in_flight: bool,
}

/// What a view mirrors of a record: all a decision needs, read without
/// touching the record.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Mirror {
    ejected_until_ns: Option<u64>,
    /// The probe may be taken (ejected, probe due, none in flight).
    probe_open: bool,
    /// The next reading at which the record changes by time alone.
    probe_at_ns: Option<u64>,
}

impl RecordState {
    /// Ends an ejection whose time is over.
    fn settle(&mut self, now: u64) -> bool {
        match self.ejected_until_ns {
            Some(until) if now >= until => {
                self.back_in_service(until);
                true
            }
            _ => false,
        }
    }

    fn back_in_service(&mut self, at: u64) {
        self.ejected_until_ns = None;
        self.returned_ns = at;
        self.probe_at_ns = None;
        self.probe_in_flight = false;
    }

    fn eject(&mut self, now: u64, options: &HealthOptions) {
        // The multiplier decays by one per base ejection spent in service.
        let base = nanos(options.base_ejection).max(1);
        let decay = now.saturating_sub(self.returned_ns) / base;
        let decayed = u64::from(self.multiplier).saturating_sub(decay);
        self.multiplier = u32::try_from(decayed).unwrap_or(u32::MAX).saturating_add(1);
        self.ejections = self.ejections.saturating_add(1);
        self.failures = 0;
        self.ejected_until_ns = Some(now.saturating_add(nanos(options.ejection(self.multiplier))));
        self.probe_at_ns = options.probe_after.map(|p| now.saturating_add(nanos(p)));
        self.probe_in_flight = false;
    }

    fn mirror(&self, now: u64) -> Mirror {
        let Some(until) = self.ejected_until_ns.filter(|&u| now < u) else {
            return Mirror::default();
        };
        let due = self.probe_at_ns.filter(|&at| at < until);
        Mirror {
            ejected_until_ns: Some(until),
            probe_open: !self.probe_in_flight && due.is_some_and(|at| now >= at),
            probe_at_ns: due.filter(|&at| now < at),
        }
    }
}

impl Record {
    fn lock(&self) -> std::sync::MutexGuard<'_, RecordState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The health records of every backend of a set of views (one per
/// [`crate::router::ModelViews`]; a view made on its own has its own), and an
/// epoch that counts their changes so that each view re-reads them before
/// its next decision.
#[derive(Debug, Default)]
pub(super) struct Board {
    epoch: AtomicU64,
    records: Mutex<HashMap<BackendKey, Arc<Record>>>,
}

/// (cluster id, backend id): backend ids are scoped by cluster.
type BackendKey = (Arc<str>, Arc<str>);

impl Board {
    /// The record of a backend, created at its first registration.
    pub(super) fn record(&self, cluster: &Arc<str>, backend: &Arc<str>) -> Arc<Record> {
        let mut records = self.records.lock().unwrap_or_else(PoisonError::into_inner);
        records
            .entry((cluster.clone(), backend.clone()))
            .or_default()
            .clone()
    }

    /// Forgets a backend's record once no view holds it (the caller has
    /// dropped its own), so records stay bounded by registrations.
    pub(super) fn forget_unused(&self, cluster: &str, backend: &str) {
        let mut records = self.records.lock().unwrap_or_else(PoisonError::into_inner);
        records
            .retain(|(c, b), r| !(**c == *cluster && **b == *backend && Arc::strong_count(r) == 1));
    }

    fn bump(&self) {
        self.epoch.fetch_add(1, Ordering::Release);
    }

    fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::Acquire)
    }
}

/// A backend's health in one view: its own report age and draining (every
/// view gets the same reports and drains), its shared record, and the
/// view's mirror of that record.
#[derive(Debug)]
pub(super) struct BackendHealth {
    /// Clock reading (ns) of the last report, or of the registration.
    last_report_ns: Option<u64>,
    stale: bool,
    draining: bool,
    record: Arc<Record>,
    mirror: Mirror,
}

impl BackendHealth {
    pub(super) fn new(record: Arc<Record>, now: u64) -> Self {
        let mirror = record.lock().mirror(now);
        BackendHealth {
            last_report_ns: None,
            stale: false,
            draining: false,
            record,
            mirror,
        }
    }

    pub(super) fn eligible(&self) -> bool {
        !self.stale
            && !self.draining
            && (self.mirror.ejected_until_ns.is_none() || self.mirror.probe_open)
    }

    /// Whether a request sent to it now is its half-open probe.
    pub(super) fn probing(&self) -> bool {
        self.mirror.ejected_until_ns.is_some() && self.mirror.probe_open
    }

    /// A report (or the registration) arrived at `now_ns` (`None`: no
    /// expiry, no time kept); true when it ends staleness.
    pub(super) fn reported_at(&mut self, now_ns: Option<u64>) -> bool {
        if now_ns.is_some() {
            self.last_report_ns = now_ns;
        }
        std::mem::take(&mut self.stale)
    }

    fn state(&self, now: u64) -> BackendState {
        let record = self.record.lock();
        let mirror = record.mirror(now);
        if self.draining {
            BackendState::Draining
        } else if let Some(until) = mirror.ejected_until_ns {
            if mirror.probe_open || record.probe_in_flight {
                BackendState::Probing
            } else {
                BackendState::Ejected {
                    remaining: Duration::from_nanos(until.saturating_sub(now)),
                }
            }
        } else if self.stale {
            BackendState::Stale
        } else {
            BackendState::Eligible
        }
    }
}

/// The view's health settings and derived state.
pub(super) struct ViewHealth {
    options: HealthOptions,
    pub(super) board: Arc<Board>,
    /// The board's epoch this view's mirrors are from.
    seen: u64,
    /// Ids of clusters with no eligible backend.
    unavailable: Vec<Arc<str>>,
    /// The earliest clock reading (ns) at which a report goes stale, an
    /// ejection ends or a probe opens.
    next_event_ns: Option<u64>,
}

impl Default for ViewHealth {
    fn default() -> Self {
        ViewHealth::on(Arc::default())
    }
}

impl fmt::Debug for ViewHealth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ViewHealth")
            .field("options", &self.options)
            .field("unavailable", &self.unavailable)
            .finish_non_exhaustive()
    }
}

impl ViewHealth {
    pub(super) fn on(board: Arc<Board>) -> Self {
        let seen = board.epoch();
        ViewHealth {
            options: HealthOptions::default(),
            board,
            seen,
            unavailable: Vec::new(),
            next_event_ns: None,
        }
    }

    pub(super) fn now_ns(&self) -> u64 {
        nanos(self.options.clock.now())
    }

    /// The time to stamp a report with: only while reports expire, so a
    /// report costs no clock read otherwise.
    pub(super) fn report_time(&self) -> Option<u64> {
        self.options.stats_ttl.map(|_| self.now_ns())
    }
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

impl CandidateView {
    /// An empty view that judges health by `options`, with its own health
    /// records.
    pub fn with_health(options: HealthOptions) -> Self {
        let mut view = CandidateView::new();
        view.set_health(options);
        view
    }

    /// An empty view whose backends share their health records with every
    /// other view on `board`.
    pub(super) fn on_board(options: HealthOptions, board: Arc<Board>) -> Self {
        let mut view = CandidateView::new();
        view.health = ViewHealth::on(board);
        view.set_health(options);
        view
    }

    /// Replaces the health settings, on a live view too (backends keep
    /// their state; an ejection in force keeps its end; with expiry on,
    /// every backend's report time starts now).
    pub fn set_health(&mut self, options: HealthOptions) {
        self.health.options = options;
        let now = self.health.report_time();
        for b in self.clusters.iter_mut().flat_map(|c| &mut c.backends) {
            b.health.last_report_ns = now;
        }
        self.sync_health(true);
    }

    /// The health settings the view judges its backends by.
    pub fn health(&self) -> &HealthOptions {
        &self.health.options
    }

    /// Ids of the clusters with no eligible backend: not selectable now,
    /// positions unchanged. Pass them in `Request::excluded` with your own
    /// (the driver does).
    pub fn unavailable(&self) -> &[Arc<str>] {
        &self.health.unavailable
    }

    /// A backend's eligibility by positions, as of now (reads the clock
    /// and the shared record; changes nothing).
    pub fn backend_state(&self, cluster: usize, backend: usize) -> Option<BackendState> {
        let b = self.clusters.get(cluster)?.backends.get(backend)?;
        Some(b.health.state(self.health.now_ns()))
    }

    /// Every backend's health row, in registration order.
    pub fn backend_health(&self) -> Vec<BackendHealthRow> {
        let now = self.health.now_ns();
        let mut rows = Vec::new();
        for c in &self.clusters {
            for b in &c.backends {
                let record = *b.health.record.lock();
                rows.push(BackendHealthRow {
                    cluster: c.id.clone(),
                    backend: b.id.clone(),
                    state: b.health.state(now),
                    ejections: record.ejections,
                    consecutive_failures: record.failures,
                });
            }
        }
        rows
    }

    /// Whether health changed since the last [`CandidateView::maintain`]: a
    /// report went stale, an ejection ended, a probe opened, or another view
    /// sharing the health records changed one. One atomic load, and a clock
    /// read only when a deadline is pending.
    pub fn health_due(&self) -> bool {
        self.health.board.epoch() != self.health.seen
            || self
                .health
                .next_event_ns
                .is_some_and(|at| self.health.now_ns() >= at)
    }

    /// Applies what time did and what other views recorded: reports older
    /// than `stats_ttl` go stale, ejections whose time is over end, due
    /// probes open, and the shared records are read again. Returns whether
    /// any backend's eligibility changed.
    pub fn maintain(&mut self) -> bool {
        self.sync_health(false)
    }

    /// Re-reads every backend's record (ending ejections whose time is
    /// over), expires reports, and refreshes what changed; `force`
    /// recomputes the unavailable list whatever changed.
    fn sync_health(&mut self, force: bool) -> bool {
        let now = self.health.now_ns();
        let ttl = self.health.options.stats_ttl.map(nanos);
        let seen = self.health.board.epoch();
        let mut bumped = false;
        let mut changed = false;
        for c in 0..self.clusters.len() {
            let mut cluster_changed = false;
            for b in &mut self.clusters[c].backends {
                let h = &mut b.health;
                let mirror = {
                    let mut record = h.record.lock();
                    bumped |= record.settle(now);
                    record.mirror(now)
                };
                if mirror != h.mirror {
                    let eligible = h.eligible();
                    h.mirror = mirror;
                    cluster_changed |= eligible != h.eligible();
                }
                let expired = ttl
                    .zip(h.last_report_ns)
                    .is_some_and(|(ttl, at)| now.saturating_sub(at) >= ttl);
                if expired && !h.stale {
                    h.stale = true;
                    cluster_changed = true;
                }
            }
            if cluster_changed {
                self.refresh(c);
                changed = true;
            }
        }
        if bumped {
            // Other views see the ended ejection at their next sync.
            self.health.board.bump();
        }
        self.health.seen = seen;
        if changed || force || bumped {
            self.health_changed();
        } else {
            self.next_event();
        }
        changed
    }

    /// Starts (`true`) or ends draining a backend: a draining backend takes
    /// no new requests; its in-flight ones finish and its reservations stay
    /// until released or cleared by its next report. Returns whether its
    /// state changed.
    pub fn set_draining(
        &mut self,
        cluster: &str,
        backend: &str,
        draining: bool,
    ) -> Result<bool, ReportError> {
        let (c, b) = self.locate(cluster, backend)?;
        let h = &mut self.clusters[c].backends[b].health;
        if h.draining == draining {
            return Ok(false);
        }
        h.draining = draining;
        self.refresh(c);
        self.health_changed();
        Ok(true)
    }

    /// The result of an active health check of a backend (the embedder's
    /// own probe of its health endpoint): a passed check returns an
    /// ejected backend at once and forgets its failures, in every view
    /// that shares its record; a failed one counts as a failed send.
    /// Returns whether it ended or began an ejection.
    pub fn health_check(
        &mut self,
        cluster: &str,
        backend: &str,
        passed: bool,
    ) -> Result<bool, ReportError> {
        let (c, b) = self.locate(cluster, backend)?;
        if passed {
            Ok(self.record_success(c, b))
        } else {
            Ok(self.record_failure(c, b, false) == FailureOutcome::Ejected)
        }
    }

    /// A send to the backend at these positions failed (`probe`: it was
    /// the backend's half-open probe): counts towards ejection (passive
    /// outlier detection), in the record every view shares.
    pub(crate) fn record_failure(
        &mut self,
        cluster: usize,
        backend: usize,
        probe: bool,
    ) -> FailureOutcome {
        let now = self.health.now_ns();
        let options = &self.health.options;
        let threshold = options.consecutive_failures;
        let Some(c) = self.clusters.get(cluster) else {
            return FailureOutcome::Counted;
        };
        let n = c.backends.len();
        let ejected = c
            .backends
            .iter()
            .filter(|b| b.health.mirror.ejected_until_ns.is_some())
            .count();
        let cap = ((options.max_ejected_share.clamp(0.0, 1.0) * n as f64).floor() as usize).max(1);
        let Some(b) = c.backends.get(backend) else {
            return FailureOutcome::Counted;
        };
        let outcome = {
            let mut record = b.health.record.lock();
            record.settle(now);
            if record.ejected_until_ns.is_some() {
                if probe && record.probe_in_flight {
                    // The probe failed: ejected again, for longer.
                    record.eject(now, options);
                    FailureOutcome::Ejected
                } else {
                    FailureOutcome::Counted
                }
            } else {
                record.failures = record.failures.saturating_add(1);
                if threshold == 0 || record.failures < threshold {
                    FailureOutcome::Counted
                } else if ejected + 1 > cap {
                    FailureOutcome::Capped
                } else {
                    record.eject(now, options);
                    FailureOutcome::Ejected
                }
            }
        };
        if outcome == FailureOutcome::Ejected {
            self.health.board.bump();
            self.sync_health(false);
        }
        outcome
    }

    /// A send to the backend at these positions succeeded: its consecutive
    /// failures start again and, if it was ejected, it returns at once, in
    /// every view. Returns whether it was ejected.
    pub(crate) fn record_success(&mut self, cluster: usize, backend: usize) -> bool {
        let Some(b) = self
            .clusters
            .get(cluster)
            .and_then(|c| c.backends.get(backend))
        else {
            return false;
        };
        let returned = {
            let mut record = b.health.record.lock();
            record.failures = 0;
            let ejected = record.ejected_until_ns.is_some();
            if ejected {
                record.back_in_service(self.health.now_ns());
            }
            ejected
        };
        if returned {
            self.health.board.bump();
            self.sync_health(false);
        }
        returned
    }

    /// Whether a success of the backend at these positions would change
    /// its record (failures to forget, or an ejection to end).
    pub(crate) fn has_failures(&self, cluster: usize, backend: usize) -> bool {
        self.clusters
            .get(cluster)
            .and_then(|c| c.backends.get(backend))
            .is_some_and(|b| {
                let record = b.health.record.lock();
                record.failures > 0 || record.ejected_until_ns.is_some()
            })
    }

    /// A request is being reserved on the backend at these positions: if
    /// the backend is ejected with its probe open, this request takes the
    /// probe (`Some(true)`); `None` when it is ejected and its probe is
    /// not open (taken, here or by another view); `Some(false)` for an
    /// ordinary request.
    pub(super) fn take_probe(&mut self, cluster: usize, backend: usize) -> Option<bool> {
        let b = self.clusters.get(cluster)?.backends.get(backend)?;
        if b.health.mirror.ejected_until_ns.is_none() {
            return Some(false);
        }
        if !b.health.probing() {
            return None;
        }
        let now = self.health.now_ns();
        let taken = {
            let mut record = b.health.record.lock();
            let open = record.mirror(now).probe_open;
            if open {
                record.probe_in_flight = true;
            }
            open
        };
        self.health.board.bump();
        self.sync_health(false);
        taken.then_some(true)
    }

    /// A probe's reservation ended without an outcome (cancelled): the
    /// probe opens again.
    pub(super) fn probe_cancelled(&mut self, cluster: usize, backend: usize) {
        let Some(b) = self
            .clusters
            .get(cluster)
            .and_then(|c| c.backends.get(backend))
        else {
            return;
        };
        let reopened = std::mem::take(&mut b.health.record.lock().probe_in_flight);
        if reopened {
            self.health.board.bump();
            self.sync_health(false);
        }
    }

    /// Recomputes the unavailable clusters and the next deadline.
    pub(super) fn health_changed(&mut self) {
        self.health.unavailable.clear();
        for c in &self.clusters {
            if !c.backends.iter().any(|b| b.health.eligible()) {
                self.health.unavailable.push(c.id.clone());
            }
        }
        self.next_event();
    }

    /// The next reading at which time alone changes a backend's health.
    fn next_event(&mut self) {
        let ttl = self.health.options.stats_ttl.map(nanos);
        let mut next: Option<u64> = None;
        let mut earliest = |at: u64| next = Some(next.map_or(at, |n| n.min(at)));
        for c in &self.clusters {
            for b in &c.backends {
                let h = &b.health;
                if let Some(until) = h.mirror.ejected_until_ns {
                    earliest(until);
                }
                if let Some(at) = h.mirror.probe_at_ns {
                    earliest(at);
                }
                if let (Some(ttl), Some(at), false) = (ttl, h.last_report_ns, h.stale) {
                    earliest(at.saturating_add(ttl));
                }
            }
        }
        self.health.next_event_ns = next;
    }
}
