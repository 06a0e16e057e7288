//! stargate's second-generation parity scenario on engine v3
//! (`examples/scenario-parity-v3.json`, docs/simulator.md "The parity
//! scenario on engine v3"): every parameter of the scenario as the
//! simulator reads it, the Pylon's initial rate per GPU worker, and a short
//! run of the file so that it cannot rot.

use crate::repo;
use crate::support::{prepared, run_one};
use routex::diag::Code;
use routex_sim::conversations::Sizes;
use routex_sim::scenario::load;
use routex_sim::world::engine::V3;
use routex_sim::world::pylon::TpsMode;

fn parity_text() -> String {
    let path = repo().join("examples/scenario-parity-v3.json");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn edit(f: impl FnOnce(&mut serde_json::Value)) -> String {
    let mut v: serde_json::Value = serde_json::from_str(&parity_text()).expect("json");
    f(&mut v);
    serde_json::to_string_pretty(&v).expect("json")
}

#[test]
fn the_scenario_holds_every_parameter_of_the_parity_scenario() {
    let p = prepared(&parity_text());
    let f = &p.file;
    assert_eq!(f.seeds, [1, 2, 3]);
    assert_eq!((f.warmup_s, f.measure_s), (60.0, 180.0));
    assert_eq!(f.rates_rps, [80.0, 160.0, 240.0, 320.0]);
    // Five regions of 3 routers and 4 backends, traffic into usw2 only.
    let regions: Vec<_> = f
        .topology
        .regions
        .iter()
        .map(|r| (r.name.as_str(), r.routers, r.backends, r.traffic_weight))
        .collect();
    assert_eq!(
        regions,
        [
            ("usw2", 3, 4, 1.0),
            ("ue1", 3, 4, 0.0),
            ("ew1", 3, 4, 0.0),
            ("an1", 3, 4, 0.0),
            ("as2", 3, 4, 0.0)
        ]
    );
    assert_eq!(f.topology.rtt_ms[0], [0.0, 65.0, 125.0, 100.0, 140.0]);
    assert_eq!(f.topology.intra_region_rtt_ms, 1.0);
    // The batched engine: one worker, 25 sequences, 2 048 tokens a step,
    // 4.0 + 0.085/seq + 0.05/prefill token ms, 400 000 KV tokens.
    let e = &p.settings.engine;
    assert_eq!(e.model, V3);
    let b = e.batched.clone().expect("batched");
    assert_eq!(
        (b.num_gpu_workers, b.max_num_seqs, b.max_batched_tokens),
        (1, 25, 2048)
    );
    assert_eq!(
        (
            b.step_fixed_ms,
            b.step_decode_ms_per_seq,
            b.step_prefill_ms_per_token
        ),
        (4.0, 0.085, 0.05)
    );
    assert_eq!(e.kv_capacity_tokens, 400_000);
    assert_eq!(e.backend_speed, 1.0);
    // Pylon: heartbeat 1 s, the fallback window from 20 000 per worker,
    // window 8, floor 10 ms, queue mismatch 25 ms x1.25.
    let s = &p.settings;
    assert_eq!(s.heartbeat_us, 1_000_000);
    assert_eq!(s.coalesce_us, None);
    assert_eq!(s.pylon.initial_tps, 20_000.0);
    assert_eq!(
        s.pylon.mode,
        TpsMode::Window {
            window: 8,
            floor_us: 10_000
        }
    );
    let m = s.pylon.mismatch.expect("mismatch admission");
    assert_eq!((m.min_delta_ms, m.tolerance), (25, 1.25));
    assert_eq!(s.pylon.slots, 25);
    // Stargate: 2 retries; the client's SLOs, max wait and timeout.
    assert_eq!(s.max_retries, 2);
    assert_eq!(
        (s.request_slo_ms, s.max_wait_ms, s.timeout_us, s.ttft_slo_us),
        (10_000, 10_000, 30_000_000, 10_000_000)
    );
    // 768 sessions of 6 661 input and 256 output tokens, uniform.
    let w = f.workload.as_ref().expect("synthetic workload");
    assert_eq!(
        (w.keys, w.zipf_s, &w.input_tokens, &w.output_tokens),
        (768, 0.0, &[6661, 6661].into(), &Sizes::Fixed(256))
    );
    // The three policies, in this order, with their exact fields.
    let names: Vec<_> = p.policies.iter().map(|x| x.name.as_str()).collect();
    assert_eq!(
        names,
        ["waw-deployed", "pulsar-waw-deployed", "power-of-2-baseline"]
    );
    let text = |name: &str| f.policies[name].replace(' ', "");
    assert_eq!(
        text("waw-deployed"),
        "wait-and-widen(cache_affinity_backend_selection_count=1,\
         cache_affinity_input_tokens_scale=0.1,cache_affinity_virtual_nodes=150,\
         cache_affinity_wait_ms=300,comparator=\"utilization\",max_queued=4,n=2,\
         next_bucket_unlock_factor=0.25,ttft_bucket_size_ms=20,\
         require_cache_affinity_key=true,require_input_tokens=true)"
    );
    assert_eq!(
        text("pulsar-waw-deployed"),
        "pulsar-wait-and-widen(max_queue_time_floor_ms=4000,\
         max_queue_time_ceil_ms=4000,max_queued=4,n=2)"
    );
    assert_eq!(text("power-of-2-baseline"), "power-of-n(sample_count=2)");
}

#[test]
fn the_initial_rate_per_gpu_worker_is_multiplied_by_the_workers() {
    let two = prepared(&edit(|v| {
        v["engine"]["batched"]["num_gpu_workers"] = 2.into();
    }));
    assert_eq!(two.settings.pylon.initial_tps, 40_000.0);
    assert_eq!(two.settings.pylon.slots, 50);
    // Without the flag the rate is the backend's, whatever its workers.
    let per_backend = prepared(&edit(|v| {
        v["engine"]["batched"]["num_gpu_workers"] = 2.into();
        v["pylon"]["input_tps"]["per_gpu_worker"] = false.into();
    }));
    assert_eq!(per_backend.settings.pylon.initial_tps, 20_000.0);
    // The preset's one worker when `batched` is absent.
    let preset = prepared(&edit(|v| {
        v["engine"]
            .as_object_mut()
            .expect("object")
            .remove("batched");
    }));
    assert_eq!(preset.settings.pylon.initial_tps, 20_000.0);
}

#[test]
fn the_initial_rate_per_gpu_worker_is_what_routers_first_see() {
    // Before any first token the Pylon publishes its initial rate: with two
    // workers a backend's queue estimate is half the one-worker estimate.
    let one = prepared(&parity_text());
    let two = prepared(&edit(|v| {
        v["engine"]["batched"]["num_gpu_workers"] = 2.into();
    }));
    let first = |p: &routex_sim::scenario::Prepared| {
        routex_sim::world::pylon::Pylon::new(p.settings.pylon.clone()).last_mean_tps()
    };
    assert_eq!(first(&one), 20_000.0);
    assert_eq!(first(&two), 40_000.0);
}

#[test]
fn per_gpu_worker_needs_the_batched_engine() {
    let text = edit(|v| {
        v["engine"]["model"] = "mockdynamo-v1".into();
        v["engine"]
            .as_object_mut()
            .expect("object")
            .remove("batched");
    });
    let report = load("s.json", &text).expect_err("invalid");
    let errors: Vec<_> = report
        .diagnostics
        .iter()
        .filter(|d| d.is_error())
        .map(|d| (d.code, &text[d.span.start..d.span.end], d.message.as_str()))
        .collect();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].0, Code::InvalidValue);
    assert_eq!(errors[0].1, "true");
    assert!(errors[0].2.contains("batched-v3"), "{}", errors[0].2);
    // A wrong type is a type error at the value.
    let text = edit(|v| v["pylon"]["input_tps"]["per_gpu_worker"] = 1.into());
    let report = load("s.json", &text).expect_err("invalid");
    assert!(
        report
            .diagnostics
            .iter()
            .any(|d| d.code == Code::InvalidType && &text[d.span.start..d.span.end] == "1"),
        "{:?}",
        report.diagnostics
    );
}

