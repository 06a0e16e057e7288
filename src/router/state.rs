//! Per-target state: the expression-cache entry (current and previous
//! expression) and the balancer instances, one per definition identity,
//! in a slot of the router's target arena (arena.rs).
//!
//! Locking: a hit takes only the read side of `slot` (one read stripe,
//! crate::sync, so concurrent hits write no shared cache line); a build compiles under
//! `build_lock` (one build per target at a time) and takes the write side of
//! `slot` only to install the result, so a hit never waits for a compile.
//! No code holds two targets' `slot` locks at once.

use crate::ir::{Algorithm, Definition};
use crate::sync::{ReadGuard, ReadMostly, WriteGuard};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

/// One cached expression: its raw header bytes and what they compiled to.
#[derive(Debug)]
pub(crate) struct Cached {
    pub(crate) bytes: Box<[u8]>,
    pub(crate) definition: Arc<Definition>,
}

impl Cached {
    pub(crate) fn algorithm(&self) -> Algorithm {
        self.definition.policy.algorithm
    }
}

#[derive(Debug)]
pub(crate) struct Entry {
    pub(crate) current: Cached,
    pub(crate) previous: Option<Cached>,
}

impl Entry {
    /// The cached definition for exactly these bytes, if any.
    pub(crate) fn find(&self, bytes: &[u8]) -> Option<&Cached> {
        std::iter::once(&self.current)
            .chain(self.previous.as_ref())
            .find(|c| *c.bytes == *bytes)
    }

    pub(crate) fn holds(&self, definition: &Arc<Definition>) -> bool {
        std::iter::once(&self.current)
            .chain(self.previous.as_ref())
            .any(|c| Arc::ptr_eq(&c.definition, definition))
    }
}

/// A balancer instance and the definition it decides for, behind one
/// `Arc`, so a resolve clones (and its caller drops) one count, not two.
#[derive(Debug)]
pub(crate) struct Instance<B> {
    pub(crate) definition: Arc<Definition>,
    pub(crate) engine: Arc<B>,
}

#[derive(Debug)]
pub(crate) struct Slot<B> {
    pub(crate) entry: Option<Entry>,
    pub(crate) instances: Vec<Arc<Instance<B>>>,
    /// The target this slot holds: (model, routing key); `None` = free.
    pub(crate) key: Option<(Box<str>, Option<Box<str>>)>,
    /// Bumped whenever the slot is freed or given to another target.
    pub(crate) generation: u64,
}

impl<B> Slot<B> {
    pub(crate) fn instance(&self, definition: &Arc<Definition>) -> Option<&Arc<Instance<B>>> {
        self.instances
            .iter()
            .find(|i| Arc::ptr_eq(&i.definition, definition))
    }

    /// Removes the balancer instance of a dropped definition.
    pub(crate) fn retire(&mut self, definition: &Arc<Definition>) {
        self.instances
            .retain(|i| !Arc::ptr_eq(&i.definition, definition));
    }

    /// Removes the entry and retires both of its definitions.
    pub(crate) fn forget_entry(&mut self) -> bool {
        let Some(entry) = self.entry.take() else {
            return false;
        };
        self.retire(&entry.current.definition);
        if let Some(previous) = &entry.previous {
            self.retire(&previous.definition);
        }
        true
    }
}

#[derive(Debug)]
pub(crate) struct TargetState<B> {
    slot: ReadMostly<Slot<B>>,
    build_lock: Mutex<()>,
    /// Clock reading (ns) of the entry's last build or hit.
    last_used_ns: AtomicU64,
}

impl<B> TargetState<B> {
    pub(crate) fn new() -> Self {
        TargetState {
            slot: ReadMostly::new(Slot {
                entry: None,
                instances: Vec::new(),
                key: None,
                generation: 0,
            }),
            build_lock: Mutex::new(()),
            last_used_ns: AtomicU64::new(0),
        }
    }

    pub(crate) fn read(&self) -> ReadGuard<'_, Slot<B>> {
        self.slot.read()
    }

    pub(crate) fn write(&self) -> WriteGuard<'_, Slot<B>> {
        self.slot.write()
    }

    pub(crate) fn lock_build(&self) -> MutexGuard<'_, ()> {
        self.build_lock
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Records a use. Skips the store while the recorded time is within
    /// [`TOUCH_GRANULARITY`], so concurrent hits on one target mostly read
    /// the shared cache line instead of writing it.
    pub(crate) fn touch(&self, now: Duration) {
        self.touch_ns(nanos(now));
    }

    /// [`TargetState::touch`] in nanoseconds, for the hit path.
    pub(crate) fn touch_ns(&self, now: u64) {
        let last = self.last_used_ns.load(Ordering::Relaxed);
        if now.saturating_sub(last) >= TOUCH_GRANULARITY_NS {
            self.last_used_ns.store(now, Ordering::Relaxed);
        }
    }

    /// Records a build: always stores.
    pub(crate) fn touch_exact(&self, now: Duration) {
        self.last_used_ns.store(nanos(now), Ordering::Relaxed);
    }

    pub(crate) fn last_used(&self) -> Duration {
        Duration::from_nanos(self.last_used_ns.load(Ordering::Relaxed))
    }

    /// Whether an entry last used then has outlived the idle window by now.
    pub(crate) fn idle_expired(&self, now: Duration, idle: Duration) -> bool {
        self.idle_expired_ns(nanos(now), nanos(idle))
    }

    /// [`TargetState::idle_expired`] in nanoseconds, for the hit path.
    pub(crate) fn idle_expired_ns(&self, now: u64, idle: u64) -> bool {
        now.saturating_sub(self.last_used_ns.load(Ordering::Relaxed)) >= idle
    }
}

/// How stale a recorded use may be; negligible against a 15-minute window.
pub(crate) const TOUCH_GRANULARITY_NS: u64 = 100_000_000;

pub(crate) fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}
