//! stargate-bench files: the reader on the project's own files (a good one,
//! a bad one and its diagnostics), the request plan's laws, the closed
//! loop, a removed backend, and determinism.

use super::repo;
use routex::diag::Code;
use routex_sim::bench::format::{Arrival, BenchFile, Dist, Traffic};
use routex_sim::bench::{self, plan, report};

fn read(name: &str) -> String {
    let path = repo().join("crates/sim/tests/inputs/bench").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn good() -> bench::Bench {
    match bench::load("two-tier.yaml", &read("two-tier.yaml")) {
        Ok(b) => b,
        Err(r) => panic!("{:?}", r.diagnostics),
    }
}

#[test]
fn a_good_file_maps_clusters_profiles_and_algorithms() {
    let b = good();
    assert_eq!(b.clusters, vec!["tier-0", "tier-1"]);
    // Two pylons per cluster: slots and KV of both.
    assert_eq!(b.cluster_slots, vec![6, 2]);
    let names: Vec<_> = b.algorithms.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, vec!["power-of-n", "pulsar"]);
    let admission: Vec<_> = b.algorithms.iter().map(|a| a.admission).collect();
    assert_eq!(
        admission,
        vec![true, false],
        "queue admission per algorithm"
    );
    let s = &b.algorithms[0].settings;
    assert_eq!(s.max_in_flight, Some(8));
    assert_eq!(s.topology.routers.len(), 2);
    // Each pylon is a backend of its cluster, with its own registration
    // rate, over the cluster's shared engine (both pylons' slots).
    let ids: Vec<_> = s.topology.members.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(ids, ["tier-0-p0", "tier-0-p1", "tier-1-p0", "tier-1-p1"]);
    assert!(s.shared_engines);
    let rates: Vec<_> = s.profiles.iter().map(|p| p.pylon.initial_tps).collect();
    assert_eq!(rates, [10_000.0, 10_000.0, 2_000.0, 2_000.0]);
    assert_eq!(s.profiles[3].engine.max_concurrency(), 2);
    assert_eq!(s.profiles[3].pylon.slots, 2);
}

#[test]
fn a_run_respects_the_in_flight_cap_and_routes_around_a_removed_pod() {
    let b = good();
    let requests = plan::materialize(&b.file);
    assert_eq!(requests.len(), 60);
    let runs = bench::run(&b, &requests, 1);
    for r in &runs {
        let d = r.result.detail.as_ref().expect("detail");
        assert!(d.requests.iter().all(|q| q.succeeded), "{}", r.name);
        assert_eq!(r.scores.success_rate, 1.0);
        // Never more than 8 requests between send and last token.
        for q in &d.requests {
            let open = d
                .requests
                .iter()
                .filter(|o| o.sent <= q.sent && o.done > q.sent)
                .count();
            assert!(open <= 8, "{open} in flight");
        }
        // Backend index 3 is the second pylon of cluster 1, removed when
        // request 40 is sent: the cluster keeps its first pylon, which
        // takes every later request routed to it.
        let removed = d.removed_at[3].expect("removed");
        assert_eq!(removed, d.requests[40].sent);
        assert!(d.removed_at[..3].iter().all(Option::is_none));
        assert!(
            d.requests[40..]
                .iter()
                .all(|q| q.backend == 0 || q.member == 2),
            "{}",
            r.name
        );
        assert_eq!(r.scores.removed, vec!["tier-1-p1"]);
    }
    // Pulsar keeps hot keys on their cluster: more reuse than sampling
    // would need, and no fallback, since the cluster that lost a pod is
    // still a candidate (its other pylon serves its keys).
    assert_eq!(runs[1].scores.fallback, 0);
    assert!(runs[1].scores.input_reuse_rate > 0.5);
    // The same file gives the same bench.json on 1 and 2 threads.
    let again = bench::run(&b, &requests, 2);
    assert_eq!(report::json(&b, &runs), report::json(&b, &again));
}

#[test]
fn a_bad_file_gets_every_diagnostic_with_its_key_and_a_did_you_mean() {
    let text = read("bad-keys.yaml");
    let r = bench::load("bad-keys.yaml", &text).expect_err("invalid");
    let found: Vec<(Code, &str, Option<&str>)> = r
        .diagnostics
        .iter()
        .map(|d| (d.code, &text[d.span.start..d.span.end], d.help.as_deref()))
        .collect();
    assert_eq!(
        found[..2],
        [
            (
                Code::UnknownField,
                "max_concurent_requests",
                Some("did you mean `max_concurrent_requests`?")
            ),
            (
                Code::UnknownField,
                "arival",
                Some("did you mean `arrival`?")
            ),
        ]
    );
    let messages: Vec<&str> = r.diagnostics.iter().map(|d| d.message.as_str()).collect();
    assert!(messages
        .iter()
        .any(|m| m.contains("did you mean `uniform`?")));
    assert!(messages
        .iter()
        .any(|m| m.contains("`backend_index` must be below")));
    // Not YAML at all, and a missing field.
    let r = bench::load("x.yaml", "name: [unclosed").expect_err("invalid");
    assert_eq!(r.diagnostics[0].code, Code::InvalidJson);
    let r = bench::load("x.yaml", "name: x\nmodel: m\n").expect_err("invalid");
    assert_eq!(r.diagnostics[0].code, Code::MissingField);
}

