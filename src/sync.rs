//! A read-mostly lock whose readers on different threads write different
//! cache lines, for state that every decision reads and almost none
//! changes (the router's target map and slots, the Pulsar ranking cache).
//!
//! A `RwLock`'s readers all increment one counter, so two cores that only
//! read still pass its cache line back and forth on every request. Here a
//! reader locks only its thread's stripe (one `RwLock<()>` on its own cache
//! line) and a writer locks every stripe, in index order. Readers cost one
//! uncontended lock; writers cost [`STRIPES`] and are meant to be rare.

use std::cell::UnsafeCell;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// Stripes per lock: threads beyond this share stripes (and cache lines)
/// round robin; each stripe costs one 64-byte line per lock.
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

/// One stripe's lock, alone on its cache line.
#[derive(Debug, Default)]
#[repr(align(64))]
struct Stripe(RwLock<()>);

/// A reader-writer lock with per-thread read stripes. Poisoning is ignored,
/// as everywhere on the request path: the data stays usable.
pub struct ReadMostly<T> {
    stripes: [Stripe; STRIPES],
    value: UnsafeCell<T>,
}

// SAFETY: `value` is only reached through a guard: shared references while
// at least one stripe is read-locked, a mutable one while every stripe is
// write-locked. That is the contract of `RwLock<T>`, with its bounds.
unsafe impl<T: Send + Sync> Sync for ReadMostly<T> {}

impl<T> ReadMostly<T> {
    pub fn new(value: T) -> Self {
        ReadMostly {
            stripes: Default::default(),
            value: UnsafeCell::new(value),
        }
    }

    /// Shared access, locking only this thread's stripe.
    pub fn read(&self) -> ReadGuard<'_, T> {
        let stripe = &self.stripes[stripe_of_this_thread()].0;
        let lock = stripe.read().unwrap_or_else(PoisonError::into_inner);
        ReadGuard {
            _lock: lock,
            // SAFETY: a writer needs this stripe too, so none exists while
            // `_lock` is held, and the reference lives no longer than it.
            value: unsafe { &*self.value.get() },
        }
    }

    /// Exclusive access, locking every stripe in index order (one order for
    /// every writer, so writers cannot deadlock each other).
    pub fn write(&self) -> WriteGuard<'_, T> {
        let locks = std::array::from_fn(|i| {
            self.stripes[i]
                .0
                .write()
                .unwrap_or_else(PoisonError::into_inner)
        });
        WriteGuard {
            _locks: locks,
            value: self.value.get(),
        }
    }
}

impl<T: Default> Default for ReadMostly<T> {
    fn default() -> Self {
        ReadMostly::new(T::default())
    }
}

/// Does not lock (a `{:?}` under a write guard must not deadlock), so the
/// value is not shown.
impl<T> std::fmt::Debug for ReadMostly<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReadMostly").finish_non_exhaustive()
    }
}

pub struct ReadGuard<'a, T> {
    _lock: RwLockReadGuard<'a, ()>,
    value: &'a T,
}

impl<T> Deref for ReadGuard<'_, T> {
    type Target = T;

    fn deref(&self) -> &T {
        self.value
    }
}

pub struct WriteGuard<'a, T> {
    _locks: [RwLockWriteGuard<'a, ()>; STRIPES],
    value: *mut T,
}

impl<T> Deref for WriteGuard<'_, T> {
    type Target = T;

    fn deref(&self) -> &T {
        // SAFETY: every stripe is write-locked while `_locks` lives, so no
        // other reference to the value exists.
        unsafe { &*self.value }
    }
}

impl<T> DerefMut for WriteGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as in `deref`; `&mut self` makes this the only borrow.
        unsafe { &mut *self.value }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writers_exclude_readers_on_every_stripe() {
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
