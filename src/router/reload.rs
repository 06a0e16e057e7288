//! Replacing the route table while requests are in flight
//! ([`Router::reload`]).
//!
//! Balancer instances are kept per definition identity (`Arc` pointer), so
//! a reload first gives every definition of the new table that equals the
//! old table's at the same place the old `Arc`: targets whose resolved
//! policy is unchanged then find their instances (round-robin counters,
//! ranking caches) as they were. The new table is swapped in atomically;
//! a request that loaded the old one finishes with it. Then one pass over
//! the targets drops instances of definitions the new table no longer
//! holds (they rebuild on next use) and the cached expressions of models
//! whose configuration changed (they were compiled against the old one:
//! the next request rebuilds them).

use super::metrics::counters::Event;
use super::runtime::Router;
use crate::ir::{Algorithm, Definition, ModelEntry, RouteTable};
use indexmap::IndexMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// What a reload changed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reloaded {
    /// Models whose configuration (own entry, or the default and top-level
    /// request algorithms they resolve through) changed, added or removed.
    pub changed_models: Vec<String>,
    /// Balancer instances dropped (their definition changed or went).
    pub instances_dropped: usize,
    /// Targets whose cached expressions were dropped.
    pub expressions_dropped: usize,
}

/// `new`, or `old` when equal (the old identity is kept).
fn keep(old: &Arc<Definition>, new: &mut Arc<Definition>) {
    if **old == **new {
        *new = old.clone();
    }
}

fn keep_map(
    old: &IndexMap<Algorithm, Arc<Definition>>,
    new: &mut IndexMap<Algorithm, Arc<Definition>>,
) {
    for (algorithm, definition) in new.iter_mut() {
        if let Some(previous) = old.get(algorithm) {
            keep(previous, definition);
        }
    }
}

/// Every definition of a table.
fn definitions(table: &RouteTable) -> impl Iterator<Item = &Arc<Definition>> {
    std::iter::once(&table.default)
        .chain(table.request_algorithms.values())
        .chain(
            table
                .models
                .values()
                .flat_map(|m| std::iter::once(&m.definition).chain(m.request_algorithms.values())),
        )
}

/// Whether `model` resolves alike in both tables.
fn same_model(old: &RouteTable, new: &RouteTable, model: &str) -> bool {
    let entry = |t: &RouteTable| t.models.get(model).cloned();
    let shared = |t: &RouteTable| (t.default.clone(), t.request_algorithms.clone());
    let (a, b): (Option<ModelEntry>, Option<ModelEntry>) = (entry(old), entry(new));
    a == b && shared(old) == shared(new)
}

impl Router {
    /// Replaces the route table atomically (see the module documentation).
    /// `table` is a valid configuration: load it with
    /// `config::load_table_path` and keep the old one when that fails
    /// (the router never sees a configuration with errors).
    pub fn reload(&self, mut table: RouteTable) -> Reloaded {
        let old = self.table.load_full();
        keep(&old.default, &mut table.default);
        keep_map(&old.request_algorithms, &mut table.request_algorithms);
        for (model, entry) in table.models.iter_mut() {
            if let Some(previous) = old.models.get(model) {
                keep(&previous.definition, &mut entry.definition);
                keep_map(&previous.request_algorithms, &mut entry.request_algorithms);
            }
        }
        let mut changed_models: Vec<String> = old
            .models
            .keys()
            .chain(table.models.keys())
            .filter(|m| !same_model(&old, &table, m))
            .cloned()
            .collect();
        changed_models.sort();
        changed_models.dedup();
        let defaults_changed =
            old.default != table.default || old.request_algorithms != table.request_algorithms;
        let table = Arc::new(table);
        self.table.store(table.clone());

        let live: Vec<&Arc<Definition>> = definitions(&table).collect();
        let mut summary = Reloaded {
            changed_models,
            ..Reloaded::default()
        };
        for handle in self.targets.handles() {
            let Some(target) = self.targets.slot(handle.index) else {
                continue;
            };
            let mut slot = target.write();
            if slot.generation != handle.generation {
                continue;
            }
            let Some((model, _)) = slot.key.clone() else {
                continue;
            };
            let model_changed =
                if table.models.contains_key(&*model) || old.models.contains_key(&*model) {
                    summary.changed_models.iter().any(|m| **m == *model)
                } else {
                    defaults_changed
                };
            let before = slot.instances.len();
            if model_changed && slot.forget_entry() {
                summary.expressions_dropped += 1;
                self.entries.fetch_sub(1, Ordering::Relaxed);
            }
            let entry = slot.entry.take();
            slot.instances.retain(|i| {
                live.iter().any(|d| Arc::ptr_eq(d, &i.definition))
                    || entry.as_ref().is_some_and(|e| e.holds(&i.definition))
            });
            slot.entry = entry;
            summary.instances_dropped += before - slot.instances.len();
        }
        self.events.count(Event::Reload);
        summary
    }
}
