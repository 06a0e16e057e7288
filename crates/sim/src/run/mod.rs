//! One simulation run: a policy at one offered rate under one seed
//! (docs/simulator-model.md A2, A4-A6). Single-threaded and deterministic: the same
//! settings, policy, rate and seed give the same records.
//!
//! The run owns the event loop and the state around the three pluggable
//! parts: the `WorkloadSource` made the plan, each backend's
//! [`EngineModel`] serves, each router's `SimRouter` decides. The handlers are
//! split by side: `routing_loop` (arrivals, decisions, dispatch, 429s),
//! `serving` (engines and client timeouts), `stats` (Pylon reports and
//! their delivery) and `records` (the metrics at the end).

mod faults;
mod records;
mod routing_loop;
mod serving;
mod state;
mod stats;
mod views;
mod warm;

use crate::kernel::events::{Event, EventQueue, ReqId};
use crate::kernel::rng::{stream, Stream};
use crate::kernel::time::{from_secs, one_way, Micros};
use crate::measure::metrics::{Bin, RunDiagnostics, RunMetrics};
use crate::measure::record::Outcome;
use crate::measure::timeline::{Recorder, Sample, Timeline};
use crate::routers::park::{ParkingLot, WaitMode};
use crate::routers::policy::PolicyKind;
use crate::routers::SimRouter;
use crate::workload::conversation_client::ConversationClient;
use crate::workload::{Plan, PlanShape, WorkloadSource};
use crate::world::engine::{self, Action, BlockPlan, EngineModel, EngineParams};
use crate::world::fleet::{BackendProfile, DrawMap, Fault, RunDetail, Trigger};
use crate::world::gateway::{LastClusterStore, StoreSettings};
use crate::world::publish::Coalescer;
use crate::world::pylon::{topology_view, Pylon, PylonConfig};
use crate::world::topology::Topology;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use routex::balancer::Scratch;
use routex::router::WaitLoop;
use state::ReqState;
use stats::ReportSlab;
use std::collections::VecDeque;
use std::rc::Rc;
use std::sync::Arc;
use views::Views;

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
    /// The gateway's last-cluster store; `None`: requests carry no
    /// `x-stargate-last-cluster-id`.
    pub last_cluster_store: Option<StoreSettings>,
    /// Where requests come from.
    pub workload: Arc<dyn WorkloadSource>,
    pub warmup_s: f64,
    pub measure_s: f64,
    /// Polling (faithful) or parking (fast) between decisions (A11).
    pub mode: WaitMode,
    /// Per-member engines and Pylons (by index in the topology's
    /// `members`); empty: every member has `engine` and `pylon`.
    pub profiles: Vec<BackendProfile>,
    /// The members of a cluster share one engine (stargate-bench's mock
    /// backends), built from the cluster's first member's profile; each
    /// member's Pylon then reports the engine's running requests. Off:
    /// every member has its own engine.
    pub shared_engines: bool,
    /// The client's in-flight cap (a closed loop); `None`: open loop.
    pub max_in_flight: Option<u32>,
    /// Changes of the fleet during the run.
    pub faults: Vec<Fault>,
    /// Keep a [`RunDetail`] (every request's log) in the result.
    pub keep_detail: bool,
    /// Pylons publish their engine's KV capacity and use (for
    /// `consider_kv_free_tokens`); off, the KV fields are 0.
    pub publish_kv: bool,
    /// The engines' prefix caches start with each key where the policy
    /// places it on an idle fleet (`warm`); off, every run starts cold.
    pub warm_start: bool,
    /// A poll whose router answered a lasting `Unavailable` over the view
    /// as it still is reuses that answer instead of deciding again: the
    /// same decisions and records, far fewer calls into the router
    /// (`routing_loop`, docs/simulator.md "The parity scenario's speed").
    /// On in every scenario; off only to show that it changes nothing.
    pub reuse_lasting_unavailable: bool,
    /// The most (bin, backend) cells of the run's timeline
    /// ([`timeline::cells_per_run`](crate::measure::timeline::cells_per_run): a
    /// sweep sets its matrix's share).
    pub timeline_cells: usize,
}

/// Counters of the run itself, for performance reports and invariants.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunStats {
    pub requests: u64,
    pub events: u64,
    pub decisions: u64,
    /// Of `decisions`, the lasting `Unavailable` answers reused without
    /// asking the router (the view unchanged since it answered).
    pub decisions_reused: u64,
    /// Change-driven publications (each sent to every router).
    pub publications: u64,
    /// ∫ slots in use dt, and Σ slot holding times (Little's law check).
    pub slot_area_us: u128,
    pub slot_holding_us: u128,
    pub max_slots_in_use: u32,
    /// The most stats reports alive at once (each is freed after its last
    /// delivery).
    pub max_reports_in_flight: u64,
    pub engines_idle_at_end: bool,
}

