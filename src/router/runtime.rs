//! The router runtime: resolves a request's `x-routing-method` against the
//! route table (reference-behaviour.md 4.4, 5.3) through the expression
//! cache (5.6), keeps one balancer instance per (target, definition), and
//! runs admission before each decision.

use super::admission;
use super::engine::Engine;
use super::metrics::{CacheOutcome, Counters, Metrics};
use super::options::RouterOptions;
use super::rejection::{Rejection, RejectionCode};
use super::state::{Cached, Entry, TargetState};
use super::targets::TargetMap;
use crate::balancer::{Balancer, ClusterSnapshot, Decision, Request, Scratch};
use crate::diag::Code;
use crate::ir::{Algorithm, Definition, RouteTable};
use rand::RngCore;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::Duration;

/// A request as the router sees it: the balancer request plus the raw
/// `x-routing-method` value.
#[derive(Clone, Debug, Default)]
pub struct RouteRequest<'a> {
    pub request: Request<'a>,
    /// Raw header bytes; `None` when the header is absent.
    pub routing_method: Option<&'a [u8]>,
}

impl<'a> RouteRequest<'a> {
    pub fn new(request: Request<'a>) -> Self {
        RouteRequest {
            request,
            routing_method: None,
        }
    }

    pub fn with_method(mut self, value: &'a str) -> Self {
        self.routing_method = Some(value.as_bytes());
        self
    }
}

/// Where a resolved definition came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// No `x-routing-method`: the model's configured definition.
    Configured,
    /// A method-only value, resolved in the route table (4.4).
    Method,
    /// A value with parameters, through the expression cache.
    Expression(CacheOutcome),
}

/// A resolved definition whose balancer instance is not fetched yet.
pub struct PendingResolution<B: Engine = Balancer> {
    target: Arc<TargetState<B>>,
    pub definition: Arc<Definition>,
    pub source: Source,
}

impl<B: Engine> std::fmt::Debug for PendingResolution<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PendingResolution")
            .field("algorithm", &self.definition.policy.algorithm)
            .field("source", &self.source)
            .finish_non_exhaustive()
    }
}

/// A resolved definition and the balancer instance that decides for it.
pub struct Resolved<B: Engine = Balancer> {
    pub definition: Arc<Definition>,
    pub instance: Arc<B>,
    pub source: Source,
}

impl<B: Engine> std::fmt::Debug for Resolved<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Resolved")
            .field("algorithm", &self.definition.policy.algorithm)
            .field("source", &self.source)
            .finish_non_exhaustive()
    }
}

impl<B: Engine> Resolved<B> {
    /// One decision (reference-behaviour.md 2.2, steps 2-4): candidates,
    /// admission, then the balancer. Blank routing and affinity keys count
    /// as absent.
    pub fn decide(
        &self,
        request: &Request<'_>,
        clusters: &[ClusterSnapshot],
        rng: &mut dyn RngCore,
        scratch: &mut Scratch,
    ) -> Result<Decision, Rejection> {
        let request = Request {
            routing_key: non_blank(request.routing_key),
            cache_affinity_key: non_blank(request.cache_affinity_key),
            ..request.clone()
        };
        let policy = &self.definition.policy;
        admission::check_affinity_key(policy, &request)?;
        check_candidates(&request, clusters)?;
        admission::check_input_work(policy, &request, clusters)?;
        Ok(self.instance.decide(&request, clusters, rng, scratch))
    }
}

fn non_blank(value: Option<&str>) -> Option<&str> {
    value.filter(|v| !v.trim().is_empty())
}

/// 404 when there is no candidate and nothing failed yet, else 503 when
/// every candidate is excluded.
fn check_candidates(request: &Request<'_>, clusters: &[ClusterSnapshot]) -> Result<(), Rejection> {
    if clusters
        .iter()
        .any(|c| !request.excluded.contains(&c.id.as_str()))
    {
        return Ok(());
    }
    Err(if request.excluded.is_empty() {
        Rejection::new(
            RejectionCode::NoEligibleCandidates,
            format!("no eligible candidates for model {}", request.model),
        )
    } else {
        Rejection::new(
            RejectionCode::CandidatesExhausted,
            format!(
                "every candidate for model {} failed for this request",
                request.model
            ),
        )
    })
}

/// Whether a header value carries parameters (header form `;`, call form
/// `(`) and so goes through the expression cache.
pub fn is_expression(value: &[u8]) -> bool {
    value.iter().any(|&b| b == b';' || b == b'(')
}

