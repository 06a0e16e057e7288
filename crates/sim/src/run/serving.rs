//! The engine side of a run (docs/simulator-model.md A4, A5): Pylon
//! admission, the hand-over to the backend's [`EngineModel`], the actions
//! the engine answers with (started, first token, done, timers) and the
//! client's timeout.
//!
//! [`EngineModel`]: crate::world::engine::EngineModel

use super::state::Phase;
use super::Sim;
use crate::kernel::events::{Event, ReqId};
use crate::measure::record::Outcome;
use crate::world::engine::{Action, Job, Timer};

impl Sim<'_> {
    pub(super) fn receive(&mut self, i: ReqId) {
        let idx = i as usize;
        if self.reqs[idx].outcome.is_some() {
            return; // its reservation lives until the next stats arrival
        }
        let b = self.reqs[idx].backend as usize;
        let m = self.reqs[idx].member as usize;
        let p = self.plan.requests[idx];
        let engine_live = self.engine_live(m);
        if !self.pylons[m].admits_with(self.reqs[idx].expected_queue_ms, engine_live) {
            if let Some(c) = self.timeline.cell(m) {
                c.rejected += 1;
            }
            let at = self.now + self.one_way[p.router as usize][b];
            self.queue.push(at, Event::MismatchReturn(i));
            return;
        }
        self.pylons[m].accept(p.input);
        self.pylon_changed(m);
        let st = &mut self.reqs[idx];
        st.received_at = self.now;
        st.phase = Phase::Queued;
        // The request's draws, in this backend's ranges when its profile
        // has its own.
        let (jitter_ms, decode_tps) = match self.draw_maps.get(m) {
            Some(Some(map)) => map.map(p.jitter_ms, p.decode_tps),
            _ => (p.jitter_ms, p.decode_tps),
        };
        let job = Job {
            id: i,
            key: p.key,
            input: p.input,
            output: p.output,
            jitter_ms,
            decode_tps,
            blocks: p.blocks,
        };
        let e = self.engine_of[m] as usize;
        let mut out = std::mem::take(&mut self.actions);
        self.engines[e].accept(self.now, job, &mut out);
        self.apply(e, &mut out);
        self.actions = out;
    }

    /// One of engine b's timers is due.
    pub(super) fn engine_timer(&mut self, b: usize, timer: Timer) {
        let mut out = std::mem::take(&mut self.actions);
        if let Some(e) = self.engines.get_mut(b) {
            e.timer(self.now, timer, &mut out);
        }
        self.apply(b, &mut out);
        self.actions = out;
    }

    /// Applies engine b's actions in order, draining `out`.
    pub(super) fn apply(&mut self, b: usize, out: &mut Vec<Action>) {
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
                Action::FirstToken(id) => self.first_token(id),
                Action::Done(id) => self.complete(id),
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

    fn first_token(&mut self, i: ReqId) {
        let idx = i as usize;
        let p = self.plan.requests[idx];
        let st = &mut self.reqs[idx];
        let (b, m) = (st.backend as usize, st.member as usize);
        self.pylons[m].first_token(st.received_at, self.now, p.input);
        if let Some(c) = self.timeline.cell(m) {
            c.first_tokens += 1;
            c.ttft_sum_us += self.now.saturating_sub(st.received_at);
        }
        st.engine_first_token = self.now;
        st.client_first_token = self.now + self.one_way[p.router as usize][b];
        st.phase = Phase::Decoding;
        self.routers[p.router as usize].first_token(i, b);
        self.pylon_changed(m);
    }

    fn complete(&mut self, i: ReqId) {
        let idx = i as usize;
        let p = self.plan.requests[idx];
        let (b, m) = (
            self.reqs[idx].backend as usize,
            self.reqs[idx].member as usize,
        );
        self.pylons[m].release_output(p.input);
        if let Some(c) = self.timeline.cell(m) {
            c.completed += 1;
            c.input_tokens += p.input;
            c.reused_tokens += self.reqs[idx].reused;
        }
        self.pylon_changed(m);
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
        let m = self.reqs[idx].member as usize;
        let phase = self.reqs[idx].phase;
        match phase {
            Phase::Queued | Phase::Started => self.pylons[m].cancel_input(input),
            Phase::Decoding => self.pylons[m].release_output(input),
            Phase::Routing | Phase::Done => return,
        }
        if phase == Phase::Queued {
            self.reqs[idx].phase = Phase::Done;
        } else {
            self.slot_freed(i);
        }
        let e = self.engine_of[m] as usize;
        let mut out = std::mem::take(&mut self.actions);
        self.engines[e].cancel(self.now, i, &mut out);
        self.apply(e, &mut out);
        self.actions = out;
        self.pylon_changed(m);
    }
}
