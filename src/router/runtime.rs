//! The router runtime: resolves a request's `x-routing-method` against the
//! route table (docs/stargate.md 4.4, 5.3), going through the
//! expression cache (cache.rs) for values with parameters, and keeps one
//! balancer instance per (target, definition).

use super::arena::{Handle, Targets};
use super::metrics::counters::{Event, RouterCounters};
use super::metrics::expression_cache::{CacheOutcome, Counters};
use super::metrics::sessions::{self, SessionSelections, SessionTally};
use super::options::RouterOptions;
use super::rejection::{bounded_echo, Rejection, RejectionCode, MAX_MESSAGE_BYTES};
use super::request::{
    decide, header_text, is_expression, non_blank, PendingResolution, Resolved, RouteRequest,
    Source,
};
use super::request::{has_candidates, reject_without_candidates};
use super::state::{nanos, Instance, TargetState};
use crate::balancer::{Balancer, ClusterSnapshot, Decision, Scratch};
use crate::diag::Code;
use crate::ir::{Algorithm, Definition, Policy, RouteTable};
use arc_swap::ArcSwap;
use rand::RngCore;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// A router: a route table at run time. `Send + Sync`; share it by
/// reference or `Arc` between request threads.
pub struct Router {
    /// Replaced whole by [`Router::reload`] (reload.rs).
    pub(super) table: ArcSwap<RouteTable>,
    pub(super) options: RouterOptions,
    pub(super) targets: Targets<Balancer>,
    pub(super) counters: Counters,
    /// Targets, routings, waits, rejections, health (counters.rs).
    pub(super) events: RouterCounters,
    /// Targets holding a cache entry (the gauge).
    pub(super) entries: AtomicU64,
    /// Session selections per algorithm, over every target (sessions.rs).
    pub(super) sessions: Arc<SessionTally>,
    /// `options.idle_timeout` in nanoseconds, for the hit path.
    idle_ns: u64,
    /// Builds a definition's balancer instance: [`Balancer::new`], or
    /// with the `testing` feature a test's stand-in
    /// ([`Router::with_stand_ins`]).
    build: fn(&Policy) -> Balancer,
}

impl Router {
    /// A router over `table` with stargate's cache bounds and the real
    /// compiler and balancer.
    pub fn new(table: RouteTable) -> Self {
        Router::with_options(table, RouterOptions::default())
    }

    /// A router over `table` with `options` (cache bounds, clock, compiler);
    /// no target and no instance exist until requests arrive.
    pub fn with_options(table: RouteTable, options: RouterOptions) -> Self {
        Router {
            table: ArcSwap::from_pointee(table),
            targets: Targets::new(options.cache_capacity),
            idle_ns: nanos(options.idle_timeout),
            options,
            counters: Counters::default(),
            events: RouterCounters::default(),
            entries: AtomicU64::new(0),
            sessions: Arc::default(),
            build: Balancer::new,
        }
    }

    /// A router whose balancer instances are built by `build` instead of
    /// [`Balancer::new`]: the project's router tests pass
    /// [`Balancer::stand_in`]s that show which instance decided. No part
    /// of the API (feature `testing`).
    #[cfg(feature = "testing")]
    pub fn with_stand_ins(
        table: RouteTable,
        options: RouterOptions,
        build: fn(&Policy) -> Balancer,
    ) -> Self {
        Router {
            build,
            ..Router::with_options(table, options)
        }
    }