/// The file itself, cut to 10 + 20 s at 80 RPS, seed 1: every policy runs.
/// The fleet starts cold, and cold it serves about 49 RPS (warm about
/// 320): power-of-two, which ignores the key, keeps missing and its
/// backlog grows (a transient), while the key-affine policies get through
/// the cold start with several times its reuse and keep up.
#[test]
fn the_parity_scenario_runs_in_quick_form() {
    let p = prepared(&edit(|v| {
        v["warmup_s"] = 10.into();
        v["measure_s"] = 20.into();
        v["rates_rps"] = serde_json::json!([80]);
    }));
    let p2c = run_one(&p, "power-of-2-baseline", 80.0, 1).metrics;
    assert!(p2c.measured > 1_400, "{p2c:?}");
    assert!(p2c.token_reuse < 0.15, "{p2c:?}");
    assert!(!p2c.steady && p2c.backlog_growth > 0.1, "{p2c:?}");
    for policy in ["waw-deployed", "pulsar-waw-deployed"] {
        let m = run_one(&p, policy, 80.0, 1).metrics;
        assert!(m.measured > 1_400, "{policy}: {m:?}");
        assert!(m.steady, "{policy}: {m:?}");
        assert!(m.token_reuse > 4.0 * p2c.token_reuse, "{policy}: {m:?}");
        assert!(m.goodput_rps > 60.0, "{policy}: {m:?}");
    }
}
