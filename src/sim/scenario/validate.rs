//! Validation of a parsed scenario (docs/simulator-model.md A10.1), one function per
//! section of the file. Every check reports against the key it is about.

use super::ScenarioFile;
use crate::sim::engine::{V1, V2};
use crate::sim::workload::trace::{Trace, TraceSpec};

/// The most distinct prefix blocks a workload may have: each engine v2
/// cache indexes them with one `u32` per id.
pub const MAX_BLOCK_IDS: u64 = 1 << 24;

fn positive(v: f64) -> bool {
    v.is_finite() && v > 0.0
}

/// Reports one invalid value at the named key.
pub(super) type Err<'e> = dyn FnMut(&str, String) + 'e;

/// Every numeric and structural rule; each problem goes through `err`.
pub(super) fn numbers(f: &ScenarioFile, err: &mut Err<'_>) {
    topology(f, err);
    runs(f, err);
    engine(f, err);
    pylon(f, err);
    router_and_client(f, err);
    workload(f, err);
}

/// Regions, RTTs, traffic weights and the fleet's size.
fn topology(f: &ScenarioFile, err: &mut Err<'_>) {
    let t = &f.topology;
    let r = t.regions.len();
    if r == 0 {
        err("regions", "the topology needs at least one region".into());
    }
    if t.rtt_ms.len() != r || t.rtt_ms.iter().any(|row| row.len() != r) {
        err(
            "rtt_ms",
            format!("`rtt_ms` must be a {r} x {r} matrix (one row and column per region)"),
        );
    }
    if t.rtt_ms
        .iter()
        .flatten()
        .chain([&t.intra_region_rtt_ms, &t.stats_relay_ms])
        .any(|v| !(v.is_finite() && *v >= 0.0))
    {
        err("rtt_ms", "round-trip times must be finite and >= 0".into());
    }
    if t.regions
        .iter()
        .any(|g| !(g.traffic_weight.is_finite() && g.traffic_weight >= 0.0))
    {
        err(
            "traffic_weight",
            "traffic weights must be finite and >= 0".into(),
        );
    }
    if !t
        .regions
        .iter()
        .any(|g| g.traffic_weight > 0.0 && g.routers > 0)
    {
        err(
            "regions",
            "at least one region needs routers and a non-zero `traffic_weight`".into(),
        );
    }
    if t.regions.iter().map(|g| g.backends).sum::<u32>() == 0 {
        err("regions", "the topology needs at least one backend".into());
    }
    if t.regions.iter().map(|g| u64::from(g.backends)).sum::<u64>() > 10_000
        || t.regions.iter().map(|g| u64::from(g.routers)).sum::<u64>() > 10_000
    {
        err(
            "regions",
            "at most 10 000 backends and 10 000 routers".into(),
        );
    }
}

/// Seeds, rates, the measurement window and the policies.
fn runs(f: &ScenarioFile, err: &mut Err<'_>) {
    if f.seeds.is_empty() {
        err("seeds", "`seeds` must not be empty".into());
    }
    let speedups = f.trace.as_ref().map_or(&[][..], |t| &t.speedups[..]);
    if !speedups.is_empty() {
        if !f.rates_rps.is_empty() {
            err(
                "rates_rps",
                "give `rates_rps` or `trace.speedups`, not both".into(),
            );
        }
        if speedups.iter().any(|v| !positive(*v)) {
            err("speedups", "`speedups` must be finite and > 0".into());
        }
    } else if f.rates_rps.is_empty() || f.rates_rps.iter().any(|v| !positive(*v)) {
        err(
            "rates_rps",
            "`rates_rps` must be a non-empty list of rates > 0".into(),
        );
    }
    if !(f.warmup_s.is_finite() && f.warmup_s >= 0.0) {
        err("warmup_s", "`warmup_s` must be finite and >= 0".into());
    }
    if !(f.measure_s.is_finite() && f.measure_s > 0.0) {
        err("measure_s", "`measure_s` must be finite and > 0".into());
    }
    let horizon = f.warmup_s + f.measure_s;
    // A trace's requests are bounded by the trace itself.
    if f.trace.is_none() && f.rates_rps.iter().any(|r| r * horizon > 50_000_000.0) {
        err(
            "rates_rps",
            "a run would plan more than 50 million requests (rate x (warmup_s + measure_s))".into(),
        );
    }
    if f.policies.is_empty() {
        err(
            "policies",
            "`policies` must name at least one policy".into(),
        );
    }
}

/// The engine profile.
fn engine(f: &ScenarioFile, err: &mut Err<'_>) {
    let e = &f.engine;
    if e.model != V1 && e.model != V2 {
        err(
            "model",
            format!(
                "engine model `{}` is not supported; use \"{V1}\" or \"{V2}\"",
                e.model
            ),
        );
    }
    let blocks = f.trace.is_some()
        || f.workload
            .as_ref()
            .is_some_and(|w| w.block_tokens.is_some());
    if e.model == V2 && !blocks {
        err(
            "model",
            format!("engine `{V2}` caches prefix blocks: give the workload `block_tokens` or replay a trace"),
        );
    }
    if e.slots == 0 {
        err("slots", "`slots` must be > 0".into());
    }
    if !positive(e.prefill_tps) || !positive(e.backend_speed) {
        err(
            "prefill_tps",
            "`prefill_tps` and `backend_speed` must be finite and > 0".into(),
        );
    }
    if !(positive(e.decode_tps[0])
        && positive(e.decode_tps[1])
        && e.decode_tps[0] <= e.decode_tps[1])
    {
        err(
            "decode_tps",
            "`decode_tps` must be [min, max] with 0 < min <= max".into(),
        );
    }
    if !(e.ttft_base_ms.is_finite()
        && e.ttft_base_ms >= 0.0
        && e.ttft_jitter_ms.is_finite()
        && e.ttft_jitter_ms >= 0.0)
    {
        err(
            "ttft_base_ms",
            "`ttft_base_ms` and `ttft_jitter_ms` must be finite and >= 0".into(),
        );
    }
}

