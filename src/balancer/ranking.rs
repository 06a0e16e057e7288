//! The Pulsar ranking (docs/stargate.md 3.7.1-3.7.3, 3.7.5) and
//! feasibility (3.7.4), shared by pulsar, PWW and the legacy band walk.
//!
//! Rankings are cached per affinity key for the current target, ordered
//! candidate ids and weight bit patterns: up to 4096 keys FIFO; once full a
//! key is admitted after its second miss; keys over 256 bytes bypass. The
//! caches of every instance live in one process-wide pool of read-mostly
//! locks (crate::sync::Pool), not behind a lock each: hits take only a
//! read stripe, so threads deciding for one instance do not share a
//! written cache line, and an instance costs no lock shards of its own.

use super::fifo::{FifoMap, Probation, CAPACITY, MAX_CACHED_KEY_BYTES};
use super::target::TargetKey;
use super::{estimate, hash, is_excluded, ClusterSnapshot, Membership, Request, Scratch};
use crate::ir::RendezvousWeight;
use crate::sync::Pool;
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};

impl Drop for Ranker {
    fn drop(&mut self) {
        pool().remove(self.rankings);
    }
}

/// The selected weight when finite and > 0; otherwise the cluster is not
/// ranked (no fallback from maximum to mean).
pub fn weight(c: &ClusterSnapshot, which: RendezvousWeight) -> Option<f64> {
    match which {
        RendezvousWeight::MaxInputTps => c.max_input_tps.and_then(estimate::valid_rate),
        RendezvousWeight::LastMeanInputTps => estimate::valid_rate(c.last_mean_input_tps),
    }
}

/// The Pulsar score w / e, or `None` when unranked for this key.
pub fn score(w: f64, h: u64) -> Option<f64> {
    let e = hash::exponential(h);
    (e.is_finite() && e > 0.0).then(|| w / e)
}

/// Why a ranked cluster cannot take the request (3.7.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Feasibility {
    /// The cluster can take the request.
    Eligible,
    /// The request excludes the cluster (it failed an earlier attempt of
    /// this request).
    Excluded,
    /// KV checks are on and the request has no input tokens.
    NoInputTokens,
    /// Skipped for KV: metrics absent or too few free tokens.
    KvSkip,
}

/// Whether ranked cluster `c` can take `request` (docs/stargate.md 3.7.4):
/// excluded clusters never; with `consider_kv` (`consider_kv_free_tokens`)
/// only a request with input tokens, on a cluster that reports KV metrics
/// and has at least that many free tokens.
pub fn feasibility(c: &ClusterSnapshot, request: &Request<'_>, consider_kv: bool) -> Feasibility {
    if is_excluded(request, &c.id) {
        return Feasibility::Excluded;
    }
    if !consider_kv {
        return Feasibility::Eligible;
    }
    let Some(tokens) = request.input_tokens else {
        return Feasibility::NoInputTokens;
    };
    let absent = c.kv_cache_capacity_tokens == 0
        && c.kv_cache_used_tokens == 0
        && c.kv_cache_free_tokens == 0;
    if absent || c.kv_cache_free_tokens < tokens {
        Feasibility::KvSkip
    } else {
        Feasibility::Eligible
    }
}

/// The cached rankings and the target they are valid for. Hits only read
/// it (under one read stripe); misses write it.
#[derive(Debug)]
struct Rankings {
    target: TargetKey,
    map: FifoMap<Vec<usize>>,
}

/// Every ranker's cache.
fn pool() -> &'static Pool<Rankings> {
    static POOL: OnceLock<Pool<Rankings>> = OnceLock::new();
    POOL.get_or_init(Pool::default)
}

/// Ranks candidates for a seed and weight, with the per-instance cache.
#[derive(Debug)]
pub struct Ranker {
    seed: String,
    weight: RendezvousWeight,
    /// This instance's cache in the pool; removed on drop.
    rankings: u64,
    /// Keys that missed once while the cache was full. Its own lock, so a
    /// first miss does not take the write side of `rankings`; cleared
    /// with it (lock order: `rankings`, then `probation`).
    probation: Mutex<Probation>,
}

impl Ranker {
    /// `indexed`: the cache also indexes its candidates' ids, for
    /// [`Ranker::rank_finding`] (an instance that classifies sessions).
    pub fn new(seed: &str, weight: RendezvousWeight, indexed: bool) -> Self {
        Ranker {
            seed: seed.to_owned(),
            weight,
            rankings: pool().insert(Rankings {
                target: if indexed {
                    TargetKey::indexed()
                } else {
                    TargetKey::default()
                },
                map: FifoMap::new(CAPACITY),
            }),
            probation: Mutex::new(Probation::new(CAPACITY)),
        }
    }

