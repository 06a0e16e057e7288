//! The per-backend KV cache of engine v1: an LRU over affinity keys whose
//! size is counted in tokens (docs/simulator-model.md A4 step 8).
//!
//! A key's entry is the longest prompt of the key served so far, and a
//! request reuses min(entry, input). When the workload gives prompts
//! prefix blocks, engine v1 also keeps the entry's full blocks, so that a
//! prompt which no longer extends them (a growing conversation that
//! dropped an exchange) reuses only the blocks the two share and replaces
//! the entry (docs/simulator.md, "Growing conversations"); a prompt that
//! extends the entry, or that the entry extends, is the plain rule.
//! stargate-bench's mock backend keeps the plain rule.

/// One cached key.
#[derive(Clone, Debug)]
struct Entry {
    key: u32,
    tokens: u64,
    last_used: u64,
    /// The full prefix blocks of the prompt it holds (empty without
    /// blocks).
    blocks: Vec<u32>,
}

/// Token-sized LRU. Eviction scans for the least recent entry: O(keys), and
/// a backend holds only about 60 keys.
#[derive(Clone, Debug)]
pub struct KvLru {
    capacity: u64,
    used: u64,
    clock: u64,
    entries: Vec<Entry>,
    evictions: u64,
    /// Tokens per block when entries follow their prompts' blocks.
    block_tokens: Option<u64>,
}

impl KvLru {
    /// The plain per-key rule (stargate-bench's mock backend).
    pub fn new(capacity_tokens: u64) -> Self {
        KvLru {
            capacity: capacity_tokens,
            used: 0,
            clock: 0,
            entries: Vec::new(),
            evictions: 0,
            block_tokens: None,
        }
    }

    /// Engine v1: entries also follow their prompts' blocks of
    /// `block_tokens` tokens.
    pub fn following_blocks(capacity_tokens: u64, block_tokens: u64) -> Self {
        KvLru {
            block_tokens: Some(block_tokens.max(1)),
            ..KvLru::new(capacity_tokens)
        }
    }

    /// The most of `e` a prompt with `blocks` can reuse: no limit when one
    /// chain extends the other, else their common full blocks.
    fn shared(&self, e: &Entry, blocks: &[u32]) -> Option<u64> {
        let bt = self.block_tokens?;
        let common = e
            .blocks
            .iter()
            .zip(blocks)
            .take_while(|(a, b)| a == b)
            .count();
        (common < e.blocks.len().min(blocks.len())).then(|| common as u64 * bt)
    }

    pub fn used_tokens(&self) -> u64 {
        self.used
    }

    pub fn capacity_tokens(&self) -> u64 {
        self.capacity
    }

