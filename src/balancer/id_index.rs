//! Candidate positions by id, for the session hint of
//! `last_cluster_affinity` (docs/stargate.md 3.10): one hash and one
//! probe per decision instead of a pass over every candidate id.
//!
//! The index belongs to a cache's [`TargetKey`](super::target::TargetKey)
//! and is rebuilt only when its candidate ids change, not per decision:
//! it is read only after the key matched the live candidates, so the ids
//! it was built from are the live ones. A found position is still
//! compared with the live id, so the index can only ever answer a
//! position whose id equals the hint.

use super::ClusterSnapshot;
use xxhash_rust::xxh3::xxh3_64;

/// Open addressing over positions: slot `hash(id) & mask` onwards holds
/// `position + 1` (0 is empty), at most half the slots used, then one
/// more slot that says whether the ids are distinct: under 8 bytes per
/// candidate (18 bytes for 4 candidates, 130 for 20). The flag is a slot,
/// not a field, so the index stays 24 bytes in every cache key, indexed or
/// not.
#[derive(Debug, Default)]
pub struct IdIndex {
    slots: Vec<u16>,
}

/// The last slot's value when no id occurs twice: any position holding
/// the id is then its first, so a caller's guess is confirmed by one
/// compare ([`IdIndex::position`]).
const DISTINCT: u16 = 1;

impl IdIndex {
    /// Indexes `clusters`' ids; a repeated id keeps its first position (as
    /// a scan finds it). Reuses the storage when it is large enough, so a
    /// rebuild for as many candidates allocates nothing. A list of 65 535
    /// candidates or more is not indexed ([`IdIndex::position`] then
    /// answers `None` and the caller scans).
    pub fn build(&mut self, clusters: &[ClusterSnapshot]) {
        self.slots.clear();
        let Ok(n) = u16::try_from(clusters.len()) else {
            return;
        };
        if n == 0 || n == u16::MAX {
            return;
        }
        let size = (clusters.len() * 2).next_power_of_two();
        self.slots.resize(size + 1, 0);
        let mask = size - 1;
        let mut distinct = true;
        for (pos, c) in (0u16..).zip(clusters) {
            let key = Key::of(&c.id);
            let mut at = key.slot() & mask;
            loop {
                match self.slots[at] {
                    0 => {
                        self.slots[at] = pos + 1;
                        break;
                    }
                    // A repeated id: the first position stays.
                    held if key.is(&clusters[(held - 1) as usize].id) => {
                        distinct = false;
                        break;
                    }
                    _ => at = (at + 1) & mask,
                }
            }
        }
        self.slots[size] = if distinct { DISTINCT } else { 0 };
    }

    /// The first position of `id` in `clusters`, the list the index was
    /// built from; `Some(None)` when it is not there, `None` when the
    /// index cannot say (never built, or a list too long to index).
    ///
    /// `likely` is the caller's guess (the primary of the cached order: a
    /// session mostly returns to it): when the ids are distinct and the
    /// guess holds `id`, one compare answers without hashing or probing.
    /// Inlined, so that answer costs no call; the probe is not.
    #[inline]
    pub fn position(
        &self,
        clusters: &[ClusterSnapshot],
        id: &str,
        likely: Option<usize>,
    ) -> Option<Option<usize>> {
        // Never built: no last slot, no guess.
        if self.slots.last() == Some(&DISTINCT) {
            if let Some(at) =
                likely.filter(|&at| clusters.get(at).is_some_and(|c| same_id(&c.id, id)))
            {
                return Some(Some(at));
            }
        }
        self.probe(clusters, id)
    }

    /// [`IdIndex::position`] by hash and probe.
    #[inline(never)]
    fn probe(&self, clusters: &[ClusterSnapshot], id: &str) -> Option<Option<usize>> {
        // The slots before the flag, a power of two.
        let mask = self.slots.len().checked_sub(2)?;
        let key = Key::of(id);
        let mut at = key.slot() & mask;
        loop {
            match self.slots[at] {
                0 => return Some(None),
                held => {
                    let pos = (held - 1) as usize;
                    // A stale index (never the case after a match) finds
                    // no id that differs: the caller scans instead.
                    let c = clusters.get(pos)?;
                    if key.is(&c.id) {
                        return Some(Some(pos));
                    }
                }
            }
            at = (at + 1) & mask;
        }
    }

