//! A warm start (docs/simulator.md, "Warm start"): before the first event,
//! each key's prefix is cached where the policy sends the key on an idle
//! fleet, as the engine calibration's warm case caches each client's key
//! on its backend: the key's first request of the plan is decided by its
//! entry router against the idle views, and the chosen backend's engine
//! stores the request's prefix as if it had served it
//! ([`EngineModel::warm`](crate::world::engine::EngineModel::warm)).
//!
//! Keys are warmed in reverse order of first use, so the keys the run
//! needs first are the most recently used of each cache and the last to
//! be evicted when a backend is given more than it holds. The decisions
//! draw from a stream of their own (the LB stream one past the last
//! router's), so the routers' own streams start as in a cold run.

use super::routing_loop::first_attempt;
use super::Sim;
use crate::kernel::rng::{stream, Stream};
use crate::routers::Ask;
use crate::world::engine::Job;
use routex::balancer::Decision;

impl Sim<'_> {
    pub(super) fn warm_start(&mut self, seed: u64) {
        let keys = self.plan.key_names.len();
        let mut seen = vec![false; keys];
        let mut firsts = Vec::new();
        for (i, p) in self.plan.requests.iter().enumerate() {
            let k = p.key as usize;
            if k < keys && !seen[k] {
                seen[k] = true;
                firsts.push(i);
            }
        }
        let mut rng = stream(seed, Stream::Lb(self.s.topology.routers.len() as u64));
        for &i in firsts.iter().rev() {
            let p = self.plan.requests[i];
            let router = p.router as usize;
            let ask = Ask {
                id: i as u32,
                request: first_attempt(self.s, &self.plan, &p),
                blocks: self.plan.blocks_of(&p),
                block_tokens: self.plan.block_tokens,
                now: 0,
                membership: self.views.get(router).membership(),
            };
            let view = self.views.snapshots(router);
            // A key the policy would not place at once (it waits or finds
            // nothing) stays cold.
            let Decision::Selected(choice) =
                self.routers[router].decide(&ask, view, &mut rng, &mut self.scratch)
            else {
                continue;
            };
            let backend = choice.index;
            let member = self
                .views
                .get(router)
                .pick_backend(backend, |pos| self.member_at(backend, pos).is_some())
                .and_then(|pos| self.member_at(backend, pos));
            let Some(m) = member else {
                continue;
            };
            let job = Job {
                id: u32::MAX,
                key: p.key,
                input: p.input,
                output: p.output,
                jitter_ms: p.jitter_ms,
                decode_tps: p.decode_tps,
                blocks: p.blocks,
            };
            self.engines[self.engine_of[m] as usize].warm(&job);
        }
    }
}
