//! wait-and-widen (docs/stargate.md 3.6.7): bucketed selection over
//! the affinity group until the affinity wait X ends, then over all
//! candidates. The two-candidate shortcut (3.6.4) and the fast path (3.6.5)
//! are optimisations with identical results, so the general path serves
//! both: same unlock rule, same capacity filter, same sampling.

use super::bucket::{self, Compare, Outcome, Phase};
use super::estimate;
use super::ring::Ring;
use super::session::Session;
use super::{min_wait, Choice, ClusterSnapshot, Decision, Membership, Request, Scratch};
use crate::ir::WaitAndWidenSettings;
use rand::RngCore;
use std::time::Duration;

#[derive(Debug)]
pub struct WaitAndWiden {
    settings: WaitAndWidenSettings,
    ring: Ring,
    queue_limit: Option<estimate::QueueLimit>,
}

impl WaitAndWiden {
    pub fn new(settings: &WaitAndWidenSettings) -> Self {
        WaitAndWiden {
            ring: Ring::new(
                &settings.seed,
                settings.cache_affinity_virtual_nodes,
                settings.last_cluster_affinity,
            ),
            queue_limit: estimate::QueueLimit::new(settings.bucket.queue_slo()),
            settings: settings.clone(),
        }
    }

    /// Whether sessions act: `last_cluster_affinity` on, with an affinity
    /// group size (without one the request has no affinity order).
    pub(crate) fn sessions_on(&self) -> bool {
        self.settings.last_cluster_affinity
            && self
                .settings
                .cache_affinity_backend_selection_count
                .is_some()
    }

    /// The size of the affinity group over `n` candidates: min(k, n).
    pub(crate) fn group_size(&self, n: usize) -> u64 {
        self.settings
            .cache_affinity_backend_selection_count
            .unwrap_or(0)
            .min(n as u64)
    }

    /// Fills `scratch.members` with the affinity group; false when affinity
    /// is off for this request (no key, or no group size).
    pub(crate) fn group(
        &self,
        request: &Request<'_>,
        clusters: &[ClusterSnapshot],
        scratch: &mut Scratch,
    ) -> bool {
        self.group_finding(request, clusters, None, None, scratch).0
    }

    /// [`WaitAndWiden::group`], also finding `find` through the ring's id
    /// index (see `Ring::group_finding`); `ids` names the candidate list
    /// when the caller keeps one.
    fn group_finding(
        &self,
        request: &Request<'_>,
        clusters: &[ClusterSnapshot],
        ids: Option<Membership>,
        find: Option<&str>,
        scratch: &mut Scratch,
    ) -> (bool, Option<Option<usize>>) {
        match (
            request.cache_affinity_key,
            self.settings.cache_affinity_backend_selection_count,
        ) {
            (Some(key), Some(k)) if k > 0 => {
                let found = self
                    .ring
                    .group_finding(request, clusters, ids, key, k, find, scratch);
                (true, found)
            }
            _ => (false, None),
        }
    }

    /// The decision, and the request's session when this policy turns
    /// `last_cluster_affinity` on (once per decision, for the caller's
    /// counters too): its hint is found through the ring's id index while
    /// the ring is read, a scan only when the ring was not current.
    pub fn decide(
        &self,
        request: &Request<'_>,
        clusters: &[ClusterSnapshot],
        ids: Option<Membership>,
        rng: &mut dyn RngCore,
        scratch: &mut Scratch,
    ) -> (Decision, Option<Session>) {
        if clusters.is_empty() {
            let session = self
                .sessions_on()
                .then(|| Session::of(request, clusters))
                .flatten();
            return (Decision::Unavailable, session);
        }
        let pending = self
            .sessions_on()
            .then(|| Session::pending(request))
            .flatten();
        let hint = pending.and_then(|p| p.hint);
        let (grouped, found) = self.group_finding(request, clusters, ids, hint, scratch);
        let session = pending.map(|p| p.resolve(clusters, found));
        (
            self.decide_grouped(request, clusters, grouped, session, rng, scratch),
            session,
        )
    }

