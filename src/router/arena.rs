//! The bounded set of targets: a key map to slot handles and a fixed-size
//! arena of per-target slots, reused least recently used first.
//!
//! Why an arena: a decision runs under its slot's lock, not under the
//! map's, so creating a target (a map write) never waits for decisions
//! outside the chunk it lands in. The slots of a chunk share one
//! read-mostly lock (state.rs): a write (a new target, a build's
//! install, a new instance, eviction) waits for the decisions in flight on
//! that chunk's targets, and a target costs no lock of its own. Slots live as long as the router (chunks
//! are allocated on first use and never freed), so a slot can be borrowed
//! after the map lock is gone; a slot reused for another target carries a
//! new generation, and a reader whose handle names an older one falls back
//! to the general path.
//!
//! Past the bound a new target takes the slot of the least recently used
//! of the next [`EVICTION_WINDOW`] slots in clock order: constant work per
//! new key whatever the number of targets, exact LRU while the bound is at
//! most the window.

use super::state::{Chunk, Slot, TargetState};
use super::targets::TargetMap;
use crate::sync::ReadMostly;
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::Duration;

/// Slots examined to pick a victim.
pub(crate) const EVICTION_WINDOW: usize = 8;
/// Slots per chunk of the arena (allocated together on first use, under
/// one lock).
const CHUNK: usize = 64;
/// The largest bound honoured (a larger one is clamped).
pub(crate) const MAX_TARGETS: usize = 1 << 24;

/// Names a target's slot and the generation the slot had for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Handle {
    pub(crate) index: u32,
    pub(crate) generation: u64,
}

#[derive(Debug, Default)]
struct Alloc {
    /// Slots below this have been handed out at least once.
    used: usize,
    /// Slots holding a target.
    live: usize,
    free: Vec<u32>,
    hand: usize,
}

/// What a new target displaced, for the caller to account for.
pub(crate) struct Claimed {
    pub(crate) handle: Handle,
    /// Whether the target is new (it took a slot).
    pub(crate) created: bool,
    /// Whether the slot it took held another target (evicted).
    pub(crate) evicted_target: bool,
    /// Whether the reused slot held a cached expression.
    pub(crate) evicted_entry: bool,
}

pub(crate) struct Targets<B> {
    map: ReadMostly<TargetMap<Handle>>,
    /// Runs of slots, each allocated on first use with its lock.
    chunks: Box<[OnceLock<Chunk<B>>]>,
    capacity: usize,
    alloc: Mutex<Alloc>,
}

impl<B> Targets<B> {
    pub(crate) fn new(capacity: usize) -> Self {
        let capacity = capacity.clamp(1, MAX_TARGETS);
        Targets {
            map: ReadMostly::new(TargetMap::default()),
            chunks: (0..capacity.div_ceil(CHUNK))
                .map(|_| OnceLock::new())
                .collect(),
            capacity,
            alloc: Mutex::new(Alloc::default()),
        }
    }

    /// The target's handle, if it exists. Holds the map lock only for the
    /// lookup.
    pub(crate) fn lookup(&self, model: &str, routing_key: Option<&str>) -> Option<Handle> {
        self.map.read().get(model, routing_key).copied()
    }

    /// The slot a handle names (whatever target it holds now).
    pub(crate) fn slot(&self, index: u32) -> Option<TargetState<'_, B>> {
        let index = index as usize;
        let chunk = self.chunks.get(index / CHUNK)?.get()?;
        TargetState::at(chunk, index % CHUNK)
    }

    fn slot_or_alloc(&self, index: usize) -> TargetState<'_, B> {
        let chunk = self.chunks[index / CHUNK].get_or_init(|| Chunk::new(CHUNK));
        TargetState::at(chunk, index % CHUNK).expect("an index within the chunk")
    }

    fn lock_alloc(&self) -> MutexGuard<'_, Alloc> {
        self.alloc.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The target's slot, claiming one (a free one, a never used one, else
    /// the least recently used in the eviction window) if it is new.
    /// New targets are created one at a time; none waits for a decision
    /// except on the victim slot.
    pub(crate) fn get_or_claim(
        &self,
        model: &str,
        routing_key: Option<&str>,
        now: Duration,
    ) -> Claimed {
        let existing = |h: Handle| Claimed {
            handle: h,
            created: false,
            evicted_target: false,
            evicted_entry: false,
        };
        if let Some(h) = self.lookup(model, routing_key) {
            return existing(h);
        }
        let mut alloc = self.lock_alloc();
        if let Some(h) = self.lookup(model, routing_key) {
            return existing(h);
        }
        let index = match alloc.free.pop() {
            Some(i) => {
                alloc.live += 1;
                i as usize
            }
            None if alloc.used < self.capacity => {
                alloc.used += 1;
                alloc.live += 1;
                alloc.used - 1
            }
            None => self.victim(&mut alloc),
        };
        let target = self.slot_or_alloc(index);
        let mut slot = target.write();
        let evicted = slot.key.take();
        if let Some((m, k)) = &evicted {
            self.map.write().remove(m, k.as_deref());
        }
        let evicted_entry = slot.forget_entry();
        slot.instances.clear();
        slot.generation += 1;
        slot.key = Some((model.into(), routing_key.map(Into::into)));
        let handle = Handle {
            index: u32::try_from(index).expect("capacity fits u32"),
            generation: slot.generation,
        };
        target.touch_exact(now);
        drop(slot);
        self.map
            .write()
            .get_or_insert_with(model, routing_key, || handle);
        Claimed {
            handle,
            created: true,
            evicted_target: evicted.is_some(),
            evicted_entry,
        }
    }

    /// The least recently used of the next window of slots; moves the hand
    /// past it.
    fn victim(&self, alloc: &mut Alloc) -> usize {
        let used = alloc.used;
        let mut best = alloc.hand % used;
        let mut best_used = Duration::MAX;
        for step in 0..EVICTION_WINDOW.min(used) {
            let i = (alloc.hand + step) % used;
            if let Some(t) = self.slot(i as u32) {
                let last = t.last_used();
                if last < best_used {
                    best = i;
                    best_used = last;
                }
            }
        }
        alloc.hand = (best + 1) % used;
        best
    }

    /// Frees the target a handle names, if it still holds it and `pred`
    /// agrees (checked under the slot's write lock). Returns whether it held
    /// a cached expression.
    pub(crate) fn release_if(
        &self,
        handle: Handle,
        pred: impl FnOnce(TargetState<'_, B>, &Slot<B>) -> bool,
    ) -> Option<bool> {
        let target = self.slot(handle.index)?;
        let mut alloc = self.lock_alloc();
        let mut slot = target.write();
        if slot.generation != handle.generation || !pred(target, &slot) {
            return None;
        }
        let (m, k) = slot.key.take()?;
        self.map.write().remove(&m, k.as_deref());
        let had_entry = slot.forget_entry();
        slot.instances.clear();
        slot.generation += 1;
        alloc.free.push(handle.index);
        alloc.live -= 1;
        Some(had_entry)
    }

    /// Targets holding state.
    pub(crate) fn len(&self) -> usize {
        self.lock_alloc().live
    }

    /// Handles of every live target, for maintenance.
    pub(crate) fn handles(&self) -> Vec<Handle> {
        let used = self.lock_alloc().used;
        (0..used)
            .filter_map(|i| {
                let slot = self.slot(i as u32)?.read();
                slot.key.as_ref()?;
                Some(Handle {
                    index: i as u32,
                    generation: slot.generation,
                })
            })
            .collect()
    }
}
