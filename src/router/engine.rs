//! What the router needs from a balancer instance. The real one is
//! [`Balancer`]; tests substitute engines that count instances or block.

use crate::balancer::{
    Balancer, ClusterSnapshot, Decision, Request, Scratch, SessionCounts, SessionState,
};
use crate::ir::Policy;
use rand::RngCore;

/// A balancer instance built from a resolved policy, shared by every
/// request of one (target, definition).
pub trait Engine: Send + Sync + 'static {
    /// A fresh instance for `policy`, built when a (target generation,
    /// definition) first needs one.
    fn build(policy: &Policy) -> Self
    where
        Self: Sized;

    /// Called by `Router::route` under the router's read locks: it must not
    /// call back into the router (a write from inside would wait for itself).
    fn decide(
        &self,
        request: &Request<'_>,
        clusters: &[ClusterSnapshot],
        rng: &mut dyn RngCore,
        scratch: &mut Scratch,
    ) -> Decision;

    /// Classifies the request's session once, on its first attempt
    /// (docs/stargate.md 3.10); `None` when the instance does not.
    fn classify(
        &self,
        request: &Request<'_>,
        clusters: &[ClusterSnapshot],
    ) -> Option<SessionState> {
        let _ = (request, clusters);
        None
    }

    /// The instance's session-selection counts, once it classified a
    /// request (docs/stargate.md 3.10).
    fn session_selections(&self) -> Option<SessionCounts> {
        None
    }
}

impl Engine for Balancer {
    fn build(policy: &Policy) -> Self {
        Balancer::new(policy)
    }

    fn decide(
        &self,
        request: &Request<'_>,
        clusters: &[ClusterSnapshot],
        rng: &mut dyn RngCore,
        scratch: &mut Scratch,
    ) -> Decision {
        Balancer::decide(self, request, clusters, rng, scratch)
    }

    fn classify(
        &self,
        request: &Request<'_>,
        clusters: &[ClusterSnapshot],
    ) -> Option<SessionState> {
        Balancer::classify(self, request, clusters)
    }

    fn session_selections(&self) -> Option<SessionCounts> {
        Balancer::session_selections(self)
    }
}
