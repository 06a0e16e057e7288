//! Validation of a parsed scenario (docs/simulator-model.md A10.1), one function per
//! section of the file. Every check reports against the key it is about.

use super::ScenarioFile;
use crate::workload::trace::{Trace, TraceSpec, FORMATS};
use crate::world::engine::{EngineParams, V1, V2, V3};
use routex::diag::Diagnostic;

use super::limits::{Err, MAX_BACKENDS, MAX_DELAY_MS, MAX_HORIZON_S, MAX_MS, MAX_TPS_WINDOW};
use crate::workload::MAX_BLOCK_IDS;

fn ms_at_most(err: &mut Err<'_>, key: &str, v: u64) {
    if v > MAX_MS {
        let name = key.rsplit('.').next().unwrap_or(key);
        err(
            key,
            format!("`{name}` must be at most {MAX_MS} ms, got {v}"),
        );
    }
}

fn positive(v: f64) -> bool {
    v.is_finite() && v > 0.0
}

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
        err(
            "topology.regions",
            "the topology needs at least one region".into(),
        );
    }
    if t.rtt_ms.len() != r || t.rtt_ms.iter().any(|row| row.len() != r) {
        err(
            "topology.rtt_ms",
            format!("`rtt_ms` must be a {r} x {r} matrix (one row and column per region)"),
        );
    }
    if t.rtt_ms
        .iter()
        .flatten()
        .chain([&t.intra_region_rtt_ms, &t.stats_relay_ms])
        .any(|v| !(v.is_finite() && (0.0..=MAX_DELAY_MS).contains(v)))
    {
        err(
            "topology.rtt_ms",
            format!("round-trip and relay times must be finite, in 0..={MAX_DELAY_MS} ms"),
        );
    }
    if let Some(i) = t
        .regions
        .iter()
        .position(|g| !(g.traffic_weight.is_finite() && g.traffic_weight >= 0.0))
    {
        err(
            &format!("topology.regions.{i}.traffic_weight"),
            "traffic weights must be finite and >= 0".into(),
        );
    }
    if !t
        .regions
        .iter()
        .any(|g| g.traffic_weight > 0.0 && g.routers > 0)
    {
        err(
            "topology.regions",
            "at least one region needs routers and a non-zero `traffic_weight`".into(),
        );
    }
    for (i, g) in t.regions.iter().enumerate() {
        let per = g.backends_per_cluster;
        if per == 0 || g.backends % per.max(1) != 0 {
            err(
                &format!("topology.regions.{i}.backends_per_cluster"),
                format!(
                    "`backends_per_cluster` must divide the region's `backends` ({}) into whole clusters",
                    g.backends
                ),
            );
        }
    }
    if t.regions.iter().map(|g| u64::from(g.backends)).sum::<u64>() == 0 {
        err(
            "topology.regions",
            "the topology needs at least one backend".into(),
        );
    }
    if !backends_resolvable(f)
        || t.regions.iter().map(|g| u64::from(g.routers)).sum::<u64>() > MAX_BACKENDS
    {
        err(
            "topology.regions",
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
            err("trace.speedups", "`speedups` must be finite and > 0".into());
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
    // The time series holds one bin per 10 s of the horizon.
    if horizon > MAX_HORIZON_S {
        err(
            if f.warmup_s > f.measure_s {
                "warmup_s"
            } else {
                "measure_s"
            },
            format!("`warmup_s` + `measure_s` must be at most {MAX_HORIZON_S} s (about 11.6 days)"),
        );
    }
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
    let blocks = f.trace.is_some()
        || f.conversations.is_some()
        || f.workload
            .as_ref()
            .is_some_and(|w| w.block_tokens.is_some());
    engine_params(&f.engine, blocks, &mut |field, message| {
        err(&format!("engine.{field}"), message);
    });
}

/// The rules of one engine profile (the fleet's, or a backend's with its
/// overrides applied); `err` gets the field's path inside the profile
/// (`slots`, `batched.max_num_seqs`). `blocks`: the workload has prefix
/// blocks.
pub(super) fn engine_params(e: &EngineParams, blocks: bool, err: &mut Err<'_>) {
    if ![V1, V2, V3].contains(&e.model.as_str()) {
        let hint = (e.model.len() <= 256)
            .then(|| routex::check::did_you_mean(&e.model, [V1, V2, V3]))
            .flatten()
            .map(|best| format!(" (did you mean \"{best}\"?)"))
            .unwrap_or_default();
        err(
            "model",
            format!(
                "engine model \"{}\" is not supported{hint}; use \"{V1}\", \"{V2}\" or \"{V3}\"",
                e.model
            ),
        );
    }
    if e.batched.is_some() && e.model != V3 {
        err(
            "batched",
            format!(
                "`batched` sets engine `{V3}`'s steps; this engine is `{}`",
                e.model
            ),
        );
    }
    if let Some(b) = &e.batched {
        batched(b, err);
    }
    if e.model == V2 && !blocks {
        err(
            "model",
            format!("engine `{V2}` caches prefix blocks: give the workload `block_tokens` or replay a trace"),
        );
    }
    if e.slots == 0 {
        err("slots", "`slots` must be > 0".into());
    }
    if !(e.prefill_tps.is_finite() && e.prefill_tps >= 1.0) {
        err(
            "prefill_tps",
            "`prefill_tps` must be finite and >= 1".into(),
        );
    }
    if !(1e-3..=1e3).contains(&e.backend_speed) {
        err(
            "backend_speed",
            "`backend_speed` must be in 0.001..=1000".into(),
        );
    }
    if !(e.decode_tps[0] >= 0.01
        && e.decode_tps[1].is_finite()
        && e.decode_tps[0] <= e.decode_tps[1])
    {
        err(
            "decode_tps",
            "`decode_tps` must be [min, max] with 0.01 <= min <= max".into(),
        );
    }
    if !(0.0..=MAX_DELAY_MS).contains(&e.ttft_base_ms) {
        err(
            "ttft_base_ms",
            format!("`ttft_base_ms` and `ttft_jitter_ms` must be in 0..={MAX_DELAY_MS}"),
        );
    } else if !(0.0..=MAX_DELAY_MS).contains(&e.ttft_jitter_ms) {
        err(
            "ttft_jitter_ms",
            format!("`ttft_base_ms` and `ttft_jitter_ms` must be in 0..={MAX_DELAY_MS}"),
        );
    }
}

/// Engine v3's workers, sequences, budget and step costs.
fn batched(b: &crate::world::engine::batched::BatchedParams, err: &mut Err<'_>) {
    if !(1..=1_024).contains(&b.num_gpu_workers) {
        err(
            "batched.num_gpu_workers",
            "`num_gpu_workers` must be in 1..=1024".into(),
        );
    }
    if !(1..=100_000).contains(&b.max_num_seqs) {
        err(
            "batched.max_num_seqs",
            "`max_num_seqs` must be in 1..=100000".into(),
        );
    }
    if !(1..=100_000_000).contains(&b.max_batched_tokens) {
        err(
            "batched.max_batched_tokens",
            "`max_batched_tokens` must be in 1..=100000000".into(),
        );
    }
    let costs = [
        b.step_fixed_ms,
        b.step_decode_ms_per_seq,
        b.step_prefill_ms_per_token,
    ];
    if costs.iter().any(|c| !(0.0..=MAX_DELAY_MS).contains(c)) || b.step_fixed_ms <= 0.0 {
        err(
            "batched.step_fixed_ms",
            format!("step costs must be in 0..={MAX_DELAY_MS} ms, and `step_fixed_ms` > 0"),
        );
    }
}

/// Heartbeat, input TPS and queue-mismatch admission.
fn pylon(f: &ScenarioFile, err: &mut Err<'_>) {
    let p = &f.pylon;
    if p.heartbeat_ms == 0 {
        err("pylon.heartbeat_ms", "`heartbeat_ms` must be > 0".into());
    }
    ms_at_most(err, "pylon.heartbeat_ms", p.heartbeat_ms);
    if let Some(c) = p.coalesce_ms {
        ms_at_most(err, "pylon.coalesce_ms", c);
    }
    ms_at_most(err, "pylon.mismatch.min_delta_ms", p.mismatch.min_delta_ms);
    if !positive(p.input_tps.initial)
        || !(1..=MAX_TPS_WINDOW).contains(&p.input_tps.window)
        || !(0.0..=MAX_DELAY_MS).contains(&p.input_tps.floor_ms)
    {
        err(
            "pylon.input_tps",
            format!("`input_tps` needs `initial` > 0, `window` in 1..={MAX_TPS_WINDOW} and `floor_ms` in 0..={MAX_DELAY_MS}"),
        );
    }
    if p.input_tps.per_gpu_worker && f.engine.model != crate::world::engine::V3 {
        err(
            "pylon.input_tps.per_gpu_worker",
            format!(
                "`per_gpu_worker` needs the batched engine (`engine.model` \"{}\"): only it has GPU workers",
                crate::world::engine::V3
            ),
        );
    }
    if !(p.mismatch.tolerance.is_finite() && p.mismatch.tolerance >= 0.0) {
        err(
            "pylon.mismatch.tolerance",
            "`tolerance` must be finite and >= 0".into(),
        );
    }
}

/// The routing loop and the client's limits.
fn router_and_client(f: &ScenarioFile, err: &mut Err<'_>) {
    let [lo, hi] = f.router.retry_sleep_ms;
    if lo > hi || hi == 0 {
        err(
            "router.retry_sleep_ms",
            "`retry_sleep_ms` must be [min, max] with min <= max and max > 0".into(),
        );
    }
    ms_at_most(err, "router.retry_sleep_ms", hi);
    if f.router.recheck_ms == 0 {
        err("router.recheck_ms", "`recheck_ms` must be > 0".into());
    }
    ms_at_most(err, "router.recheck_ms", f.router.recheck_ms);
    if f.client.timeout_ms == 0 {
        err("client.timeout_ms", "`timeout_ms` must be > 0".into());
    }
    let c = &f.client;
    for (key, v) in [
        ("client.request_slo_ms", c.request_slo_ms),
        ("client.max_wait_ms", c.max_wait_ms),
        ("client.timeout_ms", c.timeout_ms),
        ("client.ttft_slo_ms", c.ttft_slo_ms),
    ] {
        ms_at_most(err, key, v);
    }
    if let Some(store) = &c.last_cluster_store {
        ms_at_most(err, "client.last_cluster_store.ttl_ms", store.ttl_ms);
        if store.ttl_ms == 0 {
            err(
                "client.last_cluster_store.ttl_ms",
                "`ttl_ms` must be > 0 (an entry would expire as it is written)".into(),
            );
        }
        if store.max_sessions == Some(0) {
            err(
                "client.last_cluster_store.max_sessions",
                "`max_sessions` must be > 0 (omit it for 65536)".into(),
            );
        }
    }
    if c.max_in_flight == Some(0) {
        err(
            "client.max_in_flight",
            "`max_in_flight` must be > 0 (omit it for an open loop)".into(),
        );
    }
}

/// The synthetic workload's keys and sizes, or the trace's settings.
fn workload(f: &ScenarioFile, err: &mut Err<'_>) {
    if let Some(c) = &f.conversations {
        if f.workload.is_some() || f.trace.is_some() {
            return err(
                "conversations",
                "give one of `workload`, `trace` and `conversations`".into(),
            );
        }
        if f.warm_start {
            err(
                "warm_start",
                "`warm_start` pre-fills the caches with the plan's keys, and a conversation's key is new when it starts: there is nothing to pre-fill (remove it, or warm the fleet with `warmup_s`)".into(),
            );
        }
        return super::conversations::check(f, c, err);
    }
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
    if let Some((inner, message)) = w.input_tokens.problem() {
        err(&format!("workload.input_tokens.{inner}"), message);
    }
    let [in_lo, in_hi] = w.input_bounds();
    match w.block_tokens {
        Some(0) => err("workload.block_tokens", "`block_tokens` must be > 0".into()),
        Some(bt) if u64::from(w.keys).saturating_mul(in_hi.div_ceil(bt)) > MAX_BLOCK_IDS => {
            err(
                "workload.block_tokens",
                format!("the keys' block chains would exceed {MAX_BLOCK_IDS} block ids: use larger blocks or fewer keys"),
            )
        }
        _ => {}
    }
    if w.keys == 0 || in_lo > in_hi || !(w.zipf_s.is_finite() && w.zipf_s >= 0.0) {
        err("workload", "`workload` needs `keys` > 0, `zipf_s` >= 0 and `input_tokens` [min, max] with min <= max".into());
    }
    if let Some((inner, message)) = w.output_tokens.problem() {
        err(&format!("workload.output_tokens.{inner}"), message);
    }
    let [out_lo, out_hi] = w.output_bounds();
    if out_lo > out_hi {
        err(
            "workload.output_tokens",
            "`output_tokens` [min, max] needs min <= max".into(),
        );
    }
    // Bounds that keep a run's memory and arithmetic finite.
    if w.keys > 10_000_000 || in_hi > 1_000_000_000 || out_hi > 1_000_000 {
        err(
            "workload",
            "`workload` is too large: at most 10 000 000 keys, 10^9 input and 10^6 output tokens"
                .into(),
        );
    }
    super::arrival::check(w, err);
    super::classes::check(w, err);
}

/// The trace's settings (its lines are checked as it is read).
fn trace(t: &TraceSpec, err: &mut Err<'_>) {
    if !FORMATS.contains(&t.format.as_str()) {
        let hint = (t.format.len() <= 256)
            .then(|| routex::check::did_you_mean(&t.format, FORMATS.iter().copied()))
            .flatten()
            .map(|best| format!(" (did you mean \"{best}\"?)"))
            .unwrap_or_default();
        err(
            "trace.format",
            format!(
                "trace format \"{}\" is not supported{hint}; use one of \"{}\"",
                t.format,
                FORMATS.join("\", \"")
            ),
        );
    }
    if t.format != "mooncake" && t.affinity_key.is_some() {
        err(
            "trace.affinity_key",
            "`affinity_key` applies to Mooncake traces: a session log's key is its session id"
                .into(),
        );
    }
    if t.block_tokens == 0 || t.block_tokens > 1_000_000 {
        err(
            "trace.block_tokens",
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
            "trace.path",
            "the trace spans no time: every request has the same timestamp".into(),
        );
    }
    if let Some(t) = &f.trace {
        if !t.speedups.is_empty() {
            f.rates_rps = t.speedups.iter().map(|s| s * native).collect();
        }
    }
    // A trace shorter than warm-up + window is repeated (window.rs).
}

/// How the fleet's cluster and backend ids are made, for a name that is
/// none of them and close to none.
pub(super) const ID_PATTERN: &str =
    "cluster and backend ids are `<region>-b<i>` (and `<region>-b<i>-p<j>` in a cluster of several backends)";

/// `d`, about a name that is none of `names` (`listed`, as in "the
/// topology's regions"), with help: the closest name, else the list when
/// it is short, else `otherwise`.
pub(super) fn unknown_name_help(
    d: Diagnostic,
    name: &str,
    names: &[&str],
    listed: &str,
    otherwise: &str,
) -> Diagnostic {
    let best = (name.len() <= 256)
        .then(|| routex::check::did_you_mean(name, names.iter().copied()))
        .flatten();
    match best {
        Some(best) => d
            .with_help(format!("did you mean `{best}`?"))
            .with_suggestion(format!("\"{best}\"")),
        None if names.len() <= 8 => d.with_help(format!("{listed}: {}", names.join(", "))),
        None => d.with_help(otherwise.to_string()),
    }
}

/// Whether the fleet has few enough backends to resolve its topology
/// (`numbers` reports one that has not).
pub(super) fn backends_resolvable(f: &ScenarioFile) -> bool {
    let backends: u64 = f
        .topology
        .regions
        .iter()
        .map(|r| u64::from(r.backends))
        .sum();
    backends <= MAX_BACKENDS
}
