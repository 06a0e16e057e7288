//! The wait-and-widen cache-affinity ring (docs/stargate.md 3.6.6):
//! virtual-node points per cluster, a key point, and a clockwise walk that
//! collects the affinity group. One ring per instance for the current
//! target and ordered candidate ids; up to 4096 per-key groups, FIFO.
//! Every ring's state lives in one process-wide pool of read-mostly locks
//! (crate::sync::Pool), so an instance costs no lock shards of its own.
//! Hits take only a read stripe; misses write.
//!
//! A ring is a pure function of its seed, virtual-node count, target and
//! candidate ids, and it depends on the routing key (every point hashes
//! it), so two targets never share one. Its points are a cache: the
//! points of every ring in the process together stay within
//! [`RING_BYTES_BUDGET`]; past it the least recently built rings lose
//! their points (their cached groups stay) and are rebuilt at their next
//! group miss (docs/embedding.md, Bounds).

use super::fifo::{FifoMap, CAPACITY, MAX_CACHED_KEY_BYTES};
use super::hash;
use super::target::TargetKey;
use super::{ClusterSnapshot, Membership, Request, Scratch};
use crate::sync::Pool;
use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};

/// Guard against absurd virtual-node counts (JSON has no upper bound): the
/// ring never holds more points than this. Realistic rings (V <= 1024 at
/// 1000 clusters) are far below it and unaffected.
pub const MAX_RING_POINTS: usize = 1 << 22;

/// The bytes of ring points the process keeps, over every ring: 32 MiB,
/// about 4 600 rings of 4 clusters at 150 virtual nodes (12 bytes a
/// point: 7 200 bytes a ring), 900 of 20 clusters. The unit tests run
/// with 1 MiB, to reach it quickly.
#[cfg(not(test))]
pub const RING_BYTES_BUDGET: usize = 32 << 20;
#[cfg(test)]
pub const RING_BYTES_BUDGET: usize = 1 << 20;

#[derive(Debug)]
struct State {
    target: TargetKey,
    /// Point hashes, sorted by (hash, cluster id, position); `owners[i]`
    /// is the candidate position of `hashes[i]`. Empty when not built or
    /// evicted (the budget).
    hashes: Vec<u64>,
    owners: Vec<u32>,
    /// This ring's entry in [`Built`], while it holds points.
    built: Option<u64>,
    groups: FifoMap<Vec<usize>>,
}

impl State {
    fn new(groups: usize, indexed: bool) -> Self {
        State {
            target: if indexed {
                TargetKey::indexed()
            } else {
                TargetKey::default()
            },
            hashes: Vec::new(),
            owners: Vec::new(),
            built: None,
            groups: FifoMap::new(groups),
        }
    }

    fn point_bytes(&self) -> usize {
        self.hashes.capacity() * std::mem::size_of::<u64>()
            + self.owners.capacity() * std::mem::size_of::<u32>()
    }

    /// Frees the points and their share of the budget.
    fn forget_points(&mut self) {
        RING_BYTES.fetch_sub(self.point_bytes(), Ordering::Relaxed);
        self.hashes = Vec::new();
        self.owners = Vec::new();
        if let Some(seq) = self.built.take() {
            built().remove(&seq);
        }
    }
}

/// Every ring's state.
fn pool() -> &'static Pool<State> {
    static POOL: OnceLock<Pool<State>> = OnceLock::new();
    POOL.get_or_init(Pool::default)
}

/// The bytes of points held by every ring.
static RING_BYTES: AtomicUsize = AtomicUsize::new(0);

/// The rings holding points, oldest build first: build number to pool id.
type Built = BTreeMap<u64, u64>;

/// Locked after a ring's pool shard, never before one (eviction pops an
/// entry and lets go of this lock before it locks the ring's shard).
fn built() -> std::sync::MutexGuard<'static, Built> {
    static BUILT: Mutex<Built> = Mutex::new(BTreeMap::new());
    BUILT.lock().unwrap_or_else(PoisonError::into_inner)
}

/// While the rings' points exceed the budget, the oldest built ring other
/// than `keep` loses them. Called with no ring lock held.
fn enforce_budget(keep: u64) {
    while RING_BYTES.load(Ordering::Relaxed) > RING_BYTES_BUDGET {
        let next = {
            let mut built = built();
            let first = built
                .iter()
                .find(|(_, &id)| id != keep)
                .map(|(&seq, &id)| (seq, id));
            if let Some((seq, _)) = first {
                built.remove(&seq);
            }
            first
        };
        let Some((seq, id)) = next else {
            return;
        };
        pool().write(id, |state| {
            // A ring rebuilt since has a newer entry: only this entry went.
            if let Some(state) = state.filter(|s| s.built == Some(seq)) {
                state.built = None;
                state.forget_points();
            }
        });
    }
}

