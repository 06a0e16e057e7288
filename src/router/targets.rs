//! A map keyed by target = (routing key or none, model) that is looked up
//! through borrowed `&str`s, so the request path does not allocate a key.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};

/// Seeded XXH3 for the short, client-chosen keys of the request path:
/// faster than SipHash on a handful of bytes, and the per-map random seed
/// keeps colliding keys from being chosen in advance.
#[derive(Clone, Debug)]
pub(crate) struct KeyHash {
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

impl BuildHasher for KeyHash {
    type Hasher = KeyHasher;

    fn build_hasher(&self) -> KeyHasher {
        KeyHasher(self.seed)
    }
}

pub(crate) struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn write(&mut self, bytes: &[u8]) {
        self.0 = xxhash_rust::xxh3::xxh3_64_with_seed(bytes, self.0);
    }

    fn write_u8(&mut self, byte: u8) {
        // str's terminator: mix it in without a second pass over the key.
        self.0 = self.0.rotate_left(5) ^ u64::from(byte);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

type Map<V> = HashMap<Box<str>, V, KeyHash>;

#[derive(Debug)]
pub(crate) struct TargetMap<V> {
    models: Map<ModelTargets<V>>,
}

#[derive(Debug)]
struct ModelTargets<V> {
    keyless: Option<V>,
    keyed: Map<V>,
}

impl<V> Default for TargetMap<V> {
    fn default() -> Self {
        TargetMap {
            models: Map::default(),
        }
    }
}

impl<V> TargetMap<V> {
    pub(crate) fn get(&self, model: &str, routing_key: Option<&str>) -> Option<&V> {
        let targets = self.models.get(model)?;
        match routing_key {
            None => targets.keyless.as_ref(),
            Some(key) => targets.keyed.get(key),
        }
    }

    pub(crate) fn get_or_insert_with(
        &mut self,
        model: &str,
        routing_key: Option<&str>,
        make: impl FnOnce() -> V,
    ) -> &V {
        let targets = self
            .models
            .entry(model.into())
            .or_insert_with(|| ModelTargets {
                keyless: None,
                keyed: Map::default(),
            });
        match routing_key {
            None => targets.keyless.get_or_insert_with(make),
            Some(key) => targets.keyed.entry(key.into()).or_insert_with(make),
        }
    }

    pub(crate) fn remove(&mut self, model: &str, routing_key: Option<&str>) -> Option<V> {
        let targets = self.models.get_mut(model)?;
        let removed = match routing_key {
            None => targets.keyless.take(),
            Some(key) => targets.keyed.remove(key),
        };
        if targets.keyless.is_none() && targets.keyed.is_empty() {
            self.models.remove(model);
        }
        removed
    }
}
