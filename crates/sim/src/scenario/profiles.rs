//! A heterogeneous fleet from a scenario (docs/simulator.md,
//! "Heterogeneous fleets"): each backend's engine from the fleet's
//! `engine` and the `engine.regions` / `engine.backends` objects that name
//! it (most specific wins), its Pylon's slots and registration rate from
//! that engine, and the checks of those objects: names that are no region,
//! cluster or backend (with a did-you-mean), and values, each reported at
//! the object that set it.

use super::spans::Spans;
use super::validate;
use super::ScenarioFile;
use crate::world::engine::overrides::EngineOverride;
use crate::world::engine::EngineParams;
use crate::world::fleet::BackendProfile;
use crate::world::pylon::PylonConfig;
use crate::world::topology::Topology;
use routex::diag::{Code, Diagnostic};

/// The override objects that apply to member `m`, least specific first,
/// with their paths: its region's, its cluster's (when the cluster has
/// several members), its own.
fn chain<'f>(f: &'f ScenarioFile, topo: &Topology, m: usize) -> Vec<(String, &'f EngineOverride)> {
    let e = &f.engine;
    let member = &topo.members[m];
    let cluster = &topo.backends[member.cluster];
    let mut out = Vec::new();
    if let Some(region) = f.topology.regions.get(cluster.region) {
        if let Some(o) = e.regions.get(&region.name) {
            out.push((format!("engine.regions.{}", region.name), o));
        }
    }
    if cluster.id != member.id {
        if let Some(o) = e.backends.get(&cluster.id) {
            out.push((format!("engine.backends.{}", cluster.id), o));
        }
    }
    if let Some(o) = e.backends.get(&member.id) {
        out.push((format!("engine.backends.{}", member.id), o));
    }
    out
}

/// Member `m`'s engine and the rate it registers with, if an object sets it.
fn resolve(f: &ScenarioFile, topo: &Topology, m: usize) -> (EngineParams, Option<f64>) {
    let mut params = f.engine.without_overrides();
    let mut initial = None;
    for (_, o) in chain(f, topo, m) {
        o.apply(&mut params);
        initial = o.initial_input_tps.or(initial);
    }
    (params, initial)
}

/// Every member's engine and Pylon, or none when the scenario gives no
/// override (every backend then runs the fleet's `engine` and `pylon`).
///
/// A member's Pylon has its engine's concurrency as slots and registers
/// with `initial_input_tps` when an object sets it, else with the fleet's
/// initial rate scaled by the member's prefill capacity over the fleet's
/// ([`EngineParams::prefill_capacity_tps`]): a backend twice as fast
/// registers with twice the rate.
pub(super) fn member_profiles(
    f: &ScenarioFile,
    topo: &Topology,
    fleet: &PylonConfig,
) -> Vec<BackendProfile> {
    if f.engine.regions.is_empty() && f.engine.backends.is_empty() {
        return Vec::new();
    }
    let base = f.engine.without_overrides();
    (0..topo.members.len())
        .map(|m| {
            let (engine, initial) = resolve(f, topo, m);
            let scaled = if engine == base {
                fleet.initial_tps
            } else {
                let ratio = engine.prefill_capacity_tps() / base.prefill_capacity_tps();
                match fleet.initial_tps * ratio {
                    r if r.is_finite() && r > 0.0 => r,
                    _ => fleet.initial_tps,
                }
            };
            BackendProfile {
                pylon: PylonConfig {
                    initial_tps: initial.unwrap_or(scaled),
                    slots: engine.max_concurrency(),
                    ..fleet.clone()
                },
                engine,
            }
        })
        .collect()
}

