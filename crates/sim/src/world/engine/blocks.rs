//! Engine v2's prefix cache (docs/simulator.md "Engine v2"): an LRU of
//! fixed-size prefix blocks with a capacity in blocks (the engine's token
//! capacity / block size). A request reuses the longest run of its leading
//! blocks present, and after prefill all its blocks are cached.
//!
//! Block ids are dense (`0..block_ids`, interned by the workload), so the
//! index from a block to its LRU node is a plain vector: every lookup,
//! touch, insertion and eviction is O(1). A chain is stored from its last
//! block to its first, so that its first blocks are the most recent and a
//! prefix outlives its tail, as in vLLM's free-block queue.

/// A change of the cache, for routers that follow KV events.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KvEvent {
    Stored(u32),
    Removed(u32),
}

const NIL: u32 = u32::MAX;

#[derive(Clone, Copy, Debug)]
struct Node {
    block: u32,
    /// Towards the most recent end / the least recent end.
    newer: u32,
    older: u32,
}

/// Block LRU of one backend.
#[derive(Clone, Debug)]
pub struct BlockLru {
    capacity: u64,
    block_tokens: u64,
    /// Per block id: its node index + 1, 0 when not cached (a zeroed
    /// vector costs nothing until touched).
    node_of: Vec<u32>,
    nodes: Vec<Node>,
    free: Vec<u32>,
    /// Most and least recent nodes.
    newest: u32,
    oldest: u32,
    len: u64,
    events: Option<Vec<KvEvent>>,
}

impl BlockLru {
    /// `capacity` in blocks of `block_tokens`; ids below `block_ids`.
    pub fn new(capacity: u64, block_tokens: u64, block_ids: u32) -> Self {
        BlockLru {
            capacity,
            block_tokens,
            node_of: vec![0; block_ids as usize],
            nodes: Vec::new(),
            free: Vec::new(),
            newest: NIL,
            oldest: NIL,
            len: 0,
            events: None,
        }
    }

    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn capacity_tokens(&self) -> u64 {
        self.capacity.saturating_mul(self.block_tokens)
    }

    pub fn used_tokens(&self) -> u64 {
        self.len * self.block_tokens
    }

    pub fn contains(&self, block: u32) -> bool {
        self.node(block).is_some()
    }

    pub fn log_events(&mut self) {
        self.events.get_or_insert_with(Vec::new);
    }

    pub fn take_events(&mut self, out: &mut Vec<KvEvent>) {
        if let Some(e) = &mut self.events {
            out.append(e);
        }
    }

    fn node(&self, block: u32) -> Option<u32> {
        match self.node_of.get(block as usize) {
            Some(&n) if n > 0 => Some(n - 1),
            _ => None,
        }
    }

    /// Tokens reusable by a request of `input` tokens over `blocks`: the
    /// longest cached leading run, capped at the input. Touches that run
    /// (last block first, so the first block ends most recent).
    pub fn reuse(&mut self, blocks: &[u32], input: u64) -> u64 {
        let run = blocks.iter().take_while(|&&b| self.contains(b)).count();
        for &b in blocks[..run].iter().rev() {
            if let Some(n) = self.node(b) {
                self.unlink(n);
                self.push_newest(n);
            }
        }
        (run as u64).saturating_mul(self.block_tokens).min(input)
    }

    /// Caches every block of the chain, evicting the least recent blocks.
    pub fn store(&mut self, blocks: &[u32]) {
        for &b in blocks.iter().rev() {
            if let Some(n) = self.node(b) {
                self.unlink(n);
                self.push_newest(n);
                continue;
            }
            if self.capacity == 0 || b as usize >= self.node_of.len() {
                continue;
            }
            if self.len >= self.capacity {
                self.evict_oldest();
            }
            let node = Node {
                block: b,
                newer: NIL,
                older: NIL,
            };
            let n = match self.free.pop() {
                Some(n) => {
                    self.nodes[n as usize] = node;
                    n
                }
                None => {
                    self.nodes.push(node);
                    (self.nodes.len() - 1) as u32
                }
            };
            self.node_of[b as usize] = n + 1;
            self.len += 1;
            self.push_newest(n);
            if let Some(e) = &mut self.events {
                e.push(KvEvent::Stored(b));
            }
        }
    }

