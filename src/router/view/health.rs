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
use std::fmt;
use std::sync::Arc;
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
    /// The first ejection lasts this long; the n-th in a row (no success
    /// in between) n times as long, up to `max_ejection`.
    pub base_ejection: Duration,
    /// The longest one ejection lasts, however many came before it
    /// (default 300 s).
    pub max_ejection: Duration,
    /// At most this share of a cluster's backends is ejected at once, but
    /// always at least one (so a one-backend cluster can be ejected): past
    /// it, failures are counted and nothing is ejected.
    pub max_ejected_share: f64,
    /// The time source for report ages and ejection ends (default: the
    /// system clock; tests and the simulator pass a [`crate::router::ManualClock`]).
    pub clock: Arc<dyn Clock>,
}

impl Default for HealthOptions {
    /// No expiry (a view does not know its backends' heartbeat); ejection
    /// after 5 consecutive failures for 30 s, growing to 300 s, at most
    /// half of a cluster; the system clock.
    fn default() -> Self {
        HealthOptions {
            stats_ttl: None,
            consecutive_failures: 5,
            base_ejection: Duration::from_secs(30),
            max_ejection: Duration::from_secs(300),
            max_ejected_share: 0.5,
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

    fn ejection(&self, ejections: u32) -> Duration {
        self.base_ejection
            .saturating_mul(ejections.max(1))
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
    /// Ejected for consecutive failures until this clock reading.
    Ejected {
        /// The [`HealthOptions::clock`] reading at which the ejection ends
        /// (at the next maintenance after it).
        until: Duration,
    },
    /// Draining: in-flight requests finish, no new ones.
    Draining,
}

/// What a failed send did to its backend ([`crate::router::Reservation::fail`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailureOutcome {
    /// Counted towards the consecutive failures; no ejection (yet).
    Counted,
    /// The backend was ejected.
    Ejected,
    /// The threshold was reached but the cluster's ejected share is full.
    Capped,
}

#[derive(Debug, Default)]
pub(super) struct BackendHealth {
    /// Clock reading (ns) of the last report, or of the registration.
    last_report_ns: Option<u64>,
    stale: bool,
    draining: bool,
    /// Consecutive failed sends since the last success or ejection.
    failures: u32,
    /// Ejections since the last success.
    ejections: u32,
    ejected_until_ns: Option<u64>,
}

impl BackendHealth {
    pub(super) fn eligible(&self) -> bool {
        !self.stale && !self.draining && self.ejected_until_ns.is_none()
    }

    /// A report (or the registration) arrived at `now_ns` (`None`: no
    /// expiry, no time kept); true when it ends staleness.
    pub(super) fn reported_at(&mut self, now_ns: Option<u64>) -> bool {
        if now_ns.is_some() {
            self.last_report_ns = now_ns;
        }
        std::mem::take(&mut self.stale)
    }

    fn state(&self) -> BackendState {
        if self.draining {
            BackendState::Draining
        } else if let Some(until) = self.ejected_until_ns {
            BackendState::Ejected {
                until: Duration::from_nanos(until),
            }
        } else if self.stale {
            BackendState::Stale
        } else {
            BackendState::Eligible
        }
    }
}

/// The view's health settings and derived state.
#[derive(Default)]
pub(super) struct ViewHealth {
    options: HealthOptions,
    /// Ids of clusters with no eligible backend.
    unavailable: Vec<Arc<str>>,
    /// The earliest clock reading (ns) at which a report goes stale or an
    /// ejection ends.
    next_event_ns: Option<u64>,
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
    /// An empty view that judges health by `options`.
    pub fn with_health(options: HealthOptions) -> Self {
        let mut view = CandidateView::new();
        view.set_health(options);
        view
    }

    /// Replaces the health settings (backends keep their state; with
    /// expiry on, every backend's report time starts now).
    pub fn set_health(&mut self, options: HealthOptions) {
        self.health.options = options;
        let now = self.health.report_time();
        for b in self.clusters.iter_mut().flat_map(|c| &mut c.backends) {
            b.health.last_report_ns = now;
        }
        self.health_changed();
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

    /// A backend's eligibility by positions.
    pub fn backend_state(&self, cluster: usize, backend: usize) -> Option<BackendState> {
        let b = self.clusters.get(cluster)?.backends.get(backend)?;
        Some(b.health.state())
    }

    /// Whether a report has gone stale or an ejection ended since the last
    /// [`CandidateView::maintain`]; reads the clock only when one is due.
    pub fn health_due(&self) -> bool {
        self.health
            .next_event_ns
            .is_some_and(|at| self.health.now_ns() >= at)
    }

    /// Applies what time did: reports older than `stats_ttl` go stale,
    /// ejections whose time is over end. Returns whether anything changed.
    pub fn maintain(&mut self) -> bool {
        let now = self.health.now_ns();
        let ttl = self.health.options.stats_ttl.map(nanos);
        let mut changed = false;
        for c in 0..self.clusters.len() {
            let mut cluster_changed = false;
            for b in &mut self.clusters[c].backends {
                let h = &mut b.health;
                if h.ejected_until_ns.is_some_and(|until| now >= until) {
                    h.ejected_until_ns = None;
                    cluster_changed = true;
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
        self.health_changed();
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

    /// A send to the backend at these positions failed: counts towards
    /// ejection (passive outlier detection).
    pub(crate) fn record_failure(&mut self, cluster: usize, backend: usize) -> FailureOutcome {
        let options = &self.health.options;
        let threshold = options.consecutive_failures;
        let now = self.health.now_ns();
        let Some(c) = self.clusters.get_mut(cluster) else {
            return FailureOutcome::Counted;
        };
        let n = c.backends.len();
        let ejected = c
            .backends
            .iter()
            .filter(|b| b.health.ejected_until_ns.is_some())
            .count();
        let cap = ((options.max_ejected_share.clamp(0.0, 1.0) * n as f64).floor() as usize).max(1);
        let Some(b) = c.backends.get_mut(backend) else {
            return FailureOutcome::Counted;
        };
        let h = &mut b.health;
        h.failures = h.failures.saturating_add(1);
        if threshold == 0 || h.failures < threshold || h.ejected_until_ns.is_some() {
            return FailureOutcome::Counted;
        }
        if ejected + 1 > cap {
            return FailureOutcome::Capped;
        }
        h.ejections = h.ejections.saturating_add(1);
        h.failures = 0;
        let length = nanos(options.ejection(h.ejections));
        h.ejected_until_ns = Some(now.saturating_add(length));
        self.refresh(cluster);
        self.health_changed();
        FailureOutcome::Ejected
    }

    /// A send to the backend at these positions succeeded: its failure
    /// count and ejection multiplier start again.
    pub(crate) fn record_success(&mut self, cluster: usize, backend: usize) {
        if let Some(b) = self
            .clusters
            .get_mut(cluster)
            .and_then(|c| c.backends.get_mut(backend))
        {
            b.health.failures = 0;
            b.health.ejections = 0;
        }
    }

    /// Whether the backend at these positions has failures to forget.
    pub(crate) fn has_failures(&self, cluster: usize, backend: usize) -> bool {
        self.clusters
            .get(cluster)
            .and_then(|c| c.backends.get(backend))
            .is_some_and(|b| b.health.failures > 0 || b.health.ejections > 0)
    }

    /// Recomputes the unavailable clusters and the next deadline.
    pub(super) fn health_changed(&mut self) {
        let ttl = self.health.options.stats_ttl.map(nanos);
        let mut next: Option<u64> = None;
        let mut earliest = |at: u64| next = Some(next.map_or(at, |n| n.min(at)));
        self.health.unavailable.clear();
        for c in &self.clusters {
            if !c.backends.iter().any(|b| b.health.eligible()) {
                self.health.unavailable.push(c.id.clone());
            }
            for b in &c.backends {
                let h = &b.health;
                if let Some(until) = h.ejected_until_ns {
                    earliest(until);
                }
                if let (Some(ttl), Some(at), false) = (ttl, h.last_report_ns, h.stale) {
                    earliest(at.saturating_add(ttl));
                }
            }
        }
        self.health.next_event_ns = next;
    }
}
