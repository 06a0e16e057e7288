//! One simulation run: a policy at one offered rate under one seed
//! (docs/simulator-model.md A2, A4-A6). Single-threaded and deterministic: the same
//! settings, policy, rate and seed give the same records.

use super::engine::{Engine, EngineParams};
use super::events::{Event, EventQueue, ReqId};
use super::metrics::{self, Bin, Outcome, Record, RunDiagnostics, RunMetrics};
use super::park::{wake_mask, ParkingLot, WaitMode};
use super::policy::{PolicyKind, WakeRule};
use super::publish::Coalescer;
use super::pylon::{expected_queue_ms, router_view, Pylon, PylonConfig, StatsReport};
use super::rng::{stream, Stream};
use super::time::{from_ms, from_secs, one_way, to_duration, Micros};
use super::topology::Topology;
use super::wait::{after_decision, fast_after_decision, retry, FastStep, Step};
use super::workload::{self, Plan, PlanShape, WorkloadSpec};
use crate::balancer::estimate::has_capacity;
use crate::balancer::{Balancer, Request, Scratch};
use crate::router::{CandidateView, ReservationId, WaitLoop};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use std::collections::VecDeque;
use std::rc::Rc;

/// Everything a run needs besides the policy, rate and seed.
#[derive(Clone, Debug)]
pub struct SimSettings {
    pub topology: Topology,
    pub engine: EngineParams,
    pub pylon: PylonConfig,
    pub heartbeat_us: Micros,
    /// Change-driven publishing's coalescing interval; `None` = off.
    pub coalesce_us: Option<Micros>,
    pub max_retries: u32,
    pub routing_key: String,
    pub model: String,
    pub request_slo_ms: u64,
    /// The client's `x-max-wait-ms`.
    pub max_wait_ms: u64,
    pub timeout_us: Micros,
    pub ttft_slo_us: Micros,
    pub workload: WorkloadSpec,
    pub warmup_s: f64,
    pub measure_s: f64,
    /// Polling (faithful) or parking (fast) between decisions (A11).
    pub mode: WaitMode,
}

/// Counters of the run itself, for performance reports and invariants.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunStats {
    pub requests: u64,
    pub events: u64,
    pub decisions: u64,
    /// Change-driven publications (each sent to every router).
    pub publications: u64,
    /// ∫ slots in use dt, and Σ slot holding times (Little's law check).
    pub slot_area_us: u128,
    pub slot_holding_us: u128,
    pub max_slots_in_use: u32,
    pub engines_idle_at_end: bool,
}

#[derive(Clone, Debug)]
pub struct RunResult {
    pub metrics: RunMetrics,
    pub diagnostics: RunDiagnostics,
    pub series: Vec<Bin>,
    pub stats: RunStats,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Not at an engine.
    Routing,
    Queued,
    Prefilling,
    /// Prefill done, waiting out ttft_base + jitter.
    Settling,
    Decoding,
    Done,
}

#[derive(Clone, Debug)]
struct ReqState {
    outcome: Option<Outcome>,
    phase: Phase,
    backend: u32,
    excluded: Vec<u32>,
    rejections: u32,
    attempts: u32,
    dispatched_at: Micros,
    rank_depth: u32,
    /// The dispatch in flight: its reservation and expected queue time.
    reservation: Option<ReservationId>,
    expected_queue_ms: Option<u64>,
    received_at: Micros,
    slot_since: Micros,
    reused: u64,
    engine_first_token: Micros,
    client_first_token: Micros,
}

impl ReqState {
    fn new() -> Self {
        ReqState {
            outcome: None,
            phase: Phase::Routing,
            backend: 0,
            excluded: Vec::new(),
            rejections: 0,
            attempts: 0,
            dispatched_at: 0,
            rank_depth: 0,
            reservation: None,
            expected_queue_ms: None,
            received_at: 0,
            slot_since: 0,
            reused: 0,
            engine_first_token: 0,
            client_first_token: 0,
        }
    }
}

