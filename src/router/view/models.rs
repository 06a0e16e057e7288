//! One candidate view per model, as a router keeps them: a backend
//! registers for the models it serves, and one call applies its heartbeat
//! to every view that holds it.
//!
//! Views are created by registrations only, never by requests, so the map
//! is bounded by the fleet the embedder registers, not by client input: a
//! request for a model no backend serves reads an empty view (404
//! `no_eligible_candidates`) and creates nothing.

use crate::router::view::candidate::{Applied, BackendRates, CandidateView, ReportError};
use crate::router::view::health::{BackendHealthRow, Board, HealthOptions};
use crate::router::view::shared::SharedView;
use crate::router::view::stats::BackendStats;
use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, PoisonError, RwLock};

/// The candidate views of every model, shareable (an `Arc`). See the
/// module documentation. Its views share one health record per backend
/// (docs/embedding.md, "Backend health"): failures from any model count,
/// an ejection takes the backend out of every view, and a success in any
/// returns it.
#[derive(Clone, Debug, Default)]
pub struct ModelViews {
    inner: Arc<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    views: RwLock<BTreeMap<Arc<str>, SharedView>>,
    /// The health settings of every view, live and future.
    health: RwLock<HealthOptions>,
    /// The backends' health records, shared by the views.
    board: Arc<Board>,
}

impl ModelViews {
    /// No view yet; views judge health by [`HealthOptions::default`] until
    /// [`ModelViews::set_health`] says otherwise.
    pub fn new() -> Self {
        ModelViews::default()
    }

    /// These views, judging health by `options` ([`ModelViews::set_health`]).
    pub fn with_health(self, options: HealthOptions) -> Self {
        self.set_health(options);
        self
    }

    /// Every view, live ones included, judges health by `options` from now
    /// on (ejections in force keep their end; with expiry on, report ages
    /// start now). A front end calls it on reload.
    pub fn set_health(&self, options: HealthOptions) {
        *self
            .inner
            .health
            .write()
            .unwrap_or_else(PoisonError::into_inner) = options.clone();
        for (_, view) in self.all() {
            view.set_health(options.clone());
        }
    }

    /// The health settings in force.
    pub fn health(&self) -> HealthOptions {
        self.inner
            .health
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
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
                SharedView::new(CandidateView::on_board(
                    self.health(),
                    self.inner.board.clone(),
                ))
            })
            .clone()
    }

    /// Registers a backend for each of `models` (creating their views),
    /// with its rates ([`SharedView::ensure_backend`]). [`Applied::views`]
    /// counts the views it changed; [`Applied::ignored`] is the first
    /// refused rate.
    pub fn ensure_backend<'m>(
        &self,
        models: impl IntoIterator<Item = &'m str>,
        cluster: &str,
        backend: &str,
        rates: BackendRates,
    ) -> Applied {
        let mut total = Applied::default();
        for model in models {
            let applied = self
                .get_or_create(model)
                .ensure_backend(cluster, backend, rates);
            total.views += applied.views;
            total.ignored = total.ignored.or(applied.ignored);
        }
        total
    }

    /// Applies one heartbeat to every view that holds the backend.
    /// [`Applied::views`] counts them; [`ReportError::UnknownBackend`] when
    /// none holds it.
    pub fn report(
        &self,
        cluster: &str,
        backend: &str,
        stats: &BackendStats,
    ) -> Result<Applied, ReportError> {
        let mut total = Applied::default();
        for (_, view) in self.all() {
            if let Ok(applied) = view.report(cluster, backend, stats) {
                total.views += applied.views;
                total.ignored = total.ignored.or(applied.ignored);
            }
        }
        if total.views == 0 {
            return Err(unknown(cluster, backend));
        }
        Ok(total)
    }

    /// Sets a backend's RTT in every view that holds it
    /// ([`SharedView::set_rtt`]): whether any changed;
    /// [`ReportError::UnknownBackend`] when none holds it, `InvalidValue`
    /// for a refused RTT (nothing changed).
    pub fn set_rtt(&self, cluster: &str, backend: &str, rtt_ms: f64) -> Result<bool, ReportError> {
        self.each(cluster, backend, |v| v.set_rtt(cluster, backend, rtt_ms))
    }

    /// Starts or ends draining a backend in every view that holds it
    /// ([`SharedView::set_draining`]): whether any changed;
    /// [`ReportError::UnknownBackend`] when none holds it.
    pub fn set_draining(
        &self,
        cluster: &str,
        backend: &str,
        draining: bool,
    ) -> Result<bool, ReportError> {
        self.each(cluster, backend, |v| {
            v.set_draining(cluster, backend, draining)
        })
    }

    /// The result of an active health check of a backend
    /// ([`SharedView::health_check`]); its record is shared, so one call
    /// acts for every model. Whether it ended or began an ejection;
    /// [`ReportError::UnknownBackend`] when no view holds it.
    pub fn health_check(
        &self,
        cluster: &str,
        backend: &str,
        passed: bool,
    ) -> Result<bool, ReportError> {
        let views = self.all();
        let holder = views
            .iter()
            .find(|(_, v)| v.read().locate(cluster, backend).is_ok())
            .ok_or_else(|| unknown(cluster, backend))?;
        let changed = holder.1.health_check(cluster, backend, passed)?;
        // The other views read the shared record before their next
        // decision; wake their waiting requests now.
        for (_, v) in &views {
            v.maintain();
        }
        Ok(changed)
    }

    /// Applies `op` to every view that holds the backend: whether any
    /// changed; the backend unknown to all, or the first other error.
    fn each(
        &self,
        cluster: &str,
        backend: &str,
        op: impl Fn(&SharedView) -> Result<bool, ReportError>,
    ) -> Result<bool, ReportError> {
        let mut held = false;
        let mut changed = false;
        for (_, view) in self.all() {
            match op(&view) {
                Ok(c) => {
                    held = true;
                    changed |= c;
                }
                Err(ReportError::UnknownCluster(_) | ReportError::UnknownBackend { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        if held {
            Ok(changed)
        } else {
            Err(unknown(cluster, backend))
        }
    }

    /// Unregisters a backend from every view: whether any held it. A view
    /// left empty stays (an empty view answers 404).
    pub fn remove_backend(&self, cluster: &str, backend: &str) -> bool {
        let mut removed = false;
        for (_, view) in self.all() {
            removed |= view.remove_backend(cluster, backend);
        }
        removed
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

    /// One health row per registered backend (its record is shared, so a
    /// backend several models route to is one row), by cluster then
    /// backend id. Reads only.
    pub fn backend_health(&self) -> Vec<BackendHealthRow> {
        let mut seen = HashSet::new();
        let mut rows: Vec<BackendHealthRow> = Vec::new();
        for (_, view) in self.all() {
            for row in view.read().backend_health() {
                if seen.insert((row.cluster.clone(), row.backend.clone())) {
                    rows.push(row);
                }
            }
        }
        rows.sort_by(|a, b| (&a.cluster, &a.backend).cmp(&(&b.cluster, &b.backend)));
        rows
    }
}

fn unknown(cluster: &str, backend: &str) -> ReportError {
    ReportError::UnknownBackend {
        cluster: cluster.to_owned(),
        backend: backend.to_owned(),
    }
}
