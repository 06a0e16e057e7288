//! The wait-and-widen cache-affinity ring (docs/stargate.md 3.6.6):
//! virtual-node points per cluster, a key point, and a clockwise walk that
//! collects the affinity group. One ring per instance for the current
//! target and ordered candidate ids; up to 4096 per-key groups, FIFO.
//! Every ring's state lives in one process-wide pool of read-mostly locks
//! (crate::sync::Pool), so an instance costs no lock shards of its own.
//! Hits take only a read stripe; misses write.

use super::fifo::{FifoMap, CAPACITY, MAX_CACHED_KEY_BYTES};
use super::hash;
use super::target::TargetKey;
use super::{ClusterSnapshot, Request, Scratch};
use crate::sync::Pool;
use std::collections::HashSet;
use std::sync::OnceLock;

/// Guard against absurd virtual-node counts (JSON has no upper bound): the
/// ring never holds more points than this. Realistic rings (V <= 1024 at
/// 1000 clusters) are far below it and unaffected.
pub const MAX_RING_POINTS: usize = 1 << 22;

#[derive(Debug)]
struct State {
    target: TargetKey,
    /// (hash, candidate position), sorted by (hash, cluster id, position).
    points: Vec<(u64, usize)>,
    groups: FifoMap<Vec<usize>>,
}

/// Every ring's state.
fn pool() -> &'static Pool<State> {
    static POOL: OnceLock<Pool<State>> = OnceLock::new();
    POOL.get_or_init(Pool::default)
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
        pool().remove(self.state);
    }
}

impl Ring {
    pub fn new(seed: &str, virtual_nodes: u64) -> Self {
        Ring {
            seed: seed.to_owned(),
            virtual_nodes: virtual_nodes.max(1),
            state: pool().insert(State {
                target: TargetKey::default(),
                points: Vec::new(),
                groups: FifoMap::new(CAPACITY),
            }),
        }
    }

    /// Fills `scratch.members` with the positions of the affinity order for
    /// `key`: min(k, distinct clusters) members, primary first.
    pub fn group(
        &self,
        request: &Request<'_>,
        clusters: &[ClusterSnapshot],
        key: &str,
        k: u64,
        scratch: &mut Scratch,
    ) {
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
            if !state.target.matches(request, clusters, None, |_| None) {
                return Some(false);
            }
            if let Some(cached) = state.groups.get(key) {
                group.extend_from_slice(cached);
                return None;
            }
            let keypoint = self.keypoint(request, key, bytes);
            walk(&state.points, clusters.len(), k, keypoint, taken, group);
            cacheable.then_some(true)
        });
        let Some(walked) = next else {
            return;
        };
        pool().write(self.state, |state| {
            let Some(state) = state else {
                // A dropped ring (never on a live instance): walk a
                // one-off ring.
                if !walked {
                    let mut one_off = State {
                        target: TargetKey::default(),
                        points: Vec::new(),
                        groups: FifoMap::new(1),
                    };
                    self.build(&mut one_off, request, clusters, bytes);
                    let keypoint = self.keypoint(request, key, bytes);
                    walk(&one_off.points, clusters.len(), k, keypoint, taken, group);
                }
                return;
            };
            if !state.target.matches(request, clusters, None, |_| None) {
                state.target.set(request, clusters, None, |_| None);
                self.build(state, request, clusters, bytes);
                state.groups.clear();
            }
            if !walked {
                let keypoint = self.keypoint(request, key, bytes);
                walk(&state.points, clusters.len(), k, keypoint, taken, group);
            }
            // Another thread may have cached it meanwhile: the same group.
            if cacheable && state.groups.get(key).is_none() {
                state.groups.insert(key, group.clone());
            }
        });
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
        state.points.clear();
        hash::start(bytes, &self.seed, request.routing_key, request.model);
        let prefix = bytes.len();
        for &i in &distinct {
            hash::push_tag(bytes, "cluster_id", clusters[i].id.as_bytes());
            for v in 0..v_count {
                let h = hash::hash_with(bytes, "virtual_node", &v.to_le_bytes());
                state.points.push((h, i));
            }
            bytes.truncate(prefix);
        }
        state.points.sort_unstable_by(|a, b| {
            a.0.cmp(&b.0)
                .then_with(|| clusters[a.1].id.cmp(&clusters[b.1].id))
                .then(a.1.cmp(&b.1))
        });
    }
}

/// Walks clockwise from the first point >= `keypoint`, collecting distinct
/// clusters until `k` (or all) are collected. `taken` is caller-owned so
/// that uncached keys (over 256 bytes) do not allocate per decision.
fn walk(
    points: &[(u64, usize)],
    n: usize,
    k: u64,
    keypoint: u64,
    taken: &mut Vec<bool>,
    group: &mut Vec<usize>,
) {
    if points.is_empty() {
        return;
    }
    let start = points.partition_point(|p| p.0 < keypoint);
    let want = usize::try_from(k).unwrap_or(usize::MAX).min(n);
    taken.clear();
    taken.resize(n, false);
    for step in 0..points.len() {
        if group.len() >= want {
            break;
        }
        let pos = points[(start + step) % points.len()].1;
        if let Some(t) = taken.get_mut(pos).filter(|t| !**t) {
            *t = true;
            group.push(pos);
        }
    }
}
