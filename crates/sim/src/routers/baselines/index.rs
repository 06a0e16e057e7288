//! The router-side approximate prefix index of the GIE prefix-cache scorer
//! and of SGLang's cache-aware tree (docs/simulator.md "Baselines"): per
//! backend, the prefix blocks this router sent there, least recently used
//! evicted first, at most `capacity` blocks per backend.
//!
//! Block ids identify a prefix (the Mooncake convention: equal ids, equal
//! prefix up to and including that block), so "the longest run of the
//! request's leading blocks present" is what a radix-tree match gives.
//! Memory: at most `capacity` entries per backend, two ordered maps each.

use std::collections::BTreeMap;

#[derive(Clone, Debug, Default)]
struct Backend {
    /// block -> last use.
    stamp_of: BTreeMap<u32, u64>,
    /// last use -> block (the eviction order).
    by_stamp: BTreeMap<u64, u32>,
}

#[derive(Clone, Debug)]
pub struct BlockIndex {
    capacity: usize,
    clock: u64,
    backends: Vec<Backend>,
}

impl BlockIndex {
    pub fn new(backends: usize, capacity: usize) -> Self {
        BlockIndex {
            capacity,
            clock: 0,
            backends: vec![Backend::default(); backends],
        }
    }

    /// Backends indexed.
    pub fn backends(&self) -> usize {
        self.backends.len()
    }

    /// Makes room for `backends` backends (a router learns the fleet at its
    /// first decision).
    pub fn grow(&mut self, backends: usize) {
        if self.backends.len() < backends {
            self.backends.resize_with(backends, Backend::default);
        }
    }

    /// Leading blocks of `blocks` indexed for `backend` (no recency change).
    pub fn matched(&self, backend: usize, blocks: &[u32]) -> usize {
        let Some(b) = self.backends.get(backend) else {
            return 0;
        };
        blocks
            .iter()
            .take_while(|x| b.stamp_of.contains_key(x))
            .count()
    }

    /// Blocks indexed for `backend`.
    pub fn size(&self, backend: usize) -> usize {
        self.backends.get(backend).map_or(0, |b| b.stamp_of.len())
    }

    /// Records that `blocks` were sent to `backend`: all become most
    /// recent (the first block last, so a prefix outlives its tail), and
    /// the least recent blocks beyond the capacity are dropped.
    pub fn insert(&mut self, backend: usize, blocks: &[u32]) {
        let capacity = self.capacity;
        let Some(b) = self.backends.get_mut(backend) else {
            return;
        };
        for &block in blocks.iter().rev() {
            self.clock += 1;
            if let Some(old) = b.stamp_of.insert(block, self.clock) {
                b.by_stamp.remove(&old);
            }
            b.by_stamp.insert(self.clock, block);
        }
        while b.stamp_of.len() > capacity {
            match b.by_stamp.pop_first() {
                Some((_, oldest)) => {
                    b.stamp_of.remove(&oldest);
                }
                None => break,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_leading_run_only() {
        let mut ix = BlockIndex::new(2, 100);
        ix.insert(0, &[1, 2, 3]);
        assert_eq!(ix.matched(0, &[1, 2, 3, 4]), 3);
        assert_eq!(ix.matched(0, &[1, 2, 9, 3]), 2);
        assert_eq!(ix.matched(0, &[2, 3]), 2);
        assert_eq!(ix.matched(0, &[9, 1]), 0);
        assert_eq!(ix.matched(1, &[1]), 0);
        assert_eq!(ix.matched(7, &[1]), 0, "out of range is empty");
        assert_eq!(ix.size(0), 3);
    }

    #[test]
    fn evicts_least_recent_blocks_tail_first() {
        let mut ix = BlockIndex::new(1, 4);
        ix.insert(0, &[1, 2, 3]); // recency: 1 > 2 > 3
        ix.insert(0, &[1, 4]); // 1 > 4 > 2 > 3
        assert_eq!(ix.size(0), 4);
        ix.insert(0, &[5]); // evicts 3, the oldest
        assert_eq!(ix.size(0), 4);
        assert_eq!(ix.matched(0, &[1, 2, 3]), 2);
        ix.insert(0, &[6, 7]); // evicts 2 then 4
        assert_eq!(ix.matched(0, &[1, 2]), 1);
        assert_eq!(ix.matched(0, &[1, 4]), 1);
        assert_eq!(ix.matched(0, &[6, 7]), 2);
        // A chain longer than the capacity keeps its first blocks.
        let mut small = BlockIndex::new(1, 2);
        small.insert(0, &[1, 2, 3, 4]);
        assert_eq!(small.matched(0, &[1, 2, 3]), 2);
        assert_eq!(small.size(0), 2);
    }

    #[test]
    fn capacity_zero_holds_nothing() {
        let mut ix = BlockIndex::new(1, 0);
        ix.insert(0, &[1, 2]);
        assert_eq!((ix.size(0), ix.matched(0, &[1])), (0, 0));
    }
}
