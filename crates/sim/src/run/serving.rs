//! The engine side of a run (docs/simulator-model.md A4, A5): Pylon
//! admission, the hand-over to the backend's [`EngineModel`], the actions
//! the engine answers with (started, first token, done, timers) and the
//! client's timeout.
//!
//! [`EngineModel`]: crate::engine::EngineModel

use super::state::Phase;
use super::Sim;
use crate::engine::{Action, Job, Timer};
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
        st.phase = Phase::Queued;
        let job = Job {
            id: i,
            key: p.key,
            input: p.input,
            output: p.output,
            jitter_ms: p.jitter_ms,
            decode_tps: p.decode_tps,
            blocks: p.blocks,
        };
        let mut out = std::mem::take(&mut self.actions);
        self.engines[b].accept(self.now, job, &mut out);
        self.apply(b, &mut out);
        self.actions = out;
    }

    /// One of backend b's engine timers is due.
    pub(super) fn engine_timer(&mut self, b: usize, timer: Timer) {
        let mut out = std::mem::take(&mut self.actions);
        if let Some(e) = self.engines.get_mut(b) {
            e.timer(self.now, timer, &mut out);
        }
        self.apply(b, &mut out);
        self.actions = out;
    }

    /// Applies backend b's engine actions in order, draining `out`.
    fn apply(&mut self, b: usize, out: &mut Vec<Action>) {
        for action in out.drain(..) {
            match action {
                Action::Started { id, reused } => self.started(b, id, reused),
                Action::Schedule { at, timer } => self.queue.push(
                    at,
                    Event::Engine {
                        backend: b as u32,
                        id: timer.id,
                        tag: timer.tag,
                    },
                ),
                Action::FirstToken(id) => self.first_token(b, id),
                Action::Done(id) => self.complete(b, id),
            }
        }
    }

    /// The request holds a slot from now.
    fn started(&mut self, b: usize, i: ReqId, reused: u64) {
        let st = &mut self.reqs[i as usize];
        st.reused = reused;
        st.phase = Phase::Started;
        st.slot_since = self.now;
        self.slots_in_use += 1;
        let in_use = self.engines[b].slots_in_use();
        self.stats.max_slots_in_use = self.stats.max_slots_in_use.max(in_use);
    }

    fn first_token(&mut self, b: usize, i: ReqId) {
        let idx = i as usize;
        let p = self.plan.requests[idx];
        let st = &mut self.reqs[idx];
        self.pylons[b].first_token(st.received_at, self.now, p.input);
        st.engine_first_token = self.now;
        st.client_first_token = self.now + self.one_way[p.router as usize][b];
        st.phase = Phase::Decoding;
        self.routers[p.router as usize].first_token(i, b);
        self.pylon_changed(b);
    }

    fn complete(&mut self, b: usize, i: ReqId) {
        let idx = i as usize;
        let p = self.plan.requests[idx];
        self.pylons[b].release_output(p.input);
        self.pylon_changed(b);
        self.slot_freed(i);
        self.release_at_router(i);
        let client_done = self.now + self.one_way[p.router as usize][b];
        self.reqs[idx].client_done = client_done;
        // A completion after the client gave up is left to the timeout.
        if client_done <= p.arrival.saturating_add(self.s.timeout_us) {
            self.resolve(i, Outcome::Succeeded);
            if self.store.is_some() {
                self.queue.push(client_done, Event::ResponseAtClient(i));
            }
        }
    }

    /// A successful response reached the client: the gateway remembers its
    /// backend for the session (docs/stargate.md 3.10).
    pub(super) fn learn_session(&mut self, i: ReqId) {
        let idx = i as usize;
        let (key, backend) = (self.plan.requests[idx].key, self.reqs[idx].backend);
        if let Some(store) = &mut self.store {
            store.record(key, backend, self.now);
        }
    }

    /// Request i no longer holds its slot.
    fn slot_freed(&mut self, i: ReqId) {
        let st = &mut self.reqs[i as usize];
        st.phase = Phase::Done;
        self.stats.slot_holding_us += u128::from(self.now - st.slot_since);
        self.slots_in_use -= 1;
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
        let phase = self.reqs[idx].phase;
        match phase {
            Phase::Queued | Phase::Started => self.pylons[b].cancel_input(input),
            Phase::Decoding => self.pylons[b].release_output(input),
            Phase::Routing | Phase::Done => return,
        }
        if phase == Phase::Queued {
            self.reqs[idx].phase = Phase::Done;
        } else {
            self.slot_freed(i);
        }
        let mut out = std::mem::take(&mut self.actions);
        self.engines[b].cancel(self.now, i, &mut out);
        self.apply(b, &mut out);
        self.actions = out;
        self.pylon_changed(b);
    }
}
