//! The identity a cache is valid for: target (routing key, model) and the
//! ordered candidate ids, plus optional per-candidate weight bits.
//! Comparing against live candidates never allocates; when the caller
//! names its candidate list with a [`Membership`] the ids are trusted by
//! that name (the per-decision string compares were the hit path's cost).

use super::id_index::IdIndex;
use super::{ClusterSnapshot, Membership, Request};

#[derive(Debug, Default)]
pub struct TargetKey {
    valid: bool,
    routing_key: Option<String>,
    model: String,
    ids: Vec<String>,
    /// The caller's name for `ids`, when it gave one.
    membership: Option<Membership>,
    /// Weight bits, 0 for none: a weight is finite and > 0, never +0.0.
    weights: Vec<u64>,
    /// Positions by id, kept for a cache whose instance classifies
    /// sessions ([`TargetKey::indexed`]); rebuilt when the ids change.
    index: Option<IdIndex>,
}

impl TargetKey {
    /// A key that also indexes its ids, for [`TargetKey::position`].
    pub fn indexed() -> Self {
        TargetKey {
            index: Some(IdIndex::default()),
            ..TargetKey::default()
        }
    }

    /// The first position of `id` among `clusters`, which this key matched
    /// (`matches` answered true for them): `Some(None)` when absent,
    /// `None` when the key keeps no index (the caller scans). `likely`:
    /// the position the caller expects it at ([`IdIndex::position`]).
    #[inline]
    pub fn position(
        &self,
        clusters: &[ClusterSnapshot],
        id: &str,
        likely: Option<usize>,
    ) -> Option<Option<usize>> {
        self.index.as_ref()?.position(clusters, id, likely)
    }

    /// The request's target and the list's length are this key's: what
    /// both match tests check before the candidates.
    #[inline]
    fn same_target(&self, request: &Request<'_>, candidates: usize) -> bool {
        self.valid
            && self.routing_key.as_deref() == request.routing_key
            && self.model == request.model
            && self.ids.len() == candidates
    }

    pub fn matches(
        &self,
        request: &Request<'_>,
        clusters: &[ClusterSnapshot],
        membership: Option<Membership>,
        weight: impl Fn(&ClusterSnapshot) -> Option<u64>,
    ) -> bool {
        if !self.same_target(request, clusters.len()) {
            return false;
        }
        // This runs on every ranking-cache hit (once per decision of the
        // Pulsar family): a named list skips the id compares.
        let named = membership.is_some() && membership == self.membership;
        for ((id, &w), c) in self.ids.iter().zip(&self.weights).zip(clusters) {
            if w != weight(c).unwrap_or(0) || !(named || id.as_bytes() == c.id.as_bytes()) {
                return false;
            }
        }
        true
    }

    /// [`TargetKey::matches`] for a key set without weights (the ring's,
    /// set with `|_| None`): a named list is trusted without a pass over
    /// the candidates.
    pub fn matches_unweighted(
        &self,
        request: &Request<'_>,
        clusters: &[ClusterSnapshot],
        membership: Option<Membership>,
    ) -> bool {
        if !self.same_target(request, clusters.len()) {
            return false;
        }
        (membership.is_some() && membership == self.membership)
            || self
                .ids
                .iter()
                .zip(clusters)
                .all(|(id, c)| id.as_bytes() == c.id.as_bytes())
    }

    pub fn set(
        &mut self,
        request: &Request<'_>,
        clusters: &[ClusterSnapshot],
        membership: Option<Membership>,
        weight: impl Fn(&ClusterSnapshot) -> Option<u64>,
    ) {
        self.valid = true;
        self.membership = membership;
        self.routing_key = request.routing_key.map(str::to_owned);
        self.model.clear();
        self.model.push_str(request.model);
        let same_ids = self.ids.len() == clusters.len()
            && self.ids.iter().zip(clusters).all(|(id, c)| *id == c.id);
        if !same_ids {
            self.ids.clear();
            self.ids.extend(clusters.iter().map(|c| c.id.clone()));
            if let Some(index) = &mut self.index {
                index.build(clusters);
            }
        }
        self.weights.clear();
        self.weights
            .extend(clusters.iter().map(|c| weight(c).unwrap_or(0)));
    }

    /// Names the stored ids, once they compared equal to a list the
    /// caller names `membership` (`None` keeps the current name).
    pub fn name(&mut self, membership: Option<Membership>) {
        if membership.is_some() {
            self.membership = membership;
        }
    }
}
