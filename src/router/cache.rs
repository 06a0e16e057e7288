//! The expression cache (docs/stargate.md 5.6): per target the
//! current and previous expression, builds under a per-target lock outside
//! the lock hits take, retirement of dropped definitions' instances, idle
//! expiry and the metrics scrape. The bound on targets (and so on entries)
//! is the target arena's (arena.rs).

use super::arena::Handle;
use super::metrics::counters::Event;
use super::metrics::expression_cache::{CacheOutcome, Metrics};
use super::rejection::{Rejection, MAX_MESSAGE_BYTES};
use super::request::header_text;
use super::runtime::{unknown_method, Router};
use super::state::{Cached, Entry, TargetState};
use crate::balancer::Balancer;
use crate::ir::Definition;
use std::sync::atomic::Ordering;
use std::sync::Arc;

impl Router {
    pub(super) fn resolve_expression(
        &self,
        handle: Handle,
        model: &str,
        value: &[u8],
    ) -> Result<(Arc<Definition>, CacheOutcome), Rejection> {
        let target = self
            .targets
            .slot(handle.index)
            .expect("a claimed slot is allocated");
        if let Some(definition) = self.hit(handle, target, value) {
            return Ok((definition, CacheOutcome::Hit));
        }
        let _building = target.lock_build();
        // A concurrent request may have built this value while we waited.
        if let Some(definition) = self.hit(handle, target, value) {
            return Ok((definition, CacheOutcome::Hit));
        }
        let compiled = header_text(value)
            .ok_or_else(|| unknown_method(value))
            .and_then(|text| {
                (self.options.compiler)(&self.table.load(), model, text)
                    .map_err(|errors| Rejection::from_compile_errors(&errors, text))
                    .map(|definition| (text, definition))
            });
        let (text, definition) = match compiled {
            Ok(built) => built,
            Err(rejection) => {
                // No state for a request that fails validation: a target
                // this request created, still empty, goes again.
                self.targets.release_if(handle, |_, slot| {
                    slot.entry.is_none() && slot.instances.is_empty()
                });
                return Err(rejection);
            }
        };
        let definition = Arc::new(definition);
        let outcome = self.install(handle, target, value, definition.clone());
        log::info!(
            "routing expression configuration built: algorithm={} outcome={outcome:?} value={:?}",
            definition.policy.algorithm,
            super::rejection::bounded_echo(text, MAX_MESSAGE_BYTES)
        );
        self.counters.record(definition.policy.algorithm, outcome);
        Ok((definition, outcome))
    }

    pub(super) fn hit(
        &self,
        handle: Handle,
        target: TargetState<'_, Balancer>,
        value: &[u8],
    ) -> Option<Arc<Definition>> {
        let now = self.options.clock.now_coarse();
        let slot = target.read();
        if slot.generation != handle.generation {
            return None;
        }
        let entry = slot.entry.as_ref()?;
        if target.idle_expired(now, self.options.idle_timeout) {
            return None;
        }
        let cached = entry.find(value)?;
        target.touch(now);
        self.counters.record(cached.algorithm(), CacheOutcome::Hit);
        Some(cached.definition.clone())
    }

    /// Stores a new build as the target's current expression (unless the
    /// target was evicted meanwhile: then the build serves this request
    /// only).
    fn install(
        &self,
        handle: Handle,
        target: TargetState<'_, Balancer>,
        value: &[u8],
        definition: Arc<Definition>,
    ) -> CacheOutcome {
        let now = self.options.clock.now();
        let new = Cached {
            bytes: value.into(),
            definition,
        };
        let mut slot = target.write();
        if slot.generation != handle.generation {
            return CacheOutcome::Build;
        }
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
                (CacheOutcome::Build, !had_entry)
            }
        };
        target.touch_exact(now);
        drop(slot);
        if added {
            self.entries.fetch_add(1, Ordering::Relaxed);
        }
        outcome
    }

    /// Pending maintenance: forgets targets idle for the idle window (their
    /// cached expressions and balancer instances). Returns how many cached
    /// expressions expired with them. One pass over the live targets.
    pub fn maintenance(&self) -> usize {
        let now = self.options.clock.now();
        let idle = self.options.idle_timeout;
        let mut expired = 0;
        let mut targets = 0;
        for handle in self.targets.handles() {
            let released = self
                .targets
                .release_if(handle, |t, _| t.idle_expired(now, idle));
            targets += u64::from(released.is_some());
            if released == Some(true) {
                self.entries.fetch_sub(1, Ordering::Relaxed);
                expired += 1;
            }
        }
        self.events.count_n(Event::TargetExpired, targets);
        self.events
            .count_n(Event::ExpressionExpired, expired as u64);
        expired
    }

    /// A metrics scrape: runs [`Router::maintenance`] first, as stargate's
    /// scrape does, then [`Router::read_metrics`].
    pub fn metrics(&self) -> Metrics {
        self.maintenance();
        self.read_metrics()
    }

    /// The metrics as they are, changing nothing (what `RouterCollector`
    /// reads at each scrape; run [`Router::maintenance`] on its own
    /// schedule). Entries past their idle window still count until then.
    pub fn read_metrics(&self) -> Metrics {
        let mut events = self.events.snapshot();
        events.sessions = self.sessions.totals();
        Metrics::collect(
            &self.counters,
            self.entries.load(Ordering::Relaxed),
            self.targets.len() as u64,
            events,
        )
    }
}