struct Sim<'a> {
    s: &'a SimSettings,
    plan: Plan,
    queue: EventQueue,
    /// Client timeouts in arrival order: the timeout is the same for every
    /// request, so this FIFO is sorted and keeps them out of the heap.
    timeouts: VecDeque<(Micros, ReqId)>,
    now: Micros,
    reqs: Vec<ReqState>,
    resolved: usize,
    engines: Vec<Engine>,
    pylons: Vec<Pylon>,
    views: Vec<CandidateView>,
    /// Every report published so far; `StatsArrive` events index it.
    reports: Vec<Rc<StatsReport>>,
    balancers: Vec<Balancer>,
    lb_rngs: Vec<ChaCha8Rng>,
    infra: ChaCha8Rng,
    wait: WaitLoop,
    scratch: Scratch,
    /// One-way delay [router][backend].
    one_way: Vec<Vec<Micros>>,
    stats: RunStats,
    slots_in_use: u64,
    /// Fast mode only: parked requests, which view changes wake them, and a
    /// reusable list of the woken.
    lot: ParkingLot,
    wake_rule: WakeRule,
    woken: Vec<ReqId>,
    /// Per backend, when change-driven publishing is on.
    coalescers: Vec<Coalescer>,
}

/// Runs one (policy, rate, seed).
pub fn run(s: &SimSettings, policy: &PolicyKind, rate_rps: f64, seed: u64) -> RunResult {
    let horizon_s = s.warmup_s + s.measure_s;
    let weights: Vec<f64> = s.topology.routers.iter().map(|r| r.weight).collect();
    let plan = workload::plan(
        &s.workload,
        &PlanShape {
            rate_rps,
            horizon_s,
            router_weights: &weights,
            ttft_jitter_ms: s.engine.ttft_jitter_ms,
            decode_tps: s.engine.decode_tps,
        },
        &mut stream(seed, Stream::Workload),
    );
    let mut sim = Sim::new(s, policy, plan, seed);
    sim.run_to_end();
    sim.finish(from_secs(s.warmup_s), from_secs(horizon_s))
}

impl<'a> Sim<'a> {
    fn new(s: &'a SimSettings, policy: &PolicyKind, plan: Plan, seed: u64) -> Self {
        let topo = &s.topology;
        let engines = topo
            .backends
            .iter()
            .map(|_| Engine::new(&s.engine))
            .collect();
        let pylons: Vec<Pylon> = topo
            .backends
            .iter()
            .map(|_| Pylon::new(s.pylon.clone()))
            .collect();
        let idle: Vec<_> = pylons.iter().map(|p| Rc::new(p.report())).collect();
        let ids: Vec<String> = topo.backends.iter().map(|b| b.id.clone()).collect();
        let views = (0..topo.routers.len())
            .map(|r| router_view(&ids, &topo.router_rtts(r), &idle))
            .collect();
        let one_way = topo
            .routers
            .iter()
            .map(|r| {
                topo.backends
                    .iter()
                    .map(|b| one_way(topo.rtt_ms(r.region, b.region)))
                    .collect()
            })
            .collect();
        let n = plan.requests.len();
        Sim {
            s,
            plan,
            queue: EventQueue::default(),
            timeouts: VecDeque::new(),
            now: 0,
            reqs: vec![ReqState::new(); n],
            resolved: 0,
            engines,
            pylons,
            views,
            reports: Vec::new(),
            balancers: topo.routers.iter().map(|_| policy.instantiate()).collect(),
            lb_rngs: (0..topo.routers.len() as u64)
                .map(|r| stream(seed, Stream::Lb(r)))
                .collect(),
            infra: stream(seed, Stream::Infra),
            wait: WaitLoop::new(Some(s.max_wait_ms)),
            scratch: Scratch::default(),
            one_way,
            stats: RunStats::default(),
            slots_in_use: 0,
            lot: match s.mode {
                WaitMode::Fast => ParkingLot::new(topo.routers.len(), n),
                WaitMode::Faithful => ParkingLot::default(),
            },
            wake_rule: policy.wake_rule(),
            woken: Vec::new(),
            coalescers: match s.coalesce_us {
                Some(interval) => vec![Coalescer::new(interval); topo.backends.len()],
                None => Vec::new(),
            },
        }
    }