#[derive(Debug)]
pub struct Ring {
    seed: String,
    virtual_nodes: u64,
    /// This instance's state in the pool; removed on drop.
    state: u64,
}

impl Drop for Ring {
    fn drop(&mut self) {
        if let Some(mut state) = pool().remove(self.state) {
            state.forget_points();
        }
    }
}

impl Ring {
    /// `indexed`: the ring's key also indexes the candidates' ids, for
    /// [`Ring::group_finding`] (an instance that classifies sessions).
    pub fn new(seed: &str, virtual_nodes: u64, indexed: bool) -> Self {
        Ring {
            seed: seed.to_owned(),
            virtual_nodes: virtual_nodes.max(1),
            state: pool().insert(State::new(CAPACITY, indexed)),
        }
    }

    /// Fills `scratch.members` with the positions of the affinity order for
    /// `key`: min(k, distinct clusters) members, primary first. Also finds
    /// `find`'s candidate position through the ring key's id index while
    /// it is read anyway (as `Ranker::rank_finding` does): `None` when the
    /// index could not say. `ids` names the candidate list when the caller
    /// keeps one: a current ring then skips the compare of every id.
    #[allow(clippy::too_many_arguments)]
    pub fn group_finding(
        &self,
        request: &Request<'_>,
        clusters: &[ClusterSnapshot],
        ids: Option<Membership>,
        key: &str,
        k: u64,
        find: Option<&str>,
        scratch: &mut Scratch,
    ) -> Option<Option<usize>> {
        let mut found = None;
        let Scratch {
            members: group,
            bytes,
            taken,
            ..
        } = scratch;
        group.clear();
        let cacheable = key.len() <= MAX_CACHED_KEY_BYTES;
        // The hit path, and the walk of a miss: shared access only.
        // `Some(walked)` when the write below is needed.
        let next = pool().read(self.state, |state| {
            let Some(state) = state else {
                return Some(false);
            };
            if !state.target.matches_unweighted(request, clusters, ids) {
                return Some(false);
            }
            let cached = state.groups.get(key);
            // A session mostly returns to its key's primary (as in
            // `Ranker::rank_finding`).
            let likely = cached.and_then(|group| group.first().copied());
            found = find.and_then(|id| state.target.position(clusters, id, likely));
            if let Some(cached) = cached {
                group.extend_from_slice(cached);
                return None;
            }
            // Points evicted by the budget: rebuilt under the write lock.
            if state.hashes.is_empty() && !clusters.is_empty() {
                return Some(false);
            }
            let keypoint = self.keypoint(request, key, bytes);
            walk(state, clusters.len(), k, keypoint, taken, group);
            cacheable.then_some(true)
        });
        let Some(walked) = next else {
            return found;
        };
        let built = pool().write(self.state, |state| {
            let Some(state) = state else {
                // A dropped ring (never on a live instance): walk a
                // one-off ring.
                if !walked {
                    let mut one_off = State::new(1, false);
                    self.build(&mut one_off, request, clusters, bytes);
                    let keypoint = self.keypoint(request, key, bytes);
                    walk(&one_off, clusters.len(), k, keypoint, taken, group);
                    one_off.forget_points();
                }
                return false;
            };
            let mut built = false;
            if !state.target.matches_unweighted(request, clusters, ids) {
                state.target.set(request, clusters, ids, |_| None);
                self.build(state, request, clusters, bytes);
                state.groups.clear();
                built = true;
            } else {
                // The ids compared equal: they now go by the caller's name.
                state.target.name(ids);
                if !walked && state.hashes.is_empty() && !clusters.is_empty() {
                    // Evicted points: the same ring again, the groups stay.
                    self.build(state, request, clusters, bytes);
                    built = true;
                }
            }
            if !walked {
                let keypoint = self.keypoint(request, key, bytes);
                walk(state, clusters.len(), k, keypoint, taken, group);
            }
            // Another thread may have cached it meanwhile: the same group.
            if cacheable && state.groups.get(key).is_none() {
                state.groups.insert(key, group.clone());
            }
            built
        });
        if built {
            enforce_budget(self.state);
        }
        found
    }

    fn keypoint(&self, request: &Request<'_>, key: &str, bytes: &mut Vec<u8>) -> u64 {
        hash::start(bytes, &self.seed, request.routing_key, request.model);
        hash::hash_with(bytes, "cache_affinity_key", key.as_bytes())
    }

