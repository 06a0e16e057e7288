//! The per-backend Pylon stats agent (docs/simulator-model.md A5): phase counters, the
//! input-TPS window, the published stats report and queue-mismatch admission.

use crate::kernel::time::{Micros, US_PER_S};
use crate::world::topology::Topology;
use routex::balancer::ClusterSnapshot;
use routex::router::{BackendStats, CandidateView};
use std::collections::VecDeque;
use std::rc::Rc;

/// How the Pylon measures input TPS.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TpsMode {
    /// Σ input over the union of the last `window` [receive, first token]
    /// intervals, at least `floor_us` long.
    Window { window: usize, floor_us: Micros },
    /// A fixed rate (ablation).
    Constant,
}

/// What the Pylon publishes as `max_input_tps`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PublishedMax {
    /// The initial TPS from every Pylon: equal weights, fixed rankings.
    Constant,
    /// The running maximum of the measured rate.
    RunningMax,
}

/// Queue-mismatch admission thresholds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Mismatch {
    pub min_delta_ms: u64,
    pub tolerance: f64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct PylonConfig {
    /// Initial (and, in constant mode, fixed) input TPS, speed included.
    pub initial_tps: f64,
    pub mode: TpsMode,
    pub published_max: PublishedMax,
    pub slots: u64,
    pub mismatch: Option<Mismatch>,
}

/// One stats report, shared by every arrival of one heartbeat.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StatsReport {
    pub last_mean_tps: f64,
    pub max_input_tps: Option<f64>,
    pub input_phase: u64,
    pub output_phase: u64,
    pub prompt_work: u64,
    pub total_input: u64,
    pub slots: u64,
    /// The priority-0 queue estimate; `None` = empty map.
    pub queue_estimate_ms: Option<u64>,
    /// The engine's KV capacity and use, when KV statistics are published
    /// (0 and 0 = not published, docs/simulator-model.md A5).
    pub kv_capacity: u64,
    pub kv_used: u64,
    /// The engine's running requests when the Pylon shares its engine
    /// with other Pylons (a cluster of several backends over one engine,
    /// as stargate-bench's mock backends): the cluster-scoped
    /// `num_running_queries`. `None`: the Pylon's own live requests.
    pub engine_running: Option<u64>,
}

impl StatsReport {
    /// As the router's candidate view reads a report (A6): requests in
    /// prefill are queued, every live request runs, the published
    /// priority-0 estimate is the whole map.
    pub fn backend_stats(&self) -> BackendStats {
        BackendStats {
            last_mean_input_tps: self.last_mean_tps,
            max_input_tps: self.max_input_tps,
            queue_size: self.input_phase,
            queued_input_size: self.prompt_work,
            total_query_input_size: self.total_input,
            num_running_queries: self
                .engine_running
                .unwrap_or(self.input_phase + self.output_phase),
            max_engine_concurrency: self.slots,
            queue_time_estimate_ms_by_priority: self
                .queue_estimate_ms
                .map(|ms| (0, ms))
                .into_iter()
                .collect(),
            kv_cache_capacity_tokens: self.kv_capacity,
            kv_cache_used_tokens: self.kv_used,
            kv_cache_free_tokens: self.kv_capacity.saturating_sub(self.kv_used),
        }
    }
}

/// One router's candidate view: one single-backend cluster per backend
/// (`ids`, in topology order) at `rtt_ms`, each starting from `initial`.
pub fn router_view(ids: &[String], rtt_ms: &[f64], initial: &[Rc<StatsReport>]) -> CandidateView {
    let mut view = CandidateView::new();
    for ((id, &rtt), report) in ids.iter().zip(rtt_ms).zip(initial) {
        let c = view.add_backend(id, id);
        // Topology RTTs and Pylon reports are finite and non-negative.
        let _ = view.set_rtt(id, id, rtt);
        let _ = view.report_at(c, 0, &report.backend_stats());
    }
    view
}

/// One router's candidate view of a topology: each cluster (in topology
/// order) with its members as backends, at the router's RTT, each member
/// starting from its entry of `initial` (by member index). With one member
/// per cluster this is [`router_view`].
pub fn topology_view(topo: &Topology, router: usize, initial: &[Rc<StatsReport>]) -> CandidateView {
    let mut view = CandidateView::new();
    let region = topo.routers.get(router).map_or(0, |r| r.region);
    for cluster in &topo.backends {
        let rtt = topo.rtt_ms(region, cluster.region);
        for (j, m) in cluster.members.clone().enumerate() {
            let member = &topo.members[m];
            let c = view.add_backend(&cluster.id, &member.id);
            // Topology RTTs and Pylon reports are finite and non-negative.
            let _ = view.set_rtt(&cluster.id, &member.id, rtt);
            if let Some(report) = initial.get(m) {
                let _ = view.report_at(c, j, &report.backend_stats());
            }
        }
    }
    view
}