    fn run_to_end(&mut self) {
        let heartbeat = self.s.heartbeat_us.max(1);
        for b in 0..self.engines.len() {
            let phase = self.infra.random_range(0..heartbeat);
            self.queue.push(phase, Event::Heartbeat(b as u32));
        }
        if let Some(first) = self.plan.requests.first() {
            self.queue.push(first.arrival, Event::Arrive(0));
        }
        let total = self.plan.requests.len();
        while self.resolved < total {
            // A timeout was scheduled at its request's arrival, before any
            // event of the same instant, so it runs first on a tie.
            let timeout_due = match (self.timeouts.front(), self.queue.peek_time()) {
                (Some(&(t, _)), Some(next)) => t <= next,
                (Some(_), None) => true,
                (None, _) => false,
            };
            if timeout_due {
                if let Some((at, i)) = self.timeouts.pop_front() {
                    self.advance(at);
                    self.timeout(i);
                }
                continue;
            }
            let Some((at, event)) = self.queue.pop() else {
                break;
            };
            self.advance(at);
            self.stats.events += 1;
            self.handle(event);
        }
        self.stats.requests = total as u64;
    }

    fn advance(&mut self, at: Micros) {
        let dt = at.saturating_sub(self.now);
        self.stats.slot_area_us += u128::from(dt) * u128::from(self.slots_in_use);
        self.now = self.now.max(at);
    }

    fn handle(&mut self, event: Event) {
        match event {
            Event::Arrive(i) => self.arrive(i),
            Event::RouteAttempt(i) => self.route(i),
            Event::Unpark { req, token } => {
                if self.lot.take(req, token) {
                    self.route(req);
                }
            }
            Event::BackendReceive(i) => self.receive(i),
            Event::MismatchReturn(i) => self.mismatch_return(i),
            Event::PrefillDone(i) => self.prefill_done(i),
            Event::FirstToken(i) => self.first_token(i),
            Event::Complete(i) => self.complete(i),
            Event::Heartbeat(b) => self.heartbeat(b),
            Event::Publish(b) => {
                if let Some(c) = self.coalescers.get_mut(b as usize) {
                    c.published(self.now);
                }
                self.stats.publications += 1;
                self.publish(b);
            }
            Event::StatsArrive {
                backend,
                router,
                report,
            } => {
                let report = &self.reports[report as usize];
                if let Some(v) = self.views.get_mut(router as usize) {
                    // Pylon reports are well-formed; a malformed one is ignored.
                    let _ = v.report_at(backend as usize, 0, &report.backend_stats());
                    self.view_changed(router as usize, backend as usize);
                }
            }
        }
    }

    fn arrive(&mut self, i: ReqId) {
        let idx = i as usize;
        if let Some(next) = self.plan.requests.get(idx + 1) {
            self.queue.push(next.arrival, Event::Arrive(i + 1));
        }
        let arrival = self.plan.requests[idx].arrival;
        self.timeouts
            .push_back((arrival.saturating_add(self.s.timeout_us), i));
        self.route(i);
    }

    fn resolve(&mut self, i: ReqId, outcome: Outcome) {
        let r = &mut self.reqs[i as usize];
        if r.outcome.is_none() {
            r.outcome = Some(outcome);
            self.resolved += 1;
        }
    }

