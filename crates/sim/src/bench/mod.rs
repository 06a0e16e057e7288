//! stargate-bench scenario files in virtual time (docs/simulator.md,
//! "stargate-bench files"): [`load`] reads the YAML format (every key
//! checked, unknown ones with a did-you-mean), [`run`] runs every algorithm
//! of the file on the same requests with the engine of stargate-bench's mock
//! backends, and [`scores`] computes stargate-bench's scores for each.
//!
//! The mapping is one region of `stargates.count` routers (taking requests
//! in turn) and the file's clusters, each with its pylons as backends: the
//! routers' candidate views aggregate them by stargate's rules. A cluster's
//! pylons share one mock engine with the slots and KV capacity of its
//! pylons together; each pylon's Pylon registers with its own
//! `registration.last_mean_input_tps` and keeps it (benchmark mode),
//! reports the shared engine's running requests and slots, publishes every
//! 100 ms, and runs queue-mismatch admission unless the algorithm turns it
//! off. The client keeps at most `max_concurrency` requests in flight.

pub mod format;
pub mod plan;
pub mod report;
pub mod scores;

use crate::kernel::time::US_PER_MS;
use crate::routers::park::WaitMode;
use crate::routers::policy::PolicyKind;
use crate::run::{self, RunResult, SimSettings};
use crate::world::engine::bench_mock::MockParams;
use crate::world::engine::EngineParams;
use crate::world::fleet::{BackendProfile, Fault, FaultAction, Trigger};
use crate::world::pylon::{Mismatch, PublishedMax, PylonConfig, TpsMode};
use crate::world::topology::{RegionSpec, Topology, TopologySpec};
use format::{BenchFile, Locator, Profile, KINDS};
use plan::{BenchRequest, BenchWorkload};
use routex::diag::{Code, Diagnostic, Report, Span};
use std::sync::Arc;

/// A loaded stargate-bench file, ready to run.
#[derive(Clone, Debug)]
pub struct Bench {
    pub file: BenchFile,
    /// One entry per algorithm of the file, in its order.
    pub algorithms: Vec<BenchAlgorithm>,
    /// Warnings (errors make [`load`] fail).
    pub warnings: Report,
    /// Cluster ids, in order.
    pub clusters: Vec<String>,
    /// Each cluster's slots (its capacity for the balance score).
    pub cluster_slots: Vec<u64>,
}

/// One algorithm of the file.
#[derive(Clone, Debug)]
pub struct BenchAlgorithm {
    pub name: String,
    pub policy: PolicyKind,
    /// Queue-mismatch admission of this algorithm's Pylons.
    pub admission: bool,
    pub settings: SimSettings,
}

/// The backends' profiles in order (the default `profile` for backends
/// past the listed counts).
fn backend_profiles(f: &BenchFile) -> Vec<&Profile> {
    let mut out: Vec<&Profile> = f
        .backends
        .profiles
        .iter()
        .flat_map(|p| std::iter::repeat_n(&p.profile, p.count as usize))
        .take(f.backends.count as usize)
        .collect();
    while out.len() < f.backends.count as usize {
        out.push(&f.backends.profile);
    }
    out
}