    /// Fills `scratch.ranking` with candidate positions, best first.
    /// `ids` names the candidate list when the caller keeps one.
    pub fn rank(
        &self,
        request: &Request<'_>,
        clusters: &[ClusterSnapshot],
        ids: Option<Membership>,
        scratch: &mut Scratch,
    ) {
        self.rank_finding(request, clusters, ids, None, scratch);
    }

    /// [`Ranker::rank`], also finding `find`'s candidate position through
    /// the cache's id index while the cache is read anyway (the cache's
    /// key has just matched the candidates, so the index is theirs): the
    /// first position of that id, `Some(None)` when no candidate has it,
    /// `None` when the index could not say (no `find`, an instance
    /// without an index, a key over the cached length, or a cache that was
    /// not current): the caller then scans.
    pub fn rank_finding(
        &self,
        request: &Request<'_>,
        clusters: &[ClusterSnapshot],
        ids: Option<Membership>,
        find: Option<&str>,
        scratch: &mut Scratch,
    ) -> Option<Option<usize>> {
        let key = request.cache_affinity_key.unwrap_or("");
        if key.len() > MAX_CACHED_KEY_BYTES {
            self.compute(request, clusters, scratch);
            return None;
        }
        let which = self.weight;
        let bits = |c: &ClusterSnapshot| weight(c, which).map(f64::to_bits);
        let mut found = None;
        // The hit path: shared access only.
        // `None`: a hit, `scratch.ranking` is filled.
        let full = pool().read(self.rankings, |cache| {
            // Only a dropped ranker has no cache: compute, store nothing.
            let Some(cache) = cache else {
                return Some(false);
            };
            let current = cache.target.matches(request, clusters, ids, bits);
            let cached = cache.map.get(key).filter(|_| current);
            if current {
                // A session mostly returns to the primary of its key's
                // ranking: the index confirms that guess with one compare.
                let likely = cached.and_then(|ranking| ranking.first().copied());
                found = find.and_then(|id| cache.target.position(clusters, id, likely));
            }
            if let Some(cached) = cached {
                scratch.ranking.clear();
                scratch.ranking.extend_from_slice(cached);
                return None;
            }
            Some(current && cache.map.is_full())
        });
        let Some(full) = full else {
            return found;
        };
        self.compute(request, clusters, scratch);
        // A first miss on a full cache only enters probation.
        if full && !self.probation().second_miss(key) {
            return found;
        }
        pool().write(self.rankings, |cache| {
            if let Some(cache) = cache {
                self.store(cache, request, clusters, ids, full, scratch);
            }
        });
        found
    }

    /// Stores a miss's ranking (under the pool's write lock).
    fn store(
        &self,
        cache: &mut Rankings,
        request: &Request<'_>,
        clusters: &[ClusterSnapshot],
        ids: Option<Membership>,
        full: bool,
        scratch: &Scratch,
    ) {
        let key = request.cache_affinity_key.unwrap_or("");
        let which = self.weight;
        let bits = |c: &ClusterSnapshot| weight(c, which).map(f64::to_bits);
        if !cache.target.matches(request, clusters, ids, bits) {
            cache.target.set(request, clusters, ids, bits);
            cache.map.clear();
            self.probation().clear();
        } else {
            // The ids compared equal: they now go by the caller's name.
            cache.target.name(ids);
            if cache.map.get(key).is_some() {
                // Another thread cached it meanwhile: as if its miss came first.
                return;
            }
        }
        if !cache.map.is_full() || full || self.probation().second_miss(key) {
            cache.map.insert(key, scratch.ranking.clone());
        }
    }

    fn probation(&self) -> MutexGuard<'_, Probation> {
        self.probation
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// A direct score scan: hash, score and sort every weighted candidate.
    pub fn compute(
        &self,
        request: &Request<'_>,
        clusters: &[ClusterSnapshot],
        scratch: &mut Scratch,
    ) {
        let scored = &mut scratch.scored;
        let bytes = &mut scratch.bytes;
        scored.clear();
        hash::start(bytes, &self.seed, request.routing_key, request.model);
        let key = request.cache_affinity_key.unwrap_or("");
        hash::push_tag(bytes, "cache_affinity_key", key.as_bytes());
        for (pos, c) in clusters.iter().enumerate() {
            let Some(w) = weight(c, self.weight) else {
                continue;
            };
            let h = hash::hash_with(bytes, "cluster_id", c.id.as_bytes());
            if let Some(s) = score(w, h) {
                scored.push((s, pos));
            }
        }
        // Descending score, ties by ascending cluster id, then position.
        scored.sort_unstable_by(|a, b| {
            b.0.total_cmp(&a.0)
                .then_with(|| clusters[a.1].id.cmp(&clusters[b.1].id))
                .then(a.1.cmp(&b.1))
        });
        scratch.ranking.clear();
        scratch.ranking.extend(scored.iter().map(|&(_, pos)| pos));
    }
}
