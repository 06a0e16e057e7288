//! One candidate view per model, as a router keeps them: a backend
//! registers for the models it serves, and one call applies its heartbeat
//! to every view that holds it.
//!
//! Views are created by registrations only, never by requests, so the map
//! is bounded by the fleet the embedder registers, not by client input: a
//! request for a model no backend serves reads an empty view (404
//! `no_eligible_candidates`) and creates nothing.

use crate::router::view::candidate::{BackendRates, CandidateView, ReportError};
use crate::router::view::health::HealthOptions;
use crate::router::view::shared::SharedView;
use crate::router::view::stats::BackendStats;
use std::collections::BTreeMap;
use std::sync::{Arc, PoisonError, RwLock};

/// The candidate views of every model, shareable (an `Arc`). See the
/// module documentation.
#[derive(Clone, Debug, Default)]
pub struct ModelViews {
    inner: Arc<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    views: RwLock<BTreeMap<Arc<str>, SharedView>>,
    /// The health settings of views created from now on.
    health: RwLock<Option<HealthOptions>>,
}

impl ModelViews {
    /// No view yet; views judge health by [`HealthOptions::default`] until
    /// [`ModelViews::with_health`] says otherwise.
    pub fn new() -> Self {
        ModelViews::default()
    }

    /// Views created from now on judge health by `options` (existing ones
    /// keep theirs).
    pub fn with_health(self, options: HealthOptions) -> Self {
        *self
            .inner
            .health
            .write()
            .unwrap_or_else(PoisonError::into_inner) = Some(options);
        self
    }

    /// The view of `model`, if a backend serves it.
    pub fn get(&self, model: &str) -> Option<SharedView> {
        self.read().get(model).cloned()
    }

    /// The models with a view, in name order, with their views.
    pub fn all(&self) -> Vec<(Arc<str>, SharedView)> {
        self.read()
            .iter()
            .map(|(m, v)| (m.clone(), v.clone()))
            .collect()
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, BTreeMap<Arc<str>, SharedView>> {
        self.inner
            .views
            .read()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn get_or_create(&self, model: &str) -> SharedView {
        if let Some(view) = self.get(model) {
            return view;
        }
        let mut views = self
            .inner
            .views
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        views
            .entry(model.into())
            .or_insert_with(|| {
                let health = self
                    .inner
                    .health
                    .read()
                    .unwrap_or_else(PoisonError::into_inner)
                    .clone();
                SharedView::new(health.map_or_else(CandidateView::new, CandidateView::with_health))
            })
            .clone()
    }

    /// Registers a backend for each of `models` (creating their views),
    /// with its rates ([`SharedView::ensure_backend`]). Returns whether any
    /// view changed; the first error, after applying the rest.
    pub fn ensure_backend<'m>(
        &self,
        models: impl IntoIterator<Item = &'m str>,
        cluster: &str,
        backend: &str,
        rates: BackendRates,
    ) -> Result<bool, ReportError> {
        let mut changed = false;
        let mut first_error = None;
        for model in models {
            match self
                .get_or_create(model)
                .ensure_backend(cluster, backend, rates)
            {
                Ok(c) => changed |= c,
                Err(e) => {
                    changed |= e.applied();
                    first_error.get_or_insert(e);
                }
            }
        }
        first_error.map_or(Ok(changed), Err)
    }

    /// Applies one heartbeat to every view that holds the backend. Returns
    /// how many views it updated; [`ReportError::UnknownBackend`] when none
    /// holds it, or a view's `InvalidValue` (the report still applied).
    pub fn report(
        &self,
        cluster: &str,
        backend: &str,
        stats: &BackendStats,
    ) -> Result<usize, ReportError> {
        let mut applied = 0;
        let mut invalid = None;
        for (_, view) in self.all() {
            match view.report(cluster, backend, stats) {
                Ok(()) => applied += 1,
                Err(e) if e.applied() => {
                    applied += 1;
                    invalid.get_or_insert(e);
                }
                Err(_) => {}
            }
        }
        match invalid {
            Some(e) => Err(e),
            None if applied == 0 => Err(ReportError::UnknownBackend {
                cluster: cluster.to_owned(),
                backend: backend.to_owned(),
            }),
            None => Ok(applied),
        }
    }

    /// Sets a backend's RTT in every view that holds it; returns how many
    /// views changed.
    pub fn set_rtt(&self, cluster: &str, backend: &str, rtt_ms: f64) -> Result<usize, ReportError> {
        let mut changed = 0;
        for (_, view) in self.all() {
            match view.set_rtt(cluster, backend, rtt_ms) {
                Ok(c) => changed += usize::from(c),
                Err(e @ ReportError::InvalidValue { .. }) => return Err(e),
                Err(_) => {}
            }
        }
        Ok(changed)
    }

    /// Starts or ends draining a backend in every view that holds it;
    /// returns how many views changed.
    pub fn set_draining(&self, cluster: &str, backend: &str, draining: bool) -> usize {
        self.all()
            .iter()
            .filter(|(_, v)| v.set_draining(cluster, backend, draining) == Ok(true))
            .count()
    }

    /// Unregisters a backend from every view; returns how many held it. A
    /// view left empty stays (an empty view answers 404).
    pub fn remove_backend(&self, cluster: &str, backend: &str) -> usize {
        self.all()
            .iter()
            .filter(|(_, v)| v.remove_backend(cluster, backend))
            .count()
    }

    /// Pending reservations over every view.
    pub fn reservations_in_flight(&self) -> usize {
        self.all()
            .iter()
            .map(|(_, v)| {
                let v = v.read();
                (0..v.snapshots().len())
                    .map(|c| v.pending(c))
                    .sum::<usize>()
            })
            .sum()
    }
}
