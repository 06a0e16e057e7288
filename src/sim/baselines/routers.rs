//! The baselines as simulated routers: the state each peer router keeps
//! (what it sent, what is in flight, what the KV events say), fed through
//! the `SimRouter` hooks, and the pure rules of the sibling modules.
//!
//! Common to all four: the router reads the same view as a stargate router
//! (last stats report plus its own pending requests), never waits (every
//! decision selects a backend that is not excluded), sends no expected
//! queue time (so Pylon never answers 429), and learns first tokens and
//! completions at the engine's event, without the one-way delay back.

use super::chwbl::{self, Ring};
use super::dynamo::{self, ActiveSequences, DynamoParams, WorkerLoad};
use super::gie::{self, Endpoint, GieWeights};
use super::index::BlockIndex;
use super::sglang::{self, SglangParams, Worker};
use super::spec::Baseline;
use crate::balancer::{Choice, ClusterSnapshot, Decision, Scratch};
use crate::sim::engine::blocks::KvEvent;
use crate::sim::engine::EngineParams;
use crate::sim::events::ReqId;
use crate::sim::routers::{Ask, SimRouter};
use rand::{Rng, RngCore};
use std::collections::{BTreeMap, BTreeSet};

/// One router's instance of a baseline.
pub fn instantiate(b: &Baseline, engine: &EngineParams) -> Box<dyn SimRouter> {
    match b {
        Baseline::Dynamo(p) => Box::new(DynamoRouter::new(*p)),
        Baseline::Gie {
            weights,
            lru_capacity_blocks,
        } => Box::new(GieRouter {
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
        } => Box::new(SglangRouter {
            params: *params,
            index: BlockIndex::new(0, usize::try_from(*max_tree_blocks).unwrap_or(usize::MAX)),
            inflight: Inflight::default(),
            workers: Vec::new(),
        }),
        Baseline::Chwbl {
            hash_balance_factor,
        } => Box::new(ChwblRouter {
            factor: *hash_balance_factor,
            ring: None,
            inflight: Inflight::default(),
            active: Vec::new(),
        }),
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
/// load). Bounded by the requests in flight.
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
        self.at.insert(request, backend);
    }

    fn remove(&mut self, request: ReqId) {
        if let Some(b) = self.at.remove(&request) {
            self.count[b] = self.count[b].saturating_sub(1);
        }
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
    at: BTreeMap<ReqId, usize>,
    costs: Vec<Option<f64>>,
    sizes: Vec<u64>,
}

impl DynamoRouter {
    fn new(params: DynamoParams) -> Self {
        DynamoRouter {
            params,
            cached: Vec::new(),
            active: Vec::new(),
            at: BTreeMap::new(),
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

impl SimRouter for DynamoRouter {
    fn decide(
        &mut self,
        ask: &Ask<'_>,
        view: &[ClusterSnapshot],
        rng: &mut dyn RngCore,
        _scratch: &mut Scratch,
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
        self.at.insert(ask.id, backend);
    }

    fn sends_expected_queue(&self) -> bool {
        false
    }

    fn first_token(&mut self, request: ReqId, backend: usize) {
        if let Some(a) = self.active.get_mut(backend) {
            a.prefill_done(request);
        }
    }

    fn finished(&mut self, request: ReqId, _backend: usize) {
        if let Some(b) = self.at.remove(&request) {
            self.active[b].remove(request);
        }
    }

    fn wants_kv_events(&self) -> bool {
        true
    }

    fn held_requests(&self) -> usize {
        self.at.len() + self.active.iter().map(ActiveSequences::len).sum::<usize>()
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

impl SimRouter for GieRouter {
    fn decide(
        &mut self,
        ask: &Ask<'_>,
        view: &[ClusterSnapshot],
        rng: &mut dyn RngCore,
        _scratch: &mut Scratch,
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

    fn sends_expected_queue(&self) -> bool {
        false
    }
}

/// SGLang's cache-aware policy over its approximate tree.
struct SglangRouter {
    params: SglangParams,
    index: BlockIndex,
    inflight: Inflight,
    workers: Vec<Option<Worker>>,
}

impl SimRouter for SglangRouter {
    fn decide(
        &mut self,
        ask: &Ask<'_>,
        view: &[ClusterSnapshot],
        _rng: &mut dyn RngCore,
        _scratch: &mut Scratch,
    ) -> Decision {
        if self.index.backends() < view.len() {
            self.index.grow(view.len());
        }
        self.workers.clear();
        for (b, c) in view.iter().enumerate() {
            self.workers.push((!is_excluded(ask, c)).then(|| Worker {
                load: self.inflight.of(b),
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
        self.inflight.add(ask.id, backend);
    }

    fn sends_expected_queue(&self) -> bool {
        false
    }

    fn finished(&mut self, request: ReqId, _backend: usize) {
        self.inflight.remove(request);
    }

    fn held_requests(&self) -> usize {
        self.inflight.at.len() + self.inflight.count.iter().sum::<u64>() as usize
    }
}

/// Envoy's bounded-load consistent hashing on the affinity key.
struct ChwblRouter {
    factor: u64,
    /// Built at the first decision from the candidates' ids.
    ring: Option<Ring>,
    inflight: Inflight,
    active: Vec<Option<u64>>,
}

impl SimRouter for ChwblRouter {
    fn decide(
        &mut self,
        ask: &Ask<'_>,
        view: &[ClusterSnapshot],
        rng: &mut dyn RngCore,
        _scratch: &mut Scratch,
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
                .push((!is_excluded(ask, c)).then(|| self.inflight.of(b)));
        }
        chwbl::choose(owner, &self.active, self.factor, hash).map_or(Decision::Unavailable, |i| {
            selected(i, if i == owner { 1 } else { 2 })
        })
    }

    fn dispatched(&mut self, ask: &Ask<'_>, backend: usize) {
        self.inflight.add(ask.id, backend);
    }

    fn sends_expected_queue(&self) -> bool {
        false
    }

    fn finished(&mut self, request: ReqId, _backend: usize) {
        self.inflight.remove(request);
    }

    fn held_requests(&self) -> usize {
        self.inflight.at.len() + self.inflight.count.iter().sum::<u64>() as usize
    }
}
