//! What the router needs from a balancer instance. The real one is
//! [`Balancer`]; tests substitute engines that count instances or block.

use crate::balancer::{Balancer, ClusterSnapshot, Decision, Request, Scratch};
use crate::ir::Policy;
use rand::RngCore;

/// A balancer instance built from a resolved policy, shared by every
/// request of one (target, definition).
pub trait Engine: Send + Sync + 'static {
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
}