    /// A6 `RouteAttempt`: ask router r's balancer with r's current view.
    fn route(&mut self, i: ReqId) {
        let idx = i as usize;
        if self.reqs[idx].outcome.is_some() {
            return;
        }
        let p = self.plan.requests[idx];
        let router = p.router as usize;
        let backends = self.engines.len();
        let st = &mut self.reqs[idx];
        st.attempts += 1;
        if st.excluded.len() >= backends {
            return self.resolve(i, Outcome::NoRoute); // no retry can succeed
        }
        let ids = self.views[router].snapshots();
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
        let request = Request {
            model: &self.s.model,
            // A blank routing key is an absent one (ref 1.1).
            routing_key: Some(self.s.routing_key.as_str()).filter(|k| !k.trim().is_empty()),
            cache_affinity_key: self.plan.key_names.get(p.key as usize).map(String::as_str),
            input_tokens: Some(p.input),
            priority: 0,
            request_slo_ms: Some(self.s.request_slo_ms),
            elapsed: to_duration(self.now - p.arrival),
            excluded,
        };
        self.stats.decisions += 1;
        let decision = self.balancers[router].decide(
            &request,
            self.views[router].snapshots(),
            &mut self.lb_rngs[router],
            &mut self.scratch,
        );
        let elapsed = self.now - p.arrival;
        if self.s.mode == WaitMode::Fast {
            let step = fast_after_decision(&self.wait, decision, elapsed, &mut self.infra);
            let mask = match step {
                FastStep::Park(_) => wake_mask(
                    self.wake_rule,
                    &self.balancers[router],
                    self.views[router].snapshots(),
                    &request,
                    &mut self.scratch,
                ),
                _ => 0,
            };
            return match step {
                FastStep::Dispatch(choice) if choice.index < backends => {
                    self.dispatch(i, choice.index, choice.rank_depth)
                }
                FastStep::Dispatch(_) | FastStep::GiveUp => self.resolve(i, Outcome::NoRoute),
                FastStep::Park(us) => {
                    let token = self.lot.park(router, i, mask);
                    self.queue
                        .push(self.now + us, Event::Unpark { req: i, token });
                }
            };
        }
        match after_decision(&self.wait, decision, elapsed, &mut self.infra) {
            Step::Dispatch(choice) if choice.index < backends => {
                self.dispatch(i, choice.index, choice.rank_depth)
            }
            Step::Dispatch(_) | Step::GiveUp => self.resolve(i, Outcome::NoRoute),
            Step::SleepFor(us) => self.queue.push(self.now + us, Event::RouteAttempt(i)),
        }
    }