    /// Whether an `Unavailable` answer to `request` stays the answer at
    /// every later elapsed over the same candidates (see
    /// `Balancer::unavailable_lasts`): bucketed selection answers
    /// Unavailable exactly when no member is selectable or waitable (has
    /// capacity, is not excluded, is within the queue-SLO limit and has a
    /// finite TTFT), which the unlock clock does not enter; the decision
    /// answers Unavailable only past the affinity wait, where it stays. So
    /// only a queue-SLO limit that moves with elapsed can change it.
    pub(crate) fn unavailable_lasts(&self, request: &Request<'_>) -> bool {
        self.queue_limit
            .is_none_or(|limit| limit.fixed_from(request.request_slo_ms, request.elapsed))
    }

    /// The decision once `scratch.members` holds the affinity group
    /// (`grouped`; else affinity is off for this request).
    fn decide_grouped(
        &self,
        request: &Request<'_>,
        clusters: &[ClusterSnapshot],
        grouped: bool,
        session: Option<Session>,
        rng: &mut dyn RngCore,
        scratch: &mut Scratch,
    ) -> Decision {
        let s = &self.settings;
        let elapsed_ms = estimate::duration_ms(request.elapsed);
        let queue_limit_ms = self
            .queue_limit
            .map(|limit| limit.at(request.request_slo_ms, request.elapsed));
        let phase = |scale: f64, unlock_ms: f64| Phase {
            settings: &s.bucket,
            scale,
            unlock_ms,
            max_queued: s.bucket.max_queued,
            compare: Compare::Configured(s.comparator),
            queue_limit_ms,
        };
        let all = |scratch: &mut Scratch| {
            scratch.members.clear();
            scratch.members.extend(0..clusters.len());
        };

        let group_size = if grouped { scratch.members.len() } else { 0 };
        // Sessions (docs/stargate.md 3.10): a returning request's last
        // cluster leads the group (inserted first, the last member dropped,
        // when the ring did not pick it); new and stale sessions neither
        // wait nor get the prefill discount.
        if let Some(Session {
            last: Some(last), ..
        }) = session
        {
            super::session::lead_group(&mut scratch.members, last);
        }
        let keeps_affinity = session.is_none_or(Session::keeps_affinity);
        let (affinity_scale, affinity_wait_ms) = if keeps_affinity {
            (
                s.cache_affinity_input_tokens_scale,
                s.cache_affinity_wait_ms,
            )
        } else {
            (1.0, 0)
        };
        if group_size == 0 {
            // B: affinity not active.
            all(scratch);
            let outcome = bucket::select(
                &phase(1.0, elapsed_ms),
                request,
                clusters,
                &scratch.members,
                &mut scratch.entries,
                rng,
            );
            return finish(outcome, 1);
        }

        // A.1: the group, at the affinity prefill scale, clock since arrival.
        let group = bucket::select(
            &phase(affinity_scale, elapsed_ms),
            request,
            clusters,
            &scratch.members,
            &mut scratch.entries,
            rng,
        );
        if let Outcome::Selected(_) = group {
            return finish(group, 1);
        }
        // A.2: always wait until X, even when the group is unavailable.
        let x = Duration::from_millis(affinity_wait_ms);
        if request.elapsed < x {
            let until_x = x - request.elapsed;
            return Decision::Wait(min_wait(group.wait(), Some(until_x)).unwrap_or(until_x));
        }
        // A.3: everyone, full prefill, clock since X.
        all(scratch);
        let global = bucket::select(
            &phase(1.0, estimate::duration_ms(request.elapsed - x)),
            request,
            clusters,
            &scratch.members,
            &mut scratch.entries,
            rng,
        );
        let depth = u32::try_from(group_size)
            .unwrap_or(u32::MAX)
            .saturating_add(1);
        match global {
            Outcome::Selected(_) => finish(global, depth),
            _ => {
                min_wait(global.wait(), group.wait()).map_or(Decision::Unavailable, Decision::Wait)
            }
        }
    }
}

fn finish(outcome: Outcome, rank_depth: u32) -> Decision {
    match outcome {
        Outcome::Selected(index) => Decision::Selected(Choice {
            index,
            rank_depth,
            selected_after_kv_free_tokens_skip: false,
        }),
        Outcome::Wait(d) => Decision::Wait(d),
        Outcome::Unavailable => Decision::Unavailable,
    }
}
