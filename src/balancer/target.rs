//! The identity a cache is valid for: target (routing key, model) and the
//! ordered candidate ids, plus optional per-candidate weight bits.
//! Comparing against live candidates never allocates.

use super::{ClusterSnapshot, Request};

#[derive(Debug, Default)]
pub struct TargetKey {
    valid: bool,
    routing_key: Option<String>,
    model: String,
    ids: Vec<String>,
    weights: Vec<Option<u64>>,
}

impl TargetKey {
    pub fn matches(
        &self,
        request: &Request<'_>,
        clusters: &[ClusterSnapshot],
        weight: impl Fn(&ClusterSnapshot) -> Option<u64>,
    ) -> bool {
        self.valid
            && self.routing_key.as_deref() == request.routing_key
            && self.model == request.model
            && self.ids.len() == clusters.len()
            && self.ids.iter().zip(clusters).all(|(id, c)| *id == c.id)
            && self
                .weights
                .iter()
                .zip(clusters)
                .all(|(w, c)| *w == weight(c))
    }

    pub fn set(
        &mut self,
        request: &Request<'_>,
        clusters: &[ClusterSnapshot],
        weight: impl Fn(&ClusterSnapshot) -> Option<u64>,
    ) {
        self.valid = true;
        self.routing_key = request.routing_key.map(str::to_owned);
        self.model.clear();
        self.model.push_str(request.model);
        self.ids.clear();
        self.ids.extend(clusters.iter().map(|c| c.id.clone()));
        self.weights.clear();
        self.weights.extend(clusters.iter().map(weight));
    }
}