/// The expected queue time a router sends with a dispatch (docs/stargate.md 3.1 for
/// priority 0), read before the new reservation.
pub fn expected_queue_ms(s: &ClusterSnapshot) -> Option<u64> {
    if s.max_engine_concurrency > 0 && s.num_running_queries < s.max_engine_concurrency {
        return Some(0);
    }
    if let Some(&(_, ms)) = s
        .queue_time_estimate_ms_by_priority
        .iter()
        .rfind(|(p, _)| *p == 0)
    {
        return Some(ms);
    }
    queue_ms(s.queued_input_size, s.last_mean_input_tps)
}

/// ceil(tokens / tps x 1000) ms; `None` when tps is not a valid rate.
pub fn queue_ms(tokens: u64, tps: f64) -> Option<u64> {
    if tokens == 0 {
        return Some(0);
    }
    if !(tps.is_finite() && tps > 0.0) {
        return None;
    }
    let ms = (tokens as f64 / tps * 1_000.0).ceil();
    (ms < u64::MAX as f64).then_some(ms as u64)
}

#[derive(Clone, Debug)]
pub struct Pylon {
    cfg: PylonConfig,
    input_phase: u64,
    output_phase: u64,
    prompt_work: u64,
    total_input: u64,
    last_mean: f64,
    max_tps: f64,
    /// (receive, first token, input) of the latest first tokens.
    window: VecDeque<(Micros, Micros, u64)>,
    /// Reused by the union computation.
    sorted: Vec<(Micros, Micros)>,
}

impl Pylon {
    pub fn new(cfg: PylonConfig) -> Self {
        Pylon {
            last_mean: cfg.initial_tps,
            max_tps: cfg.initial_tps,
            cfg,
            input_phase: 0,
            output_phase: 0,
            prompt_work: 0,
            total_input: 0,
            window: VecDeque::new(),
            sorted: Vec::new(),
        }
    }

    pub fn live(&self) -> u64 {
        self.input_phase + self.output_phase
    }

    pub fn last_mean_tps(&self) -> f64 {
        self.last_mean
    }

    /// Queue-mismatch admission, before the request is counted.
    pub fn admits(&self, expected_queue_ms: Option<u64>) -> bool {
        self.admits_with(expected_queue_ms, self.live())
    }

    /// [`Pylon::admits`] when the engine runs `engine_live` requests (its
    /// own and those of the Pylons it shares the engine with).
    pub fn admits_with(&self, expected_queue_ms: Option<u64>, engine_live: u64) -> bool {
        let (Some(m), Some(e)) = (self.cfg.mismatch, expected_queue_ms) else {
            return true;
        };
        let actual = if engine_live < self.cfg.slots {
            0
        } else {
            queue_ms(self.prompt_work, self.last_mean).unwrap_or(u64::MAX)
        };
        let tolerated = (e as f64 * m.tolerance).ceil();
        let tolerated = if tolerated >= u64::MAX as f64 {
            u64::MAX
        } else {
            tolerated as u64
        };
        actual <= e.saturating_add(m.min_delta_ms).max(tolerated)
    }

    /// An accepted request enters the input phase.
    pub fn accept(&mut self, input: u64) {
        self.input_phase += 1;
        self.prompt_work += input;
        self.total_input += input;
    }

    /// First token: input phase -> output phase, and a new TPS sample.
    pub fn first_token(&mut self, received: Micros, first_token: Micros, input: u64) {
        self.leave_input_phase(input);
        self.output_phase += 1;
        if let TpsMode::Window { window, floor_us } = self.cfg.mode {
            self.window.push_back((received, first_token, input));
            while self.window.len() > window.max(1) {
                self.window.pop_front();
            }
            let rate = self.window_rate(floor_us);
            self.last_mean = rate;
            self.max_tps = self.max_tps.max(rate);
        }
    }

    /// A request in the output phase completes (or is cancelled there).
    pub fn release_output(&mut self, input: u64) {
        debug_assert!(self.output_phase > 0 && self.total_input >= input);
        self.output_phase = self.output_phase.saturating_sub(1);
        self.total_input = self.total_input.saturating_sub(input);
    }

    /// A request cancelled before its first token.
    pub fn cancel_input(&mut self, input: u64) {
        self.leave_input_phase(input);
        self.total_input = self.total_input.saturating_sub(input);
    }

    fn leave_input_phase(&mut self, input: u64) {
        debug_assert!(self.input_phase > 0 && self.prompt_work >= input);
        self.input_phase = self.input_phase.saturating_sub(1);
        self.prompt_work = self.prompt_work.saturating_sub(input);
    }