/// Reads and checks a stargate-bench file; `Err` holds every error.
pub fn load(source_name: &str, text: &str) -> Result<Bench, Report> {
    let mut report = Report::new(source_name, text);
    let locate = Locator::new(text);
    let value: yaml_serde::Value = match yaml_serde::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            report
                .diagnostics
                .push(yaml_error(text, &e, Code::InvalidJson));
            return Err(report);
        }
    };
    report
        .diagnostics
        .extend(format::unknown_keys(&value, &locate));
    let file: BenchFile = match yaml_serde::from_value(value) {
        Ok(f) => f,
        Err(e) => {
            let message = e.to_string();
            let code = if message.contains("missing field") {
                Code::MissingField
            } else if message.contains("invalid type") {
                Code::InvalidType
            } else {
                Code::InvalidValue
            };
            let span = message
                .split('`')
                .nth(1)
                .map(|k| locate.key(k, 0))
                .unwrap_or_default();
            report
                .diagnostics
                .push(Diagnostic::new(code, span, message));
            return Err(report);
        }
    };
    let mut invalid = |path: &str, message: String| {
        report.diagnostics.push(Diagnostic::new(
            Code::InvalidValue,
            locate.path(path),
            message,
        ));
    };
    validate(&file, &mut invalid);
    let clusters = cluster_ids(&file);
    let (profiles, cluster_slots) = member_profiles(&file);
    let mut algorithms = Vec::new();
    for (i, a) in file.algorithms.iter().enumerate() {
        let json = serde_json::to_string(&a.config).unwrap_or_default();
        let (table, r) = routex::config::load_table(&format!("{}.json", a.name), &json);
        let at = locate.path(&format!("algorithms.{i}.config"));
        for d in r.diagnostics.iter().filter(|d| d.is_error()) {
            report.diagnostics.push(Diagnostic {
                span: at,
                message: format!("algorithm `{}`: {}", a.name, d.message),
                suggestion: None,
                ..d.clone()
            });
        }
        let Some(table) = table.filter(|_| !r.has_errors()) else {
            continue;
        };
        let policy = PolicyKind::Core(table.configured(&file.model).policy.clone());
        let q = a.pylon_queue_admission.clone();
        let admission = q.as_ref().is_none_or(|q| q.enabled);
        let mismatch = admission.then(|| Mismatch {
            min_delta_ms: q.as_ref().map_or(25, |q| q.min_delta_ms),
            tolerance: q.as_ref().map_or(1.25, |q| q.tolerance_factor),
        });
        let settings = settings(&file, &clusters, &profiles, mismatch);
        algorithms.push(BenchAlgorithm {
            name: a.name.clone(),
            policy,
            admission,
            settings,
        });
    }
    if report.has_errors() {
        return Err(report);
    }
    Ok(Bench {
        file,
        algorithms,
        warnings: report,
        clusters,
        cluster_slots,
    })
}

/// yaml_serde's location as a one-character span.
fn yaml_error(text: &str, e: &yaml_serde::Error, code: Code) -> Diagnostic {
    let at = e.location().map_or(0, |l| l.index()).min(text.len());
    let message = e.to_string();
    let message = match message.rfind(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message,
    };
    Diagnostic::new(code, Span::new(at, (at + 1).min(text.len())), message)
}

/// The format's rules beyond types.
fn validate(f: &BenchFile, err: &mut dyn FnMut(&str, String)) {
    let b = &f.backends;
    if b.count == 0 || b.count > 10_000 {
        err("backends.count", "`count` must be in 1..=10000".into());
    }
    if b.pylons_per_cluster == 0 || b.count % b.pylons_per_cluster.max(1) != 0 {
        err(
            "backends.pylons_per_cluster",
            format!(
                "`pylons_per_cluster` must divide `count` ({}) into whole clusters",
                b.count
            ),
        );
    }
    if b.pylons_per_cluster > 1 && b.cluster_id_template.is_none() {
        err(
            "backends.pylons_per_cluster",
            "`cluster_id_template` is required with `pylons_per_cluster`".into(),
        );
    }
    let listed: u64 = b.profiles.iter().map(|p| u64::from(p.count)).sum();
    if !b.profiles.is_empty() && listed != u64::from(b.count) {
        err(
            "backends.profiles",
            format!(
                "the profiles' counts add up to {listed}, not `count` {}",
                b.count
            ),
        );
    }
    for p in backend_profiles(f) {
        let s = &p.service_time_ms;
        if p.max_concurrent_requests == 0
            || !(s.prefill_tokens_per_s > 0.0 && s.decode_tokens_per_s > 0.0)
            || !(0.0..=1e6).contains(&s.ttft_mean)
        {
            err(
                "backends.profile",
                format!("profile `{}` needs slots, prefill and decode rates > 0 and a TTFT in 0..=1000000 ms", p.name),
            );
            break;
        }
    }
    if f.request_count == 0 || f.request_count > 10_000_000 {
        err(
            "request_count",
            "`request_count` must be in 1..=10000000".into(),
        );
    }
    if f.max_concurrency == 0 {
        err("max_concurrency", "`max_concurrency` must be > 0".into());
    }
    if f.stargates.count == 0 || f.stargates.count > 1_000 {
        err("stargates.count", "`count` must be in 1..=1000".into());
    }
    let t = &f.traffic_pattern;
    if !KINDS.contains(&t.kind.as_str()) {
        let hint = routex::check::did_you_mean(&t.kind, KINDS.iter().copied())
            .map_or(String::new(), |k| format!(" (did you mean `{k}`?)"));
        err(
            "traffic_pattern.kind",
            format!(
                "unknown traffic kind `{}`{hint}; kinds: {}",
                t.kind,
                KINDS.join(", ")
            ),
        );
    }
    let needs: &[(&str, bool)] = match t.kind.as_str() {
        "bursty" => &[
            ("quiet_rps", t.quiet_rps.is_some()),
            ("burst_rps", t.burst_rps.is_some()),
            ("burst_period_requests", t.burst_period_requests.is_some()),
        ],
        "stair_step" => &[
            ("start_rps", t.start_rps.is_some()),
            ("step_rps", t.step_rps.is_some()),
            ("step_requests", t.step_requests.is_some()),
        ],
        "prefix_reuse" => &[
            ("initial_input_tokens", t.initial_input_tokens.is_some()),
            (
                "incremental_input_tokens",
                t.incremental_input_tokens.is_some(),
            ),
            ("arrival", t.arrival.is_some()),
        ],
        "mixed_size" => &[
            ("small", t.small.is_some()),
            ("large", t.large.is_some()),
            ("arrival", t.arrival.is_some()),
        ],
        "zipf_hotset" => &[
            ("hotset_fraction", t.hotset_fraction.is_some()),
            ("hotset_share", t.hotset_share.is_some()),
            ("arrival", t.arrival.is_some()),
        ],
        _ => &[("arrival", t.arrival.is_some())],
    };
    for (key, present) in needs {
        if !present {
            err(
                "traffic_pattern.kind",
                format!("traffic kind `{}` needs `{key}`", t.kind),
            );
        }
    }
    let rates = [t.quiet_rps, t.burst_rps, t.start_rps];
    if rates.iter().flatten().any(|r| !(r.is_finite() && *r > 0.0)) {
        err("traffic_pattern", "rates must be finite and > 0".into());
    }
    if let Some(format::Arrival::Poisson { target_rps }) = t.arrival {
        if !(target_rps.is_finite() && target_rps > 0.0) {
            err("traffic_pattern.arrival", "`target_rps` must be > 0".into());
        }
    }
    if t.routing_keys > 0 {
        err(
            "traffic_pattern.routing_keys",
            "per-request routing keys are not simulated: use 0".into(),
        );
    }
    if f.algorithms.is_empty() {
        err(
            "algorithms",
            "`algorithms` must name at least one algorithm".into(),
        );
    }
    for (i, a) in f.degradation.actions.iter().enumerate() {
        if !format::ACTIONS.contains(&a.action.as_str()) {
            err(
                &format!("degradation.actions.{i}.action"),
                format!(
                    "unknown action `{}`; actions: {}",
                    a.action,
                    format::ACTIONS.join(", ")
                ),
            );
        }
        if a.backend_index >= b.count {
            err(
                &format!("degradation.actions.{i}.backend_index"),
                format!(
                    "`backend_index` must be below `backends.count` ({})",
                    b.count
                ),
            );
        }
    }
}

