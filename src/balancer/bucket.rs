//! Bucketed selection (docs/stargate.md 3.6.3), shared by
//! wait-and-widen, pulsar-wait-and-widen and the legacy band walk.
//!
//! Candidates are grouped into TTFT buckets; slower buckets unlock as the
//! unlock clock runs, each bucket boundary consuming its own share of it.

use super::estimate::{self, IgnoreFlags, Score};
use super::{is_excluded, ClusterSnapshot, Request};
use crate::ir::{BucketSettings, Comparator};
use rand::{Rng, RngCore};
use std::cmp::Ordering;
use std::time::Duration;

/// How sampled candidates are compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compare {
    /// A wait-and-widen comparator; `ttft` reuses the phase's TTFT.
    Configured(Comparator),
    /// PWW: queue estimate, then utilisation.
    LeastQueueTime,
}

/// One run's parameters.
#[derive(Clone, Copy, Debug)]
pub struct Phase<'s> {
    pub settings: &'s BucketSettings,
    /// Prefill scale s.
    pub scale: f64,
    /// Unlock clock E, in ms.
    pub unlock_ms: f64,
    /// Capacity limit (q, or f in PWW's open set).
    pub max_queued: u64,
    pub compare: Compare,
    /// The queue-SLO limit in ms, when the SLO is on.
    pub queue_limit_ms: Option<f64>,
}

/// What one run answers; positions index the caller's candidate slice.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Outcome {
    Selected(usize),
    /// Potential wait until a locked bucket with capacity unlocks.
    Wait(Duration),
    Unavailable,
}

impl Outcome {
    pub fn wait(self) -> Option<Duration> {
        match self {
            Outcome::Wait(d) => Some(d),
            _ => None,
        }
    }
}

/// One candidate's working values.
#[derive(Clone, Copy, Debug)]
pub struct Entry {
    pos: usize,
    bucket_ms: f64,
    comparator_ms: f64,
    queue_ms: f64,
    capacity: bool,
}

/// Runs bucketed selection over `members` (positions into `clusters`).
pub fn select(
    phase: &Phase<'_>,
    request: &Request<'_>,
    clusters: &[ClusterSnapshot],
    members: &[usize],
    entries: &mut Vec<Entry>,
    rng: &mut dyn RngCore,
) -> Outcome {
    let s = phase.settings;
    let tokens = request.input_tokens.unwrap_or(0);
    let flags = IgnoreFlags {
        queue_time: s.ignore_queue_time,
        input_processing_time: s.ignore_input_processing_time,
    };

    // Selection and waits both need an entry with capacity that survives
    // step 1 (a potential wait needs a waitable entry), so without one the
    // answer is Unavailable, with no draw: the common poll against a full
    // or over-SLO fleet, found before any TTFT estimate.
    entries.clear();
    if !members.iter().any(|&pos| {
        clusters
            .get(pos)
            .is_some_and(|c| may_take(phase, request, c))
    }) {
        return Outcome::Unavailable;
    }

    // 1. Drop excluded candidates and queue-SLO violators.
    for &pos in members {
        let Some(c) = clusters.get(pos) else { continue };
        if is_excluded(request, &c.id) {
            continue;
        }
        let t = estimate::ttft(c, tokens, request.priority, phase.scale, flags);
        if phase.queue_limit_ms.is_some_and(|limit| t.queue_ms > limit) {
            continue;
        }
        entries.push(Entry {
            pos,
            bucket_ms: t.bucket_ms,
            comparator_ms: t.comparator_ms,
            queue_ms: t.queue_ms,
            capacity: estimate::has_capacity(c, phase.max_queued),
        });
    }

    // 2-4. Which candidates are unlocked, and the wait for the next bucket.
    let (unlocked, potential) = unlock(phase, clusters, entries);
    let unlocked = &mut entries[..unlocked];

    // 5. Sample among the unlocked candidates with capacity.
    let mut with_capacity = 0;
    for i in 0..unlocked.len() {
        if unlocked[i].capacity {
            unlocked.swap(i, with_capacity);
            with_capacity += 1;
        }
    }
    if with_capacity == 0 {
        return potential.map_or(Outcome::Unavailable, Outcome::Wait);
    }
    let pool = &mut unlocked[..with_capacity];
    let sampled = usize::try_from(s.n.max(1))
        .unwrap_or(usize::MAX)
        .min(pool.len());
    for i in 0..sampled {
        let j = rng.random_range(i..pool.len());
        pool.swap(i, j);
    }
    // The shuffle already randomised the order: the first minimum is a
    // random tie-break.
    let mut best = 0;
    for i in 1..sampled {
        if compare(phase.compare, request, clusters, &pool[i], &pool[best]) == Ordering::Less {
            best = i;
        }
    }
    Outcome::Selected(pool[best].pos)
}