    /// Heap bytes held.
    #[cfg(test)]
    pub fn heap_bytes(&self) -> usize {
        self.slots.capacity() * std::mem::size_of::<u16>()
    }
}

/// An id as the index hashes and compares it. Cluster ids are short
/// (`cluster-07`): up to 16 bytes are hashed from two overlapping words
/// in a few instructions; longer ids go through XXH3.
struct Key<'a> {
    id: &'a str,
    words: Option<(u64, u64)>,
}

impl<'a> Key<'a> {
    fn of(id: &'a str) -> Self {
        Key {
            id,
            words: words(id.as_bytes()),
        }
    }

    fn slot(&self) -> usize {
        // Truncation keeps the low bits, which the mask reads.
        match self.words {
            Some((a, b)) => {
                let x = (a ^ b.rotate_left(29) ^ self.id.len() as u64)
                    .wrapping_mul(0x9E37_79B9_7F4A_7C15);
                (x ^ (x >> 32)) as usize
            }
            None => xxh3_64(self.id.as_bytes()) as usize,
        }
    }

    /// Whether `other` is this id, byte for byte (one compare per probe:
    /// the probe that finds it, and collisions). A plain compare measured
    /// cheaper than comparing words here.
    fn is(&self, other: &str) -> bool {
        self.id == other
    }
}

/// `a == b` for the guess of [`IdIndex::position`]: ids of 8 to 16 bytes
/// (`cluster-07`) compare as their first and last 8 bytes, inline, where
/// `==` calls `memcmp`; the lengths and the last byte are compared first,
/// as a fleet's ids mostly differ there.
#[inline]
fn same_id(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() || a.last() != b.last() {
        return false;
    }
    let word = |chunk: Option<&[u8; 8]>| chunk.map(|w| u64::from_ne_bytes(*w));
    if a.len() <= 16 {
        if let (Some(first), Some(last)) = (word(a.first_chunk()), word(a.last_chunk())) {
            return Some(first) == word(b.first_chunk()) && Some(last) == word(b.last_chunk());
        }
    }
    a == b
}

/// Two words covering every byte of an id of at most 16 bytes (equal
/// lengths and equal words mean equal ids); `None` past 16 bytes.
fn words(b: &[u8]) -> Option<(u64, u64)> {
    (b.len() <= 16).then(|| words_of_len(b))
}