/// Cluster ids: the template with `{cluster_index}`, else `backend-<i>`.
fn cluster_ids(f: &BenchFile) -> Vec<String> {
    let per = f.backends.pylons_per_cluster.max(1);
    (0..f.backends.count / per)
        .map(|c| match &f.backends.cluster_id_template {
            Some(t) => t.replace("{cluster_index}", &c.to_string()),
            None => format!("backend-{c}"),
        })
        .collect()
}

/// Each pylon's engine (its cluster's shared mock engine: the pylons'
/// slots and KV added, timings from the cluster's first pylon's profile)
/// and Pylon (its own registration rate, the engine's slots), and each
/// cluster's slots.
fn member_profiles(f: &BenchFile) -> (Vec<BackendProfile>, Vec<u64>) {
    let per = f.backends.pylons_per_cluster.max(1) as usize;
    let profiles = backend_profiles(f);
    let mut out = Vec::new();
    let mut slots = Vec::new();
    for pylons in profiles.chunks(per) {
        let first = pylons[0];
        let s = &first.service_time_ms;
        let cluster_slots: u32 = pylons.iter().map(|p| p.max_concurrent_requests).sum();
        let kv: u64 = pylons.iter().map(|p| p.kv_cache_capacity_tokens).sum();
        let mock = MockParams {
            slots: cluster_slots,
            kv_capacity_tokens: kv,
            prefill_tokens_per_s: s.prefill_tokens_per_s,
            ttft_mean_ms: s.ttft_mean,
            ttft_jitter_ms: s.ttft_jitter_ms,
            decode_tokens_per_s: s.decode_tokens_per_s,
            decode_jitter_ms: s.decode_jitter_ms,
            seed: f.seed,
        };
        let engine = EngineParams {
            slots: cluster_slots,
            kv_capacity_tokens: kv,
            mock: Some(mock),
            ..EngineParams::profile_a()
        };
        for p in pylons {
            // The rate a pylon registers with; 0 (unset): its prefill rate.
            let tps = match p.registration.last_mean_input_tps {
                r if r > 0.0 => r,
                _ => p.service_time_ms.prefill_tokens_per_s,
            };
            out.push(BackendProfile {
                engine: engine.clone(),
                pylon: PylonConfig {
                    initial_tps: tps,
                    mode: TpsMode::Constant,
                    published_max: PublishedMax::Constant,
                    slots: u64::from(cluster_slots),
                    mismatch: None,
                },
            });
        }
        slots.push(u64::from(cluster_slots));
    }
    (out, slots)
}

