//! `routex sim capacity` (docs/simulator.md, "Capacity at an SLO"): per
//! policy, the highest offered rate the fleet sustains, found by bisection
//! over the rate, once per seed.
//!
//! A rate is *sustained* by a run when its measured window is steady
//! ([`crate::measure::steady`]) and at least `attainment` of the window's requests
//! succeed with a TTFT within `ttft_ms`. The search assumes that a fleet
//! that sustains a rate sustains every lower one (as queueing does; a
//! policy whose attainment is not monotone in the rate is bracketed at one
//! of its crossings). Each seed searches independently, so the spread of
//! the answers over seeds is the search's noise.

use crate::kernel::time::{from_ms, Micros};
use crate::run::run;
use crate::scenario::Prepared;
use crate::sweep::pool::{run_chains, Chain};
use serde::Serialize;
use std::sync::atomic::AtomicBool;

/// What to search for.
#[derive(Clone, Debug, PartialEq)]
pub struct CapacitySpec {
    /// The TTFT bound of the SLO, ms.
    pub ttft_ms: f64,
    /// The share of the window's requests that must meet it (0..=1).
    pub attainment: f64,
    /// The bracket: rates below `lo` and above `hi` are not searched.
    pub lo_rps: f64,
    pub hi_rps: f64,
    /// Stop when hi / lo <= 1 + precision (a relative width).
    pub precision: f64,
    /// Indices into `Prepared::policies`.
    pub policies: Vec<usize>,
}

/// One run of the search.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Probe {
    pub rate_rps: f64,
    pub slo_attainment: f64,
    pub goodput_rps: f64,
    pub steady: bool,
    pub sustained: bool,
}

/// One seed's answer.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SeedCapacity {
    pub seed: u64,
    /// The highest sustained rate probed; `None` when even `lo` is not.
    pub capacity_rps: Option<f64>,
    /// The lowest rate probed that was not sustained; `None` when `hi` was.
    pub failed_at_rps: Option<f64>,
    pub probes: Vec<Probe>,
}

/// One policy's answer over the seeds.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PolicyCapacity {
    pub policy: String,
    pub seeds: Vec<SeedCapacity>,
    /// Median, min and max of the seeds' capacities (a seed below the
    /// bracket counts as 0); `None` when every seed is below it.
    pub median_rps: f64,
    pub min_rps: f64,
    pub max_rps: f64,
    /// Some seed sustained `hi`: the capacity is at least that.
    pub above_bracket: bool,
}

/// One run of `policy` at `rate` under `seed`: whether it sustains
/// `attainment` of its window's requests within `ttft_us`.
pub fn probe(
    p: &Prepared,
    policy: usize,
    rate: f64,
    seed: u64,
    ttft_us: Micros,
    attainment: f64,
) -> Probe {
    let mut settings = p.settings_for(&p.policies[policy]).into_owned();
    settings.ttft_slo_us = ttft_us;
    let m = run(&settings, &p.policies[policy].kind, rate, seed).metrics;
    Probe {
        rate_rps: rate,
        slo_attainment: m.slo_attainment,
        goodput_rps: m.goodput_rps,
        steady: m.steady,
        sustained: m.steady && m.slo_attainment >= attainment,
    }
}

/// Where one (policy, seed)'s bisection is.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Phase {
    /// `lo` is probed first: below it nothing is searched.
    Low,
    /// Then `hi`: sustained there, the capacity is at least `hi`.
    High,
    /// Then geometric midpoints between the highest sustained and the
    /// lowest failed rate, until they are within the precision.
    Narrow,
    Done,
}

/// The bisection of one (policy, seed) as a chain of runs
/// ([`crate::sweep::pool`]): each probe's rate follows from the ones before it.
struct Bisection {
    policy: usize,
    seed: u64,
    lo: f64,
    hi: f64,
    precision: f64,
    phase: Phase,
    probes: Vec<Probe>,
}

impl Bisection {
    fn new(spec: &CapacitySpec, policy: usize, seed: u64) -> Self {
        Bisection {
            policy,
            seed,
            lo: spec.lo_rps,
            hi: spec.hi_rps,
            precision: spec.precision,
            phase: Phase::Low,
            probes: Vec::new(),
        }
    }

    /// The answer so far; `None` when nothing was probed (stopped first).
    /// Stopped before `hi` was probed, the bracket is `[lo, hi]`.
    fn answer(self) -> Option<SeedCapacity> {
        if self.probes.is_empty() {
            return None;
        }
        let (capacity_rps, failed_at_rps) = if !self.probes[0].sustained {
            (None, Some(self.lo))
        } else if self.probes.get(1).is_some_and(|high| high.sustained) {
            (Some(self.hi), None)
        } else {
            (Some(self.lo), Some(self.hi))
        };
        Some(SeedCapacity {
            seed: self.seed,
            capacity_rps,
            failed_at_rps,
            probes: self.probes,
        })
    }
}

