//! Heterogeneous fleets (docs/simulator.md, "Heterogeneous fleets"):
//! engine profiles per region and per backend, clusters of several
//! backends seen through the core's candidate view, registration rates,
//! and the diagnostics of bad profiles.

use super::support::{prepared, run_one, snapshot_settings};
use routex::router::{BackendStats, CandidateView};
use routex_sim::scenario::load;
use routex_sim::world::pylon::{topology_view, StatsReport};
use serde_json::{json, Value};
use std::rc::Rc;

/// One router region `r` with two backends (and a region `s` without
/// traffic or backends); engine v1 with one slot, no cache, no jitter, a
/// 1 000-token prefill at 1 000 tokens/s and one output token: a request
/// holds its backend exactly 1 s at speed 1. Round-robin, no admission,
/// no RTT, a client that never gives up.
pub(crate) fn fleet() -> Value {
    json!({
        "name": "fleet", "seeds": [1], "warmup_s": 0, "measure_s": 10,
        "rates_rps": [10],
        "topology": {
            "regions": [
                {"name": "r", "routers": 1, "backends": 2, "traffic_weight": 1.0},
                {"name": "s", "routers": 1, "backends": 0, "traffic_weight": 0.0}
            ],
            "rtt_ms": [[0, 0], [0, 0]], "intra_region_rtt_ms": 0, "stats_relay_ms": 0
        },
        "engine": {"model": "mockdynamo-v1", "slots": 1, "prefill_tps": 1000,
                   "ttft_base_ms": 0, "ttft_jitter_ms": 0, "decode_tps": [100, 100],
                   "kv_capacity_tokens": 0},
        "pylon": {"heartbeat_ms": 1000,
                  "input_tps": {"mode": "window", "initial": 1000, "window": 8, "floor_ms": 10},
                  "max_input_tps": "constant",
                  "mismatch": {"enabled": false, "min_delta_ms": 25, "tolerance": 1.25}},
        "router": {"max_retries": 2, "recheck_ms": 25, "retry_sleep_ms": [1, 9],
                   "routing_key": "rk", "model": "m"},
        "client": {"request_slo_ms": 10000, "max_wait_ms": 10000,
                   "timeout_ms": 1000000, "ttft_slo_ms": 10000},
        "workload": {"keys": 100000, "zipf_s": 0.0, "input_tokens": [1000, 1000],
                     "output_tokens": 1},
        "policies": {"rr": "round-robin"}
    })
}

fn load_fleet(v: &Value) -> routex_sim::scenario::Prepared {
    let mut p = prepared(&v.to_string());
    p.settings.keep_detail = true;
    p
}

/// Requests each backend (cluster) of region `r` finished by `end_us`,
/// and when each got its first request.
pub(crate) fn served_by(v: &Value, end_us: u64) -> [(u64, u64); 2] {
    let p = load_fleet(v);
    let r = run_one(&p, "rr", 10.0, 1);
    let d = r.detail.expect("detail");
    let mut out = [(0, u64::MAX); 2];
    for q in &d.requests {
        let b = q.backend as usize;
        out[b].1 = out[b].1.min(q.sent);
        if q.succeeded && q.done <= end_us {
            out[b].0 += 1;
        }
    }
    out
}

/// Round-robin offers each backend 5 RPS, far above what either serves:
/// both are busy from their first request on, so a backend with service
/// time S finishes floor((T - first) / S) requests by T.
pub(crate) fn assert_saturated(served: [(u64, u64); 2], service_us: [u64; 2], end_us: u64) {
    for (b, &(n, first)) in served.iter().enumerate() {
        assert_eq!(
            n,
            (end_us - first) / service_us[b],
            "backend {b}: {served:?}"
        );
    }
}

