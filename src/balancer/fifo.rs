//! A bounded first-in first-out map from text keys, for the per-key ring
//! groups and Pulsar rankings. Lookups by `&str` never allocate.

use std::collections::{HashMap, HashSet, VecDeque};

/// Keys longer than this are never cached (3.6.6, 3.7.5).
pub const MAX_CACHED_KEY_BYTES: usize = 256;
/// Entries per cache, and size of the Pulsar probation set.
pub const CAPACITY: usize = 4096;

#[derive(Debug)]
pub struct FifoMap<V> {
    map: HashMap<String, V>,
    order: VecDeque<String>,
    capacity: usize,
}

impl<V> FifoMap<V> {
    pub fn new(capacity: usize) -> Self {
        FifoMap {
            map: HashMap::new(),
            order: VecDeque::new(),
            capacity: capacity.max(1),
        }
    }

    pub fn get(&self, key: &str) -> Option<&V> {
        self.map.get(key)
    }

    pub fn is_full(&self) -> bool {
        self.map.len() >= self.capacity
    }

    /// Inserts a new key, evicting the oldest entry when full.
    pub fn insert(&mut self, key: &str, value: V) {
        if let Some(slot) = self.map.get_mut(key) {
            *slot = value;
            return;
        }
        while self.map.len() >= self.capacity {
            match self.order.pop_front() {
                Some(oldest) => {
                    self.map.remove(&oldest);
                }
                None => break,
            }
        }
        self.map.insert(key.to_owned(), value);
        self.order.push_back(key.to_owned());
    }

    pub fn clear(&mut self) {
        self.map.clear();
        self.order.clear();
    }
}

/// A bounded FIFO set: keys that missed once while the cache was full.
#[derive(Debug)]
pub struct Probation {
    set: HashSet<String>,
    order: VecDeque<String>,
    capacity: usize,
}

impl Probation {
    pub fn new(capacity: usize) -> Self {
        Probation {
            set: HashSet::new(),
            order: VecDeque::new(),
            capacity: capacity.max(1),
        }
    }

    /// Records a miss; true when this is the key's second miss (it leaves
    /// probation and may be admitted).
    pub fn second_miss(&mut self, key: &str) -> bool {
        if self.set.remove(key) {
            self.order.retain(|k| k != key);
            return true;
        }
        while self.set.len() >= self.capacity {
            match self.order.pop_front() {
                Some(oldest) => {
                    self.set.remove(&oldest);
                }
                None => break,
            }
        }
        self.set.insert(key.to_owned());
        self.order.push_back(key.to_owned());
        false
    }

    pub fn clear(&mut self) {
        self.set.clear();
        self.order.clear();
    }
}