    fn evict_oldest(&mut self) {
        let n = self.oldest;
        if n == NIL {
            return;
        }
        self.unlink(n);
        let block = self.nodes[n as usize].block;
        self.node_of[block as usize] = 0;
        self.free.push(n);
        self.len -= 1;
        if let Some(e) = &mut self.events {
            e.push(KvEvent::Removed(block));
        }
    }

    fn unlink(&mut self, n: u32) {
        let Node { newer, older, .. } = self.nodes[n as usize];
        match newer {
            NIL => self.newest = older,
            x => self.nodes[x as usize].older = older,
        }
        match older {
            NIL => self.oldest = newer,
            x => self.nodes[x as usize].newer = newer,
        }
    }

    fn push_newest(&mut self, n: u32) {
        let old_newest = self.newest;
        {
            let node = &mut self.nodes[n as usize];
            node.newer = NIL;
            node.older = old_newest;
        }
        match old_newest {
            NIL => self.oldest = n,
            x => self.nodes[x as usize].newer = n,
        }
        self.newest = n;
    }

    /// Cached blocks from most to least recent (tests and debugging).
    pub fn recency(&self) -> Vec<u32> {
        let mut out = Vec::new();
        let mut n = self.newest;
        while n != NIL {
            out.push(self.nodes[n as usize].block);
            n = self.nodes[n as usize].older;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reuses_the_longest_cached_prefix_only() {
        let mut c = BlockLru::new(100, 512, 64);
        assert_eq!(c.reuse(&[0, 1, 2], 1_500), 0, "cold");
        c.store(&[0, 1, 2]);
        assert_eq!(c.reuse(&[0, 1, 2], 1_500), 1_500, "capped at the input");
        assert_eq!(
            c.reuse(&[0, 1, 9, 2], 2_000),
            1_024,
            "stops at the first miss"
        );
        assert_eq!(
            c.reuse(&[5, 0, 1], 1_536),
            0,
            "a cached block past a miss does not count"
        );
        assert_eq!(c.used_tokens(), 3 * 512);
    }

    #[test]
    fn evicts_least_recent_blocks_tail_first() {
        let mut c = BlockLru::new(4, 10, 16);
        c.store(&[0, 1, 2]);
        assert_eq!(c.recency(), vec![0, 1, 2]);
        c.store(&[0, 3, 4]); // 0 touched; 4 then 3 stored; 2 evicted
        assert_eq!(c.recency(), vec![0, 3, 4, 1]);
        assert!(!c.contains(2));
        assert_eq!(c.reuse(&[0, 1, 2], 30), 20);
        assert_eq!(c.recency(), vec![0, 1, 3, 4]);
        // A chain longer than the cache keeps its first blocks.
        c.store(&[5, 6, 7, 8, 9, 10]);
        assert_eq!(c.recency(), vec![5, 6, 7, 8]);
        assert_eq!(c.len(), 4);
    }

    #[test]
    fn logs_stores_and_removals_once_asked() {
        let mut c = BlockLru::new(2, 1, 8);
        c.store(&[0]);
        c.log_events();
        c.store(&[1, 2]);
        let mut e = Vec::new();
        c.take_events(&mut e);
        assert_eq!(
            e,
            vec![KvEvent::Stored(2), KvEvent::Removed(0), KvEvent::Stored(1)]
        );
        c.take_events(&mut e);
        assert_eq!(e.len(), 3, "taken once");
        let mut none = BlockLru::new(0, 1, 8);
        none.store(&[1]);
        assert!(none.is_empty(), "a zero-capacity cache keeps nothing");
    }
}