#[test]
fn arbitrary_text_never_panics() {
    for text in [
        "",
        ":",
        "- - -",
        "name: 1\nseed: -1",
        "backends: {count: 99999999999}",
    ] {
        assert!(bench::load("x.yaml", text).is_err(), "{text}");
    }
}

fn traffic(kind: &str) -> Traffic {
    Traffic {
        kind: kind.into(),
        routing_keys: 0,
        cache_affinity_keys: 10,
        input_tokens: Some(Dist::Constant { value: 100.0 }),
        output_tokens: Some(Dist::Constant { value: 10.0 }),
        arrival: Some(Arrival::Poisson { target_rps: 10.0 }),
        quiet_rps: Some(2.0),
        burst_rps: Some(200.0),
        burst_period_requests: Some(1_000),
        start_rps: Some(10.0),
        step_rps: Some(10.0),
        step_requests: Some(1_000),
        hotset_fraction: Some(0.2),
        hotset_share: Some(0.9),
        initial_input_tokens: Some(Dist::Constant { value: 1_000.0 }),
        incremental_input_tokens: Some(Dist::Constant { value: 50.0 }),
        small_share: Some(0.8),
        small: None,
        large: None,
    }
}

fn file(t: Traffic, n: u32) -> BenchFile {
    let mut f = good().file;
    f.traffic_pattern = t;
    f.request_count = n;
    f
}

/// Mean gap in seconds over requests [from, to).
fn mean_gap(r: &[plan::BenchRequest], from: usize, to: usize) -> f64 {
    (r[to - 1].offset - r[from - 1].offset) as f64 / 1e6 / (to - from) as f64
}

#[test]
fn arrival_laws_have_their_rates() {
    let r = plan::materialize(&file(traffic("uniform"), 4_000));
    assert!((mean_gap(&r, 1, 4_000) * 10.0 - 1.0).abs() < 0.05);
    let mut t = traffic("uniform");
    t.arrival = Some(Arrival::Constant { interval_ms: 40.0 });
    let r = plan::materialize(&file(t, 10));
    assert_eq!(r[9].offset, 9 * 40_000);
    // Bursty: the first period at the burst rate, then quiet.
    let r = plan::materialize(&file(traffic("bursty"), 3_000));
    assert!((mean_gap(&r, 1, 1_000) * 200.0 - 1.0).abs() < 0.1);
    assert!((mean_gap(&r, 1_000, 2_000) * 2.0 - 1.0).abs() < 0.1);
    // Stair step: 10, 20, 30 RPS every 1 000 requests.
    let r = plan::materialize(&file(traffic("stair_step"), 3_000));
    for (step, rps) in [(0usize, 10.0), (1, 20.0), (2, 30.0)] {
        let g = mean_gap(&r, (step * 1_000).max(1), step * 1_000 + 1_000);
        assert!((g * rps - 1.0).abs() < 0.1, "{step}: {g}");
    }
}

#[test]
fn key_laws_and_growing_prefixes() {
    // Hot set: 90 % on the first 2 keys, the rest uniform over 10.
    let r = plan::materialize(&file(traffic("zipf_hotset"), 10_000));
    let hot = r
        .iter()
        .filter(|q| matches!(q.key.as_deref(), Some("cak-0000" | "cak-0001")))
        .count() as f64;
    assert!((hot / 10_000.0 - 0.92).abs() < 0.02, "{hot}");
    // Prefix reuse: each key's input grows by 50 from 1 000.
    let r = plan::materialize(&file(traffic("prefix_reuse"), 200));
    let mut last = std::collections::BTreeMap::new();
    for q in &r {
        let before = last.insert(q.key.clone(), q.input);
        assert_eq!(q.input, before.map_or(1_000, |b| b + 50));
    }
    // No keys: no affinity key at all.
    let mut t = traffic("uniform");
    t.cache_affinity_keys = 0;
    assert!(plan::materialize(&file(t, 5))
        .iter()
        .all(|q| q.key.is_none()));
}

#[test]
fn a_manifest_replays_its_requests() {
    let m = r#"{"benchmark_name": "x", "requests": [
        {"request_index": 0, "scheduled_offset_ms": 0, "cache_affinity_key": "a", "input_tokens": 10, "output_tokens": 2},
        {"request_index": 1, "scheduled_offset_ms": 12.5, "cache_affinity_key": null, "input_tokens": 20, "output_tokens": 3, "routing_key": null}
    ]}"#;
    let r = plan::read_manifest(m).expect("manifest");
    assert_eq!(r.len(), 2);
    assert_eq!(
        (r[1].offset, r[1].key.as_deref(), r[1].input),
        (12_500, None, 20)
    );
    assert!(plan::read_manifest("{\"requests\": 3}").is_err());
}