/// A router: a route table at run time. `Send + Sync`; share it by
/// reference or `Arc` between request threads.
pub struct Router<B: Engine = Balancer> {
    table: RouteTable,
    options: RouterOptions,
    targets: RwLock<TargetMap<Arc<TargetState<B>>>>,
    counters: Counters,
    entries: AtomicU64,
    evict_lock: Mutex<()>,
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
            targets: RwLock::new(TargetMap::default()),
            counters: Counters::default(),
            entries: AtomicU64::new(0),
            evict_lock: Mutex::new(()),
        }
    }

    pub fn table(&self) -> &RouteTable {
        &self.table
    }

    /// Resolution, then one decision.
    pub fn route(
        &self,
        request: &RouteRequest<'_>,
        clusters: &[ClusterSnapshot],
        rng: &mut dyn RngCore,
        scratch: &mut Scratch,
    ) -> Result<Decision, Rejection> {
        let r = &request.request;
        let resolved = self.resolve(r.model, r.routing_key, request.routing_method)?;
        resolved.decide(r, clusters, rng, scratch)
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
        if let Some(resolved) = self.resolve_warm(model, routing_key, method) {
            return Ok(resolved);
        }
        let pending = self.resolve_definition(model, routing_key, method)?;
        Ok(self.instantiate(pending))
    }

    /// The warm path: an existing target, a definition that needs no build
    /// and an existing instance, under one read lock of each map. `None`
    /// sends the request down the general path, which also reports errors.
    fn resolve_warm(
        &self,
        model: &str,
        routing_key: Option<&str>,
        method: Option<&[u8]>,
    ) -> Option<Resolved<B>> {
        let targets = self.targets.read().unwrap_or_else(PoisonError::into_inner);
        let target = targets.get(model, routing_key)?;
        let slot = target.read();
        let resolved = |definition: &Arc<Definition>, source| {
            let instance = slot.instance(definition)?.clone();
            Some(Resolved {
                definition: definition.clone(),
                instance,
                source,
            })
        };
        match method {
            None => resolved(self.table.configured(model), Source::Configured),
            Some(value) if is_expression(value) => {
                let now = self.options.clock.now();
                if target.idle_expired(now, self.options.idle_timeout) {
                    return None;
                }
                let cached = slot.entry.as_ref()?.find(value)?;
                let hit = resolved(&cached.definition, Source::Expression(CacheOutcome::Hit))?;
                target.touch(now);
                self.counters.record(cached.algorithm(), CacheOutcome::Hit);
                Some(hit)
            }
            Some(value) => resolved(self.resolve_method(model, value).ok()?, Source::Method),
        }
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
            Some(value) if is_expression(value) => {
                let target = self.target(model, routing_key);
                let (definition, outcome) = self.resolve_expression(&target, model, value)?;
                return Ok(PendingResolution {
                    target,
                    definition,
                    source: Source::Expression(outcome),
                });
            }
            Some(value) => (self.resolve_method(model, value)?.clone(), Source::Method),
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
        let targets = self.targets.read().unwrap_or_else(PoisonError::into_inner);
        if let Some(target) = targets.get(model, routing_key) {
            return target.clone();
        }
        drop(targets);
        let mut targets = self.targets.write().unwrap_or_else(PoisonError::into_inner);
        targets
            .get_or_insert_with(model, routing_key, || Arc::new(TargetState::new()))
            .clone()
    }

    /// A method-only value (4.4).
    fn resolve_method(&self, model: &str, value: &[u8]) -> Result<&Arc<Definition>, Rejection> {
        let algorithm = std::str::from_utf8(value)
            .ok()
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

    fn resolve_expression(
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
        let text = std::str::from_utf8(value).map_err(|_| unknown_method(value))?;
        let definition = (self.options.compiler)(&self.table, model, text)
            .map_err(|diagnostic| Rejection::from_diagnostic(&diagnostic))?;
        let definition = Arc::new(definition);
        let outcome = self.install(target, value, definition.clone());
        self.counters.record(definition.policy.algorithm, outcome);
        Ok((definition, outcome))
    }

    fn hit(&self, target: &TargetState<B>, value: &[u8]) -> Option<Arc<Definition>> {
        let now = self.options.clock.now();
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
                (CacheOutcome::Build, !had_entry)
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
                let targets = self.targets.read().unwrap_or_else(PoisonError::into_inner);
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
            let map = self.targets.read().unwrap_or_else(PoisonError::into_inner);
            map.values().cloned().collect()
        };
        let mut expired = 0;
        for target in targets {
            let mut slot = target.write();
            if slot.entry.is_some()
                && target.idle_expired(now, self.options.idle_timeout)
                && slot.forget_entry()
            {
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

    /// Starts a new target generation (for example when the target's
    /// cluster membership is replaced): every balancer instance of the
    /// target is dropped, so round-robin counters and ranking caches start
    /// afresh. Cached expressions stay; their instances are rebuilt lazily.
    pub fn reset_target(&self, model: &str, routing_key: Option<&str>) {
        if let Some(target) = self.existing_target(model, routing_key) {
            target.write().instances.clear();
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
        let targets = self.targets.read().unwrap_or_else(PoisonError::into_inner);
        targets.get(model, non_blank(routing_key)).cloned()
    }

    /// The idle window in force.
    pub fn idle_timeout(&self) -> Duration {
        self.options.idle_timeout
    }
}

fn unknown_method(value: &[u8]) -> Rejection {
    Rejection::new(
        RejectionCode::Expression(Code::UnknownMethod),
        format!(
            "unknown routing method '{}'",
            String::from_utf8_lossy(value)
        ),
    )
}
