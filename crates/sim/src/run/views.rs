//! The routers' candidate views, each with a version that every change
//! bumps: faithful mode's polls reuse a lasting `Unavailable` while the
//! version they were answered at is current (`routing_loop`,
//! docs/simulator.md "The parity scenario's speed").

use routex::balancer::ClusterSnapshot;
use routex::router::CandidateView;

/// One [`CandidateView`] per router. Changes go through
/// [`Views::get_mut`], which bumps the router's version, so a version
/// names one state of a view's snapshots.
pub(super) struct Views {
    views: Vec<CandidateView>,
    versions: Vec<u64>,
}

impl Views {
    pub(super) fn new(views: Vec<CandidateView>) -> Self {
        Views {
            versions: vec![0; views.len()],
            views,
        }
    }

    pub(super) fn len(&self) -> usize {
        self.views.len()
    }

    pub(super) fn get(&self, router: usize) -> &CandidateView {
        &self.views[router]
    }

    /// Router `router`'s view, to change: its version moves on.
    pub(super) fn get_mut(&mut self, router: usize) -> Option<&mut CandidateView> {
        let view = self.views.get_mut(router)?;
        self.versions[router] += 1;
        Some(view)
    }

    pub(super) fn snapshots(&self, router: usize) -> &[ClusterSnapshot] {
        self.views[router].snapshots()
    }

    /// The version of router `router`'s view: equal versions, equal
    /// snapshots (ids, order and every field).
    pub(super) fn version(&self, router: usize) -> u64 {
        self.versions[router]
    }
}