/// Whether `c` can be a selectable entry: capacity under the phase's
/// limit, not excluded, within the queue-SLO limit (step 1's tests).
fn may_take(phase: &Phase<'_>, request: &Request<'_>, c: &ClusterSnapshot) -> bool {
    estimate::has_capacity(c, phase.max_queued)
        && !is_excluded(request, &c.id)
        && phase
            .queue_limit_ms
            .is_none_or(|limit| estimate::queue_ms(c, request.priority) <= limit)
}

/// Steps 2-4: the number of unlocked entries (a prefix of `entries`, sorted
/// when needed) and the potential wait.
fn unlock(
    phase: &Phase<'_>,
    clusters: &[ClusterSnapshot],
    entries: &mut [Entry],
) -> (usize, Option<Duration>) {
    let bucket = phase.settings.ttft_bucket_size_ms as f64;
    let mut min = f64::INFINITY;
    let mut max = f64::NEG_INFINITY;
    let mut all_finite = true;
    for e in entries.iter() {
        all_finite &= e.bucket_ms.is_finite();
        min = min.min(e.bucket_ms);
        max = max.max(e.bucket_ms);
    }
    if !min.is_finite() {
        return (0, None); // nothing left, or no finite TTFT
    }
    if all_finite && max - min <= bucket {
        return (entries.len(), None);
    }

    let id = |e: &Entry| clusters.get(e.pos).map_or("", |c| c.id.as_str());
    entries.sort_unstable_by(|a, b| {
        a.bucket_ms
            .total_cmp(&b.bucket_ms)
            .then_with(|| id(a).cmp(id(b)))
            .then(a.pos.cmp(&b.pos))
    });
    let factor = phase.settings.next_bucket_unlock_factor;
    let mut slept = phase.unlock_ms;
    let mut start = entries[0].bucket_ms;
    let mut unlocked = 0;
    for i in 0..entries.len() {
        let ttft = entries[i].bucket_ms;
        if !ttft.is_finite() {
            break;
        }
        let gap = ttft - start;
        if gap > bucket {
            let need = gap * factor;
            // NaN or negative factors never stop the walk (edge case 8).
            if slept < need {
                let waitable = entries[i..]
                    .iter()
                    .any(|e| e.bucket_ms.is_finite() && e.capacity);
                let wait = if waitable {
                    estimate::wait_from_ms(need - slept)
                } else {
                    None
                };
                return (unlocked, wait);
            }
            slept -= need;
            start = ttft;
        }
        unlocked = i + 1;
    }
    (unlocked, None)
}

fn compare(
    how: Compare,
    request: &Request<'_>,
    clusters: &[ClusterSnapshot],
    a: &Entry,
    b: &Entry,
) -> Ordering {
    let (Some(ca), Some(cb)) = (clusters.get(a.pos), clusters.get(b.pos)) else {
        return Ordering::Equal;
    };
    let tokens = request.input_tokens.unwrap_or(0);
    match how {
        Compare::LeastQueueTime => estimate::least_queue_time(ca, a.queue_ms, cb, b.queue_ms),
        Compare::Configured(Comparator::Ttft) => a.comparator_ms.total_cmp(&b.comparator_ms),
        Compare::Configured(Comparator::QueueTime) => a.queue_ms.total_cmp(&b.queue_ms),
        Compare::Configured(Comparator::InputWorkSeconds) => {
            estimate::input_work_seconds(ca, tokens)
                .compare(estimate::input_work_seconds(cb, tokens))
        }
        Compare::Configured(Comparator::Utilization) => {
            Score::Real(estimate::utilization(ca)).compare(Score::Real(estimate::utilization(cb)))
        }
        Compare::Configured(Comparator::NumRequestsQueued) => ca.queue_size.cmp(&cb.queue_size),
    }
}