    fn window_rate(&mut self, floor_us: Micros) -> f64 {
        self.sorted.clear();
        self.sorted
            .extend(self.window.iter().map(|&(a, b, _)| (a, b.max(a))));
        self.sorted.sort_unstable();
        let mut covered = 0;
        let mut current: Option<(Micros, Micros)> = None;
        for &(start, end) in &self.sorted {
            current = match current {
                Some((s, e)) if start <= e => Some((s, e.max(end))),
                Some((s, e)) => {
                    covered += e - s;
                    Some((start, end))
                }
                None => Some((start, end)),
            };
        }
        if let Some((s, e)) = current {
            covered += e - s;
        }
        let tokens: u64 = self.window.iter().map(|&(_, _, n)| n).sum();
        tokens as f64 * US_PER_S as f64 / covered.max(floor_us).max(1) as f64
    }

    pub fn report(&self) -> StatsReport {
        let max_input_tps = match self.cfg.published_max {
            PublishedMax::Constant => self.cfg.initial_tps,
            PublishedMax::RunningMax => self.max_tps,
        };
        StatsReport {
            last_mean_tps: self.last_mean,
            max_input_tps: Some(max_input_tps),
            input_phase: self.input_phase,
            output_phase: self.output_phase,
            prompt_work: self.prompt_work,
            total_input: self.total_input,
            slots: self.cfg.slots,
            queue_estimate_ms: if self.prompt_work > 0 {
                queue_ms(self.prompt_work, self.last_mean)
            } else {
                None
            },
            kv_capacity: 0,
            kv_used: 0,
            engine_running: None,
        }
    }

    pub fn is_idle(&self) -> bool {
        self.live() == 0 && self.prompt_work == 0 && self.total_input == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> PylonConfig {
        PylonConfig {
            initial_tps: 175_000.0,
            mode: TpsMode::Window {
                window: 8,
                floor_us: 10_000,
            },
            published_max: PublishedMax::Constant,
            slots: 25,
            mismatch: Some(Mismatch {
                min_delta_ms: 25,
                tolerance: 1.25,
            }),
        }
    }

    #[test]
    fn tps_is_tokens_over_the_union_of_intervals() {
        let mut p = Pylon::new(cfg());
        p.accept(1_000);
        p.accept(1_000);
        p.first_token(0, 1_000_000, 1_000);
        assert_eq!(p.last_mean_tps(), 1_000.0);
        // Two 1 s intervals overlapping by 0.5 s: 2 000 tokens over 1.5 s.
        p.first_token(500_000, 1_500_000, 1_000);
        assert!((p.last_mean_tps() - 2_000.0 / 1.5).abs() < 1e-9);
        assert_eq!(p.last_mean_tps().round(), 1_333.0);
        // The running max keeps the initial value (higher).
        assert_eq!(p.max_tps, 175_000.0);
    }

    #[test]
    fn tiny_intervals_hit_the_floor() {
        let mut p = Pylon::new(cfg());
        p.accept(6_661);
        p.first_token(0, 30, 6_661);
        assert_eq!(p.last_mean_tps(), 666_100.0);
        assert_eq!(p.max_tps, 666_100.0);
    }

    #[test]
    fn window_keeps_the_last_n() {
        let mut p = Pylon::new(PylonConfig {
            mode: TpsMode::Window {
                window: 2,
                floor_us: 1,
            },
            ..cfg()
        });
        for i in 0..3 {
            p.accept(100);
            p.first_token(i * 10_000_000, i * 10_000_000 + 1_000_000, 100);
        }
        // Two disjoint 1 s intervals, 200 tokens.
        assert_eq!(p.last_mean_tps(), 100.0);
    }

    #[test]
    fn admission_thresholds() {
        let mut p = Pylon::new(cfg());
        for _ in 0..25 {
            p.accept(7_000);
        }
        // Full engine: actual = ceil(175 000 / 175 000 x 1000) = 1 000 ms.
        assert!(!p.admits(Some(0)), "full engine, expected 0 -> reject");
        assert!(p.admits(Some(900)), "1000 <= max(925, 1125)");
        assert!(p.admits(Some(975)), "1000 <= 975 + 25");
        assert!(!p.admits(Some(790)), "1000 > max(815, 988)");
        assert!(p.admits(None), "no expected value is never rejected");
        let free = Pylon::new(cfg());
        assert!(free.admits(Some(0)));
    }

    #[test]
    fn report_fields() {
        let mut p = Pylon::new(cfg());
        assert_eq!(p.report().queue_estimate_ms, None);
        p.accept(6_661);
        p.accept(6_661);
        p.first_token(0, 1_000_000, 6_661);
        let r = p.report();
        assert_eq!((r.input_phase, r.output_phase), (1, 1));
        assert_eq!((r.prompt_work, r.total_input), (6_661, 13_322));
        assert_eq!(r.queue_estimate_ms, Some(1_000));
        assert_eq!(r.max_input_tps, Some(175_000.0));
        p.release_output(6_661);
        p.cancel_input(6_661);
        assert!(p.is_idle());
    }
}
