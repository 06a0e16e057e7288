//! The candidate view shared by request threads: a [`CandidateView`] behind
//! a reader-writer lock, reservations as guards that release on drop, and
//! a change signal that wakes waiting requests (with feature `tokio`).

use crate::ir::Algorithm;
use crate::router::view::candidate::{
    Applied, BackendRates, CandidateView, ReportError, ReservationId,
};
use crate::router::view::health::{FailureOutcome, HealthOptions};
use crate::router::view::stats::BackendStats;
use std::ops::Deref;
use std::sync::{Arc, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// A shareable candidate view: clone it (an `Arc`) into every request
/// task and into the code that receives stats reports. `Default` is an
/// empty view with the default [`crate::router::HealthOptions`] (a model no backend
/// serves routes over one: 404 `no_eligible_candidates`).
///
/// Its operations wake waiting requests only when they changed the view:
/// a re-registration with the same rates, an RTT equal to the last one or
/// a drain of a draining backend wakes nobody and takes only the read lock.
///
/// Public: it is what request tasks and the stats reporters share, what
/// [`crate::router::ModelViews`] holds per model and what the async driver
/// decides over.
#[derive(Clone, Debug, Default)]
pub struct SharedView {
    inner: Arc<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    view: RwLock<CandidateView>,
    #[cfg(feature = "tokio")]
    changed: tokio::sync::Notify,
}

/// Read access to the view; hold it only for a decision. Public because
/// [`SharedView::read`] returns it (a guard over the lock).
pub struct ViewRead<'a>(RwLockReadGuard<'a, CandidateView>);

impl Deref for ViewRead<'_> {
    type Target = CandidateView;

    fn deref(&self) -> &CandidateView {
        &self.0
    }
}

impl SharedView {
    /// Shares `view`; clones of the result all see the same view.
    pub fn new(view: CandidateView) -> Self {
        SharedView {
            inner: Arc::new(Inner {
                view: RwLock::new(view),
                #[cfg(feature = "tokio")]
                changed: tokio::sync::Notify::new(),
            }),
        }
    }

