//! The router runtime: resolves a request's `x-routing-method` against the
//! route table (docs/stargate.md 4.4, 5.3), going through the
//! expression cache (cache.rs) for values with parameters, and keeps one
//! balancer instance per (target, definition).

use super::engine::Engine;
use super::metrics::{CacheOutcome, Counters};
use super::options::RouterOptions;
use super::rejection::{Rejection, RejectionCode};
use super::request::{
    decide, header_text, is_expression, non_blank, PendingResolution, Resolved, RouteRequest,
    Source,
};
use super::state::TargetState;
use super::targets::TargetMap;
use crate::balancer::{Balancer, ClusterSnapshot, Decision, Scratch};
use crate::diag::Code;
use crate::ir::{Algorithm, Definition, RouteTable};
use crate::sync::ReadMostly;
use rand::RngCore;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A router: a route table at run time. `Send + Sync`; share it by
/// reference or `Arc` between request threads.
pub struct Router<B: Engine = Balancer> {
    pub(super) table: RouteTable,
    pub(super) options: RouterOptions,
    pub(super) targets: ReadMostly<TargetMap<Arc<TargetState<B>>>>,
    pub(super) counters: Counters,
    /// Targets holding a cache entry (the gauge).
    pub(super) entries: AtomicU64,
    pub(super) evict_lock: Mutex<()>,
}

impl Router<Balancer> {
    /// A router over `table` with stargate's cache bounds and the real
    /// compiler and balancer.
    pub fn new(table: RouteTable) -> Self {
        Router::with_options(table, RouterOptions::default())
    }
}

impl<B: Engine> Router<B> {
    pub fn with_options(table: RouteTable, options: RouterOptions) -> Self {
        Router {
            table,
            options,
            targets: ReadMostly::new(TargetMap::default()),
            counters: Counters::default(),
            entries: AtomicU64::new(0),
            evict_lock: Mutex::new(()),
        }
    }

    pub fn table(&self) -> &RouteTable {
        &self.table
    }

    /// Resolution, then one decision. On the warm path the decision runs
    /// on borrowed definition and instance (no `Arc` count touched, so
    /// threads deciding for one target write no shared cache line).
    pub fn route(
        &self,
        request: &RouteRequest<'_>,
        clusters: &[ClusterSnapshot],
        rng: &mut dyn RngCore,
        scratch: &mut Scratch,
    ) -> Result<Decision, Rejection> {
        let r = &request.request;
        let routing_key = non_blank(r.routing_key);
        let method = request.routing_method;
        let warm = self.with_warm(r.model, routing_key, method, |definition, instance, _| {
            decide(
                definition,
                &**instance,
                r,
                clusters,
                &mut *rng,
                &mut *scratch,
            )
        });
        if let Some(decided) = warm {
            return decided;
        }
        let pending = self.resolve_definition(r.model, routing_key, method)?;
        self.instantiate(pending).decide(r, clusters, rng, scratch)
    }

    /// Resolves the `x-routing-method` value (`None` = header absent) for
    /// the target (routing key, model) and fetches its balancer instance.
    pub fn resolve(
        &self,
        model: &str,
        routing_key: Option<&str>,
        method: Option<&[u8]>,
    ) -> Result<Resolved<B>, Rejection> {
        let routing_key = non_blank(routing_key);
        let warm = self.with_warm(
            model,
            routing_key,
            method,
            |definition, instance, source| Resolved {
                definition: definition.clone(),
                instance: instance.clone(),
                source,
            },
        );
        if let Some(resolved) = warm {
            return Ok(resolved);
        }
        let pending = self.resolve_definition(model, routing_key, method)?;
        Ok(self.instantiate(pending))
    }

    /// The warm path: an existing target, a definition that needs no build
    /// and an existing instance, passed to `f` under one read lock of each
    /// map. `None` sends the request down the general path, which also
    /// reports errors.
    fn with_warm<R>(
        &self,
        model: &str,
        routing_key: Option<&str>,
        method: Option<&[u8]>,
        f: impl FnOnce(&Arc<Definition>, &Arc<B>, Source) -> R,
    ) -> Option<R> {
        let targets = self.targets.read();
        let target = targets.get(model, routing_key)?;
        let slot = target.read();
        let (definition, source) = match method {
            None => (self.table.configured(model), Source::Configured),
            // Only values with parameters are cached, so a byte match is an
            // expression hit without scanning the value first.
            Some(value) => match slot.entry.as_ref().and_then(|e| e.find(value)) {
                Some(cached) => {
                    let now = self.options.clock.now_coarse();
                    if target.idle_expired(now, self.options.idle_timeout) {
                        return None;
                    }
                    let instance = slot.instance(&cached.definition)?;
                    target.touch(now);
                    self.counters.record(cached.algorithm(), CacheOutcome::Hit);
                    let hit = Source::Expression(CacheOutcome::Hit);
                    return Some(f(&cached.definition, instance, hit));
                }
                None if is_expression(value, self.options.call_form) => return None,
                None => (self.resolve_method(model, value).ok()?, Source::Method),
            },
        };
        Some(f(definition, slot.instance(definition)?, source))
    }