#[test]
fn a_backend_twice_as_fast_serves_twice_as_much_at_saturation() {
    let end = 10_000_000;
    let same = served_by(&fleet(), end);
    assert_saturated(same, [1_000_000, 1_000_000], end);
    let mut v = fleet();
    v["engine"]["backends"] = json!({"r-b1": {"backend_speed": 2.0}});
    let fast = served_by(&v, end);
    assert_saturated(fast, [1_000_000, 500_000], end);
    // About twice as many (the first request's arrival is the only slack).
    assert!(fast[1].0 >= 2 * fast[0].0 - 2, "{fast:?}");
    // The same through the region's profile, and the backend's wins over
    // the region's.
    let mut v = fleet();
    v["engine"]["regions"] = json!({"r": {"backend_speed": 2.0}});
    assert_saturated(served_by(&v, end), [500_000, 500_000], end);
    v["engine"]["backends"] = json!({"r-b0": {"prefill_tps": 500}});
    // r-b0: 1 000 tokens at 500 x 2 tokens/s; r-b1: the region's speed.
    assert_saturated(served_by(&v, end), [1_000_000, 500_000], end);
}

#[test]
fn profiles_resolve_most_specific_first_and_set_the_pylons() {
    let mut v = fleet();
    v["topology"]["regions"][1]["backends"] = json!(2);
    v["engine"]["regions"] = json!({"s": {"slots": 4, "backend_speed": 2.0}});
    v["engine"]["backends"] = json!({
        "s-b1": {"slots": 8},
        "r-b1": {"initial_input_tps": 1234.5}
    });
    let p = load_fleet(&v);
    let s = &p.settings;
    let got: Vec<(u32, f64, u64, f64)> = s
        .profiles
        .iter()
        .map(|b| {
            (
                b.engine.slots,
                b.engine.backend_speed,
                b.pylon.slots,
                b.pylon.initial_tps,
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            // The fleet's engine and registration rate.
            (1, 1.0, 1, 1_000.0),
            // Its own registration rate, the fleet's engine.
            (1, 1.0, 1, 1_234.5),
            // The region's: 4 slots at twice the speed prefill 8x the
            // fleet's one slot, and register with 8x its rate.
            (4, 2.0, 4, 8_000.0),
            // The backend's slots over the region's speed: 16x.
            (8, 2.0, 8, 16_000.0),
        ]
    );
    // The routers' views start from those registrations.
    let view = &topology_view(&s.topology, 0, &idle_reports(s));
    let tps: Vec<f64> = view
        .snapshots()
        .iter()
        .map(|c| c.last_mean_input_tps)
        .collect();
    assert_eq!(tps, [1_000.0, 1_234.5, 8_000.0, 16_000.0]);
    let slots: Vec<u64> = view
        .snapshots()
        .iter()
        .map(|c| c.max_engine_concurrency)
        .collect();
    assert_eq!(slots, [1, 1, 4, 8]);
    // Without overrides the fleet has no profiles at all (every run as
    // before).
    assert!(load_fleet(&fleet()).settings.profiles.is_empty());
}

fn idle_reports(s: &routex_sim::run::SimSettings) -> Vec<Rc<StatsReport>> {
    (0..s.topology.members.len())
        .map(|m| {
            let pylon = s.profiles.get(m).map_or(&s.pylon, |p| &p.pylon);
            Rc::new(routex_sim::world::pylon::Pylon::new(pylon.clone()).report())
        })
        .collect()
}

/// Region `r` as one cluster of two backends.
fn one_cluster() -> Value {
    let mut v = fleet();
    v["topology"]["regions"][0]["backends_per_cluster"] = json!(2);
    v
}

#[test]
fn a_cluster_of_two_backends_is_aggregated_by_the_candidate_view() {
    let mut v = one_cluster();
    v["topology"]["regions"][1]["backends"] = json!(2);
    let p = load_fleet(&v);
    let t = &p.settings.topology;
    let ids: Vec<&str> = t.backends.iter().map(|b| b.id.as_str()).collect();
    assert_eq!(ids, ["r-b0", "s-b0", "s-b1"]);
    let members: Vec<(&str, usize)> = t
        .members
        .iter()
        .map(|m| (m.id.as_str(), m.cluster))
        .collect();
    assert_eq!(
        members,
        [("r-b0-p0", 0), ("r-b0-p1", 0), ("s-b0", 1), ("s-b1", 2)]
    );
    // Two different reports for the two members: the router's snapshot of
    // the cluster is the core's aggregate (docs/stargate.md 1.3), the same
    // as an embedder's view registering both backends.
    let report = |tps: f64, queued: u64, running: u64| {
        Rc::new(StatsReport {
            last_mean_tps: tps,
            max_input_tps: Some(tps),
            input_phase: queued,
            output_phase: running - queued,
            prompt_work: queued * 100,
            total_input: running * 100,
            slots: 4,
            ..StatsReport::default()
        })
    };
    let reports = [
        report(1_000.0, 1, 3),
        report(3_000.0, 2, 2),
        report(500.0, 0, 0),
        report(500.0, 0, 0),
    ];
    let sim = topology_view(t, 0, &reports);
    let mut embedder = CandidateView::new();
    for (m, r) in t.members.iter().zip(&reports) {
        let cluster = &t.backends[m.cluster].id;
        embedder.add_backend(cluster, &m.id);
        embedder.set_rtt(cluster, &m.id, 0.0).expect("rtt");
        let stats: BackendStats = r.backend_stats();
        embedder.report(cluster, &m.id, &stats).expect("report");
    }
    assert_eq!(sim.snapshots(), embedder.snapshots());
    let c = &sim.snapshots()[0];
    assert_eq!(c.last_mean_input_tps, 4_000.0, "rates add up");
    assert_eq!(c.max_input_tps, Some(3_000.0), "the greatest peak");
    assert_eq!(c.queue_size, 3, "queues add up");
    assert_eq!(c.queued_input_size, 300);
    // Running and slots are cluster-scoped: the latest report's.
    assert_eq!((c.num_running_queries, c.max_engine_concurrency), (2, 4));
}

#[test]
fn requests_land_on_the_backend_the_rules_pick() {
    // One cluster of two backends; reports so rare that no reservation is
    // cleared during the run: the rule (fewest pending reservations, the
    // first registered on a tie) alternates the two backends.
    let mut v = one_cluster();
    v["pylon"]["heartbeat_ms"] = json!(1_000_000_000u64);
    v["measure_s"] = json!(2);
    let p = load_fleet(&v);
    let r = run_one(&p, "rr", 10.0, 1);
    let d = r.detail.expect("detail");
    assert!(d.requests.len() >= 10);
    for (i, q) in d.requests.iter().enumerate() {
        assert_eq!(q.backend, 0);
        assert_eq!(q.member as usize, i % 2, "request {i}");
        assert!(q.succeeded);
    }
    // Each backend has its own engine: two 1 s services at once.
    assert_eq!(d.requests[1].done, d.requests[1].sent + 1_000_000);
}

#[test]
fn bad_profiles_and_clusters_are_diagnostics_at_their_keys() {
    let mut v = fleet();
    v["topology"]["regions"][1]["backends"] = json!(2);
    v["topology"]["regions"][1]["backends_per_cluster"] = json!(3);
    v["engine"]["regions"] = json!({
        "rr": {"slots": 2},
        "r": {"slotz": 2}
    });
    v["engine"]["backends"] = json!({
        "r-b7": {"slots": 2},
        "r-b0": {"backend_speed": 0, "batched": {"num_gpu_workers": 2}},
        "r-b1": {"decode_tps": [50, 150], "initial_input_tps": -1}
    });
    let text = serde_json::to_string_pretty(&v).expect("json");
    // The shape first: an unknown field stops the load there.
    let shape = load("fleet.json", &text).expect_err("unknown field");
    let mut out = listing(&text, &shape.diagnostics);
    v["engine"]["regions"]["r"] = json!({"slots": 2});
    let text = serde_json::to_string_pretty(&v).expect("json");
    let values = load("fleet.json", &text).expect_err("bad values");
    out.push_str("---\n");
    out.push_str(&listing(&text, &values.diagnostics));
    snapshot_settings().bind(|| insta::assert_snapshot!("fleet_bad_inputs", out));
}

/// One line per diagnostic: code, line:column, the text it points at,
/// the message and the help.
pub(crate) fn listing(text: &str, ds: &[routex::diag::Diagnostic]) -> String {
    let mut out = String::new();
    for d in ds {
        let line = text[..d.span.start].matches('\n').count() + 1;
        let col = d.span.start - text[..d.span.start].rfind('\n').map_or(0, |i| i + 1) + 1;
        out.push_str(&format!(
            "{} {line}:{col} `{}`: {}{}\n",
            d.code.as_str(),
            &text[d.span.start..d.span.end],
            d.message,
            d.help
                .as_deref()
                .map_or(String::new(), |h| format!(" (help: {h})")),
        ));
    }
    out
}
