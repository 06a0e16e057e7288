//! The measured window against the workload (docs/simulator.md,
//! "Steady-state measurement" and "Cuts"): which rates a trace can be
//! replayed at (repetition stays within the simulator's bounds), and the
//! warnings that say when a run replays less than its input holds.

use super::{Prepared, ScenarioFile};
use crate::workload::trace::{Repeat, Trace};

/// Most requests one run plans (as for the synthetic workload).
pub const MAX_RUN_REQUESTS: u64 = 50_000_000;
use crate::workload::{MAX_BLOCK_IDS, MAX_BLOCK_REFS};

/// Why a trace cannot be replayed at `rate_rps` over `horizon_s`, if it
/// cannot.
pub fn trace_rate_problem(trace: &Trace, rate_rps: f64, horizon_s: f64) -> Option<String> {
    let r = trace.replay(rate_rps, horizon_s);
    if r.requests > MAX_RUN_REQUESTS {
        return Some(format!(
            "at {rate_rps:.1} RPS a run would plan {} requests, more than {MAX_RUN_REQUESTS}",
            r.requests
        ));
    }
    if trace.repeat() == Repeat::Fresh && r.repetitions > 1 {
        let ids = r.repetitions.saturating_mul(u64::from(trace.block_ids()));
        let refs = r.repetitions.saturating_mul(trace.block_refs() as u64);
        if ids > MAX_BLOCK_IDS || refs > MAX_BLOCK_REFS {
            return Some(format!(
                "at {rate_rps:.1} RPS the trace repeats {} times, and fresh ids for each repetition would exceed {MAX_BLOCK_IDS} block ids or {MAX_BLOCK_REFS} block references: use a shorter window, a lower rate or `\"repeat\": \"same\"`",
                r.repetitions
            ));
        }
    }
    None
}

/// Every rate of the file checked against the trace.
pub(super) fn check_trace_rates(
    f: &ScenarioFile,
    trace: &Trace,
    invalid: &mut dyn FnMut(&str, String),
) {
    let at = match &f.trace {
        Some(t) if !t.speedups.is_empty() => "trace.speedups",
        _ => "rates_rps",
    };
    for &rate in &f.rates_rps {
        if let Some(problem) = trace_rate_problem(trace, rate, f.warmup_s + f.measure_s) {
            invalid(at, problem);
        }
    }
}

impl Prepared {
    /// Warnings for every cut (docs/simulator.md, "Cuts"): what the runs
    /// replay of the input, in the user's words, one line each. `scenario`
    /// is the window the file asked for, before `--quick`.
    pub fn cut_warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        let (w, m) = (self.file.warmup_s, self.file.measure_s);
        if let Some((fw, fm)) = self.asked_window {
            if (fw, fm) != (w, m) {
                out.push(format!(
                    "--quick: {w} s warm-up + {m} s measured instead of the scenario's {fw} s + {fm} s, seed {} only",
                    self.file.seeds.first().copied().unwrap_or(1)
                ));
            }
        }
        let Some(trace) = &self.replayed else {
            return out;
        };
        if let Some(total) = trace.file_requests() {
            out.push(format!(
                "trace.max_requests: the trace holds {total} requests; only the first {} are replayed",
                trace.len()
            ));
        }
        let horizon = w + m;
        for &rate in &self.file.rates_rps {
            let r = trace.replay(rate, horizon);
            let span = trace.span_s() * trace.native_rps() / rate;
            if r.repetitions <= 1 && r.requests < trace.len() as u64 {
                out.push(format!(
                    "at {rate:.1} RPS the {w} s warm-up + {m} s window replays {} of the trace's {} requests (the trace lasts {span:.1} s at this rate)",
                    r.requests,
                    trace.len()
                ));
            } else if r.repetitions > 1 {
                let what = match trace.repeat() {
                    Repeat::Fresh => "each time with fresh block ids and keys, so repetition adds no reuse",
                    Repeat::Same => "each time with the same block ids and keys (`\"repeat\": \"same\"`), so later repetitions reuse earlier ones' prefixes",
                };
                out.push(format!(
                    "at {rate:.1} RPS the trace lasts {span:.1} s, shorter than the {w} s warm-up + {m} s window: it is replayed {} times ({} requests), {what}",
                    r.repetitions, r.requests
                ));
            }
        }
        out
    }
}