/// The run settings of one algorithm.
fn settings(
    f: &BenchFile,
    clusters: &[String],
    profiles: &[BackendProfile],
    mismatch: Option<Mismatch>,
) -> SimSettings {
    let spec = TopologySpec {
        regions: vec![RegionSpec {
            name: "bench".into(),
            routers: f.stargates.count,
            backends: f.backends.count,
            traffic_weight: 1.0,
            backends_per_cluster: f.backends.pylons_per_cluster.max(1),
        }],
        rtt_ms: vec![vec![0.0]],
        intra_region_rtt_ms: 0.0,
        stats_relay_ms: 0.0,
    };
    let mut topology = Topology::resolve(&spec);
    for (c, id) in clusters.iter().enumerate() {
        topology.rename_cluster(c, id);
    }
    let profiles: Vec<BackendProfile> = profiles
        .iter()
        .map(|p| BackendProfile {
            pylon: PylonConfig {
                mismatch,
                ..p.pylon.clone()
            },
            ..p.clone()
        })
        .collect();
    // A pod is a pylon: members are numbered as the file's backends.
    let faults = f
        .degradation
        .actions
        .iter()
        .map(|a| Fault {
            trigger: Trigger::Request(a.at_request),
            backend: a.backend_index,
            action: FaultAction::Remove,
        })
        .collect();
    SimSettings {
        topology,
        engine: profiles[0].engine.clone(),
        pylon: profiles[0].pylon.clone(),
        heartbeat_us: 100 * US_PER_MS,
        coalesce_us: None,
        max_retries: 2,
        routing_key: String::new(),
        model: f.model.clone(),
        request_slo_ms: 300_000,
        max_wait_ms: 10_000,
        timeout_us: 300_000 * US_PER_MS,
        ttft_slo_us: 10_000 * US_PER_MS,
        last_cluster_store: None,
        workload: Arc::new(BenchWorkload::new(&[], 1)),
        warmup_s: 0.0,
        measure_s: 1.0,
        mode: WaitMode::Faithful,
        profiles,
        shared_engines: true,
        max_in_flight: Some(f.max_concurrency),
        faults,
        keep_detail: true,
        publish_kv: true,
        warm_start: false,
        reuse_lasting_unavailable: true,
        timeline_cells: crate::measure::timeline::MAX_CELLS,
    }
}

/// The result of one algorithm.
#[derive(Clone, Debug)]
pub struct AlgorithmRun {
    pub name: String,
    pub result: RunResult,
    pub scores: scores::Scores,
    pub wall_ms: f64,
}

/// Runs every algorithm of `bench` on `requests` (the file's own, or a
/// manifest's), on up to `jobs` threads; results in the file's order.
pub fn run(bench: &Bench, requests: &[BenchRequest], jobs: usize) -> Vec<AlgorithmRun> {
    let workload: Arc<BenchWorkload> =
        Arc::new(BenchWorkload::new(requests, bench.file.stargates.count));
    let one = |a: &BenchAlgorithm| {
        let start = std::time::Instant::now();
        let mut s = a.settings.clone();
        s.workload = workload.clone();
        let result = run::run(&s, &a.policy, 1.0, bench.file.seed);
        let scores = scores::scores(bench, a, &result);
        AlgorithmRun {
            name: a.name.clone(),
            result,
            scores,
            wall_ms: start.elapsed().as_secs_f64() * 1_000.0,
        }
    };
    let jobs = jobs.clamp(1, bench.algorithms.len().max(1));
    if jobs == 1 {
        return bench.algorithms.iter().map(one).collect();
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let slots: Vec<std::sync::Mutex<Option<AlgorithmRun>>> = bench
        .algorithms
        .iter()
        .map(|_| Default::default())
        .collect();
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(a) = bench.algorithms.get(i) else {
                    break;
                };
                let r = one(a);
                if let Ok(mut slot) = slots[i].lock() {
                    *slot = Some(r);
                }
            });
        }
    });
    slots
        .into_iter()
        .filter_map(|s| s.into_inner().ok().flatten())
        .collect()
}
