//! The router side of a run (docs/simulator-model.md A6): arrivals, decisions through
//! the router's [`SimRouter`](crate::routers::SimRouter), the routing
//! loop's waits (or fast mode's parks), dispatch and queue-mismatch returns.

use super::{Sim, SimSettings};
use crate::kernel::events::{Event, ReqId};
use crate::kernel::time::to_duration;
use crate::measure::record::Outcome;
use crate::routers::park::WaitMode;
use crate::routers::wait::{after_decision, fast_after_decision, retry, FastStep, Step};
use crate::routers::Ask;
use crate::workload::{Plan, PlannedRequest};
use crate::world::pylon::expected_queue_ms;
use routex::balancer::has_capacity;
use routex::balancer::{classify_session, Decision, Request};

impl Sim<'_> {
    pub(super) fn arrive(&mut self, i: ReqId) {
        let idx = i as usize;
        // Planned requests chain; a conversation's later requests (past
        // `planned`) are scheduled by its client.
        if let Some(next) = self.plan.requests[..self.planned].get(idx + 1) {
            self.queue.push(next.arrival, Event::Arrive(i + 1));
        }
        if let Some(cap) = self.s.max_in_flight {
            // Closed loop: a free place is taken at once, else the request
            // waits for one, first come first served. `in_flight` counts
            // the places taken, including one handed to a waiting request
            // whose `Send` is still to run, so the cap holds at every
            // instant.
            if self.in_flight >= cap {
                self.backlog.push_back(i);
                return;
            }
            self.in_flight += 1;
        }
        self.send(i);
    }

    /// The client sends request i now, holding its place under a closed
    /// loop: at its arrival, or when a request in flight resolved.
    pub(super) fn send(&mut self, i: ReqId) {
        let idx = i as usize;
        self.reqs[idx].asked = self.plan.requests[idx].arrival;
        if self.s.max_in_flight.is_some() {
            self.plan.requests[idx].arrival = self.now;
        }
        self.last_sent = self.last_sent.max(self.now);
        self.request_faults(i);
        let arrival = self.plan.requests[idx].arrival;
        self.timeouts
            .push_back((arrival.saturating_add(self.s.timeout_us), i));
        if let Some(store) = &self.store {
            // The gateway adds the session's last cluster; the request is
            // classified once, against its router's candidates.
            let p = self.plan.requests[idx];
            let hint = store.last_backend(p.key, self.now);
            let view = self.views.snapshots(p.router as usize);
            let id = hint
                .and_then(|b| view.get(b as usize))
                .map(|c| c.id.as_str());
            let st = &mut self.reqs[idx];
            st.last_backend = hint;
            st.session = Some(classify_session(id, view));
        }
        self.route(i);
    }

    /// A6 `RouteAttempt`: ask router r's decision maker with r's current view.
    pub(super) fn route(&mut self, i: ReqId) {
        let idx = i as usize;
        if self.reqs[idx].outcome.is_some() {
            return;
        }
        let p = self.plan.requests[idx];
        let router = p.router as usize;
        let backends = self.s.topology.backends.len();
        let st = &mut self.reqs[idx];
        st.attempts += 1;
        // A removed backend is no candidate any more.
        if self.removed_any {
            for (b, &removed) in self.cluster_removed.iter().enumerate() {
                if removed && !st.excluded.contains(&(b as u32)) {
                    st.excluded.push(b as u32);
                }
            }
        }
        if st.excluded.len() >= backends {
            return self.resolve(i, Outcome::NoRoute); // no retry can succeed
        }
        let ids = self.views.snapshots(router);
        let mut excluded_buf = [""; 8];
        let excluded_vec: Vec<&str>;
        let excluded: &[&str] = if st.excluded.len() <= excluded_buf.len() {
            for (slot, &b) in excluded_buf.iter_mut().zip(&st.excluded) {
                *slot = ids[b as usize].id.as_str();
            }
            &excluded_buf[..st.excluded.len()]
        } else {
            excluded_vec = st
                .excluded
                .iter()
                .map(|&b| ids[b as usize].id.as_str())
                .collect();
            &excluded_vec
        };
        let ask = Ask {
            id: i,
            request: Request {
                elapsed: to_duration(self.now - p.arrival),
                excluded,
                last_cluster_id: st
                    .last_backend
                    .and_then(|b| ids.get(b as usize))
                    .map(|c| c.id.as_str()),
                session: st.session,
                ..first_attempt(self.s, &self.plan, &p)
            },
            blocks: self.plan.blocks_of(&p),
            block_tokens: self.plan.block_tokens,
            now: self.now,
            membership: self.views.get(router).membership(),
        };
        let view = self.views.snapshots(router);
        if !self.routers[router].admits(&ask, view) {
            // stargate answers 503 at once: no retry, no decision.
            return self.resolve(i, Outcome::InputWorkRejected);
        }
        self.stats.decisions += 1;
        let decider = &mut self.routers[router];
        // A poll of a lasting Unavailable over the view it was answered
        // at, the request's exclusions unchanged: the router would answer
        // Unavailable again without a draw (`SimRouter::unavailable_lasts`),
        // so the answer is reused, the same decision at a fraction of the
        // cost (most of faithful mode's polls above capacity).
        let asked_at = (self.views.version(router), ask.request.excluded.len());
        let reuse = self.s.reuse_lasting_unavailable;
        let decision = if reuse && self.reqs[idx].unavailable_at == Some(asked_at) {
            self.stats.decisions_reused += 1;
            Decision::Unavailable
        } else {
            let decision = decider.decide(&ask, view, &mut self.lb_rngs[router], &mut self.scratch);
            let lasts = decision == Decision::Unavailable && decider.unavailable_lasts(&ask);
            self.reqs[idx].unavailable_at = lasts.then_some(asked_at);
            decision
        };
        let elapsed = self.now - p.arrival;
        let choice = if self.s.mode == WaitMode::Fast {
            match fast_after_decision(&self.wait, decision, elapsed, &mut self.infra) {
                FastStep::Dispatch(choice) if choice.index < backends => choice,
                FastStep::Dispatch(_) | FastStep::GiveUp => {
                    return self.resolve(i, Outcome::NoRoute)
                }
                FastStep::Park(us) => {
                    let mask = decider.wake_mask(&ask, view, &mut self.scratch);
                    let token = self.lot.park(router, i, mask);
                    self.queue
                        .push(self.now + us, Event::Unpark { req: i, token });
                    return;
                }
            }
        } else {
            match after_decision(&self.wait, decision, elapsed, &mut self.infra) {
                Step::Dispatch(choice) if choice.index < backends => choice,
                Step::Dispatch(_) | Step::GiveUp => return self.resolve(i, Outcome::NoRoute),
                Step::SleepFor(us) => {
                    return self.queue.push(self.now + us, Event::RouteAttempt(i));
                }
            }
        };
        decider.dispatched(&ask, choice.index);
        self.dispatch(i, choice.index, choice.rank_depth);
    }

    /// Fast mode: router r's view of backend b changed (stats arrived or a
    /// reservation was removed). If b now has room under the policy's
    /// limit, the requests parked for it re-decide after a generic retry
    /// sleep of the routing loop.
    pub(super) fn view_changed(&mut self, router: usize, backend: usize) {
        if self.s.mode != WaitMode::Fast {
            return;
        }
        let Some(c) = self.views.snapshots(router).get(backend) else {
            return;
        };
        if !has_capacity(c, self.wake_limit) {
            return;
        }
        let mut woken = std::mem::take(&mut self.woken);
        woken.clear();
        self.lot.wake(router, backend, &mut woken);
        for &i in &woken {
            let elapsed = self.now - self.plan.requests[i as usize].arrival;
            let at = match retry(&self.wait, elapsed, &mut self.infra) {
                Step::SleepFor(us) => self.now + us,
                // The budget is spent: the last decision happens now.
                Step::Dispatch(_) | Step::GiveUp => self.now,
            };
            self.queue.push(at, Event::RouteAttempt(i));
        }
        self.woken = woken;
    }

    pub(super) fn dispatch(&mut self, i: ReqId, backend: usize, rank_depth: u32) {
        let idx = i as usize;
        let p = self.plan.requests[idx];
        let router = p.router as usize;
        // The router's rule picks the cluster's backend (docs/stargate.md
        // 2.2 step 5), skipping those that answered 429 to this request;
        // none left: the cluster is excluded and the loop decides again.
        let failed = &self.reqs[idx].failed;
        let picked = self
            .views
            .get(router)
            .pick_backend(backend, |pos| {
                self.member_at(backend, pos)
                    .is_some_and(|m| !failed.contains(&(m as u32)))
            })
            .and_then(|pos| Some((pos, self.member_at(backend, pos)?)));
        let Some((position, member)) = picked else {
            let st = &mut self.reqs[idx];
            if !st.excluded.contains(&(backend as u32)) {
                st.excluded.push(backend as u32);
            }
            // The router was told of the dispatch: tell it it is over.
            st.backend = backend as u32;
            st.held = true;
            self.release_at_router(i);
            return self.route(i);
        };
        let expected_queue_ms = if self.routers[router].sends_expected_queue() {
            self.views
                .snapshots(router)
                .get(backend)
                .and_then(expected_queue_ms)
        } else {
            None
        };
        let reservation = self
            .views
            .get_mut(router)
            .and_then(|view| view.reserve(backend, position, 0, p.input));
        let st = &mut self.reqs[idx];
        st.dispatched_at = self.now;
        st.backend = backend as u32;
        st.member = member as u32;
        st.rank_depth = rank_depth;
        st.reservation = reservation;
        st.expected_queue_ms = expected_queue_ms;
        st.held = true;
        if let Some(c) = self.timeline.cell(member) {
            c.routed += 1;
        }
        let at = self.now + self.one_way[router][backend];
        self.queue.push(at, Event::BackendReceive(i));
    }

    pub(super) fn mismatch_return(&mut self, i: ReqId) {
        let idx = i as usize;
        let router = self.plan.requests[idx].router as usize;
        let (backend, reservation) = (self.reqs[idx].backend, self.reqs[idx].reservation);
        let released = reservation.is_some_and(|r| {
            self.views
                .get_mut(router)
                .is_some_and(|view| view.release(r))
        });
        if released {
            self.view_changed(router, backend as usize);
        }
        self.release_at_router(i);
        if self.reqs[idx].outcome.is_some() {
            return;
        }
        let st = &mut self.reqs[idx];
        st.rejections += 1;
        if st.rejections > self.s.max_retries {
            return self.resolve(i, Outcome::RetriesExhausted);
        }
        // The backend failed this request; its cluster is excluded once
        // none of its backends is left (docs/stargate.md 2.2 steps 1, 5).
        let cluster = &self.s.topology.backends[backend as usize];
        let member = st.member;
        if cluster.members.len() > 1 && !st.failed.contains(&member) {
            st.failed.push(member);
        }
        let left = cluster.members.clone().any(|m| {
            m as u32 != member && !st.failed.contains(&(m as u32)) && !self.out_of_view[m]
        });
        if !left && !st.excluded.contains(&backend) {
            st.excluded.push(backend);
        }
        self.route(i);
    }

    /// Tells the request's router that its dispatch is over (once).
    pub(super) fn release_at_router(&mut self, i: ReqId) {
        let st = &mut self.reqs[i as usize];
        if std::mem::take(&mut st.held) {
            let router = self.plan.requests[i as usize].router as usize;
            self.routers[router].finished(i, st.backend as usize);
        }
    }
}

/// Planned request `p` as its client first sends it: the scenario's model,
/// routing key and SLO, the request's affinity key and input; no time
/// elapsed, nothing excluded, no session. Each attempt (and the warm
/// start's decisions) starts from it.
pub(super) fn first_attempt<'a>(
    s: &'a SimSettings,
    plan: &'a Plan,
    p: &PlannedRequest,
) -> Request<'a> {
    Request {
        model: &s.model,
        // A blank routing key is an absent one (docs/stargate.md 1.1).
        routing_key: Some(s.routing_key.as_str()).filter(|k| !k.trim().is_empty()),
        cache_affinity_key: plan.key_names.get(p.key as usize).map(String::as_str),
        input_tokens: Some(p.input),
        priority: 0,
        request_slo_ms: Some(s.request_slo_ms),
        ..Request::default()
    }
}
