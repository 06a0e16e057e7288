//! The peers' routers as simulated routers: the state each peer router
//! keeps (what it sent, what is in flight, what the KV events say), fed
//! through the `SimRouter` hooks, around the pure rules of `baselines`.
//!
//! Common to all four: the router reads the same view as a stargate router
//! (last stats report plus its own pending requests), never waits (every
//! decision selects a backend that is not excluded), sends no expected
//! queue time (so Pylon never answers 429), and learns first tokens and
//! completions at the engine's event, without the one-way delay back.
//! [`Peer`] does that shared part (and the in-flight count every rule may
//! read) once; each rule implements [`PeerRule`].

use super::{Ask, SimRouter};
use crate::kernel::events::ReqId;
use crate::routers::baselines::chwbl::{self, Ring};
use crate::routers::baselines::dynamo::{self, ActiveSequences, DynamoParams, WorkerLoad};
use crate::routers::baselines::gie::{self, Endpoint, GieWeights};
use crate::routers::baselines::index::BlockIndex;
use crate::routers::baselines::sglang::{self, SglangParams, Worker};
use crate::routers::baselines::spec::Baseline;
use crate::world::engine::blocks::KvEvent;
use crate::world::engine::EngineParams;
use rand::{Rng, RngCore};
use routex::balancer::{Choice, ClusterSnapshot, Decision, Scratch};
use std::collections::{BTreeMap, BTreeSet};

/// One router's instance of a baseline.
pub fn instantiate(b: &Baseline, engine: &EngineParams) -> Box<dyn SimRouter> {
    match b {
        Baseline::Dynamo(p) => Peer::boxed(DynamoRouter::new(*p)),
        Baseline::Gie {
            weights,
            lru_capacity_blocks,
        } => Peer::boxed(GieRouter {
            weights: *weights,
            capacity: *lru_capacity_blocks,
            kv_capacity_tokens: engine.kv_capacity_tokens,
            index: None,
            endpoints: Vec::new(),
            scores: Vec::new(),
        }),
        Baseline::Sglang {
            params,
            max_tree_blocks,
        } => Peer::boxed(SglangRouter {
            params: *params,
            index: BlockIndex::new(0, usize::try_from(*max_tree_blocks).unwrap_or(usize::MAX)),
            workers: Vec::new(),
        }),
        Baseline::Chwbl {
            hash_balance_factor,
        } => Peer::boxed(ChwblRouter {
            factor: *hash_balance_factor,
            ring: None,
            active: Vec::new(),
        }),
    }
}

/// One peer router's rule and the state only it keeps.
trait PeerRule {
    /// Decides over the view; `inflight` counts what this router sent and
    /// has not seen finish (SGLang's and Envoy's load).
    fn decide(
        &mut self,
        ask: &Ask<'_>,
        view: &[ClusterSnapshot],
        inflight: &Inflight,
        rng: &mut dyn RngCore,
    ) -> Decision;

    /// The request was sent to `backend`.
    fn dispatched(&mut self, _ask: &Ask<'_>, _backend: usize) {}

    fn first_token(&mut self, _request: ReqId, _backend: usize) {}

    /// A request recorded as sent to `backend` no longer occupies it.
    fn finished(&mut self, _request: ReqId, _backend: usize) {}

    fn wants_kv_events(&self) -> bool {
        false
    }

    fn kv_events(&mut self, _backend: usize, _events: &[KvEvent]) {}

    /// Requests the rule's own state still holds (the end-of-run debug
    /// check only, so it may cost O(backends)).
    fn held(&self) -> usize {
        0
    }
}

/// A peer rule as a simulated router: owns the in-flight record (added at
/// dispatch, removed at the finish, read by the rule) and sends no
/// expected queue time.
struct Peer<R> {
    rule: R,
    inflight: Inflight,
}

impl<R: PeerRule + 'static> Peer<R> {
    fn boxed(rule: R) -> Box<dyn SimRouter> {
        Box::new(Peer {
            rule,
            inflight: Inflight::default(),
        })
    }
}

