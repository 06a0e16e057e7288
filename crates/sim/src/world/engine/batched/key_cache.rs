//! A batched worker's prefix cache: one entry per affinity key, pinned
//! while a sequence uses it, evicted least recently used first among the
//! unpinned ones, with the KV events and block spans the routers follow.

use super::*;

/// One cached key of a worker.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Entry {
    pub(super) tokens: u64,
    pub(super) pins: u32,
    pub(super) last_used: u64,
}

/// A worker's prefix cache: one entry per key, LRU over unpinned entries.
#[derive(Clone, Debug, Default)]
pub(super) struct KeyCache {
    /// By key index, grown on demand (key indexes are dense).
    pub(super) entries: Vec<Entry>,
    /// (last_used, key) of every unpinned entry with tokens.
    pub(super) lru: BTreeSet<(u64, u32)>,
    pub(super) used: u64,
    pub(super) clock: u64,
    pub(super) evictions: u64,
    /// When KV events are logged: (key, true) when a key's entry appears,
    /// (key, false) when it is evicted, in order.
    pub(super) changes: Option<Vec<(u32, bool)>>,
    /// By key: the blocks of the prompt its entry holds (with prefix
    /// blocks only; grown on demand).
    pub(super) spans: Vec<BlockSpan>,
}

impl KeyCache {
    pub(super) fn tokens(&self, key: u32) -> u64 {
        self.entries.get(key as usize).map_or(0, |e| e.tokens)
    }

    pub(super) fn entry(&mut self, key: u32) -> &mut Entry {
        let i = key as usize;
        if self.entries.len() <= i {
            self.entries.resize(i + 1, Entry::default());
        }
        &mut self.entries[i]
    }

    pub(super) fn pin(&mut self, key: u32) {
        if key == NO_KEY {
            return;
        }
        let e = *self.entry(key);
        if e.pins == 0 {
            self.lru.remove(&(e.last_used, key));
        }
        self.entry(key).pins += 1;
    }

    /// Drops a pin; `touch` makes the entry the most recent.
    pub(super) fn unpin(&mut self, key: u32, touch: bool) {
        if key == NO_KEY {
            return;
        }
        self.clock += 1;
        let clock = self.clock;
        let e = self.entry(key);
        e.pins = e.pins.saturating_sub(1);
        if touch {
            e.last_used = clock;
        }
        let (pins, tokens, last) = (e.pins, e.tokens, e.last_used);
        if pins == 0 && tokens > 0 {
            self.lru.insert((last, key));
        }
    }

    /// Grows a pinned key's entry to `to` tokens; returns the growth.
    pub(super) fn grow(&mut self, key: u32, to: u64) -> u64 {
        if key == NO_KEY {
            return 0;
        }
        let e = self.entry(key);
        let was_empty = e.tokens == 0;
        let growth = to.saturating_sub(e.tokens);
        e.tokens += growth;
        self.used += growth;
        if was_empty && growth > 0 {
            if let Some(changes) = &mut self.changes {
                changes.push((key, true));
            }
        }
        growth
    }

    /// Evicts the least recent unpinned entry; false when none is left.
    pub(super) fn evict_one(&mut self) -> bool {
        let Some((_, key)) = self.lru.pop_first() else {
            return false;
        };
        let e = self.entry(key);
        let tokens = std::mem::take(&mut e.tokens);
        self.used -= tokens;
        self.evictions += 1;
        if let Some(changes) = &mut self.changes {
            changes.push((key, false));
        }
        true
    }

    pub(super) fn span(&self, key: u32) -> BlockSpan {
        self.spans.get(key as usize).copied().unwrap_or_default()
    }

    pub(super) fn set_span(&mut self, key: u32, span: BlockSpan) {
        let i = key as usize;
        if self.spans.len() <= i {
            self.spans.resize(i + 1, BlockSpan::default());
        }
        self.spans[i] = span;
    }

    /// Cuts a key's entry to `to` tokens (the prompt it held was left);
    /// an entry cut to nothing is gone, as evicted.
    pub(super) fn shrink(&mut self, key: u32, to: u64) {
        let e = self.entry(key);
        let cut = e.tokens.saturating_sub(to);
        if cut == 0 {
            return;
        }
        e.tokens -= cut;
        let gone = e.tokens == 0;
        self.used -= cut;
        if gone {
            if let Some(changes) = &mut self.changes {
                changes.push((key, false));
            }
        }
    }

    /// Caches `tokens` for an unpinned key outright (warm starts).
    pub(super) fn put(&mut self, key: u32, tokens: u64) {
        self.pin(key);
        self.grow(key, tokens);
        self.unpin(key, true);
    }
}
