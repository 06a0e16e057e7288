//! pulsar-wait-and-widen (docs/stargate.md 3.8.1-3.8.4): the Pulsar
//! ranking is the affinity order; the group of the first k ranks waits
//! until X, then bands of ranks open on a timed schedule (k+2, k+6, k+14,
//! ...), each open prefix selected with least queue time and limit f.

use super::bucket::{self, Compare, Outcome, Phase};
use super::pulsar::{feasible_members, rank_then_shortcut, ranked_choice};
use super::ranking::Ranker;
use super::{estimate, min_wait, ClusterSnapshot, Decision, Membership, Request, Scratch};
use crate::ir::PulsarWaitAndWidenSettings;
use rand::RngCore;
use std::time::Duration;

#[derive(Debug)]
pub struct PulsarWaitAndWiden {
    settings: PulsarWaitAndWidenSettings,
    ranker: Ranker,
}

/// The open prefix of the ranking at `w` after X (3.8.4), and the wait
/// until the next band opens when some ranks are still closed.
pub fn open_prefix(
    k: usize,
    len: usize,
    interval: Duration,
    w: Duration,
) -> (usize, Option<Duration>) {
    let s_ns = interval.as_nanos();
    // S = 0: every band is open at X.
    let bands_open = w
        .as_nanos()
        .checked_div(s_ns)
        .map_or(u128::MAX, |bands| bands + 1);
    let mut open_end = k.min(len);
    let mut width: usize = 2;
    let mut band = 0u128;
    while band < bands_open && open_end < len {
        open_end = open_end.saturating_add(width).min(len);
        width = width.saturating_mul(2);
        band += 1;
    }
    if open_end >= len || s_ns == 0 {
        return (open_end, None);
    }
    let next_ns = s_ns
        .saturating_mul(bands_open.min(u128::from(u32::MAX)))
        .saturating_sub(w.as_nanos());
    let next = u64::try_from(next_ns).map_or(Duration::MAX, Duration::from_nanos);
    (open_end, (!next.is_zero()).then_some(next))
}

impl PulsarWaitAndWiden {
    pub fn new(settings: &PulsarWaitAndWidenSettings) -> Self {
        PulsarWaitAndWiden {
            ranker: Ranker::new(&settings.seed, settings.rendezvous_weight),
            settings: settings.clone(),
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
        let queue_limit_ms =
            slo.map(|slo| estimate::queue_limit_ms(slo, request.request_slo_ms, request.elapsed));
        let len = scratch.ranking.len();
        let k =
            usize::try_from(s.cache_affinity_backend_selection_count.max(1)).unwrap_or(usize::MAX);

        // 3. Affinity phase, every attempt.
        feasible_members(
            &scratch.ranking,
            0..k,
            request,
            clusters,
            kv,
            &mut scratch.members,
        );
        let affinity = bucket::select(
            &Phase {
                settings: &s.bucket,
                scale: s.cache_affinity_input_tokens_scale,
                unlock_ms: estimate::duration_ms(request.elapsed),
                max_queued: s.bucket.max_queued,
                compare: Compare::LeastQueueTime,
                queue_limit_ms,
            },
            request,
            clusters,
            &scratch.members,
            &mut scratch.entries,
            rng,
        );
        if let Outcome::Selected(pos) = affinity {
            return Decision::Selected(ranked_choice(&scratch.ranking, pos, request, clusters, kv));
        }
        // 4. Wait until X.
        let x = Duration::from_millis(s.cache_affinity_wait_ms);
        if request.elapsed < x {
            let until_x = x - request.elapsed;
            return Decision::Wait(min_wait(affinity.wait(), Some(until_x)).unwrap_or(until_x));
        }
        // 5-6. The open prefix and the next band.
        let w = request.elapsed - x;
        let interval = Duration::from_millis(s.band_widen_interval_ms);
        let (open_end, next_band) = open_prefix(k, len, interval, w);
        // 7. The open set: full prefill, limit f, clock since X.
        feasible_members(
            &scratch.ranking,
            0..open_end,
            request,
            clusters,
            kv,
            &mut scratch.members,
        );
        let open = bucket::select(
            &Phase {
                settings: &s.bucket,
                scale: 1.0,
                unlock_ms: estimate::duration_ms(w),
                max_queued: s.fallback_max_queued,
                compare: Compare::LeastQueueTime,
                queue_limit_ms,
            },
            request,
            clusters,
            &scratch.members,
            &mut scratch.entries,
            rng,
        );
        if let Outcome::Selected(pos) = open {
            return Decision::Selected(ranked_choice(&scratch.ranking, pos, request, clusters, kv));
        }
        // 8. The first pending event.
        let wait = min_wait(min_wait(affinity.wait(), open.wait()), next_band);
        wait.map_or(Decision::Unavailable, Decision::Wait)
    }
}
