//! The read-mostly lock of the request path, for state that every decision
//! reads and almost none changes (the router's target map and slots, the
//! Pulsar ranking cache, the wait-and-widen ring), and the per-thread
//! stripe index of the striped counters.
//!
//! A `RwLock`'s readers all increment one counter, so two cores that only
//! read still pass its cache line back and forth on every request. The
//! lock is crossbeam-utils' `ShardedLock`: a reader locks only its
//! thread's shard (a `RwLock` on its own cache line), a writer every shard
//! in order. Readers cost one uncontended lock; writers cost one per shard
//! and are meant to be rare. This wrapper only ignores poisoning, as
//! everywhere on the request path: the data stays usable.

use crossbeam_utils::sync::ShardedLock;
pub use crossbeam_utils::sync::{
    ShardedLockReadGuard as ReadGuard, ShardedLockWriteGuard as WriteGuard,
};
use std::cell::Cell;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::PoisonError;

/// Stripes of the striped counters: threads beyond this share stripes
/// (and cache lines) round robin. `ShardedLock` has as many shards.
pub const STRIPES: usize = 8;

/// This thread's stripe in `0..STRIPES`, assigned round robin at first use
/// so that a few request threads land on distinct stripes.
#[inline]
pub fn stripe_of_this_thread() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    // A const-initialised cell (no lazy-init check on each access), set
    // at the first call: every counted decision asks.
    thread_local! {
        static STRIPE: Cell<usize> = const { Cell::new(usize::MAX) };
    }
    STRIPE.with(|s| {
        let stripe = s.get();
        if stripe < STRIPES {
            return stripe;
        }
        let stripe = NEXT.fetch_add(1, Ordering::Relaxed) % STRIPES;
        s.set(stripe);
        stripe
    })
}

/// A `ShardedLock` whose poisoning is ignored.
#[derive(Default)]
pub struct ReadMostly<T>(ShardedLock<T>);

impl<T> ReadMostly<T> {
    pub fn new(value: T) -> Self {
        ReadMostly(ShardedLock::new(value))
    }

    /// Shared access, locking only this thread's shard.
    pub fn read(&self) -> ReadGuard<'_, T> {
        self.0.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// Exclusive access, locking every shard.
    pub fn write(&self) -> WriteGuard<'_, T> {
        self.0.write().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Does not lock (a `{:?}` under a write guard must not deadlock), so the
/// value is not shown.
impl<T> std::fmt::Debug for ReadMostly<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReadMostly").finish_non_exhaustive()
    }
}

/// Shards of a [`Pool`].
const POOL_SHARDS: usize = 64;

/// One shard of a [`Pool`]: its owners' states by id.
type PoolShard<T> = ReadMostly<HashMap<u64, T, BuildHasherDefault<IdHash>>>;

/// Read-mostly state of many owners (one per balancer instance, so one per
/// target) behind shared read-mostly locks: owner `id` lives in shard
/// `id % 64`. Each owner having its own `ReadMostly` would cost 1 KiB of
/// lock shards per owner; here the 64 locks are paid once per pool
/// (docs/embedding.md, Bounds). A reader still locks only its thread's
/// stripe of one lock; a writer waits for the readers of the owners that
/// share its shard, which hold it for one cache lookup. Owners are
/// removed by their `Drop`.
pub struct Pool<T> {
    shards: Box<[PoolShard<T>]>,
    next: AtomicU64,
}

impl<T> Default for Pool<T> {
    fn default() -> Self {
        Pool {
            shards: (0..POOL_SHARDS)
                .map(|_| ReadMostly::new(HashMap::default()))
                .collect(),
            next: AtomicU64::new(0),
        }
    }
}

impl<T> Pool<T> {
    fn shard(&self, id: u64) -> &PoolShard<T> {
        // POOL_SHARDS fits u64 and the remainder fits usize.
        &self.shards[(id % POOL_SHARDS as u64) as usize]
    }

    /// Stores a new owner's state; returns its id.
    pub fn insert(&self, value: T) -> u64 {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        self.shard(id).write().insert(id, value);
        id
    }