    /// The view as it is now, for one decision. Poisoning is ignored: every
    /// update leaves the view consistent before it can panic.
    pub fn read(&self) -> ViewRead<'_> {
        ViewRead(
            self.inner
                .view
                .read()
                .unwrap_or_else(PoisonError::into_inner),
        )
    }

    fn write(&self) -> RwLockWriteGuard<'_, CandidateView> {
        self.inner
            .view
            .write()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Any other change, as a closure over the view. Wakes waiting
    /// requests whatever `f` did; prefer the operations below, which wake
    /// them only on a change.
    pub fn update<R>(&self, f: impl FnOnce(&mut CandidateView) -> R) -> R {
        let result = f(&mut self.write());
        self.changed();
        result
    }

    /// Registers a backend (and its cluster) if new, with its rates
    /// ([`CandidateView::register_backend`]); an existing backend
    /// registered with the same rates changes nothing, under the read lock
    /// only. Says whether the view changed and which rate it ignored.
    pub fn ensure_backend(&self, cluster: &str, backend: &str, rates: BackendRates) -> Applied {
        {
            let view = self.read();
            let known = view
                .position(cluster)
                .and_then(|c| Some((c, view.backend_position(c, backend)?)))
                .and_then(|(c, b)| view.registered_rates(c, b));
            if known == Some(rates) {
                return Applied::default();
            }
        }
        let applied = self.write().register_backend(cluster, backend, rates);
        if applied.changed() {
            self.changed();
        }
        applied
    }

    /// The health-check RTT of a backend ([`CandidateView::set_rtt`]).
    /// Returns whether it changed (an equal value takes the read lock only).
    pub fn set_rtt(&self, cluster: &str, backend: &str, rtt_ms: f64) -> Result<bool, ReportError> {
        {
            let view = self.read();
            let (c, b) = view.locate(cluster, backend)?;
            if view.rtt_of(c, b) == Some(rtt_ms) {
                return Ok(false);
            }
        }
        self.write().set_rtt(cluster, backend, rtt_ms)?;
        self.changed();
        Ok(true)
    }

    /// Judges health by `options` from now on, live
    /// ([`CandidateView::set_health`]); wakes waiting requests.
    pub fn set_health(&self, options: HealthOptions) {
        self.update(|view| view.set_health(options));
    }

    /// The result of an active health check of a backend
    /// ([`CandidateView::health_check`]): a passed one returns an ejected
    /// backend at once, in every view sharing its record. Whether it ended
    /// or began an ejection.
    pub fn health_check(
        &self,
        cluster: &str,
        backend: &str,
        passed: bool,
    ) -> Result<bool, ReportError> {
        let changed = self.write().health_check(cluster, backend, passed)?;
        if changed {
            self.changed();
        }
        Ok(changed)
    }

    /// Starts or ends draining a backend ([`CandidateView::set_draining`]):
    /// whether its state changed.
    pub fn set_draining(
        &self,
        cluster: &str,
        backend: &str,
        draining: bool,
    ) -> Result<bool, ReportError> {
        let changed = self.write().set_draining(cluster, backend, draining)?;
        if changed {
            self.changed();
        }
        Ok(changed)
    }

    /// Unregisters a backend ([`CandidateView::remove_backend`]: its
    /// pending reservations go; a cluster left without backends goes and
    /// later clusters move up). Returns whether it was registered.
    pub fn remove_backend(&self, cluster: &str, backend: &str) -> bool {
        if self.read().locate(cluster, backend).is_err() {
            return false;
        }
        let removed = self.write().remove_backend(cluster, backend);
        if removed {
            self.changed();
        }
        removed
    }

    /// Applies what time did to health ([`CandidateView::maintain`]) if a
    /// deadline has passed; wakes waiting requests on a change. The driver
    /// calls it before each decision; cheap when nothing is due.
    pub fn maintain(&self) -> bool {
        if !self.read().health_due() {
            return false;
        }
        let changed = self.write().maintain();
        if changed {
            self.changed();
        }
        changed
    }

    /// A stats report (see [`CandidateView::report`]). Wakes waiting
    /// requests when it applied.
    pub fn report(
        &self,
        cluster: &str,
        backend: &str,
        stats: &BackendStats,
    ) -> Result<Applied, ReportError> {
        let applied = self.write().report(cluster, backend, stats)?;
        self.changed();
        Ok(applied)
    }

    /// Reserves a chosen backend until its next report or until the guard
    /// drops. `None` when there is no such backend.
    pub fn reserve(
        &self,
        cluster: usize,
        backend: usize,
        priority: u32,
        tokens: u64,
    ) -> Option<Reservation> {
        let mut view = self
            .inner
            .view
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        let id = view.reserve(cluster, backend, priority, tokens)?;
        Some(Reservation {
            view: Some(self.clone()),
            id,
        })
    }

    /// Picks and reserves under one write lock: `pick` answers (cluster,
    /// backend, priority, tokens) from the view as it is. Returns the
    /// reservation with the cluster's and the backend's ids.
    pub fn reserve_with(
        &self,
        pick: impl FnOnce(&CandidateView) -> Option<(usize, usize, u32, u64)>,
    ) -> Option<(Reservation, Arc<str>, Arc<str>)> {
        self.reserve_decided(pick, None)
    }

    /// [`SharedView::reserve_with`], counting the decision (algorithm,
    /// rank depth) on the chosen cluster.
    pub(crate) fn reserve_decided(
        &self,
        pick: impl FnOnce(&CandidateView) -> Option<(usize, usize, u32, u64)>,
        decision: Option<(Algorithm, u32)>,
    ) -> Option<(Reservation, Arc<str>, Arc<str>)> {
        let mut view = self.write();
        let (c, b, priority, tokens) = pick(&view)?;
        let id = view.reserve(c, b, priority, tokens)?;
        if let Some((algorithm, depth)) = decision {
            view.count_decision(c, algorithm, depth);
        }
        let cluster = view.cluster_id(c)?.clone();
        let backend = view.backend_id(c, b)?.clone();
        let reservation = Reservation {
            view: Some(self.clone()),
            id,
        };
        Some((reservation, cluster, backend))
    }

    fn release(&self, id: ReservationId) {
        let released = self.write().release(id);
        if released {
            self.changed();
        }
    }

    /// The reserved send failed: releases the reservation and counts the
    /// failure against its backend (which may eject it).
    fn fail(&self, id: ReservationId) -> FailureOutcome {
        let mut view = self.write();
        let at = view.locate_reservation(id);
        view.remove_pending(id);
        let outcome = match at {
            Some((c, b)) => view.record_failure(c, b, id.is_probe()),
            None => FailureOutcome::Counted,
        };
        drop(view);
        self.changed();
        outcome
    }

    /// The reserved request completed: releases what counts it
    /// ([`CandidateView::complete`]) and records a success, under one
    /// write lock.
    fn complete(&self, id: ReservationId) {
        let mut view = self.write();
        let at = view.locate_reservation(id);
        let mut changed = view.complete(id);
        if let Some((c, b)) = at {
            changed |= view.record_success(c, b);
        }
        drop(view);
        if changed {
            self.changed();
        }
    }

    /// The reserved send succeeded: forgets the backend's failures (a
    /// write only when it had some).
    fn succeed(&self, id: ReservationId) {
        let at = {
            let view = self.read();
            view.locate_reservation(id)
                .filter(|&(c, b)| view.has_failures(c, b))
        };
        if let Some((c, b)) = at {
            self.write().record_success(c, b);
        }
    }

    #[cfg(feature = "tokio")]
    fn changed(&self) {
        self.inner.changed.notify_waiters();
    }

    #[cfg(not(feature = "tokio"))]
    fn changed(&self) {}

    /// Completes at the next change after it was created (and enabled):
    /// a report, a released reservation, an update.
    #[cfg(feature = "tokio")]
    pub fn changed_signal(&self) -> tokio::sync::futures::Notified<'_> {
        self.inner.changed.notified()
    }
}

