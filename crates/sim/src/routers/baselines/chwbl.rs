//! Consistent hashing with bounded loads on the affinity key, as Envoy's
//! ring-hash balancer does with `hash_balance_factor` (docs/simulator.md
//! "Baselines"). Loads are the router's own in-flight requests per backend.
//!
//! A backend may take a request while its active requests are at most
//! ceil(ceil((total active + 1) x factor / 100) / backends) (at least 1).
//! The key's ring owner takes it if it may; otherwise backends are probed
//! in a random order seeded by the key's hash (the same order for the
//! same key), the first that may wins, and if none may, the least
//! overloaded (active / slots) does.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use xxhash_rust::xxh3::xxh3_64;

/// Envoy's ring-hash default `minimum_ring_size`.
pub const MIN_RING_SIZE: usize = 1_024;

/// Points on the ring: ceil(1024 / backends) per backend, each the hash of
/// "<backend id>_<i>"; sorted by hash, then backend.
#[derive(Clone, Debug, Default)]
pub struct Ring {
    points: Vec<(u64, u32)>,
}

impl Ring {
    pub fn new(ids: &[&str]) -> Self {
        let per = MIN_RING_SIZE.div_ceil(ids.len().max(1));
        let mut points = Vec::with_capacity(per * ids.len());
        for (b, id) in ids.iter().enumerate() {
            for i in 0..per {
                points.push((xxh3_64(format!("{id}_{i}").as_bytes()), b as u32));
            }
        }
        points.sort_unstable();
        Ring { points }
    }

    /// The owner of `hash`: the first point at or after it, wrapping.
    pub fn owner(&self, hash: u64) -> Option<usize> {
        let at = self.points.partition_point(|&(h, _)| h < hash);
        self.points
            .get(at)
            .or_else(|| self.points.first())
            .map(|&(_, b)| b as usize)
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.points.len()
    }
}

/// The key's hash (the ring position and the probe seed).
pub fn key_hash(key: &str) -> u64 {
    xxh3_64(key.as_bytes())
}

/// The bound on one backend's active requests.
pub fn slots(total_active: u64, factor: u64, backends: usize) -> u64 {
    let total_slots = (total_active.saturating_add(1))
        .saturating_mul(factor)
        .div_ceil(100);
    total_slots.div_ceil(backends.max(1) as u64).max(1)
}

/// Chooses among `active` (`None` = not a candidate; every backend has
/// weight 1 / len). `owner` is the key's ring owner.
pub fn choose(owner: usize, active: &[Option<u64>], factor: u64, hash: u64) -> Option<usize> {
    let total: u64 = active.iter().flatten().sum();
    let slots = slots(total, factor, active.len());
    let overload = |b: usize| {
        active
            .get(b)
            .copied()
            .flatten()
            .map(|a| a as f64 / slots as f64)
    };
    let mut best: Option<(usize, f64)> = overload(owner).map(|f| (owner, f));
    if let Some((_, f)) = best {
        if f <= 1.0 {
            return Some(owner);
        }
    }
    let mut order: Vec<usize> = (0..active.len()).collect();
    let mut rng = ChaCha8Rng::seed_from_u64(hash);
    for i in 0..order.len() {
        let j = rng.random_range(0..order.len() - i);
        order.swap(i, i + j);
        let b = order[i];
        if b == owner {
            continue;
        }
        let Some(f) = overload(b) else { continue };
        if f <= 1.0 {
            return Some(b);
        }
        if best.is_none_or(|(_, least)| f < least) {
            best = Some((b, f));
        }
    }
    best.map(|(b, _)| b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_by_hand() {
        // 39 active + 1 = 40 x 150 % = 60 slots over 20 backends = 3 each.
        assert_eq!(slots(39, 150, 20), 3);
        // 40 + 1 = 41 x 1.5 = 61.5 -> 62; / 20 = 3.1 -> 4.
        assert_eq!(slots(40, 150, 20), 4);
        // An idle fleet: 1 x 1.5 -> 2, / 20 -> 1.
        assert_eq!(slots(0, 150, 20), 1);
        // Saturates instead of wrapping.
        assert_eq!(
            slots(u64::MAX, 150, 20),
            u64::MAX.div_ceil(100).div_ceil(20)
        );
    }

    #[test]
    fn owner_first_then_a_seeded_probe() {
        // 4 backends, 7 active: slots = ceil(ceil(8 x 1.5) / 4) = 3.
        let active = [Some(3), Some(4), Some(0), Some(0)];
        assert_eq!(slots(7, 150, 4), 3);
        assert_eq!(choose(0, &active, 150, 42), Some(0), "3 <= 3: the owner");
        // 12 active: slots = ceil(ceil(13 x 1.5) / 4) = 5, so 0 and 1 at 6
        // are overloaded and the probe from owner 1 finds 2 or 3.
        let active = [Some(6), Some(6), Some(0), Some(0)];
        assert_eq!(slots(12, 150, 4), 5);
        let probed = choose(1, &active, 150, 42).unwrap();
        assert!(probed == 2 || probed == 3);
        // The same key probes the same way; over many keys both are used.
        assert_eq!(choose(1, &active, 150, 42), Some(probed));
        let mut seen = [0; 4];
        for h in 0..200 {
            seen[choose(1, &active, 150, h).unwrap()] += 1;
        }
        assert_eq!((seen[0], seen[1]), (0, 0));
        assert!(seen[2] > 50 && seen[3] > 50, "{seen:?}");
    }

    #[test]
    fn everyone_overloaded_gives_the_least_overloaded() {
        // Factor 100 %, 2 backends, 9 active: slots = ceil(10 / 2) = 5;
        // the owner is at 7 / 5, the other at 2 / 5 takes it.
        assert_eq!(choose(0, &[Some(7), Some(2)], 100, 1), Some(1));
        // 17 active + 1 = 18 over 3 backends = 6 slots (the excluded third
        // still counts as a backend): 9 / 6 = 1.5 and 8 / 6 = 1.33, both
        // over, so the least overloaded.
        let active = [Some(9), Some(8), None];
        assert_eq!(choose(0, &active, 100, 5), Some(1));
        assert_eq!(choose(2, &active, 100, 5), Some(1), "an excluded owner");
        assert_eq!(choose(0, &[None, None], 150, 5), None);
    }

    #[test]
    fn ring_owners_are_stable_and_spread() {
        let ids = ["a", "b", "c", "d"];
        let ring = Ring::new(&ids);
        assert_eq!(ring.len(), 1_024);
        let mut per = [0; 4];
        for k in 0..4_000 {
            per[ring.owner(key_hash(&format!("k{k}"))).unwrap()] += 1;
        }
        assert!(per.iter().all(|&n| n > 700 && n < 1_300), "{per:?}");
        let again = Ring::new(&ids);
        for k in 0..100 {
            let h = key_hash(&format!("k{k}"));
            assert_eq!(ring.owner(h), again.owner(h));
        }
        assert_eq!(Ring::default().owner(1), None);
    }
}