#[derive(Clone, Debug)]
pub struct RunResult {
    pub metrics: RunMetrics,
    pub diagnostics: RunDiagnostics,
    pub series: Vec<Bin>,
    /// Each backend's timeline (`backends.csv`).
    pub timeline: Timeline,
    pub stats: RunStats,
    /// When `keep_detail` was set.
    pub detail: Option<RunDetail>,
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
    /// One per member, or one per cluster when the members share it.
    engines: Vec<Box<dyn EngineModel>>,
    /// Each member's engine.
    engine_of: Vec<u32>,
    /// Per member whose profile draws differently from the fleet's engine
    /// (empty when none does).
    draw_maps: Vec<Option<DrawMap>>,
    /// A reusable buffer of engine actions.
    actions: Vec<Action>,
    /// One per member.
    pylons: Vec<Pylon>,
    views: Views,
    /// Reports in flight to the routers; `StatsArrive` events index it.
    reports: ReportSlab,
    routers: Vec<Box<dyn SimRouter>>,
    lb_rngs: Vec<ChaCha8Rng>,
    infra: ChaCha8Rng,
    wait: WaitLoop,
    scratch: Scratch,
    /// One-way delay [router][backend].
    one_way: Vec<Vec<Micros>>,
    stats: RunStats,
    slots_in_use: u64,
    /// Fast mode only: parked requests, the capacity limit under which a
    /// view change wakes them, and a reusable list of the woken.
    lot: ParkingLot,
    wake_limit: u64,
    woken: Vec<ReqId>,
    /// Per backend, when change-driven publishing is on.
    coalescers: Vec<Coalescer>,
    /// Closed loop: places taken (requests sent and not resolved, and
    /// those handed a freed place and about to be sent), and the requests
    /// waiting for one in arrival order.
    in_flight: u32,
    backlog: VecDeque<ReqId>,
    /// Per member: removed (and when), removed from the routers' views
    /// (a cluster that keeps other members), and the end of a stats outage.
    removed_at: Vec<Option<Micros>>,
    out_of_view: Vec<bool>,
    /// Per cluster: its last member was removed (it stays in the views,
    /// excluded from routing).
    cluster_removed: Vec<bool>,
    removed_any: bool,
    silent_until: Vec<Micros>,
    /// Per engine: the slow-down fault in force, if any, and its factor
    /// (empty until the first slow-down).
    slowed_by: Vec<Option<usize>>,
    slow_factor: Vec<f64>,
    /// Per member: the input TPS of its last published report.
    published_tps: Vec<f64>,
    /// Each backend's timeline, bin by bin.
    timeline: Recorder,
    /// The latest send (the measured window's end under a closed loop).
    last_sent: Micros,
    /// The gateway's last-cluster store, when the scenario has one.
    store: Option<LastClusterStore>,
    /// The requests planned up front (the arrival chain walks these);
    /// growing conversations append their later turns after them.
    planned: usize,
    /// Growing conversations: what the client sends after each request.
    client: Option<ConversationClient>,
}

/// Runs one (policy, rate, seed).
pub fn run(s: &SimSettings, policy: &PolicyKind, rate_rps: f64, seed: u64) -> RunResult {
    let horizon_s = s.warmup_s + s.measure_s;
    let weights: Vec<f64> = s.topology.routers.iter().map(|r| r.weight).collect();
    let plan = s.workload.plan(
        &PlanShape {
            rate_rps,
            horizon_s,
            router_weights: &weights,
            ttft_jitter_ms: s.engine.ttft_jitter_ms,
            decode_tps: s.engine.decode_tps,
        },
        &mut stream(seed, Stream::Workload),
    );
    let end = plan.end;
    let mut sim = Sim::new(s, policy, plan, seed);
    sim.run_to_end();
    sim.finish(from_secs(s.warmup_s), end)
}

