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
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::PoisonError;

/// Stripes of the striped counters: threads beyond this share stripes
/// (and cache lines) round robin. `ShardedLock` has as many shards.
pub const STRIPES: usize = 8;

/// This thread's stripe in `0..STRIPES`, assigned round robin at first use
/// so that a few request threads land on distinct stripes.
pub fn stripe_of_this_thread() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static STRIPE: usize = NEXT.fetch_add(1, Ordering::Relaxed) % STRIPES;
    }
    STRIPE.with(|s| *s)
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
}