    /// The route table in force (a reload replaces it; this one stays
    /// valid for as long as the caller holds it).
    pub fn table(&self) -> Arc<RouteTable> {
        self.table.load_full()
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
        let warm = self.with_warm(r.model, routing_key, method, |pair, _| {
            decide(pair, r, clusters, &mut *rng, &mut *scratch)
        });
        if let Some(decided) = warm {
            return decided;
        }
        if !has_candidates(r, clusters) {
            // Answered without creating per-target state.
            return Err(self.reject_without_state(r, routing_key, method, clusters));
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
    ) -> Result<Resolved, Rejection> {
        let routing_key = non_blank(routing_key);
        let warm = self.with_warm(model, routing_key, method, |pair, source| Resolved {
            pair: pair.clone(),
            source,
        });
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
        f: impl FnOnce(&Arc<Instance<Balancer>>, Source) -> R,
    ) -> Option<R> {
        // The map lock is held for the lookup only: the decision runs
        // under the target's own slot lock (arena.rs).
        let handle = self.targets.lookup(model, routing_key)?;
        let target = self.targets.slot(handle.index)?;
        let slot = target.read();
        if slot.generation != handle.generation {
            return None;
        }
        let now = nanos(self.options.clock.now_coarse());
        // Loaded for configured and method-only values only: a cached
        // expression (the hit below) never reads the table.
        let table;
        let (definition, source) = match method {
            None => {
                table = self.table.load();
                (table.configured(model), Source::Configured)
            }
            // Only values with parameters are cached, so a byte match is an
            // expression hit without scanning the value first.
            Some(value) => match slot.entry.as_ref().and_then(|e| e.find(value)) {
                Some(cached) => {
                    if target.idle_expired_ns(now, self.idle_ns) {
                        return None;
                    }
                    let instance = slot.instance(&cached.definition)?;
                    target.touch_ns(now);
                    self.counters.record(cached.algorithm(), CacheOutcome::Hit);
                    let hit = Source::Expression(CacheOutcome::Hit);
                    return Some(f(instance, hit));
                }
                None if is_expression(value, self.options.call_form) => return None,
                None => {
                    table = self.table.load();
                    (resolve_method(&table, model, value).ok()?, Source::Method)
                }
            },
        };
        let instance = slot.instance(definition)?;
        target.touch_ns(now);
        Some(f(instance, source))
    }

    /// The rejection of a request without candidates, in the order of
    /// [`Resolved::decide`], creating no per-target state: an expression
    /// that is not cached for the target is compiled and dropped.
    fn reject_without_state(
        &self,
        request: &crate::balancer::Request<'_>,
        routing_key: Option<&str>,
        method: Option<&[u8]>,
        clusters: &[ClusterSnapshot],
    ) -> Rejection {
        let model = request.model;
        let table = self.table.load();
        let definition = match method {
            None => Ok(table.configured(model).clone()),
            Some(value) if is_expression(value, self.options.call_form) => {
                let cached = self.existing_target(model, routing_key).and_then(|(h, t)| {
                    let slot = t.read();
                    let entry = slot
                        .entry
                        .as_ref()
                        .filter(|_| slot.generation == h.generation)?;
                    Some(entry.find(value)?.definition.clone())
                });
                match cached {
                    Some(definition) => Ok(definition),
                    None => header_text(value)
                        .ok_or_else(|| unknown_method(value))
                        .and_then(|text| {
                            (self.options.compiler)(&table, model, text)
                                .map(Arc::new)
                                .map_err(|errors| Rejection::from_compile_errors(&errors, text))
                        }),
                }
            }
            Some(value) => resolve_method(&table, model, value).cloned(),
        };
        match definition {
            Ok(definition) => reject_without_candidates(&definition.policy, request, clusters),
            Err(rejection) => {
                log_rejected_header(&rejection);
                rejection
            }
        }
    }

    /// The first half of [`Router::resolve`]: the definition only.
    pub fn resolve_definition(
        &self,
        model: &str,
        routing_key: Option<&str>,
        method: Option<&[u8]>,
    ) -> Result<PendingResolution, Rejection> {
        let routing_key = non_blank(routing_key);
        let table = self.table.load();
        let (definition, source) = match method {
            None => (table.configured(model).clone(), Source::Configured),
            Some(value) if is_expression(value, self.options.call_form) => {
                let target = self.target(model, routing_key);
                let (definition, outcome) = self
                    .resolve_expression(target, model, value)
                    .inspect_err(log_rejected_header)?;
                return Ok(PendingResolution {
                    target,
                    definition,
                    source: Source::Expression(outcome),
                });
            }
            Some(value) => {
                let definition =
                    resolve_method(&table, model, value).inspect_err(log_rejected_header)?;
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
    pub fn instantiate(&self, pending: PendingResolution) -> Resolved {
        let PendingResolution {
            target: handle,
            definition,
            source,
            ..
        } = pending;
        let Some(target) = self.targets.slot(handle.index) else {
            return self.one_off(definition, source);
        };
        {
            let slot = target.read();
            if slot.generation != handle.generation {
                drop(slot);
                return self.one_off(definition, source);
            }
            if let Some(pair) = slot.instance(&definition) {
                return Resolved {
                    pair: pair.clone(),
                    source,
                };
            }
        }
        let built = Arc::new(Instance {
            balancer: Arc::new((self.build)(&definition.policy)),
            definition,
            sessions: self.sessions.clone(),
        });
        self.events.count(Event::InstanceBuilt);
        let mut slot = target.write();
        let pair = match slot.instance(&built.definition) {
            Some(existing) => existing.clone(),
            None => {
                let live = slot.generation == handle.generation
                    && match source {
                        Source::Expression(_) => slot
                            .entry
                            .as_ref()
                            .is_some_and(|e| e.holds(&built.definition)),
                        Source::Configured | Source::Method => true,
                    };
                if live {
                    slot.instances.push(built.clone());
                }
                built
            }
        };
        drop(slot);
        Resolved { pair, source }
    }

    /// A one-off instance for a target that went away meanwhile.
    fn one_off(&self, definition: Arc<Definition>, source: Source) -> Resolved {
        let balancer = Arc::new((self.build)(&definition.policy));
        self.events.count(Event::InstanceBuilt);
        Resolved::new(definition, balancer, self.sessions.clone(), source)
    }

    /// The target's slot, claimed if new (evicting the least recently used
    /// target past the bound).
    pub(super) fn target(&self, model: &str, routing_key: Option<&str>) -> Handle {
        let claimed = self
            .targets
            .get_or_claim(model, routing_key, self.options.clock.now());
        if claimed.created {
            self.events.count(Event::TargetCreated);
        }
        if claimed.evicted_target {
            self.events.count(Event::TargetEvicted);
        }
        if claimed.evicted_entry {
            self.entries.fetch_sub(1, Ordering::Relaxed);
            self.events.count(Event::ExpressionEvicted);
        }
        claimed.handle
    }

    /// Starts a new target generation (for example when the target's
    /// cluster membership is replaced): every balancer instance of the
    /// target is dropped, so round-robin counters and ranking caches start
    /// afresh. Cached expressions stay; their instances are rebuilt lazily.
    pub fn reset_target(&self, model: &str, routing_key: Option<&str>) {
        if let Some((handle, target)) = self.existing_target(model, routing_key) {
            let mut slot = target.write();
            if slot.generation == handle.generation {
                slot.instances.clear();
            }
        }
    }

    /// Forgets a target entirely (for example when its last registration
    /// goes away): its cached expressions and balancer instances. Targets
    /// also expire when idle and are bounded in number (docs/embedding.md).
    pub fn remove_target(&self, model: &str, routing_key: Option<&str>) {
        let Some((handle, _)) = self.existing_target(model, routing_key) else {
            return;
        };
        if self.targets.release_if(handle, |_, _| true) == Some(true) {
            self.entries.fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// Counts a rejection the front end made before routing (a malformed
    /// header: `RequestHeaders::parse`'s 400), so the rejections metric
    /// covers every answer with a stargate code. Routings count their own.
    pub fn record_rejection(&self, rejection: &Rejection) {
        self.events.rejected_before_routing(rejection.code);
    }

    /// How many targets hold state now.
    pub fn target_count(&self) -> usize {
        self.targets.len()
    }

    /// The target's cached (current, previous) definitions.
    pub fn cached_definitions(
        &self,
        model: &str,
        routing_key: Option<&str>,
    ) -> (Option<Arc<Definition>>, Option<Arc<Definition>>) {
        let Some((handle, target)) = self.existing_target(model, routing_key) else {
            return (None, None);
        };
        let slot = target.read();
        if slot.generation != handle.generation {
            return (None, None);
        }
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
            .is_some_and(|(h, t)| {
                let slot = t.read();
                slot.generation == h.generation && slot.instance(definition).is_some()
            })
    }

    /// How many balancer instances the target holds.
    pub fn instance_count(&self, model: &str, routing_key: Option<&str>) -> usize {
        self.existing_target(model, routing_key)
            .map_or(0, |(h, t)| {
                let slot = t.read();
                if slot.generation == h.generation {
                    slot.instances.len()
                } else {
                    0
                }
            })
    }

    pub(super) fn existing_target(
        &self,
        model: &str,
        routing_key: Option<&str>,
    ) -> Option<(Handle, TargetState<'_, Balancer>)> {
        let handle = self.targets.lookup(model, non_blank(routing_key))?;
        Some((handle, self.targets.slot(handle.index)?))
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

/// A method-only value (4.4).
fn resolve_method<'t>(
    table: &'t RouteTable,
    model: &str,
    value: &[u8],
) -> Result<&'t Arc<Definition>, Rejection> {
    let algorithm = header_text(value)
        .and_then(Algorithm::from_header_name)
        .map(|(a, _)| a)
        .ok_or_else(|| unknown_method(value))?;
    table
        .resolve(model, algorithm)
        .map(|r| r.definition)
        .ok_or_else(|| {
            Rejection::new(
                RejectionCode::Expression(Code::Unavailable),
                format!("routing method {algorithm} is not configured for this model"),
            )
        })
}

pub(super) fn unknown_method(value: &[u8]) -> Rejection {
    Rejection::new(
        RejectionCode::Expression(Code::UnknownMethod),
        format!(
            "unknown routing method '{}'",
            bounded_echo(&String::from_utf8_lossy(value), MAX_MESSAGE_BYTES / 2)
        ),
    )
}

impl Router {
    /// Every target's session-selection counts, for the targets whose
    /// instances classified a request (the six series then exist, at 0).
    /// Takes each target's read lock in turn; meant for a scrape, not the
    /// request path.
    pub fn session_selections(&self) -> Vec<SessionSelections> {
        let mut out: Vec<SessionSelections> = Vec::new();
        for handle in self.targets.handles() {
            let Some(target) = self.targets.slot(handle.index) else {
                continue;
            };
            let slot = target.read();
            let Some((model, routing_key)) = &slot.key else {
                continue;
            };
            if slot.generation != handle.generation {
                continue;
            }
            let first = out.len();
            for instance in &slot.instances {
                let Some(counts) = instance.balancer.session_selections() else {
                    continue;
                };
                let algorithm = instance.definition.policy.algorithm;
                match out[first..].iter_mut().find(|s| s.algorithm == algorithm) {
                    Some(row) => sessions::add(&mut row.counts, &counts),
                    None => out.push(SessionSelections {
                        model: model.to_string(),
                        routing_key: routing_key.as_deref().map(str::to_string),
                        algorithm,
                        counts,
                    }),
                }
            }
        }
        out
    }
}