impl Chain for Bisection {
    type Job = (usize, f64, u64);
    type Outcome = Probe;

    fn next_job(&mut self) -> Option<Self::Job> {
        let rate = match self.phase {
            Phase::Low => self.lo,
            Phase::High => self.hi,
            Phase::Narrow if self.hi / self.lo > 1.0 + self.precision => (self.lo * self.hi).sqrt(),
            Phase::Narrow | Phase::Done => {
                self.phase = Phase::Done;
                return None;
            }
        };
        Some((self.policy, rate, self.seed))
    }

    fn record(&mut self, probe: Probe) {
        self.probes.push(probe);
        self.phase = match (self.phase, probe.sustained) {
            (Phase::Low, true) => Phase::High,
            (Phase::High, false) => Phase::Narrow,
            (Phase::Narrow, true) => {
                self.lo = probe.rate_rps;
                Phase::Narrow
            }
            (Phase::Narrow, false) => {
                self.hi = probe.rate_rps;
                Phase::Narrow
            }
            // Not sustained at `lo`, or sustained at `hi`: nothing to narrow.
            (Phase::Low | Phase::High | Phase::Done, _) => Phase::Done,
        };
    }
}

/// Searches every (policy, seed) of the spec on `jobs` threads; results
/// in policy order, seeds in the scenario's order, whatever the thread
/// count. The seeds' bisections share the threads probe by probe.
/// `progress(done, total)` counts finished searches; `stop` ends the
/// searches early (each returns its bracket so far; one that never
/// started is left out).
pub fn search(
    p: &Prepared,
    spec: &CapacitySpec,
    jobs: usize,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(usize, usize),
) -> Vec<PolicyCapacity> {
    let chains: Vec<Bisection> = spec
        .policies
        .iter()
        .flat_map(|&pol| {
            p.file
                .seeds
                .iter()
                .map(move |&s| Bisection::new(spec, pol, s))
        })
        .collect();
    let ttft_us = from_ms(spec.ttft_ms);
    let work = |&(policy, rate, seed): &(usize, f64, u64)| {
        probe(p, policy, rate, seed, ttft_us, spec.attainment)
    };
    let found: Vec<Option<SeedCapacity>> = run_chains(chains, jobs, stop, &work, progress)
        .into_iter()
        .map(Bisection::answer)
        .collect();
    let per_policy = p.file.seeds.len().max(1);
    spec.policies
        .iter()
        .enumerate()
        .map(|(k, &policy)| {
            let seeds: Vec<SeedCapacity> = found[k * per_policy..(k + 1) * per_policy]
                .iter()
                .flatten()
                .cloned()
                .collect();
            let values: Vec<f64> = seeds
                .iter()
                .map(|s| s.capacity_rps.unwrap_or(0.0))
                .collect();
            let (median_rps, min_rps, max_rps) = crate::report::output::median_min_max(&values);
            PolicyCapacity {
                policy: p.policies[policy].name.clone(),
                above_bracket: seeds
                    .iter()
                    .any(|s| s.failed_at_rps.is_none() && s.capacity_rps.is_some()),
                seeds,
                median_rps,
                min_rps,
                max_rps,
            }
        })
        .collect()
}

/// The printed table: one row per policy.
pub fn table(spec: &CapacitySpec, found: &[PolicyCapacity]) -> String {
    use std::fmt::Write as _;
    let mut s = format!(
        "capacity: the highest offered rate (RPS) sustained in steady state with {:.1} % of requests at TTFT <= {} ms\n",
        spec.attainment * 100.0,
        spec.ttft_ms
    );
    let _ = writeln!(
        s,
        "{:<18} {:>9} {:>17} {:>6} {:>7}  per seed",
        "policy", "capacity", "[min-max] RPS", "seeds", "probes"
    );
    for f in found {
        let per_seed: Vec<String> = f
            .seeds
            .iter()
            .map(|x| match (x.capacity_rps, x.failed_at_rps) {
                (None, _) => format!("<{}", spec.lo_rps),
                (Some(c), None) => format!(">={c:.1}"),
                (Some(c), Some(_)) => format!("{c:.1}"),
            })
            .collect();
        let probes: usize = f.seeds.iter().map(|x| x.probes.len()).sum();
        let median = if f.seeds.iter().all(|x| x.capacity_rps.is_none()) {
            format!("<{}", spec.lo_rps)
        } else if f.above_bracket {
            format!(">={:.1}", f.median_rps)
        } else {
            format!("{:.1}", f.median_rps)
        };
        let _ = writeln!(
            s,
            "{:<18} {:>9} {:>17} {:>6} {:>7}  {}",
            f.policy,
            median,
            format!("[{:.1}-{:.1}]", f.min_rps, f.max_rps),
            f.seeds.len(),
            probes,
            per_seed.join(" ")
        );
    }
    s
}