    fn build(
        &self,
        state: &mut State,
        request: &Request<'_>,
        clusters: &[ClusterSnapshot],
        bytes: &mut Vec<u8>,
    ) {
        // A duplicated id is one cluster: only its first position gets points.
        let mut seen = HashSet::new();
        let distinct: Vec<usize> = (0..clusters.len())
            .filter(|&i| seen.insert(clusters[i].id.as_str()))
            .collect();
        let per_cluster = (MAX_RING_POINTS / distinct.len().max(1)).max(1) as u64;
        let v_count = self.virtual_nodes.min(per_cluster);
        state.forget_points();
        // Candidate positions past u32 are not ringed (4 billion clusters
        // do not happen; MAX_RING_POINTS caps the points anyway).
        let distinct: Vec<u32> = distinct
            .into_iter()
            .filter_map(|i| u32::try_from(i).ok())
            .collect();
        let count = distinct.len().saturating_mul(v_count as usize);
        let mut points: Vec<(u64, u32)> = Vec::with_capacity(count);
        hash::start(bytes, &self.seed, request.routing_key, request.model);
        let prefix = bytes.len();
        for &i in &distinct {
            hash::push_tag(bytes, "cluster_id", clusters[i as usize].id.as_bytes());
            for v in 0..v_count {
                let h = hash::hash_with(bytes, "virtual_node", &v.to_le_bytes());
                points.push((h, i));
            }
            bytes.truncate(prefix);
        }
        points.sort_unstable_by(|a, b| {
            a.0.cmp(&b.0)
                .then_with(|| clusters[a.1 as usize].id.cmp(&clusters[b.1 as usize].id))
                .then(a.1.cmp(&b.1))
        });
        // Two exact-size arrays: 12 bytes a point instead of 16 (and no
        // doubling slack).
        state.hashes = points.iter().map(|p| p.0).collect();
        state.owners = points.iter().map(|p| p.1).collect();
        RING_BYTES.fetch_add(state.point_bytes(), Ordering::Relaxed);
        let seq = next_build();
        state.built = Some(seq);
        built().insert(seq, self.state);
    }
}

/// A build number no earlier build got.
fn next_build() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// Walks clockwise from the first point >= `keypoint`, collecting distinct
/// clusters until `k` (or all) are collected. `taken` is caller-owned so
/// that uncached keys (over 256 bytes) do not allocate per decision.
fn walk(
    ring: &State,
    n: usize,
    k: u64,
    keypoint: u64,
    taken: &mut Vec<bool>,
    group: &mut Vec<usize>,
) {
    let (hashes, owners) = (&ring.hashes, &ring.owners);
    if hashes.is_empty() {
        return;
    }
    let start = hashes.partition_point(|&h| h < keypoint);
    let want = usize::try_from(k).unwrap_or(usize::MAX).min(n);
    taken.clear();
    taken.resize(n, false);
    for step in 0..owners.len() {
        if group.len() >= want {
            break;
        }
        let pos = owners[(start + step) % owners.len()] as usize;
        if let Some(t) = taken.get_mut(pos).filter(|t| !**t) {
            *t = true;
            group.push(pos);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn group(
        ring: &Ring,
        routing_key: &str,
        key: &str,
        clusters: &[ClusterSnapshot],
    ) -> Vec<usize> {
        let request = Request {
            model: "m",
            routing_key: Some(routing_key),
            cache_affinity_key: Some(key),
            ..Request::default()
        };
        let mut scratch = Scratch::default();
        ring.group_finding(&request, clusters, None, key, 3, None, &mut scratch);
        scratch.members.clone()
    }

    #[test]
    fn rings_past_the_budget_lose_their_points_and_decide_alike() {
        // 10 clusters at 200 virtual nodes: 2 000 points, 24 000 bytes a
        // ring; 60 rings are 1.4 MB, past the tests' 1 MiB.
        let clusters: Vec<_> = (0..10)
            .map(|i| ClusterSnapshot::new(format!("c{i}")))
            .collect();
        let first = Ring::new("s", 200, false);
        let before = group(&first, "tenant-0", "a", &clusters);
        let others: Vec<Ring> = (1..60)
            .map(|i| {
                let ring = Ring::new("s", 200, false);
                group(&ring, &format!("tenant-{i}"), "a", &clusters);
                ring
            })
            .collect();
        let held = RING_BYTES.load(Ordering::Relaxed);
        // Other tests build rings meanwhile: at most one build each past
        // the budget.
        assert!(held <= RING_BYTES_BUDGET + 8 * 24_000, "{held} B of points");
        let evicted = pool().read(first.state, |s| s.is_some_and(|s| s.hashes.is_empty()));
        assert!(evicted, "the oldest ring lost its points");
        // Its cached group stays; a new key rebuilds the same ring.
        assert_eq!(group(&first, "tenant-0", "a", &clusters), before);
        let fresh = Ring::new("s", 200, false);
        assert_eq!(
            group(&first, "tenant-0", "b", &clusters),
            group(&fresh, "tenant-0", "b", &clusters)
        );
        drop(others);
        drop(fresh);
        drop(first);
    }
}