impl<'a> Sim<'a> {
    fn new(s: &'a SimSettings, policy: &PolicyKind, plan: Plan, seed: u64) -> Self {
        let topo = &s.topology;
        let blocks = BlockPlan {
            blocks: Arc::clone(&plan.blocks),
            block_ids: plan.block_ids,
            block_tokens: plan.block_tokens,
        };
        let profile = |m: usize| s.profiles.get(m);
        let members = topo.members.len();
        let (engine_of, built_from): (Vec<u32>, Vec<usize>) = if s.shared_engines {
            let of = topo.members.iter().map(|m| m.cluster as u32).collect();
            (of, topo.backends.iter().map(|b| b.members.start).collect())
        } else {
            ((0..members as u32).collect(), (0..members).collect())
        };
        let mut engines: Vec<Box<dyn EngineModel>> = built_from
            .iter()
            .map(|&m| engine::build(profile(m).map_or(&s.engine, |p| &p.engine), &blocks))
            .collect();
        let draw_maps: Vec<Option<DrawMap>> = (0..members)
            .map(|m| {
                profile(m)
                    .filter(|p| p.engine.mock.is_none())
                    .and_then(|p| DrawMap::new(&s.engine, &p.engine))
            })
            .collect();
        let draw_maps = if draw_maps.iter().all(Option::is_none) {
            Vec::new()
        } else {
            draw_maps
        };
        let pylons: Vec<Pylon> = (0..members)
            .map(|m| Pylon::new(profile(m).map_or(&s.pylon, |p| &p.pylon).clone()))
            .collect();
        let idle: Vec<_> = pylons
            .iter()
            .zip(&engine_of)
            .map(|(p, &e)| {
                let mut r = p.report();
                if s.publish_kv {
                    r.kv_capacity = engines[e as usize].kv_capacity();
                }
                if s.shared_engines {
                    r.engine_running = Some(0);
                }
                Rc::new(r)
            })
            .collect();
        let published_tps = idle.iter().map(|r| r.last_mean_tps).collect();
        let views = Views::new(
            (0..topo.routers.len())
                .map(|r| topology_view(topo, r, &idle))
                .collect(),
        );
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
        let client = plan
            .conversations
            .as_ref()
            .map(|c| ConversationClient::new(Arc::clone(c), &plan.requests, plan.end));
        let store = s.last_cluster_store.map(|settings| {
            let ids: Vec<&str> = topo.backends.iter().map(|b| b.id.as_str()).collect();
            LastClusterStore::new(settings, &s.routing_key, &s.model, &plan.key_names, &ids)
        });
        let routers: Vec<Box<dyn SimRouter>> = topo
            .routers
            .iter()
            .map(|_| policy.instantiate(&s.engine))
            .collect();
        if routers.iter().any(|r| r.wants_kv_events()) {
            engines.iter_mut().for_each(|e| e.log_kv_events());
        }
        let mut sim = Sim {
            s,
            plan,
            queue: EventQueue::default(),
            timeouts: VecDeque::new(),
            now: 0,
            reqs: vec![ReqState::new(); n],
            resolved: 0,
            engines,
            engine_of,
            draw_maps,
            actions: Vec::new(),
            pylons,
            views,
            reports: ReportSlab::default(),
            routers,
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
            wake_limit: policy.wake_rule().capacity_limit,
            woken: Vec::new(),
            coalescers: match s.coalesce_us {
                Some(interval) => vec![Coalescer::new(interval); members],
                None => Vec::new(),
            },
            in_flight: 0,
            backlog: VecDeque::new(),
            removed_at: vec![None; members],
            out_of_view: vec![false; members],
            cluster_removed: vec![false; topo.backends.len()],
            removed_any: false,
            silent_until: vec![0; members],
            slowed_by: Vec::new(),
            slow_factor: Vec::new(),
            published_tps,
            timeline: Recorder::new(members, s.timeline_cells),
            last_sent: 0,
            store,
            planned: n,
            client,
        };
        if s.warm_start {
            sim.warm_start(seed);
        }
        sim
    }

