//! The engine side of a run (docs/simulator-model.md A4, A5): Pylon admission, slots,
//! prefill against the engine's prefix cache, first token, completion and
//! the client's timeout.

use super::state::Phase;
use super::Sim;
use crate::engine::CacheKey;
use crate::events::{Event, ReqId};
use crate::metrics::Outcome;

impl Sim<'_> {
    pub(super) fn receive(&mut self, i: ReqId) {
        let idx = i as usize;
        if self.reqs[idx].outcome.is_some() {
            return; // its reservation lives until the next stats arrival
        }
        let b = self.reqs[idx].backend as usize;
        let p = self.plan.requests[idx];
        if !self.pylons[b].admits(self.reqs[idx].expected_queue_ms) {
            let at = self.now + self.one_way[p.router as usize][b];
            self.queue.push(at, Event::MismatchReturn(i));
            return;
        }
        self.pylons[b].accept(p.input);
        self.pylon_changed(b);
        let st = &mut self.reqs[idx];
        st.received_at = self.now;
        if self.engines[b].admit(i) {
            self.start_prefill(i);
        } else {
            self.reqs[idx].phase = Phase::Queued;
        }
    }

    /// The request holds a slot from now: reuse the cache, prefill the rest.
    pub(super) fn start_prefill(&mut self, i: ReqId) {
        let idx = i as usize;
        let p = self.plan.requests[idx];
        let b = self.reqs[idx].backend as usize;
        let reused = self.engines[b].reuse(&CacheKey {
            key: p.key,
            input: p.input,
            blocks: self.plan.blocks_of(&p),
        });
        let st = &mut self.reqs[idx];
        st.reused = reused;
        st.phase = Phase::Prefilling;
        st.slot_since = self.now;
        self.slots_in_use += 1;
        let in_use = self.engines[b].slots_in_use();
        self.stats.max_slots_in_use = self.stats.max_slots_in_use.max(in_use);
        let at = self.now + self.s.engine.prefill_us(p.input - reused);
        self.queue.push(at, Event::PrefillDone(i));
    }

    pub(super) fn prefill_done(&mut self, i: ReqId) {
        let idx = i as usize;
        if self.reqs[idx].phase != Phase::Prefilling {
            return;
        }
        let p = self.plan.requests[idx];
        let b = self.reqs[idx].backend as usize;
        self.engines[b].store(&CacheKey {
            key: p.key,
            input: p.input,
            blocks: self.plan.blocks_of(&p),
        });
        self.reqs[idx].phase = Phase::Settling;
        let at = self.now + self.s.engine.settle_us(p.jitter_ms);
        self.queue.push(at, Event::FirstToken(i));
    }

    pub(super) fn first_token(&mut self, i: ReqId) {
        let idx = i as usize;
        if self.reqs[idx].phase != Phase::Settling {
            return;
        }
        let p = self.plan.requests[idx];
        let st = &mut self.reqs[idx];
        let b = st.backend as usize;
        self.pylons[b].first_token(st.received_at, self.now, p.input);
        st.engine_first_token = self.now;
        st.client_first_token = self.now + self.one_way[p.router as usize][b];
        st.phase = Phase::Decoding;
        self.routers[p.router as usize].first_token(i, b);
        let at = self.now + self.s.engine.decode_us(p.output, p.decode_tps);
        self.queue.push(at, Event::Complete(i));
        self.pylon_changed(b);
    }

    pub(super) fn complete(&mut self, i: ReqId) {
        let idx = i as usize;
        if self.reqs[idx].phase != Phase::Decoding {
            return;
        }
        let p = self.plan.requests[idx];
        let b = self.reqs[idx].backend as usize;
        self.pylons[b].release_output(p.input);
        self.pylon_changed(b);
        self.free_slot(i);
        self.release_at_router(i);
        let client_done = self.now + self.one_way[p.router as usize][b];
        // A completion after the client gave up is left to the timeout.
        if client_done <= p.arrival.saturating_add(self.s.timeout_us) {
            self.resolve(i, Outcome::Succeeded);
        }
    }

    /// Ends request i's hold on its slot and hands the slot to the FIFO head.
    pub(super) fn free_slot(&mut self, i: ReqId) {
        let idx = i as usize;
        let st = &mut self.reqs[idx];
        st.phase = Phase::Done;
        self.stats.slot_holding_us += u128::from(self.now - st.slot_since);
        self.slots_in_use -= 1;
        let b = st.backend as usize;
        if let Some(next) = self.engines[b].release_slot() {
            self.start_prefill(next);
        }
    }

    /// The client gives up: resolve, and cancel whatever the engine does.
    pub(super) fn timeout(&mut self, i: ReqId) {
        let idx = i as usize;
        if self.reqs[idx].outcome.is_some() {
            return;
        }
        self.resolve(i, Outcome::TimedOut);
        self.release_at_router(i);
        let input = self.plan.requests[idx].input;
        let b = self.reqs[idx].backend as usize;
        match self.reqs[idx].phase {
            Phase::Queued => {
                self.engines[b].remove_waiting(i);
                self.pylons[b].cancel_input(input);
                self.reqs[idx].phase = Phase::Done;
            }
            Phase::Prefilling | Phase::Settling => {
                self.pylons[b].cancel_input(input);
                self.free_slot(i);
            }
            Phase::Decoding => {
                self.pylons[b].release_output(input);
                self.free_slot(i);
            }
            Phase::Routing | Phase::Done => return,
        }
        self.pylon_changed(b);
    }
}
