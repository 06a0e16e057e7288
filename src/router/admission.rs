//! Admission before every decision (docs/stargate.md 3.9): the
//! required affinity key and the input-work limit.

use super::rejection::{Rejection, RejectionCode};
use crate::balancer::{pulsar_feasibility, pulsar_weight, ClusterSnapshot, Feasibility, Request};
use crate::ir::{Policy, RendezvousWeight, Settings};

/// Queued prefill work in front of a request, over the admission candidates.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct InputWork {
    /// Request tokens plus the candidates' queued input tokens (saturating).
    pub tokens: u64,
    /// Sum of the candidates' valid mean input TPS.
    pub rate: f64,
}

impl InputWork {
    /// Seconds to drain `tokens` at `rate`; `None` when there is no usable
    /// rate or the result is not finite.
    pub fn seconds(&self) -> Option<f64> {
        if !(self.rate.is_finite() && self.rate > 0.0) {
            return None;
        }
        let seconds = self.tokens as f64 / self.rate;
        seconds.is_finite().then_some(seconds)
    }
}

fn valid_rate(value: f64) -> bool {
    value.is_finite() && value > 0.0
}

/// 400 when the policy requires an affinity key and the request has none.
pub fn check_affinity_key(policy: &Policy, request: &Request<'_>) -> Result<(), Rejection> {
    let has_key = request
        .cache_affinity_key
        .is_some_and(|k| !k.trim().is_empty());
    if policy.admission.require_cache_affinity_key && !has_key {
        return Err(Rejection::new(
            RejectionCode::MissingCacheAffinityKey,
            "x-cache-affinity-key is required for this routing method",
        ));
    }
    Ok(())
}

/// The input work over the admission candidates of `policy`.
pub fn input_work(
    policy: &Policy,
    request: &Request<'_>,
    clusters: &[ClusterSnapshot],
) -> InputWork {
    let mut work = InputWork {
        tokens: request.input_tokens.unwrap_or(0),
        rate: 0.0,
    };
    let pulsar = pulsar_view(&policy.settings);
    for cluster in clusters {
        if request.excluded.contains(&cluster.id.as_str()) {
            continue;
        }
        let tps_valid = valid_rate(cluster.last_mean_input_tps);
        if let Some((weight, kv)) = pulsar {
            // The balancer's own feasibility and weight rules, so admission
            // and ranking can never disagree about a candidate.
            let feasible = pulsar_feasibility(cluster, request, kv) == Feasibility::Eligible;
            if !(feasible && tps_valid && pulsar_weight(cluster, weight).is_some()) {
                continue;
            }
        }
        work.tokens = work.tokens.saturating_add(cluster.queued_input_size);
        if tps_valid {
            work.rate += cluster.last_mean_input_tps;
        }
    }
    work
}

/// 503 when `max_input_work_seconds` is set and the work is over it or has
/// no usable rate.
pub fn check_input_work(
    policy: &Policy,
    request: &Request<'_>,
    clusters: &[ClusterSnapshot],
) -> Result<(), Rejection> {
    let Some(limit) = policy.admission.max_input_work_seconds else {
        return Ok(());
    };
    let work = input_work(policy, request, clusters);
    match work.seconds() {
        None => Err(Rejection::new(
            RejectionCode::InputWorkCapacityUnavailable,
            format!(
                "no input processing capacity for {} input tokens of queued work",
                work.tokens
            ),
        )),
        Some(seconds) if seconds > limit => Err(Rejection::new(
            RejectionCode::InputWorkLimitExceeded,
            format!("input work {seconds} s exceeds max_input_work_seconds {limit}"),
        )),
        Some(_) => Ok(()),
    }
}

/// For pulsar and PWW: the selected weight and whether KV is considered.
fn pulsar_view(settings: &Settings) -> Option<(RendezvousWeight, bool)> {
    match settings {
        Settings::Pulsar(s) => Some((s.rendezvous_weight, s.consider_kv_free_tokens)),
        Settings::PulsarWaitAndWiden(s) => Some((s.rendezvous_weight, s.consider_kv_free_tokens)),
        _ => None,
    }
}
