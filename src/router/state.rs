//! Per-target state: the expression-cache entry (current and previous
//! expression) and the balancer instances, one per definition identity,
//! in a slot of the router's target arena (arena.rs).
//!
//! Locking: the slots of one arena chunk (64 targets) share one
//! read-mostly lock (crate::sync): a hit takes only its thread's read
//! stripe of it, so concurrent hits write no shared cache line, and a
//! target costs no lock shards of its own (8 shards of 128 bytes, 1 KiB,
//! per lock: docs/embedding.md, Bounds). A build compiles under the
//! target's own `build_lock` (one build per target at a time) and takes
//! the write side of the chunk's lock only to install the result, so a hit
//! never waits for a compile. No code holds two slots' locks at once (two
//! slots of one chunk share the lock, and a read stripe is not re-entrant
//! while a writer waits).

use super::metrics::sessions::SessionTally;
use crate::ir::{Algorithm, Definition};
use crate::sync::{ReadGuard, ReadMostly, WriteGuard};
use std::ops::{Deref, DerefMut};
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
    pub(crate) balancer: Arc<B>,
    /// The router's session counts (sessions.rs), which each decision of
    /// this instance adds to, also through a `Resolved` that outlives the
    /// target.
    pub(crate) sessions: Arc<SessionTally>,
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

impl<B> Slot<B> {
    fn free() -> Self {
        Slot {
            entry: None,
            instances: Vec::new(),
            key: None,
            generation: 0,
        }
    }
}

/// A target's own unlocked state: its build lock and last use.
#[derive(Debug)]
struct Meta {
    build_lock: Mutex<()>,
    /// Clock reading (ns) of the entry's last build or hit.
    last_used_ns: AtomicU64,
}

/// A run of slots under one read-mostly lock, and their unlocked state.
#[derive(Debug)]
pub(crate) struct Chunk<B> {
    slots: ReadMostly<Box<[Slot<B>]>>,
    meta: Box<[Meta]>,
}

impl<B> Chunk<B> {
    pub(crate) fn new(len: usize) -> Self {
        Chunk {
            slots: ReadMostly::new((0..len).map(|_| Slot::free()).collect()),
            meta: (0..len)
                .map(|_| Meta {
                    build_lock: Mutex::new(()),
                    last_used_ns: AtomicU64::new(0),
                })
                .collect(),
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.meta.len()
    }
}

/// One target's slot: a chunk and an index in it (`index < chunk.len()`).
#[derive(Debug)]
pub(crate) struct TargetState<'a, B> {
    chunk: &'a Chunk<B>,
    index: usize,
}

impl<B> Clone for TargetState<'_, B> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<B> Copy for TargetState<'_, B> {}

/// Shared access to one slot: its chunk's read stripe.
pub(crate) struct SlotRead<'a, B> {
    guard: ReadGuard<'a, Box<[Slot<B>]>>,
    index: usize,
}

impl<B> Deref for SlotRead<'_, B> {
    type Target = Slot<B>;
    fn deref(&self) -> &Slot<B> {
        &self.guard[self.index]
    }
}

/// Exclusive access to one slot: its chunk's write side.
pub(crate) struct SlotWrite<'a, B> {
    guard: WriteGuard<'a, Box<[Slot<B>]>>,
    index: usize,
}

impl<B> Deref for SlotWrite<'_, B> {
    type Target = Slot<B>;
    fn deref(&self) -> &Slot<B> {
        &self.guard[self.index]
    }
}

impl<B> DerefMut for SlotWrite<'_, B> {
    fn deref_mut(&mut self) -> &mut Slot<B> {
        &mut self.guard[self.index]
    }
}

impl<'a, B> TargetState<'a, B> {
    /// The slot at `index` of `chunk`, if there is one.
    pub(crate) fn at(chunk: &'a Chunk<B>, index: usize) -> Option<Self> {
        (index < chunk.len()).then_some(TargetState { chunk, index })
    }

    fn meta(self) -> &'a Meta {
        &self.chunk.meta[self.index]
    }

    pub(crate) fn read(self) -> SlotRead<'a, B> {
        SlotRead {
            guard: self.chunk.slots.read(),
            index: self.index,
        }
    }

    pub(crate) fn write(self) -> SlotWrite<'a, B> {
        SlotWrite {
            guard: self.chunk.slots.write(),
            index: self.index,
        }
    }

    pub(crate) fn lock_build(self) -> MutexGuard<'a, ()> {
        self.meta()
            .build_lock
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Records a use. Skips the store while the recorded time is within
    /// [`TOUCH_GRANULARITY_NS`], so concurrent hits on one target mostly
    /// read the shared cache line instead of writing it.
    pub(crate) fn touch(self, now: Duration) {
        self.touch_ns(nanos(now));
    }

    /// [`TargetState::touch`] in nanoseconds, for the hit path.
    pub(crate) fn touch_ns(self, now: u64) {
        let last = &self.meta().last_used_ns;
        if now.saturating_sub(last.load(Ordering::Relaxed)) >= TOUCH_GRANULARITY_NS {
            last.store(now, Ordering::Relaxed);
        }
    }

    /// Records a build: always stores.
    pub(crate) fn touch_exact(self, now: Duration) {
        self.meta()
            .last_used_ns
            .store(nanos(now), Ordering::Relaxed);
    }

    pub(crate) fn last_used(self) -> Duration {
        Duration::from_nanos(self.meta().last_used_ns.load(Ordering::Relaxed))
    }

    /// Whether an entry last used then has outlived the idle window by now.
    pub(crate) fn idle_expired(self, now: Duration, idle: Duration) -> bool {
        self.idle_expired_ns(nanos(now), nanos(idle))
    }

    /// [`TargetState::idle_expired`] in nanoseconds, for the hit path.
    pub(crate) fn idle_expired_ns(self, now: u64, idle: u64) -> bool {
        now.saturating_sub(self.meta().last_used_ns.load(Ordering::Relaxed)) >= idle
    }
}

/// How stale a recorded use may be; negligible against a 15-minute window.
pub(crate) const TOUCH_GRANULARITY_NS: u64 = 100_000_000;

pub(crate) fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::balancer::Balancer;

    /// What a target costs in place, outside the heap its strings,
    /// definitions and instances take (tests/alloc_targets.rs measures
    /// those): its slot, its unlocked state, and its share of the chunk's
    /// lock (1 KiB of shards per 64 targets).
    #[test]
    fn a_slot_costs_under_200_bytes_in_place() {
        let in_place =
            std::mem::size_of::<Slot<Balancer>>() + std::mem::size_of::<Meta>() + 1024 / 64;
        println!("slot in place: {in_place} B");
        assert!(in_place <= 200, "{in_place} B");
    }
}
