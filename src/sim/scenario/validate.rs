//! Validation of a parsed scenario (docs/simulator-model.md A10.1), one function per
//! section of the file. Every check reports against the key it is about.

use super::ScenarioFile;
use crate::sim::engine::{V1, V2};

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
    if f.rates_rps.is_empty() || f.rates_rps.iter().any(|v| !(v.is_finite() && *v > 0.0)) {
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
    if f.rates_rps.iter().any(|r| r * horizon > 50_000_000.0) {
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
    if e.model == V2 && f.workload.block_tokens.is_none() {
        err(
            "model",
            format!("engine `{V2}` caches prefix blocks: give the workload `block_tokens`"),
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

/// The synthetic workload's keys and sizes.
fn workload(f: &ScenarioFile, err: &mut Err<'_>) {
    let w = &f.workload;
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
