//! `routex sim capacity` (docs/simulator.md, "Capacity at an SLO"): per
//! policy, the highest offered rate the fleet sustains, found by bisection
//! over the rate, once per seed.
//!
//! A rate is *sustained* by a run when its measured window is steady
//! ([`crate::steady`]) and at least `attainment` of the window's requests
//! succeed with a TTFT within `ttft_ms`. The search assumes that a fleet
//! that sustains a rate sustains every lower one (as queueing does; a
//! policy whose attainment is not monotone in the rate is bracketed at one
//! of its crossings). Each seed searches independently, so the spread of
//! the answers over seeds is the search's noise.

use super::run::run;
use super::scenario::Prepared;
use super::time::{from_ms, Micros};
use serde::Serialize;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Mutex};

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
    let mut settings = p.settings.clone();
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

/// The bisection of one (policy, seed): geometric midpoints between the
/// highest sustained and the lowest failed rate.
pub fn search_one(
    p: &Prepared,
    spec: &CapacitySpec,
    policy: usize,
    seed: u64,
    stop: &AtomicBool,
) -> SeedCapacity {
    let ttft_us = from_ms(spec.ttft_ms);
    let at = |rate: f64| probe(p, policy, rate, seed, ttft_us, spec.attainment);
    let mut probes = Vec::new();
    let mut out = SeedCapacity {
        seed,
        capacity_rps: None,
        failed_at_rps: None,
        probes: Vec::new(),
    };
    let low = at(spec.lo_rps);
    probes.push(low);
    if !low.sustained {
        out.failed_at_rps = Some(spec.lo_rps);
        out.probes = probes;
        return out;
    }
    let high = at(spec.hi_rps);
    probes.push(high);
    let (mut lo, mut hi) = (spec.lo_rps, spec.hi_rps);
    if high.sustained {
        out.capacity_rps = Some(hi);
        out.probes = probes;
        return out;
    }
    while hi / lo > 1.0 + spec.precision && !stop.load(Ordering::Relaxed) {
        let mid = (lo * hi).sqrt();
        let pr = at(mid);
        probes.push(pr);
        if pr.sustained {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    out.capacity_rps = Some(lo);
    out.failed_at_rps = Some(hi);
    out.probes = probes;
    out
}

/// Searches every (policy, seed) of the spec on `jobs` threads; results
/// in policy order, seeds in the scenario's order, whatever the thread
/// count. `progress(done, total)` counts finished searches; `stop` ends
/// the searches early (each returns its bracket so far).
pub fn search(
    p: &Prepared,
    spec: &CapacitySpec,
    jobs: usize,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(usize, usize),
) -> Vec<PolicyCapacity> {
    let tasks: Vec<(usize, u64)> = spec
        .policies
        .iter()
        .flat_map(|&pol| p.file.seeds.iter().map(move |&s| (pol, s)))
        .collect();
    let total = tasks.len();
    let next = AtomicUsize::new(0);
    let slots: Mutex<Vec<Option<SeedCapacity>>> = Mutex::new(vec![None; total]);
    let (tx, rx) = mpsc::channel::<()>();
    std::thread::scope(|scope| {
        for _ in 0..jobs.clamp(1, total.max(1)) {
            let tx = tx.clone();
            let (next, slots, tasks) = (&next, &slots, &tasks);
            scope.spawn(move || loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(&(policy, seed)) = tasks.get(i) else {
                    break;
                };
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                let found = search_one(p, spec, policy, seed, stop);
                if let Ok(mut s) = slots.lock() {
                    s[i] = Some(found);
                }
                let _ = tx.send(());
            });
        }
        drop(tx);
        let mut done = 0;
        while rx.recv().is_ok() {
            done += 1;
            progress(done, total);
        }
    });
    let found = slots.into_inner().unwrap_or_default();
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
            let (median_rps, min_rps, max_rps) = crate::output::median_min_max(&values);
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