    fn run_to_end(&mut self) {
        let heartbeat = self.s.heartbeat_us.max(1);
        for b in 0..self.pylons.len() {
            let phase = self.infra.random_range(0..heartbeat);
            self.queue.push(phase, Event::Heartbeat(b as u32));
        }
        if let Some(first) = self.plan.requests.first() {
            self.queue.push(first.arrival, Event::Arrive(0));
        }
        for (i, f) in self.s.faults.iter().enumerate() {
            if let Trigger::At(at) = f.trigger {
                self.queue.push(at, Event::Fault(i as u32));
            }
        }
        // Growing conversations add requests as they go.
        while self.resolved < self.plan.requests.len() {
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
        self.stats.requests = self.plan.requests.len() as u64;
    }

    fn advance(&mut self, at: Micros) {
        while self.timeline.due(at) {
            let samples: Vec<Sample> = (0..self.pylons.len()).map(|m| self.sample(m)).collect();
            self.timeline.close(|m| samples[m]);
        }
        let dt = at.saturating_sub(self.now);
        self.stats.slot_area_us += u128::from(dt) * u128::from(self.slots_in_use);
        self.now = self.now.max(at);
    }

    /// Member m's state for its timeline, now.
    fn sample(&self, m: usize) -> Sample {
        let e = self.engine_of[m] as usize;
        Sample {
            in_flight: self.pylons[m].live(),
            input_tps: self.published_tps[m],
            registered: self.removed_at[m].is_none(),
            slow_factor: self.slow_factor.get(e).copied().unwrap_or(1.0),
        }
    }

    fn handle(&mut self, event: Event) {
        match event {
            Event::Arrive(i) => self.arrive(i),
            Event::Send(i) => self.send(i),
            Event::Fault(f) => self.fault(f as usize),
            Event::FaultEnds(f) => self.fault_ends(f as usize),
            Event::RouteAttempt(i) => self.route(i),
            Event::Unpark { req, token } => {
                if self.lot.take(req, token) {
                    self.route(req);
                }
            }
            Event::BackendReceive(i) => self.receive(i),
            Event::MismatchReturn(i) => self.mismatch_return(i),
            Event::ResponseAtClient(i) => self.learn_session(i),
            Event::Engine { backend, id, tag } => {
                self.engine_timer(backend as usize, engine::Timer { id, tag })
            }
            Event::Heartbeat(b) => self.heartbeat(b),
            Event::Publish(b) => {
                if let Some(c) = self.coalescers.get_mut(b as usize) {
                    c.published(self.now);
                }
                if self.publishes(b as usize) {
                    self.stats.publications += 1;
                    self.publish(b);
                }
            }
            Event::StatsArrive {
                backend,
                router,
                report,
            } => self.stats_arrive(backend as usize, router as usize, report),
        }
    }

    fn resolve(&mut self, i: ReqId, outcome: Outcome) {
        let r = &mut self.reqs[i as usize];
        if r.outcome.is_none() {
            r.outcome = Some(outcome);
            r.resolved_at = self.now;
            self.resolved += 1;
            if self.client.is_some() {
                self.follow_up(i, outcome);
            }
            if self.s.max_in_flight.is_some() {
                // Closed loop: the place goes to the first waiting request,
                // sent now; with none waiting it is free.
                match self.backlog.pop_front() {
                    Some(next) => self.queue.push(self.now, Event::Send(next)),
                    None => self.in_flight = self.in_flight.saturating_sub(1),
                }
            }
        }
    }

    /// Growing conversations: the client's next request after request i,
    /// appended to the run's requests and sent when the client says.
    fn follow_up(&mut self, i: ReqId, outcome: Outcome) {
        let succeeded = outcome == Outcome::Succeeded;
        // A success counts from its last token at the client.
        let at = if succeeded {
            self.reqs[i as usize].client_done
        } else {
            self.now
        };
        let Some(next) = self
            .client
            .as_mut()
            .and_then(|c| c.resolved(i, succeeded, at))
        else {
            return;
        };
        let id = self.plan.requests.len() as ReqId;
        self.plan.requests.push(next.request);
        self.reqs.push(ReqState::new());
        if self.s.mode == WaitMode::Fast {
            self.lot.grow(self.plan.requests.len());
        }
        // It arrives like a planned request: under a closed loop it waits
        // for a place as they do.
        self.queue.push(next.at, Event::Arrive(id));
    }

    /// Member m's position among its cluster's backends in the views.
    fn view_position(&self, m: usize) -> usize {
        let c = self.s.topology.members[m].cluster;
        let first = self.s.topology.backends[c].members.start;
        (first..m).filter(|&o| !self.out_of_view[o]).count()
    }

    /// The member at position `pos` of cluster c's backends in the views.
    fn member_at(&self, c: usize, pos: usize) -> Option<usize> {
        self.s.topology.backends[c]
            .members
            .clone()
            .filter(|&o| !self.out_of_view[o])
            .nth(pos)
    }

    /// Requests engine e runs (with shared engines, those of every
    /// member's Pylon).
    fn engine_live(&self, m: usize) -> u64 {
        if !self.s.shared_engines {
            return self.pylons[m].live();
        }
        let c = self.s.topology.members[m].cluster;
        self.s.topology.backends[c]
            .members
            .clone()
            .map(|o| self.pylons[o].live())
            .sum()
    }
}
