//! The per-backend KV cache of engine v1: an LRU over affinity keys whose
//! size is counted in tokens (docs/simulator-model.md A4 step 8).

/// One cached key.
#[derive(Clone, Copy, Debug)]
struct Entry {
    key: u32,
    tokens: u64,
    last_used: u64,
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
}

impl KvLru {
    pub fn new(capacity_tokens: u64) -> Self {
        KvLru {
            capacity: capacity_tokens,
            used: 0,
            clock: 0,
            entries: Vec::new(),
            evictions: 0,
        }
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
        let now = self.tick();
        match self.entries.iter_mut().find(|e| e.key == key) {
            Some(e) => {
                e.last_used = now;
                e.tokens.min(input)
            }
            None => 0,
        }
    }

    /// Stores `input` tokens for `key` after a prefill; an entry only grows.
    pub fn store(&mut self, key: u32, input: u64) {
        let old = match self.entries.iter().position(|e| e.key == key) {
            Some(i) => {
                let e = self.entries.swap_remove(i);
                self.used -= e.tokens;
                e.tokens
            }
            None => 0,
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
