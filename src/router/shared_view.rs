//! The candidate view shared by request threads: a [`CandidateView`] behind
//! a reader-writer lock, reservations as guards that release on drop, and
//! a change signal that wakes waiting requests (with feature `tokio`).

use super::stats::BackendStats;
use super::view::{CandidateView, ReportError, ReservationId};
use std::ops::Deref;
use std::sync::{Arc, PoisonError, RwLock, RwLockReadGuard};

/// A shareable candidate view: clone it (an `Arc`) into every request
/// task and into the code that receives stats reports.
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

/// Read access to the view; hold it only for a decision.
pub struct ViewRead<'a>(RwLockReadGuard<'a, CandidateView>);

impl Deref for ViewRead<'_> {
    type Target = CandidateView;

    fn deref(&self) -> &CandidateView {
        &self.0
    }
}

impl SharedView {
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

    /// Any other change (membership, RTTs). Wakes waiting requests.
    pub fn update<R>(&self, f: impl FnOnce(&mut CandidateView) -> R) -> R {
        let result = f(&mut self
            .inner
            .view
            .write()
            .unwrap_or_else(PoisonError::into_inner));
        self.changed();
        result
    }

    /// A stats report (see [`CandidateView::report`]). Wakes waiting
    /// requests unless nothing was applied.
    pub fn report(
        &self,
        cluster: &str,
        backend: &str,
        stats: &BackendStats,
    ) -> Result<(), ReportError> {
        let result = self
            .inner
            .view
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .report(cluster, backend, stats);
        if result.as_ref().map_or_else(|e| e.applied(), |_| true) {
            self.changed();
        }
        result
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
        let mut view = self
            .inner
            .view
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        let (c, b, priority, tokens) = pick(&view)?;
        let id = view.reserve(c, b, priority, tokens)?;
        let cluster = view.cluster_id(c)?.clone();
        let backend = view.backend_id(c, b)?.clone();
        let reservation = Reservation {
            view: Some(self.clone()),
            id,
        };
        Some((reservation, cluster, backend))
    }

    fn release(&self, id: ReservationId) {
        let released = self
            .inner
            .view
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .release(id);
        if released {
            self.changed();
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

/// A pending reservation. Dropping it releases the reservation (the
/// attempt was cancelled or failed); [`Reservation::keep`] leaves it for
/// the backend's next report to clear (the request was delivered).
#[derive(Debug)]
#[must_use = "dropping a reservation releases it"]
pub struct Reservation {
    view: Option<SharedView>,
    id: ReservationId,
}

impl Reservation {
    pub fn id(&self) -> ReservationId {
        self.id
    }

    /// The backend has the request: its next report counts it, and clears
    /// the reservation.
    pub fn keep(mut self) {
        self.view = None;
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        if let Some(view) = self.view.take() {
            view.release(self.id);
        }
    }
}
