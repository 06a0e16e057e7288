//! The checks of `workload.arrival` and `workload.hot_set`
//! (docs/simulator.md, "Arrival laws and key popularity"): each law takes
//! its own parameters and no other law's, so a parameter given to the
//! wrong law is an error rather than silently unused.

use super::limits::Err;
use crate::workload::arrival::{ArrivalSpec, HotSetSpec, Law};
use crate::workload::WorkloadSpec;

/// The greatest `burst_factor` and `steps`: beyond them a phase or a step
/// is shorter than anything a run can resolve.
pub const MAX_BURST_FACTOR: f64 = 1_000.0;
pub const MAX_STEPS: u32 = 1_000;

/// Reports every problem of the workload's arrival law and hot set.
pub(super) fn check(w: &WorkloadSpec, err: &mut Err<'_>) {
    if let Some(a) = &w.arrival {
        arrival(a, err);
    }
    if let Some(h) = &w.hot_set {
        hot_set(h, w.zipf_s, err);
    }
}

fn arrival(a: &ArrivalSpec, err: &mut Err<'_>) {
    let takes = |name: &str| match name {
        "burst_factor" | "period_requests" => a.law == Law::Bursty,
        _ => a.law == Law::StairStep,
    };
    let given = [
        ("burst_factor", a.burst_factor.is_some()),
        ("period_requests", a.period_requests.is_some()),
        ("steps", a.steps.is_some()),
        ("start_fraction", a.start_fraction.is_some()),
    ];
    for (name, set) in given {
        if set && !takes(name) {
            let owner = if matches!(name, "burst_factor" | "period_requests") {
                "bursty"
            } else {
                "stair_step"
            };
            err(
                &format!("workload.arrival.{name}"),
                format!("`{name}` applies to the law `{owner}` only"),
            );
        }
    }
    match a.law {
        Law::Poisson | Law::Constant => {}
        Law::Bursty => {
            match a.burst_factor {
                None => err(
                    "workload.arrival",
                    "the law `bursty` needs `burst_factor` (the burst's rate over the quiet phase's)"
                        .into(),
                ),
                Some(f) if !(1.0..=MAX_BURST_FACTOR).contains(&f) => err(
                    "workload.arrival.burst_factor",
                    format!("`burst_factor` must be from 1 to {MAX_BURST_FACTOR}"),
                ),
                Some(_) => {}
            }
            match a.period_requests {
                None => err(
                    "workload.arrival",
                    "the law `bursty` needs `period_requests` (requests per phase)".into(),
                ),
                Some(0) => err(
                    "workload.arrival.period_requests",
                    "`period_requests` must be > 0".into(),
                ),
                Some(_) => {}
            }
        }
        Law::StairStep => {
            match a.steps {
                None => err(
                    "workload.arrival",
                    "the law `stair_step` needs `steps` (how many rates)".into(),
                ),
                Some(s) if s == 0 || s > MAX_STEPS => err(
                    "workload.arrival.steps",
                    format!("`steps` must be from 1 to {MAX_STEPS}"),
                ),
                Some(_) => {}
            }
            match a.start_fraction {
                None => err(
                    "workload.arrival",
                    "the law `stair_step` needs `start_fraction` (the first step's share of the rate)"
                        .into(),
                ),
                Some(f) if !(0.0..=1.0).contains(&f) => err(
                    "workload.arrival.start_fraction",
                    "`start_fraction` must be from 0 to 1".into(),
                ),
                Some(_) => {}
            }
        }
    }
}

fn hot_set(h: &HotSetSpec, zipf_s: f64, err: &mut Err<'_>) {
    if !(h.fraction > 0.0 && h.fraction <= 1.0) {
        err(
            "workload.hot_set.fraction",
            "`fraction` (the hot keys' share of the keys) must be above 0 and at most 1".into(),
        );
    }
    if !(0.0..=1.0).contains(&h.share) {
        err(
            "workload.hot_set.share",
            "`share` (the requests sent to the hot keys) must be from 0 to 1".into(),
        );
    }
    if zipf_s != 0.0 {
        err(
            "workload.zipf_s",
            "`hot_set` replaces the Zipf law: set `zipf_s` to 0".into(),
        );
    }
}