    /// `f` on the owner's state under its shard's read stripe (`None` for
    /// an id that was never inserted or is removed).
    pub fn read<R>(&self, id: u64, f: impl FnOnce(Option<&T>) -> R) -> R {
        f(self.shard(id).read().get(&id))
    }

    /// `f` on the owner's state under its shard's write lock.
    pub fn write<R>(&self, id: u64, f: impl FnOnce(Option<&mut T>) -> R) -> R {
        f(self.shard(id).write().get_mut(&id))
    }

    /// Takes the owner's state out of the pool. A shard's table that
    /// is down to a quarter of its capacity is halved, so the pool holds
    /// at most 4 table entries per live owner once owners go (plus a
    /// minimum per shard), never the peak's.
    /// Returns the state for the caller to drop (after the lock).
    pub fn remove(&self, id: u64) -> Option<T> {
        let mut shard = self.shard(id).write();
        let removed = shard.remove(&id);
        if shard.len() < shard.capacity() / 4 {
            let len = shard.len();
            shard.shrink_to(len * 2);
        }
        removed
    }

    /// The table entries the pool has room for (its capacity), for the
    /// tests of its bound.
    #[cfg(test)]
    pub fn capacity(&self) -> usize {
        self.shards.iter().map(|s| s.read().capacity()).sum()
    }
}

/// Does not lock, so the values are not shown.
impl<T> std::fmt::Debug for Pool<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool").finish_non_exhaustive()
    }
}

/// The hash of a pool id: ids are sequential and a shard holds every 64th,
/// so the bits are mixed (a multiply, then the high half folded into the
/// low bits the table indexes by).
#[derive(Default)]
pub struct IdHash(u64);

impl Hasher for IdHash {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u64(&mut self, n: u64) {
        let h = (self.0 ^ n).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.0 = h ^ (h >> 32);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writers_exclude_readers_on_every_shard() {
        let lock = ReadMostly::new((0u64, 0u64));
        std::thread::scope(|s| {
            for _ in 0..2 * STRIPES {
                s.spawn(|| {
                    for _ in 0..500 {
                        let mut w = lock.write();
                        w.0 += 1;
                        w.1 += 1;
                        drop(w);
                        let r = lock.read();
                        assert_eq!(r.0, r.1, "a reader saw a half-done write");
                    }
                });
            }
        });
        assert_eq!(*lock.read(), (8_000, 8_000));
    }

    #[test]
    fn pool_owners_keep_their_own_state() {
        let pool = Pool::default();
        let ids: Vec<u64> = (0..200u64).map(|i| pool.insert(i * 10)).collect();
        for (i, &id) in ids.iter().enumerate() {
            pool.write(id, |v| *v.expect("present") += 1);
            assert_eq!(pool.read(id, |v| v.copied()), Some(i as u64 * 10 + 1));
        }
        pool.remove(ids[3]);
        assert_eq!(pool.read(ids[3], |v| v.copied()), None);
        assert_eq!(pool.read(ids[4], |v| v.copied()), Some(41));
    }

    #[test]
    fn the_pool_shrinks_as_owners_go() {
        let pool = Pool::default();
        let ids: Vec<u64> = (0..64_000u64).map(|i| pool.insert(i)).collect();
        let peak = pool.capacity();
        assert!(peak >= 64_000);
        let (gone, kept) = ids.split_at(63_000);
        for &id in gone {
            pool.remove(id);
        }
        // At most 4 entries per live owner, and a small minimum per shard
        // (a hash table of 3 or fewer entries holds 3 or 7).
        let bound = 4 * kept.len() + POOL_SHARDS * 7;
        assert!(
            pool.capacity() <= bound,
            "{} entries of room for {} owners (peak {peak}), bound {bound}",
            pool.capacity(),
            kept.len()
        );
        for &id in kept {
            assert_eq!(pool.read(id, |v| v.copied()), Some(id), "kept owners stay");
        }
    }
}