/// The names of `engine.regions` and `engine.backends`, and every value
/// of their objects; diagnostics go to `errors`. Not run on a fleet too
/// large to resolve (validate.rs reports its size).
pub(super) fn check(f: &ScenarioFile, spans: &Spans, errors: &mut Vec<Diagnostic>) {
    let e = &f.engine;
    if (e.regions.is_empty() && e.backends.is_empty()) || !validate::backends_resolvable(f) {
        return;
    }
    let topo = &Topology::resolve(&f.topology);
    // Engine v2 needs prefix blocks.
    let blocks = f.trace.is_some()
        || f.workload
            .as_ref()
            .is_some_and(|w| w.block_tokens.is_some());
    let regions: Vec<&str> = f.topology.regions.iter().map(|r| r.name.as_str()).collect();
    let backends = topo.ids();
    for (map, names, what, listed, otherwise) in [
        (
            "regions",
            &regions,
            "region",
            "the topology's regions",
            "`topology.regions` names the regions",
        ),
        (
            "backends",
            &backends,
            "cluster or backend",
            "the topology's clusters and backends",
            validate::ID_PATTERN,
        ),
    ] {
        let keys = if map == "regions" {
            &e.regions
        } else {
            &e.backends
        };
        // A set: the map's keys are the user's, as many as the file holds.
        let known: std::collections::BTreeSet<&str> = names.iter().copied().collect();
        for name in keys.keys().filter(|k| !known.contains(k.as_str())) {
            let path = format!("engine.{map}.{name}");
            let d = Diagnostic::new(
                Code::InvalidValue,
                spans.key(&path),
                format!("`engine.{map}` names `{name}`, which is no {what} of the topology"),
            );
            errors.push(validate::unknown_name_help(
                d, name, names, listed, otherwise,
            ));
        }
    }
    // Each member's resolved engine, checked by the fleet's rules; a
    // problem is reported once, at the most specific object that sets the
    // field it is about (a field only the fleet sets was reported there).
    let mut seen: Vec<(String, String)> = Vec::new();
    for m in 0..topo.members.len() {
        let objects = chain(f, topo, m);
        if objects.is_empty() {
            continue;
        }
        let (params, initial) = resolve(f, topo, m);
        let mut found: Vec<(String, String)> = Vec::new();
        validate::engine_params(&params, blocks, &mut |field, message| {
            found.push((field.to_string(), message));
        });
        if initial.is_some_and(|r| !(r.is_finite() && r > 0.0)) {
            found.push((
                "initial_input_tps".into(),
                "`initial_input_tps` must be finite and > 0".into(),
            ));
        }
        draws(f, &params, &mut found);
        for (field, message) in found {
            let top = field.split('.').next().unwrap_or(&field);
            let Some((path, _)) = objects.iter().rev().find(|(_, o)| o.sets(top)) else {
                continue;
            };
            let at = format!("{path}.{field}");
            if seen.iter().any(|(p, msg)| *p == at && *msg == message) {
                continue;
            }
            errors.push(Diagnostic::new(
                Code::InvalidValue,
                spans.at(&at),
                message.clone(),
            ));
            seen.push((at, message));
        }
    }
}

/// Engines v1 and v2 draw each request's TTFT jitter and decode rate from
/// the fleet's ranges; a backend's own range rescales that draw, which a
/// fleet range of one value cannot do.
fn draws(f: &ScenarioFile, params: &EngineParams, found: &mut Vec<(String, String)>) {
    let fleet = &f.engine;
    if params.ttft_jitter_ms != fleet.ttft_jitter_ms && fleet.ttft_jitter_ms <= 0.0 {
        found.push((
            "ttft_jitter_ms".into(),
            "a backend's `ttft_jitter_ms` rescales the jitter drawn from the fleet's: give the fleet's `engine.ttft_jitter_ms` > 0".into(),
        ));
    }
    let [a, b] = fleet.decode_tps;
    let [c, d] = params.decode_tps;
    if c < d && a >= b {
        found.push((
            "decode_tps".into(),
            "a backend's `decode_tps` range rescales the rate drawn from the fleet's: give the fleet's `engine.decode_tps` a range (min < max), or this backend one value".into(),
        ));
    }
}
