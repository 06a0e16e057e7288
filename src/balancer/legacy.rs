//! The legacy band walk (docs/stargate.md 3.8.5), a simulator
//! baseline not reachable from the language: bands {1}, {2-3}, {4-7}, ...
//! each tried on its own, at once, without timed waits.
//!
//! `initial_wait_ms` (docs/simulator-model.md B2.6, default 0) adds "waiting alone":
//! before it has elapsed only rank 1 is tried (limit `max_queued`) and the
//! answer is otherwise Wait for the rest of that time; afterwards the walk
//! runs unchanged, its unlock clock still counted from arrival.

use super::bucket::{self, Compare, Outcome, Phase};
use super::pulsar::{feasible_members, rank_then_shortcut, ranked_choice};
use super::ranking::Ranker;
use super::{estimate, ClusterSnapshot, Decision, Membership, Request, Scratch};
use crate::ir::PulsarWaitAndWidenSettings;
use rand::RngCore;
use std::time::Duration;

#[derive(Debug)]
pub struct LegacyBandWalk {
    settings: PulsarWaitAndWidenSettings,
    initial_wait: Duration,
    ranker: Ranker,
}

impl LegacyBandWalk {
    pub fn new(settings: &PulsarWaitAndWidenSettings, initial_wait_ms: u64) -> Self {
        LegacyBandWalk {
            ranker: Ranker::new(&settings.seed, settings.rendezvous_weight, false),
            settings: settings.clone(),
            initial_wait: Duration::from_millis(initial_wait_ms),
        }
    }

    pub(crate) fn ranker(&self) -> &Ranker {
        &self.ranker
    }

    pub fn decide(
        &self,
        request: &Request<'_>,
        clusters: &[ClusterSnapshot],
        ids: Option<Membership>,
        rng: &mut dyn RngCore,
        scratch: &mut Scratch,
    ) -> Decision {
        let s = &self.settings;
        let kv = s.consider_kv_free_tokens;
        // 1-2. The ranking (cached per key), then the no-queue-SLO shortcut.
        let slo = s.bucket.queue_slo();
        let (ranker, slo_on) = (&self.ranker, slo.is_some());
        if let Some(d) = rank_then_shortcut(ranker, slo_on, request, clusters, ids, scratch, kv) {
            return d;
        }
        let phase = Phase {
            settings: &s.bucket,
            scale: 1.0,
            unlock_ms: estimate::duration_ms(request.elapsed),
            max_queued: s.bucket.max_queued,
            compare: Compare::LeastQueueTime,
            queue_limit_ms: slo
                .map(|slo| estimate::queue_limit_ms(slo, request.request_slo_ms, request.elapsed)),
        };
        let len = scratch.ranking.len();
        let (mut start, mut width) = (0usize, 1usize);
        while start < len {
            let end = start.saturating_add(width).min(len);
            feasible_members(
                &scratch.ranking,
                start..end,
                request,
                clusters,
                kv,
                &mut scratch.members,
            );
            let outcome = bucket::select(
                &phase,
                request,
                clusters,
                &scratch.members,
                &mut scratch.entries,
                rng,
            );
            if let Outcome::Selected(pos) = outcome {
                return Decision::Selected(ranked_choice(
                    &scratch.ranking,
                    pos,
                    request,
                    clusters,
                    kv,
                ));
            }
            if request.elapsed < self.initial_wait {
                // Waiting alone: only rank 1 until the initial wait ends.
                return Decision::Wait(self.initial_wait - request.elapsed);
            }
            start = end;
            width = width.saturating_mul(2);
        }
        Decision::Unavailable
    }
}
