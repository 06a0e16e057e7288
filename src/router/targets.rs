//! A map keyed by target = (routing key or none, model) that is looked up
//! through borrowed `&str`s, so the request path does not allocate a key.

use std::collections::HashMap;

#[derive(Debug)]
pub(crate) struct TargetMap<V> {
    models: HashMap<Box<str>, ModelTargets<V>>,
}

#[derive(Debug)]
struct ModelTargets<V> {
    keyless: Option<V>,
    keyed: HashMap<Box<str>, V>,
}

impl<V> Default for TargetMap<V> {
    fn default() -> Self {
        TargetMap {
            models: HashMap::new(),
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
                keyed: HashMap::new(),
            });
        match routing_key {
            None => targets.keyless.get_or_insert_with(make),
            Some(key) => targets.keyed.entry(key.into()).or_insert_with(make),
        }
    }

    pub(crate) fn values(&self) -> impl Iterator<Item = &V> {
        self.models
            .values()
            .flat_map(|t| t.keyless.iter().chain(t.keyed.values()))
    }
}
