//! pulsar-wait-and-widen (docs/stargate.md 3.8.1-3.8.4): the Pulsar
//! ranking is the affinity order; the group of the first k ranks waits
//! until X, then bands of ranks open on a timed schedule (k+2, k+6, k+14,
//! ...), each open prefix selected with least queue time and limit f.

use super::bucket::{self, Compare, Outcome, Phase};
use super::pulsar::{feasible_members, no_slo_shortcut, ranked_choice};
use super::ranking::Ranker;
use super::session::{promote, Session};
use super::{estimate, min_wait, ClusterSnapshot, Decision, Membership, Request, Scratch};
use crate::ir::PulsarWaitAndWidenSettings;
use rand::RngCore;
use std::time::Duration;

#[derive(Debug)]
pub struct PulsarWaitAndWiden {
    settings: PulsarWaitAndWidenSettings,
    ranker: Ranker,
    queue_limit: Option<estimate::QueueLimit>,
}

/// The open prefix of the ranking at `w` after X (3.8.4), and the wait
/// until the next band opens when some ranks are still closed.
///
/// Public for a router or simulator that parks waiting requests (the
/// simulator's fast mode does): it says when a parked request's next band
/// opens without deciding again at every tick.
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
    // Exact beyond 2^64 ns (docs/stargate.md 2.3 item 4): a Duration holds
    // whole seconds in a u64.
    let next = u64::try_from(next_ns / 1_000_000_000).map_or(Duration::MAX, |secs| {
        Duration::new(secs, (next_ns % 1_000_000_000) as u32)
    });
    (open_end, (!next.is_zero()).then_some(next))
}

impl PulsarWaitAndWiden {
    pub fn new(settings: &PulsarWaitAndWidenSettings) -> Self {
        PulsarWaitAndWiden {
            ranker: Ranker::new(
                &settings.seed,
                settings.rendezvous_weight,
                settings.last_cluster_affinity,
            ),
            queue_limit: estimate::QueueLimit::new(settings.bucket.queue_slo()),
            settings: settings.clone(),
        }
    }

    pub(crate) fn ranker(&self) -> &Ranker {
        &self.ranker
    }

    /// Whether sessions act (`last_cluster_affinity` on).
    pub(crate) fn sessions_on(&self) -> bool {
        self.settings.last_cluster_affinity
    }

    /// k: the size of the affinity group (unset or 0 is 1).
    pub(crate) fn group_size(&self) -> u64 {
        self.settings.cache_affinity_backend_selection_count.max(1)
    }

    /// The decision, and the request's session when this policy turns
    /// `last_cluster_affinity` on (once per decision, for the caller's
    /// counters too): its hint is found through the ranking cache's id
    /// index while the ranking is read, a scan only when the cache was not
    /// current.
    pub fn decide(
        &self,
        request: &Request<'_>,
        clusters: &[ClusterSnapshot],
        ids: Option<Membership>,
        rng: &mut dyn RngCore,
        scratch: &mut Scratch,
    ) -> (Decision, Option<Session>) {
        // 1. The ranking (cached per key).
        let pending = self
            .sessions_on()
            .then(|| Session::pending(request))
            .flatten();
        let hint = pending.and_then(|p| p.hint);
        let found = self
            .ranker
            .rank_finding(request, clusters, ids, hint, scratch);
        let session = pending.map(|p| p.resolve(clusters, found));
        (
            self.decide_ranked(request, clusters, session, rng, scratch),
            session,
        )
    }

    /// Whether an `Unavailable` answer to `request` stays the answer at
    /// every later elapsed over the same candidates (see
    /// `Balancer::unavailable_lasts`): it needs the affinity phase and the
    /// open set unavailable (bucketed selection's Unavailable does not
    /// depend on the unlock clock), the affinity wait over and no band
    /// left to open, and all of that holds later too; the ranking and the
    /// no-queue-SLO shortcut do not depend on elapsed. Only a queue-SLO
    /// limit that moves with elapsed can change it.
    pub(crate) fn unavailable_lasts(&self, request: &Request<'_>) -> bool {
        self.queue_limit
            .is_none_or(|limit| limit.fixed_from(request.request_slo_ms, request.elapsed))
    }

    /// Steps 2-8 over the ranking in `scratch.ranking`.
    fn decide_ranked(
        &self,
        request: &Request<'_>,
        clusters: &[ClusterSnapshot],
        session: Option<Session>,
        rng: &mut dyn RngCore,
        scratch: &mut Scratch,
    ) -> Decision {
        let s = &self.settings;
        let kv = s.consider_kv_free_tokens;
        if scratch.ranking.is_empty() {
            return Decision::Unavailable;
        }
        // Sessions (docs/stargate.md 3.10): a returning request's last
        // cluster leads this request's copy of the ranking (never the
        // cached one); a cluster without a valid weight leaves it as is.
        if let Some(Session {
            last: Some(last), ..
        }) = session
        {
            promote(&mut scratch.ranking, last);
        }
        // 2. The no-queue-SLO shortcut, `widening` only.
        let slo = s.bucket.queue_slo();
        if s.no_queue_slo_shortcut {
            if let Some(d) = no_slo_shortcut(&scratch.ranking, slo.is_some(), request, clusters, kv)
            {
                return d;
            }
        }
        // New and stale sessions neither wait nor get the prefill discount;
        // an unset band interval follows the effective wait.
        let keeps_affinity = session.is_none_or(Session::keeps_affinity);
        let (scale, wait_ms, interval_ms) = if keeps_affinity {
            (
                s.cache_affinity_input_tokens_scale,
                s.cache_affinity_wait_ms,
                s.band_widen_interval_ms,
            )
        } else if s.band_widen_interval_is_default {
            (1.0, 0, 0)
        } else {
            (1.0, 0, s.band_widen_interval_ms)
        };
        let queue_limit_ms = self
            .queue_limit
            .map(|limit| limit.at(request.request_slo_ms, request.elapsed));
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
                scale,
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
        let x = Duration::from_millis(wait_ms);
        if request.elapsed < x {
            let until_x = x - request.elapsed;
            return Decision::Wait(min_wait(affinity.wait(), Some(until_x)).unwrap_or(until_x));
        }
        // 5-6. The open prefix and the next band.
        let w = request.elapsed - x;
        let interval = Duration::from_millis(interval_ms);
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