/// [`words`] for a slice of at most 16 bytes (longer ones read their
/// first and last 8 only).
#[inline(always)]
fn words_of_len(b: &[u8]) -> (u64, u64) {
    let n = b.len();
    let word = |i: usize| match b.get(i..i + 8) {
        Some(&[b0, b1, b2, b3, b4, b5, b6, b7]) => {
            u64::from_le_bytes([b0, b1, b2, b3, b4, b5, b6, b7])
        }
        _ => 0,
    };
    let half = |i: usize| match b.get(i..i + 4) {
        Some(&[b0, b1, b2, b3]) => u64::from(u32::from_le_bytes([b0, b1, b2, b3])),
        _ => 0,
    };
    match n {
        8.. => (word(0), word(n - 8)),
        4..=7 => (half(0), half(n - 4)),
        1..=3 => (
            u64::from(b[0]) | u64::from(b[n / 2]) << 8 | u64::from(b[n - 1]) << 16,
            0,
        ),
        0 => (0, 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clusters(ids: &[&str]) -> Vec<ClusterSnapshot> {
        ids.iter().map(|id| ClusterSnapshot::new(*id)).collect()
    }

    #[test]
    fn finds_first_positions_and_absent_ids() {
        let cs = clusters(&["a", "b", "a", "cluster-07", ""]);
        let mut index = IdIndex::default();
        assert_eq!(index.position(&cs, "a", None), None, "never built");
        index.build(&cs);
        assert_eq!(index.position(&cs, "a", None), Some(Some(0)));
        assert_eq!(index.position(&cs, "b", None), Some(Some(1)));
        assert_eq!(index.position(&cs, "cluster-07", None), Some(Some(3)));
        assert_eq!(index.position(&cs, "", None), Some(Some(4)));
        assert_eq!(index.position(&cs, "A", None), Some(None));
        assert_eq!(index.position(&cs, "cluster-7", None), Some(None));
    }

    #[test]
    fn a_guess_answers_only_for_distinct_ids() {
        let distinct = clusters(&["x", "cluster-07", "y"]);
        let mut index = IdIndex::default();
        assert_eq!(index.position(&distinct, "y", Some(2)), None, "never built");
        index.build(&distinct);
        assert_eq!(index.position(&distinct, "y", Some(2)), Some(Some(2)));
        // A wrong or out-of-range guess probes as without one.
        assert_eq!(index.position(&distinct, "y", Some(0)), Some(Some(2)));
        assert_eq!(index.position(&distinct, "y", Some(9)), Some(Some(2)));
        assert_eq!(index.position(&distinct, "z", Some(1)), Some(None));
        // A repeated id: the guess may hold a later copy, the index
        // answers the first (as a scan does).
        let repeated = clusters(&["a", "b", "a"]);
        index.build(&repeated);
        assert_eq!(index.position(&repeated, "a", Some(2)), Some(Some(0)));
        // Rebuilt without the repeat: guesses count again.
        index.build(&distinct);
        assert_eq!(index.position(&distinct, "x", Some(0)), Some(Some(0)));
    }

    /// Ids of every length class the word compare treats apart: empty,
    /// under a word, one word, between words, two words.
    const IDS: [&str; 9] = [
        "",
        "a",
        "ab",
        "abc",
        "abcd",
        "abcdefg",
        "abcdefgh",
        "cluster-07",
        "abcdefghijklmnop",
    ];

    #[test]
    fn short_ids_are_covered_by_their_words() {
        for a in IDS {
            let mut changed = a.as_bytes().to_vec();
            for i in 0..changed.len() {
                changed[i] ^= 1;
                assert_ne!(words(&changed), words(a.as_bytes()), "{a:?} byte {i}");
                changed[i] ^= 1;
            }
        }
        assert_eq!(words(&[0; 17]), None);
    }

    #[test]
    fn ids_compare_exactly() {
        for a in IDS {
            for b in IDS {
                for (x, y) in [(a, b), (a, &b[..b.len().saturating_sub(1)])] {
                    assert_eq!(Key::of(x).is(y), x == y, "{x:?} {y:?}");
                    assert_eq!(same_id(x, y), x == y, "{x:?} {y:?}");
                }
            }
            let mut changed = a.as_bytes().to_vec();
            for i in 0..changed.len() {
                changed[i] ^= 1;
                let other = String::from_utf8(changed.clone()).unwrap();
                assert!(!Key::of(a).is(&other), "{a:?} {other:?}");
                assert!(!same_id(a, &other), "{a:?} {other:?}");
                changed[i] ^= 1;
            }
        }
        let long = "a-cluster-id-past-16-bytes";
        assert!(Key::of(long).is(long));
        assert!(!Key::of(long).is("a-cluster-id-past-16-bytez"));
        assert!(same_id(long, long));
        assert!(!same_id(long, "b-cluster-id-past-16-bytes"));
    }

    #[test]
    fn agrees_with_a_scan_and_reuses_its_storage() {
        let ids: Vec<String> = (0..300).map(|i| format!("c{}", i % 250)).collect();
        let cs: Vec<ClusterSnapshot> = ids.iter().map(ClusterSnapshot::new).collect();
        let mut index = IdIndex::default();
        index.build(&cs);
        for probe in (0..260).map(|i| format!("c{i}")) {
            let scan = cs.iter().position(|c| c.id == probe);
            assert_eq!(index.position(&cs, &probe, None), Some(scan), "{probe}");
        }
        let bytes = index.heap_bytes();
        index.build(&cs[..200]);
        assert_eq!(index.heap_bytes(), bytes, "a smaller list reuses the slots");
        assert_eq!(index.position(&cs[..200], "c199", None), Some(Some(199)));
        assert_eq!(index.position(&cs[..200], "c210", None), Some(None));
        index.build(&[]);
        assert_eq!(
            index.position(&[], "c1", None),
            None,
            "an empty list is not indexed"
        );
    }
}
