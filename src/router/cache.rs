//! The expression cache (docs/stargate.md 5.6): per target the
//! current and previous expression, builds under a per-target lock outside
//! the lock hits take, retirement of dropped definitions' instances,
//! capacity eviction, idle expiry and the metrics scrape.

use super::engine::Engine;
use super::metrics::{CacheOutcome, Metrics};
use super::rejection::Rejection;
use super::request::header_text;
use super::runtime::{unknown_method, Router};
use super::state::{Cached, Entry, TargetState};
use crate::ir::Definition;
use std::sync::atomic::Ordering;
use std::sync::{Arc, PoisonError};

impl<B: Engine> Router<B> {
    pub(super) fn resolve_expression(
        &self,
        target: &Arc<TargetState<B>>,
        model: &str,
        value: &[u8],
    ) -> Result<(Arc<Definition>, CacheOutcome), Rejection> {
        if let Some(definition) = self.hit(target, value) {
            return Ok((definition, CacheOutcome::Hit));
        }
        let _building = target.lock_build();
        // A concurrent request may have built this value while we waited.
        if let Some(definition) = self.hit(target, value) {
            return Ok((definition, CacheOutcome::Hit));
        }
        let text = header_text(value).ok_or_else(|| unknown_method(value))?;
        let definition = (self.options.compiler)(&self.table, model, text)
            .map_err(|diagnostic| Rejection::from_diagnostic(&diagnostic))?;
        let definition = Arc::new(definition);
        let outcome = self.install(target, value, definition.clone());
        log::info!(
            "routing expression configuration built: algorithm={} outcome={outcome:?} value={text:?}",
            definition.policy.algorithm
        );
        self.counters.record(definition.policy.algorithm, outcome);
        Ok((definition, outcome))
    }

    pub(super) fn hit(&self, target: &TargetState<B>, value: &[u8]) -> Option<Arc<Definition>> {
        let now = self.options.clock.now_coarse();
        let slot = target.read();
        let entry = slot.entry.as_ref()?;
        if target.idle_expired(now, self.options.idle_timeout) {
            return None;
        }
        let cached = entry.find(value)?;
        target.touch(now);
        self.counters.record(cached.algorithm(), CacheOutcome::Hit);
        Some(cached.definition.clone())
    }

    /// Stores a new build as the target's current expression.
    fn install(
        &self,
        target: &Arc<TargetState<B>>,
        value: &[u8],
        definition: Arc<Definition>,
    ) -> CacheOutcome {
        let now = self.options.clock.now();
        let new = Cached {
            bytes: value.into(),
            definition,
        };
        let mut slot = target.write();
        let expired = target.idle_expired(now, self.options.idle_timeout);
        let (outcome, added) = match slot.entry.take() {
            Some(old) if !expired => {
                if let Some(dropped) = &old.previous {
                    slot.retire(&dropped.definition);
                }
                slot.entry = Some(Entry {
                    current: new,
                    previous: Some(old.current),
                });
                (CacheOutcome::Rebuild, false)
            }
            old => {
                let had_entry = old.is_some();
                if let Some(old) = old {
                    slot.entry = Some(old);
                    slot.forget_entry();
                }
                slot.entry = Some(Entry {
                    current: new,
                    previous: None,
                });
                (CacheOutcome::Build, !had_entry && !slot.removed)
            }
        };
        target.touch_exact(now);
        drop(slot);
        if added {
            self.entries.fetch_add(1, Ordering::Relaxed);
            self.enforce_capacity(target);
        }
        outcome
    }

    /// Evicts least recently used entries (other than `keep`) while over
    /// the capacity bound, retiring their instances.
    fn enforce_capacity(&self, keep: &Arc<TargetState<B>>) {
        let _evicting = self
            .evict_lock
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        while self.entries.load(Ordering::Relaxed) > self.options.cache_capacity as u64 {
            let victim = {
                let targets = self.targets.read();
                targets
                    .values()
                    .filter(|t| !Arc::ptr_eq(t, keep) && t.read().entry.is_some())
                    .min_by_key(|t| t.last_used())
                    .cloned()
            };
            let Some(victim) = victim else { break };
            if victim.write().forget_entry() {
                self.entries.fetch_sub(1, Ordering::Relaxed);
            }
        }
    }

    /// Pending cache maintenance: expires idle entries and retires their
    /// instances. Returns how many entries expired.
    pub fn maintenance(&self) -> usize {
        let now = self.options.clock.now();
        let targets: Vec<_> = {
            let map = self.targets.read();
            map.values().cloned().collect()
        };
        let mut expired = 0;
        let idle = self.options.idle_timeout;
        for target in targets {
            // Checked under the read side first: a write locks every stripe.
            if target.read().entry.is_none() || !target.idle_expired(now, idle) {
                continue;
            }
            let mut slot = target.write();
            if slot.entry.is_some() && target.idle_expired(now, idle) && slot.forget_entry() {
                self.entries.fetch_sub(1, Ordering::Relaxed);
                expired += 1;
            }
        }
        expired
    }

    /// A metrics scrape: runs [`Router::maintenance`] first, as stargate's
    /// scrape does.
    pub fn metrics(&self) -> Metrics {
        self.maintenance();
        Metrics::collect(&self.counters, self.entries.load(Ordering::Relaxed))
    }
}
