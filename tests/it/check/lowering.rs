//! Lowering: defaults, normalisations, provenance, and the IR JSON of every
//! algorithm (snapshots under snapshots/check/).

use super::{compile, table};
use routex::check::{
    build_policy, default_follows, implications, provenance, Implication, Place, Provenance,
};
use routex::ir::{Algorithm, AlgorithmConfig, FieldSet, Settings};

fn snapshot_settings() -> insta::Settings {
    let mut s = insta::Settings::clone_current();
    s.set_snapshot_path("../../../snapshots/check");
    s.set_prepend_module_to_snapshot(false);
    s
}

fn ir(config: &AlgorithmConfig) -> String {
    let policy = build_policy(config).expect("builds");
    serde_json::to_string_pretty(&policy).expect("serialises")
}

#[test]
fn ir_json_of_every_algorithm_with_defaults() {
    let settings = snapshot_settings();
    for alg in Algorithm::ALL {
        let json = ir(&AlgorithmConfig::named(alg));
        settings.bind(|| insta::assert_snapshot!(format!("ir_default_{}", alg.name()), json));
    }
}

#[test]
fn ir_json_of_every_algorithm_with_settings() {
    let mut configs: Vec<(Algorithm, FieldSet)> = Vec::new();
    let f = FieldSet {
        sample_count: Some(4),
        comparator: Some(routex::ir::Comparator::QueueTime),
        max_input_work_seconds: Some(2.5),
        ..FieldSet::default()
    };
    configs.push((Algorithm::PowerOfN, f));
    let f = FieldSet {
        seed: Some("ww-v1".into()),
        n: Some(3),
        cache_affinity_backend_selection_count: Some(2),
        cache_affinity_virtual_nodes: Some(64),
        cache_affinity_input_tokens_scale: Some(0.1),
        cache_affinity_wait_ms: Some(200),
        max_queue_time_floor_ms: Some(100),
        max_queue_time_ceil_ms: Some(300),
        ignore_queue_time: Some(true),
        ..FieldSet::default()
    };
    configs.push((Algorithm::WaitAndWiden, f));
    let f = FieldSet {
        require_cache_affinity_key: Some(true),
        ..FieldSet::default()
    };
    configs.push((Algorithm::RoundRobin, f));
    let f = FieldSet {
        require_input_tokens: Some(true),
        ..FieldSet::default()
    };
    configs.push((Algorithm::Random, f));
    let f = FieldSet {
        seed: Some("v1".into()),
        consider_kv_free_tokens: Some(true),
        rendezvous_weight: Some(routex::ir::RendezvousWeight::LastMeanInputTps),
        ..FieldSet::default()
    };
    configs.push((Algorithm::Pulsar, f));
    let f = FieldSet {
        seed: Some("v1".into()),
        cache_affinity_wait_ms: Some(300),
        fallback_max_queued: Some(1),
        max_queue_time_floor_ms: Some(500),
        max_queue_time_ceil_ms: Some(2000),
        next_bucket_unlock_factor: Some(0.0625),
        ..FieldSet::default()
    };
    configs.push((Algorithm::PulsarWaitAndWiden, f));
    let settings = snapshot_settings();
    for (algorithm, fields) in configs {
        let json = ir(&AlgorithmConfig { algorithm, fields });
        settings
            .bind(|| insta::assert_snapshot!(format!("ir_settings_{}", algorithm.name()), json));
    }
}

#[test]
fn pww_defaults_and_derived_fields() {
    let policy = build_policy(&AlgorithmConfig::named(Algorithm::PulsarWaitAndWiden)).unwrap();
    let Settings::PulsarWaitAndWiden(s) = policy.settings else {
        panic!("pww");
    };
    assert_eq!(s.cache_affinity_backend_selection_count, 1);
    assert_eq!((s.cache_affinity_wait_ms, s.band_widen_interval_ms), (0, 0));
    assert_eq!(s.fallback_max_queued, 0);
    assert_eq!(s.bucket.ttft_bucket_size_ms, 20);
    let fields = FieldSet {
        cache_affinity_wait_ms: Some(300),
        cache_affinity_backend_selection_count: Some(0),
        ..FieldSet::default()
    };
    let policy = build_policy(&AlgorithmConfig {
        algorithm: Algorithm::PulsarWaitAndWiden,
        fields,
    })
    .unwrap();
    let Settings::PulsarWaitAndWiden(s) = policy.settings else {
        panic!("pww");
    };
    assert_eq!(s.band_widen_interval_ms, 300, "S defaults to X");
    assert_eq!(s.cache_affinity_backend_selection_count, 1, "k 0 means 1");
}

#[test]
fn provenance_names_default_config_and_expression() {
    let table = table(
        r#"{"models": {"m": {"algorithm": "pulsar-wait-and-widen", "seed": "cfg",
            "cache_affinity_wait_ms": 300, "max_queue_time_floor_ms": 1, "max_queue_time_ceil_ms": 2}}}"#,
    );
    let (checked, diags) = compile(
        Some(&table),
        Some("m"),
        "pulsar-wait-and-widen;n=4;consider_kv_free_tokens=true",
    );
    assert!(diags.is_empty(), "{diags:?}");
    let checked = checked.unwrap();
    let p = provenance(
        checked.policy.as_ref().unwrap(),
        &checked,
        Place::ModelEntry,
    );
    let get = |k: &str| p.get(k).copied();
    let config = Some(Provenance::Config(Place::ModelEntry));
    assert_eq!(get("n"), Some(Provenance::Expression));
    assert_eq!(get("seed"), config);
    assert_eq!(get("cache_affinity_wait_ms"), config);
    // Unset: its default, which is cache_affinity_wait_ms's value.
    assert_eq!(get("band_widen_interval_ms"), Some(Provenance::Default));
    assert_eq!(
        default_follows("band_widen_interval_ms"),
        Some("cache_affinity_wait_ms")
    );
    assert_eq!(default_follows("cache_affinity_wait_ms"), None);
    // Default false, made true by the expression's consider_kv_free_tokens.
    assert_eq!(get("require_input_tokens"), Some(Provenance::Implied));
    assert_eq!(get("max_queued"), Some(Provenance::Default));
    assert_eq!(get("rendezvous_weight"), Some(Provenance::Default));
    assert_eq!(get("require_cache_affinity_key"), Some(Provenance::Default));
    // Every IR field has one.
    assert_eq!(get("last_cluster_affinity"), Some(Provenance::Default));
    assert_eq!(p.len(), 20, "{p:?}");
    let implied = implications(&checked, Place::ModelEntry);
    assert_eq!(implied.len(), 1, "{implied:?}");
    assert_eq!(
        implied["require_input_tokens"],
        Implication {
            by: "consider_kv_free_tokens",
            by_from: Provenance::Expression,
            configured: false.into(),
            configured_from: Provenance::Default,
        }
    );
}
