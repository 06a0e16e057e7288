//! A map keyed by target = (model, routing key or none) that is looked up
//! through borrowed `&str`s, so the request path does not allocate a key,
//! and with one hash and one probe per lookup (hashbrown's `HashTable`,
//! which lets the lookup key be a pair of borrowed strings).

use hashbrown::HashTable;
use std::hash::{BuildHasher, Hasher};
use xxhash_rust::xxh3::xxh3_64_with_seed;

/// Seeded XXH3 for the short, client-chosen keys of the request path:
/// faster than SipHash on a handful of bytes, and the per-map random seed
/// keeps colliding keys from being chosen in advance.
#[derive(Clone, Copy, Debug)]
struct KeyHash {
    seed: u64,
}

impl Default for KeyHash {
    fn default() -> Self {
        KeyHash {
            seed: std::collections::hash_map::RandomState::new()
                .build_hasher()
                .finish(),
        }
    }
}

impl KeyHash {
    fn hash(self, model: &str, routing_key: Option<&str>) -> u64 {
        let h = xxh3_64_with_seed(model.as_bytes(), self.seed);
        match routing_key {
            // Chained, so (model, key) pairs that concatenate alike differ.
            Some(key) => xxh3_64_with_seed(key.as_bytes(), h),
            // Any fixed change: a keyless target only has to differ from
            // the keyed ones in most bits.
            None => !h,
        }
    }
}

#[derive(Debug)]
struct Target<V> {
    model: Box<str>,
    routing_key: Option<Box<str>>,
    value: V,
}

impl<V> Target<V> {
    fn is(&self, model: &str, routing_key: Option<&str>) -> bool {
        *self.model == *model && self.routing_key.as_deref() == routing_key
    }
}

#[derive(Debug)]
pub(crate) struct TargetMap<V> {
    hash: KeyHash,
    table: HashTable<Target<V>>,
}

impl<V> Default for TargetMap<V> {
    fn default() -> Self {
        TargetMap {
            hash: KeyHash::default(),
            table: HashTable::new(),
        }
    }
}

impl<V> TargetMap<V> {
    pub(crate) fn get(&self, model: &str, routing_key: Option<&str>) -> Option<&V> {
        let hash = self.hash.hash(model, routing_key);
        self.table
            .find(hash, |t| t.is(model, routing_key))
            .map(|t| &t.value)
    }

    pub(crate) fn get_or_insert_with(
        &mut self,
        model: &str,
        routing_key: Option<&str>,
        make: impl FnOnce() -> V,
    ) -> &V {
        let keys = self.hash;
        let hash = keys.hash(model, routing_key);
        let entry = self.table.entry(
            hash,
            |t| t.is(model, routing_key),
            |t| keys.hash(&t.model, t.routing_key.as_deref()),
        );
        &entry
            .or_insert_with(|| Target {
                model: model.into(),
                routing_key: routing_key.map(Into::into),
                value: make(),
            })
            .into_mut()
            .value
    }

    pub(crate) fn remove(&mut self, model: &str, routing_key: Option<&str>) -> Option<V> {
        let hash = self.hash.hash(model, routing_key);
        let (target, _) = self
            .table
            .find_entry(hash, |t| t.is(model, routing_key))
            .ok()?
            .remove();
        Some(target.value)
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.table.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keyed_keyless_and_models_are_distinct_targets() {
        let mut map = TargetMap::default();
        let targets = [
            ("m", None),
            ("m", Some("k")),
            ("m", Some("")),
            ("mk", None),
            ("n", Some("k")),
            ("", Some("mk")),
        ];
        for (i, (model, key)) in targets.iter().enumerate() {
            assert_eq!(*map.get_or_insert_with(model, *key, || i), i);
        }
        assert_eq!(map.len(), targets.len());
        for (i, (model, key)) in targets.iter().enumerate() {
            assert_eq!(map.get(model, *key), Some(&i), "{model:?} {key:?}");
            // An existing target keeps its value.
            assert_eq!(*map.get_or_insert_with(model, *key, || 99), i);
        }
        assert_eq!(map.remove("m", Some("k")), Some(1));
        assert_eq!(map.remove("m", Some("k")), None);
        assert_eq!(map.get("m", Some("k")), None);
        assert_eq!(map.get("m", None), Some(&0));
        assert_eq!(map.len(), targets.len() - 1);
    }

    #[test]
    fn growth_keeps_every_target() {
        let mut map = TargetMap::default();
        let keys: Vec<String> = (0..10_000).map(|i| format!("tenant-{i}")).collect();
        for (i, k) in keys.iter().enumerate() {
            map.get_or_insert_with("llama", Some(k), || i);
        }
        for (i, k) in keys.iter().enumerate() {
            assert_eq!(map.get("llama", Some(k)), Some(&i));
        }
        for k in keys.iter().step_by(2) {
            assert!(map.remove("llama", Some(k)).is_some());
        }
        assert_eq!(map.len(), 5_000);
        assert_eq!(map.get("llama", Some("tenant-1")), Some(&1));
    }
}