/// A pending reservation: the request counts on its backend (one running
/// request, its input tokens queued) from the decision on. It ends in one
/// of four ways (docs/embedding.md, "Reservation lifetime"):
///
/// - [`Reservation::complete`]: the request finished; the slot is free at
///   once, and the backend had a success.
/// - [`Reservation::keep`]: the backend has the request; the slot is held
///   until the backend's next report counts it (stargate's semantics),
///   and the backend had a success.
/// - [`Reservation::fail`]: the send failed; released, a failure counted.
/// - dropped: the attempt was cancelled; released, nothing counted.
#[derive(Debug)]
#[must_use = "dropping a reservation releases it"]
pub struct Reservation {
    view: Option<SharedView>,
    id: ReservationId,
}

impl Reservation {
    /// Where the reservation lives in its view.
    pub fn id(&self) -> ReservationId {
        self.id
    }

    /// The backend has the request: its next report counts it, and clears
    /// the reservation (stargate's semantics: the slot stays taken until
    /// that report, however soon the request finishes). Also a success for
    /// its backend's health (its consecutive failures start again). For
    /// requests shorter than the heartbeat period prefer
    /// [`Reservation::complete`] when they finish.
    pub fn keep(mut self) {
        if let Some(view) = self.view.take() {
            view.succeed(self.id);
        }
    }

    /// The request finished (its answer is in): frees its slot at once and
    /// records a success for its backend (the counterpart of
    /// [`Reservation::fail`]). A reservation still pending is released; if
    /// the backend's report already counted the request as running, one
    /// request comes off that count until the next report. Call it when
    /// the response has been delivered whole; after [`Reservation::keep`]
    /// there is nothing left to call.
    pub fn complete(mut self) {
        if let Some(view) = self.view.take() {
            view.complete(self.id);
        }
    }

    /// The send failed: releases the reservation and counts a failure of
    /// its backend (consecutive failures eject it: docs/embedding.md,
    /// "Backend health"). The driver's `Routing::failed` calls it; a loop
    /// of your own does too.
    pub fn fail(mut self) -> FailureOutcome {
        match self.view.take() {
            Some(view) => view.fail(self.id),
            None => FailureOutcome::Counted,
        }
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        if let Some(view) = self.view.take() {
            view.release(self.id);
        }
    }
}