    /// The first half of [`Router::resolve`]: the definition only.
    pub fn resolve_definition(
        &self,
        model: &str,
        routing_key: Option<&str>,
        method: Option<&[u8]>,
    ) -> Result<PendingResolution<B>, Rejection> {
        let routing_key = non_blank(routing_key);
        let (definition, source) = match method {
            None => (self.table.configured(model).clone(), Source::Configured),
            Some(value) if is_expression(value, self.options.call_form) => {
                let target = self.target(model, routing_key);
                let (definition, outcome) = self
                    .resolve_expression(&target, model, value)
                    .inspect_err(log_rejected_header)?;
                return Ok(PendingResolution {
                    target,
                    definition,
                    source: Source::Expression(outcome),
                });
            }
            Some(value) => {
                let definition = self
                    .resolve_method(model, value)
                    .inspect_err(log_rejected_header)?;
                (definition.clone(), Source::Method)
            }
        };
        Ok(PendingResolution {
            target: self.target(model, routing_key),
            definition,
            source,
        })
    }

    /// The second half of [`Router::resolve`]: the instance of the
    /// definition, created on first use. A definition the cache retired in
    /// the meantime gets a one-off instance that is not kept.
    pub fn instantiate(&self, pending: PendingResolution<B>) -> Resolved<B> {
        let PendingResolution {
            target,
            definition,
            source,
        } = pending;
        if let Some(instance) = target.read().instance(&definition) {
            return Resolved {
                instance: instance.clone(),
                definition,
                source,
            };
        }
        let built = Arc::new(B::build(&definition.policy));
        let mut slot = target.write();
        let instance = match slot.instance(&definition) {
            Some(existing) => existing.clone(),
            None => {
                let live = match source {
                    Source::Expression(_) => {
                        slot.entry.as_ref().is_some_and(|e| e.holds(&definition))
                    }
                    Source::Configured | Source::Method => true,
                };
                if live {
                    slot.instances.push((definition.clone(), built.clone()));
                }
                built
            }
        };
        drop(slot);
        Resolved {
            definition,
            instance,
            source,
        }
    }

    fn target(&self, model: &str, routing_key: Option<&str>) -> Arc<TargetState<B>> {
        let targets = self.targets.read();
        if let Some(target) = targets.get(model, routing_key) {
            return target.clone();
        }
        drop(targets);
        let mut targets = self.targets.write();
        targets
            .get_or_insert_with(model, routing_key, || Arc::new(TargetState::new()))
            .clone()
    }

    /// A method-only value (4.4).
    fn resolve_method(&self, model: &str, value: &[u8]) -> Result<&Arc<Definition>, Rejection> {
        let algorithm = header_text(value)
            .and_then(Algorithm::from_header_name)
            .map(|(a, _)| a)
            .ok_or_else(|| unknown_method(value))?;
        self.table
            .resolve(model, algorithm)
            .map(|r| r.definition)
            .ok_or_else(|| {
                Rejection::new(
                    RejectionCode::Expression(Code::Unavailable),
                    format!("routing method {algorithm} is not configured for this model"),
                )
            })
    }

    /// Starts a new target generation (for example when the target's
    /// cluster membership is replaced): every balancer instance of the
    /// target is dropped, so round-robin counters and ranking caches start
    /// afresh. Cached expressions stay; their instances are rebuilt lazily.
    pub fn reset_target(&self, model: &str, routing_key: Option<&str>) {
        if let Some(target) = self.existing_target(model, routing_key) {
            target.write().instances.clear();
        }
    }

    /// Forgets a target entirely (for example when its last registration
    /// goes away): its cached expressions and balancer instances. Targets
    /// are created by the first request that names them, so an embedding
    /// router with unbounded routing keys calls this to bound memory.
    pub fn remove_target(&self, model: &str, routing_key: Option<&str>) {
        let removed = self.targets.write().remove(model, non_blank(routing_key));
        if let Some(target) = removed {
            let mut slot = target.write();
            slot.removed = true;
            if slot.forget_entry() {
                self.entries.fetch_sub(1, Ordering::Relaxed);
            }
        }
    }

    /// The target's cached (current, previous) definitions.
    pub fn cached_definitions(
        &self,
        model: &str,
        routing_key: Option<&str>,
    ) -> (Option<Arc<Definition>>, Option<Arc<Definition>>) {
        let Some(target) = self.existing_target(model, routing_key) else {
            return (None, None);
        };
        let slot = target.read();
        match &slot.entry {
            None => (None, None),
            Some(e) => (
                Some(e.current.definition.clone()),
                e.previous.as_ref().map(|p| p.definition.clone()),
            ),
        }
    }

    /// Whether the target holds a balancer instance for `definition`.
    pub fn has_instance(
        &self,
        model: &str,
        routing_key: Option<&str>,
        definition: &Arc<Definition>,
    ) -> bool {
        self.existing_target(model, routing_key)
            .is_some_and(|t| t.read().instance(definition).is_some())
    }

    /// How many balancer instances the target holds.
    pub fn instance_count(&self, model: &str, routing_key: Option<&str>) -> usize {
        self.existing_target(model, routing_key)
            .map_or(0, |t| t.read().instances.len())
    }

    fn existing_target(
        &self,
        model: &str,
        routing_key: Option<&str>,
    ) -> Option<Arc<TargetState<B>>> {
        let targets = self.targets.read();
        targets.get(model, non_blank(routing_key)).cloned()
    }

    /// The idle window in force.
    pub fn idle_timeout(&self) -> Duration {
        self.options.idle_timeout
    }
}

/// stargate's warning on a rejected `x-routing-method` (5.5). Formatted only
/// when a logger enables the level.
fn log_rejected_header(rejection: &Rejection) {
    log::warn!(
        "invalid routing algorithm header: code={} message={}",
        rejection.code,
        rejection.message
    );
}

pub(super) fn unknown_method(value: &[u8]) -> Rejection {
    Rejection::new(
        RejectionCode::Expression(Code::UnknownMethod),
        format!(
            "unknown routing method '{}'",
            String::from_utf8_lossy(value)
        ),
    )
}