impl<R: PeerRule> SimRouter for Peer<R> {
    fn decide(
        &mut self,
        ask: &Ask<'_>,
        view: &[ClusterSnapshot],
        rng: &mut dyn RngCore,
        _scratch: &mut Scratch,
    ) -> Decision {
        self.rule.decide(ask, view, &self.inflight, rng)
    }

    fn dispatched(&mut self, ask: &Ask<'_>, backend: usize) {
        self.inflight.add(ask.id, backend);
        self.rule.dispatched(ask, backend);
    }

    fn sends_expected_queue(&self) -> bool {
        false
    }

    fn first_token(&mut self, request: ReqId, backend: usize) {
        self.rule.first_token(request, backend);
    }

    fn finished(&mut self, request: ReqId, _backend: usize) {
        if let Some(b) = self.inflight.remove(request) {
            self.rule.finished(request, b);
        }
    }

    fn wants_kv_events(&self) -> bool {
        self.rule.wants_kv_events()
    }

    fn kv_events(&mut self, backend: usize, events: &[KvEvent]) {
        self.rule.kv_events(backend, events);
    }

    fn held_requests(&self) -> usize {
        self.inflight.held() + self.rule.held()
    }
}

fn is_excluded(ask: &Ask<'_>, c: &ClusterSnapshot) -> bool {
    ask.request.excluded.contains(&c.id.as_str())
}

fn selected(index: usize, rank_depth: u32) -> Decision {
    Decision::Selected(Choice {
        index,
        rank_depth,
        selected_after_kv_free_tokens_skip: false,
    })
}

/// Requests this router has in flight, per backend (SGLang's and Envoy's
/// load), and where each went. Bounded by the requests in flight.
#[derive(Default)]
struct Inflight {
    count: Vec<u64>,
    at: BTreeMap<ReqId, usize>,
}

impl Inflight {
    fn fit(&mut self, backends: usize) {
        if self.count.len() < backends {
            self.count.resize(backends, 0);
        }
    }

    fn add(&mut self, request: ReqId, backend: usize) {
        self.fit(backend + 1);
        self.count[backend] += 1;
        if let Some(earlier) = self.at.insert(request, backend) {
            // Not finished before its next dispatch: as if it had been.
            self.count[earlier] = self.count[earlier].saturating_sub(1);
        }
    }

    /// Where the request was sent, if it was in flight.
    fn remove(&mut self, request: ReqId) -> Option<usize> {
        let b = self.at.remove(&request)?;
        self.count[b] = self.count[b].saturating_sub(1);
        Some(b)
    }

    /// Requests in flight (the per-backend counts sum to it).
    fn held(&self) -> usize {
        self.at.len()
    }

    fn of(&self, backend: usize) -> u64 {
        self.count.get(backend).copied().unwrap_or(0)
    }
}

/// Dynamo's KV router: KV events mirror each worker's cache; the active
/// sequences are the requests this router sent.
struct DynamoRouter {
    params: DynamoParams,
    /// Per backend, the blocks its KV events say are cached (bounded by
    /// the engine's capacity).
    cached: Vec<BTreeSet<u32>>,
    active: Vec<ActiveSequences>,
    costs: Vec<Option<f64>>,
    sizes: Vec<u64>,
}

impl DynamoRouter {
    fn new(params: DynamoParams) -> Self {
        DynamoRouter {
            params,
            cached: Vec::new(),
            active: Vec::new(),
            costs: Vec::new(),
            sizes: Vec::new(),
        }
    }

    fn fit(&mut self, backends: usize) {
        if self.cached.len() < backends {
            self.cached.resize_with(backends, BTreeSet::new);
            self.active.resize_with(backends, ActiveSequences::default);
        }
    }

    fn overlap(&self, backend: usize, blocks: &[u32]) -> u64 {
        let set = &self.cached[backend];
        blocks.iter().take_while(|b| set.contains(b)).count() as u64
    }
}