    /// Entries evicted to make room so far.
    pub fn evictions(&self) -> u64 {
        self.evictions
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn contains(&self, key: u32) -> bool {
        self.entries.iter().any(|e| e.key == key)
    }

    fn tick(&mut self) -> u64 {
        self.clock += 1;
        self.clock
    }

    /// Tokens reusable for a request of `input` tokens; touches the entry.
    pub fn access(&mut self, key: u32, input: u64) -> u64 {
        self.access_with(key, input, &[])
    }

    /// [`KvLru::access`] for a prompt with prefix `blocks`.
    pub fn access_with(&mut self, key: u32, input: u64, blocks: &[u32]) -> u64 {
        let now = self.tick();
        let Some(i) = self.entries.iter().position(|e| e.key == key) else {
            return 0;
        };
        let limit = self.shared(&self.entries[i], blocks).unwrap_or(u64::MAX);
        let e = &mut self.entries[i];
        e.last_used = now;
        e.tokens.min(input).min(limit)
    }

    /// Stores `input` tokens for `key` after a prefill; an entry only grows.
    pub fn store(&mut self, key: u32, input: u64) {
        self.store_with(key, input, &[]);
    }

    /// [`KvLru::store`] for a prompt with prefix `blocks`: an entry the
    /// prompt diverges from is replaced, not grown.
    pub fn store_with(&mut self, key: u32, input: u64, blocks: &[u32]) {
        let (old, kept) = match self.entries.iter().position(|e| e.key == key) {
            Some(i) => {
                let e = self.entries.swap_remove(i);
                self.used -= e.tokens;
                match self.shared(&e, blocks) {
                    Some(_) => (0, Vec::new()),
                    None => (e.tokens, e.blocks),
                }
            }
            None => (0, Vec::new()),
        };
        // The longer of two chains one of which extends the other.
        let blocks = if self.block_tokens.is_none() || kept.len() >= blocks.len() {
            kept
        } else {
            blocks.to_vec()
        };
        let tokens = old.max(input);
        if tokens > self.capacity {
            return;
        }
        while self.used + tokens > self.capacity {
            let Some(lru) = self
                .entries
                .iter()
                .enumerate()
                .min_by_key(|(_, e)| e.last_used)
                .map(|(i, _)| i)
            else {
                break;
            };
            let e = self.entries.swap_remove(lru);
            self.used -= e.tokens;
            self.evictions += 1;
        }
        let last_used = self.tick();
        self.entries.push(Entry {
            key,
            tokens,
            last_used,
            blocks,
        });
        self.used += tokens;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evicts_least_recently_used_first() {
        let mut kv = KvLru::new(300);
        kv.store(1, 100);
        kv.store(2, 100);
        kv.store(3, 100);
        assert_eq!(kv.access(1, 100), 100); // 1 is now most recent
        kv.store(4, 100); // evicts 2
        assert!(kv.contains(1) && !kv.contains(2) && kv.contains(3) && kv.contains(4));
        kv.store(5, 150); // evicts 3 then 1
        assert!(!kv.contains(3) && !kv.contains(1) && kv.contains(4) && kv.contains(5));
        assert_eq!(kv.used_tokens(), 250);
    }

    #[test]
    fn oversized_entry_is_not_kept() {
        let mut kv = KvLru::new(100);
        kv.store(1, 50);
        kv.store(2, 101);
        assert!(!kv.contains(2));
        assert!(kv.contains(1), "a rejected store evicts nothing");
        // Growing an existing entry past capacity drops it.
        kv.store(1, 200);
        assert!(kv.is_empty());
        assert_eq!(kv.used_tokens(), 0);
    }

    #[test]
    fn a_prompt_that_leaves_the_chain_reuses_the_shared_blocks_only() {
        // Blocks of 100 tokens. Turn 1: 450 tokens, blocks [1 2 3 4];
        // turn 2 extends it (620 tokens, [1 2 3 4 5 6]): the plain rule.
        let mut kv = KvLru::following_blocks(10_000, 100);
        kv.store_with(7, 450, &[1, 2, 3, 4]);
        assert_eq!(kv.access_with(7, 620, &[1, 2, 3, 4, 5, 6]), 450);
        kv.store_with(7, 620, &[1, 2, 3, 4, 5, 6]);
        // Turn 3 dropped an exchange: it shares [1 2] (the first message)
        // only, 200 tokens, not min(620, 580); its entry replaces the old.
        assert_eq!(kv.access_with(7, 580, &[1, 2, 9, 10, 11]), 200);
        kv.store_with(7, 580, &[1, 2, 9, 10, 11]);
        assert_eq!(kv.used_tokens(), 580);
        assert_eq!(kv.access_with(7, 700, &[1, 2, 9, 10, 11, 12, 13]), 580);
        // A shorter prompt the entry extends: the plain rule.
        assert_eq!(kv.access_with(7, 250, &[1, 2]), 250);
        kv.store_with(7, 250, &[1, 2]);
        assert_eq!(kv.used_tokens(), 580, "the entry keeps its longer chain");
        assert_eq!(kv.access_with(7, 700, &[1, 2, 9, 10, 11, 12]), 580);
        // The mock backend's plain rule ignores blocks.
        let mut plain = KvLru::new(10_000);
        plain.store_with(7, 620, &[1, 2, 3, 4, 5, 6]);
        assert_eq!(plain.access_with(7, 580, &[1, 2, 9, 10, 11]), 580);
    }

    #[test]
    fn reuse_is_capped_and_entries_grow() {
        let mut kv = KvLru::new(1_000);
        kv.store(7, 400);
        assert_eq!(kv.access(7, 300), 300);
        assert_eq!(kv.access(7, 500), 400);
        kv.store(7, 300); // never shrinks
        assert_eq!(kv.access(7, 1_000), 400);
        kv.store(7, 600);
        assert_eq!(kv.access(7, 1_000), 600);
        assert_eq!(kv.used_tokens(), 600);
        assert_eq!(kv.access(8, 10), 0);
    }
}