    /// Fast mode: router r's view of backend b changed (stats arrived or a
    /// reservation was removed). If b now has room under the policy's
    /// limit, the requests parked for it re-decide after a generic retry
    /// sleep of the routing loop.
    fn view_changed(&mut self, router: usize, backend: usize) {
        if self.s.mode != WaitMode::Fast {
            return;
        }
        let Some(c) = self.views[router].snapshots().get(backend) else {
            return;
        };
        if !has_capacity(c, self.wake_rule.capacity_limit) {
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

    fn dispatch(&mut self, i: ReqId, backend: usize, rank_depth: u32) {
        let idx = i as usize;
        let p = self.plan.requests[idx];
        let router = p.router as usize;
        let view = &mut self.views[router];
        let expected_queue_ms = view.snapshots().get(backend).and_then(expected_queue_ms);
        let reservation = view.reserve(backend, 0, 0, p.input);
        let st = &mut self.reqs[idx];
        st.dispatched_at = self.now;
        st.backend = backend as u32;
        st.rank_depth = rank_depth;
        st.reservation = reservation;
        st.expected_queue_ms = expected_queue_ms;
        let at = self.now + self.one_way[router][backend];
        self.queue.push(at, Event::BackendReceive(i));
    }

    fn receive(&mut self, i: ReqId) {
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

    fn mismatch_return(&mut self, i: ReqId) {
        let idx = i as usize;
        let router = self.plan.requests[idx].router as usize;
        let (backend, reservation) = (self.reqs[idx].backend, self.reqs[idx].reservation);
        let released = reservation.is_some_and(|r| self.views[router].release(r));
        if released {
            self.view_changed(router, backend as usize);
        }
        if self.reqs[idx].outcome.is_some() {
            return;
        }
        let st = &mut self.reqs[idx];
        st.rejections += 1;
        if st.rejections > self.s.max_retries {
            return self.resolve(i, Outcome::RetriesExhausted);
        }
        if !st.excluded.contains(&backend) {
            st.excluded.push(backend);
        }
        self.route(i);
    }

    /// The request holds a slot from now: reuse the cache, prefill the rest.
    fn start_prefill(&mut self, i: ReqId) {
        let idx = i as usize;
        let p = self.plan.requests[idx];
        let b = self.reqs[idx].backend as usize;
        let reused = self.engines[b].kv.access(p.key, p.input);
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

    fn prefill_done(&mut self, i: ReqId) {
        let idx = i as usize;
        if self.reqs[idx].phase != Phase::Prefilling {
            return;
        }
        let p = self.plan.requests[idx];
        let b = self.reqs[idx].backend as usize;
        self.engines[b].kv.store(p.key, p.input);
        self.reqs[idx].phase = Phase::Settling;
        let at = self.now + self.s.engine.settle_us(p.jitter_ms);
        self.queue.push(at, Event::FirstToken(i));
    }

    fn first_token(&mut self, i: ReqId) {
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
        let at = self.now
            + self
                .s
                .engine
                .decode_us(self.plan.output_tokens, p.decode_tps);
        self.queue.push(at, Event::Complete(i));
        self.pylon_changed(b);
    }

    fn complete(&mut self, i: ReqId) {
        let idx = i as usize;
        if self.reqs[idx].phase != Phase::Decoding {
            return;
        }
        let p = self.plan.requests[idx];
        let b = self.reqs[idx].backend as usize;
        self.pylons[b].release_output(p.input);
        self.pylon_changed(b);
        self.free_slot(i);
        let client_done = self.now + self.one_way[p.router as usize][b];
        // A completion after the client gave up is left to the timeout.
        if client_done <= p.arrival.saturating_add(self.s.timeout_us) {
            self.resolve(i, Outcome::Succeeded);
        }
    }

    /// Ends request i's hold on its slot and hands the slot to the FIFO head.
    fn free_slot(&mut self, i: ReqId) {
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
    fn timeout(&mut self, i: ReqId) {
        let idx = i as usize;
        if self.reqs[idx].outcome.is_some() {
            return;
        }
        self.resolve(i, Outcome::TimedOut);
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

    fn heartbeat(&mut self, b: u32) {
        self.publish(b);
        self.queue
            .push(self.now + self.s.heartbeat_us.max(1), Event::Heartbeat(b));
    }

    /// Change-driven publishing: backend b's Pylon state changed now.
    fn pylon_changed(&mut self, b: usize) {
        if let Some(at) = self.coalescers.get_mut(b).and_then(|c| c.changed(self.now)) {
            self.queue.push(at, Event::Publish(b as u32));
        }
    }

    /// Takes backend b's stats report and sends it to every router, after
    /// the one-way delay plus the relay delay.
    fn publish(&mut self, b: u32) {
        let report = self.reports.len() as u32;
        self.reports.push(Rc::new(self.pylons[b as usize].report()));
        let topo = &self.s.topology;
        let from = topo.backends[b as usize].region;
        let relay = from_ms(topo.stats_relay_ms);
        for (r, router) in topo.routers.iter().enumerate() {
            let delay = one_way(topo.rtt_ms(from, router.region)) + relay;
            self.queue.push(
                self.now + delay,
                Event::StatsArrive {
                    backend: b,
                    router: r as u32,
                    report,
                },
            );
        }
    }

    fn finish(mut self, from: Micros, to: Micros) -> RunResult {
        self.stats.engines_idle_at_end =
            self.engines.iter().all(Engine::is_idle) && self.pylons.iter().all(Pylon::is_idle);
        let topo = &self.s.topology;
        let records: Vec<Record> = self
            .plan
            .requests
            .iter()
            .zip(&self.reqs)
            .map(|(p, st)| {
                let served_region = topo.backends.get(st.backend as usize).map(|b| b.region);
                let entry_region = topo.routers.get(p.router as usize).map(|r| r.region);
                Record {
                    arrival: p.arrival,
                    outcome: st.outcome.unwrap_or(Outcome::TimedOut),
                    input: p.input,
                    reused: st.reused,
                    ttft_us: st.client_first_token.saturating_sub(p.arrival),
                    backend_ttft_us: st.engine_first_token.saturating_sub(st.received_at),
                    routing_delay_us: st.dispatched_at.saturating_sub(p.arrival),
                    backend: st.backend,
                    rank_depth: st.rank_depth,
                    cross_region: served_region != entry_region,
                    route_attempts: st.attempts,
                    mismatch_rejections: st.rejections,
                }
            })
            .collect();
        let (metrics, diagnostics) =
            metrics::summarize(&records, from, to, topo.backends.len(), self.s.ttft_slo_us);
        let series = metrics::time_series(&records, to, self.s.ttft_slo_us);
        debug_assert!(
            self.stats.engines_idle_at_end,
            "an engine is busy after the run"
        );
        debug_assert_eq!(
            metrics.succeeded + metrics.no_route + metrics.retries_exhausted + metrics.timed_out,
            metrics.measured
        );
        RunResult {
            metrics,
            diagnostics,
            series,
            stats: self.stats,
        }
    }
}