/// Heartbeat, input TPS and queue-mismatch admission.
fn pylon(f: &ScenarioFile, err: &mut Err<'_>) {
    let p = &f.pylon;
    if p.heartbeat_ms == 0 {
        err("heartbeat_ms", "`heartbeat_ms` must be > 0".into());
    }
    if !positive(p.input_tps.initial)
        || p.input_tps.window == 0
        || !(p.input_tps.floor_ms.is_finite() && p.input_tps.floor_ms >= 0.0)
    {
        err(
            "input_tps",
            "`input_tps` needs `initial` > 0, `window` >= 1 and `floor_ms` >= 0".into(),
        );
    }
    if !(p.mismatch.tolerance.is_finite() && p.mismatch.tolerance >= 0.0) {
        err("tolerance", "`tolerance` must be finite and >= 0".into());
    }
}

/// The routing loop and the client's limits.
fn router_and_client(f: &ScenarioFile, err: &mut Err<'_>) {
    let [lo, hi] = f.router.retry_sleep_ms;
    if lo > hi || hi == 0 {
        err(
            "retry_sleep_ms",
            "`retry_sleep_ms` must be [min, max] with min <= max and max > 0".into(),
        );
    }
    if f.router.recheck_ms == 0 {
        err("recheck_ms", "`recheck_ms` must be > 0".into());
    }
    if f.client.timeout_ms == 0 {
        err("timeout_ms", "`timeout_ms` must be > 0".into());
    }
}

/// The synthetic workload's keys and sizes, or the trace's settings.
fn workload(f: &ScenarioFile, err: &mut Err<'_>) {
    let w = match (&f.workload, &f.trace) {
        (Some(w), None) => w,
        (None, Some(t)) => return trace(t, err),
        (Some(_), Some(_)) => {
            return err("trace", "give `workload` or `trace`, not both".into());
        }
        (None, None) => {
            return err(
                "workload",
                "the scenario needs a `workload` or a `trace`".into(),
            )
        }
    };
    match w.block_tokens {
        Some(0) => err("block_tokens", "`block_tokens` must be > 0".into()),
        Some(bt) if u64::from(w.keys).saturating_mul(w.input_tokens[1].div_ceil(bt)) > MAX_BLOCK_IDS => {
            err(
                "block_tokens",
                format!("the keys' block chains would exceed {MAX_BLOCK_IDS} block ids: use larger blocks or fewer keys"),
            )
        }
        _ => {}
    }
    if w.keys == 0
        || w.input_tokens[0] > w.input_tokens[1]
        || !(w.zipf_s.is_finite() && w.zipf_s >= 0.0)
    {
        err("workload", "`workload` needs `keys` > 0, `zipf_s` >= 0 and `input_tokens` [min, max] with min <= max".into());
    }
    // Bounds that keep a run's memory and arithmetic finite.
    if w.keys > 10_000_000 || w.input_tokens[1] > 1_000_000_000 || w.output_tokens > 1_000_000 {
        err(
            "workload",
            "`workload` is too large: at most 10 000 000 keys, 10^9 input and 10^6 output tokens"
                .into(),
        );
    }
}

/// The trace's settings (its lines are checked as it is read).
fn trace(t: &TraceSpec, err: &mut Err<'_>) {
    if t.format != "mooncake" {
        err(
            "format",
            format!(
                "trace format `{}` is not supported; use \"mooncake\"",
                t.format
            ),
        );
    }
    if t.block_tokens == 0 || t.block_tokens > 1_000_000 {
        err(
            "block_tokens",
            "`block_tokens` must be in 1..=1000000".into(),
        );
    }
}

/// Once the trace is read: `speedups` become the offered rates, and every
/// run must leave time to measure after the warmup.
pub(super) fn trace_window(f: &mut ScenarioFile, trace: &Trace, err: &mut Err<'_>) {
    let native = trace.native_rps();
    if !positive(native) {
        return err(
            "path",
            "the trace spans no time: every request has the same timestamp".into(),
        );
    }
    if let Some(t) = &f.trace {
        if !t.speedups.is_empty() {
            f.rates_rps = t.speedups.iter().map(|s| s * native).collect();
        }
    }
    for &rate in &f.rates_rps {
        let span = trace.span_s() * native / rate;
        if span <= f.warmup_s {
            err(
                "warmup_s",
                format!(
                    "at {rate:.3} RPS (speed-up {:.3}) the trace lasts {span:.1} s, not past the {} s warmup",
                    rate / native,
                    f.warmup_s
                ),
            );
        }
    }
}