impl PeerRule for DynamoRouter {
    fn decide(
        &mut self,
        ask: &Ask<'_>,
        view: &[ClusterSnapshot],
        _inflight: &Inflight,
        rng: &mut dyn RngCore,
    ) -> Decision {
        self.fit(view.len());
        let input = ask.request.input_tokens.unwrap_or(0);
        let mut costs = std::mem::take(&mut self.costs);
        costs.clear();
        self.sizes.clear();
        for (b, c) in view.iter().enumerate() {
            self.sizes.push(self.cached[b].len() as u64);
            if is_excluded(ask, c) {
                costs.push(None);
                continue;
            }
            let active = &self.active[b];
            let load = WorkerLoad {
                cached_blocks: self.overlap(b, ask.blocks),
                active_prefill_tokens: active.prefill_tokens(),
                active_blocks: active.active_blocks(),
                new_blocks: active.new_blocks(ask.blocks),
            };
            costs.push(Some(dynamo::logit(
                &self.params,
                ask.block_tokens,
                input,
                &load,
            )));
        }
        let u: f64 = rng.random();
        let pick = dynamo::select(&costs, &self.sizes, self.params.temperature, u);
        self.costs = costs;
        pick.map_or(Decision::Unavailable, |i| selected(i, 1))
    }

    fn dispatched(&mut self, ask: &Ask<'_>, backend: usize) {
        self.fit(backend + 1);
        let input = ask.request.input_tokens.unwrap_or(0);
        let cached = self.overlap(backend, ask.blocks);
        let prefill = input.saturating_sub(cached.saturating_mul(ask.block_tokens));
        self.active[backend].add(ask.id, ask.blocks, prefill);
    }

    fn first_token(&mut self, request: ReqId, backend: usize) {
        if let Some(a) = self.active.get_mut(backend) {
            a.prefill_done(request);
        }
    }

    fn finished(&mut self, request: ReqId, backend: usize) {
        if let Some(a) = self.active.get_mut(backend) {
            a.remove(request);
        }
    }

    fn wants_kv_events(&self) -> bool {
        true
    }

    fn held(&self) -> usize {
        self.active.iter().map(ActiveSequences::len).sum()
    }

    fn kv_events(&mut self, backend: usize, events: &[KvEvent]) {
        self.fit(backend + 1);
        let set = &mut self.cached[backend];
        for e in events {
            match *e {
                KvEvent::Stored(b) => set.insert(b),
                KvEvent::Removed(b) => set.remove(&b),
            };
        }
    }
}

/// The GIE default profile over its approximate prefix index.
struct GieRouter {
    weights: GieWeights,
    capacity: Option<u64>,
    kv_capacity_tokens: u64,
    /// Built at the first decision, when the block size is known.
    index: Option<BlockIndex>,
    endpoints: Vec<Option<Endpoint>>,
    scores: Vec<Option<f64>>,
}

impl GieRouter {
    /// KV usage as the view shows it: the published KV fields when there
    /// are any, else the live requests' input over the engine's capacity
    /// (an upper estimate: waiting requests count, shared prefixes count
    /// once per request).
    fn usage(&self, c: &ClusterSnapshot) -> f64 {
        if c.kv_cache_capacity_tokens > 0 {
            return c.kv_cache_used_tokens as f64 / c.kv_cache_capacity_tokens as f64;
        }
        if self.kv_capacity_tokens == 0 {
            return 0.0;
        }
        c.total_query_input_size as f64 / self.kv_capacity_tokens as f64
    }
}

impl PeerRule for GieRouter {
    fn decide(
        &mut self,
        ask: &Ask<'_>,
        view: &[ClusterSnapshot],
        _inflight: &Inflight,
        rng: &mut dyn RngCore,
    ) -> Decision {
        let block_tokens = ask.block_tokens.max(1);
        let capacity = self
            .capacity
            .unwrap_or(self.kv_capacity_tokens / block_tokens);
        let index = self.index.get_or_insert_with(|| {
            BlockIndex::new(view.len(), usize::try_from(capacity).unwrap_or(usize::MAX))
        });
        let mut endpoints = std::mem::take(&mut self.endpoints);
        endpoints.clear();
        for (b, c) in view.iter().enumerate() {
            if is_excluded(ask, c) {
                endpoints.push(None);
                continue;
            }
            // vLLM's waiting queue: the live requests beyond the slots.
            let waiting = match c.max_engine_concurrency {
                0 => c.queue_size,
                slots => c.num_running_queries.saturating_sub(slots),
            };
            endpoints.push(Some(Endpoint {
                waiting,
                kv_usage: 0.0,
                matched_blocks: index.matched(b, ask.blocks) as u64,
            }));
        }
        for (e, c) in endpoints.iter_mut().zip(view) {
            if let Some(e) = e {
                e.kv_usage = self.usage(c);
            }
        }
        gie::score(
            &self.weights,
            &endpoints,
            ask.blocks.len() as u64,
            &mut self.scores,
        );
        self.endpoints = endpoints;
        let u: f64 = rng.random();
        gie::pick(&self.scores, u).map_or(Decision::Unavailable, |i| selected(i, 1))
    }

    fn dispatched(&mut self, ask: &Ask<'_>, backend: usize) {
        if let Some(ix) = &mut self.index {
            ix.insert(backend, ask.blocks);
        }
    }
}

/// SGLang's cache-aware policy over its approximate tree.
struct SglangRouter {
    params: SglangParams,
    index: BlockIndex,
    workers: Vec<Option<Worker>>,
}

impl PeerRule for SglangRouter {
    fn decide(
        &mut self,
        ask: &Ask<'_>,
        view: &[ClusterSnapshot],
        inflight: &Inflight,
        _rng: &mut dyn RngCore,
    ) -> Decision {
        if self.index.backends() < view.len() {
            self.index.grow(view.len());
        }
        self.workers.clear();
        for (b, c) in view.iter().enumerate() {
            self.workers.push((!is_excluded(ask, c)).then(|| Worker {
                load: inflight.of(b),
                matched_blocks: self.index.matched(b, ask.blocks) as u64,
                tree_blocks: self.index.size(b) as u64,
            }));
        }
        let input = ask.request.input_tokens.unwrap_or(0);
        sglang::choose(&self.workers, input, ask.block_tokens, &self.params)
            .map_or(Decision::Unavailable, |(i, _)| selected(i, 1))
    }

    fn dispatched(&mut self, ask: &Ask<'_>, backend: usize) {
        self.index.insert(backend, ask.blocks);
    }
}

/// Envoy's bounded-load consistent hashing on the affinity key.
struct ChwblRouter {
    factor: u64,
    /// Built at the first decision from the candidates' ids.
    ring: Option<Ring>,
    active: Vec<Option<u64>>,
}

impl PeerRule for ChwblRouter {
    fn decide(
        &mut self,
        ask: &Ask<'_>,
        view: &[ClusterSnapshot],
        inflight: &Inflight,
        rng: &mut dyn RngCore,
    ) -> Decision {
        let ring = self.ring.get_or_insert_with(|| {
            let ids: Vec<&str> = view.iter().map(|c| c.id.as_str()).collect();
            Ring::new(&ids)
        });
        // Without a key Envoy's hash policy yields no hash: a random host.
        let hash = match ask.request.cache_affinity_key {
            Some(key) => chwbl::key_hash(key),
            None => rng.next_u64(),
        };
        let Some(owner) = ring.owner(hash) else {
            return Decision::Unavailable;
        };
        self.active.clear();
        for (b, c) in view.iter().enumerate() {
            self.active
                .push((!is_excluded(ask, c)).then(|| inflight.of(b)));
        }
        chwbl::choose(owner, &self.active, self.factor, hash).map_or(Decision::Unavailable, |i| {
            selected(i, if i == owner { 1 } else { 2 })
        })
    }
}
