//! `routex build` (route file -> lb-config.json) and `routex import`
//! (lb-config.json -> route file), with a round-trip property.

use proptest::prelude::*;
use routex::check::check_route_file;
use routex::check::schema::{set, Field, Typed};
use routex::config::{build, check_lb_config, expression_text, import};
use routex::diag::Code;
use routex::ir::{Algorithm, AlgorithmConfig, Comparator, RendezvousWeight};

const ROUTES: &str = r#"default = random
allow pulsar(seed="v1")
model "llama" = pulsar-wait-and-widen(
    seed = "v1", cache_affinity_wait_ms = 300,
    max_queue_time_floor_ms = 500, max_queue_time_ceil_ms = 2000,
) {
    allow wait-and-widen(next_bucket_unlock_factor="0.0625")
}
model "small" = round-robin
"#;

const JSON: &str = r#"{
  "default": "random",
  "request_algorithms": {
    "pulsar": {
      "algorithm": "pulsar",
      "seed": "v1"
    }
  },
  "models": {
    "llama": {
      "algorithm": "pulsar-wait-and-widen",
      "seed": "v1",
      "max_queue_time_floor_ms": 500,
      "max_queue_time_ceil_ms": 2000,
      "cache_affinity_wait_ms": 300,
      "request_algorithms": {
        "wait-and-widen": {
          "algorithm": "wait-and-widen",
          "next_bucket_unlock_factor": 0.0625
        }
      }
    },
    "small": "round-robin"
  }
}
"#;

#[test]
fn build_writes_stable_pretty_json() {
    let (json, report) = build("fleet.routes", ROUTES);
    assert!(report.diagnostics.is_empty(), "{:?}", report.diagnostics);
    assert_eq!(json.as_deref(), Some(JSON));
}

#[test]
fn build_refuses_a_default_with_arguments() {
    let text = "default = power-of-n(sample_count=4)\n";
    let (json, report) = build("a.routes", text);
    assert!(json.is_none());
    assert_eq!(report.diagnostics.len(), 1);
    let d = &report.diagnostics[0];
    assert_eq!(d.code, Code::DefaultWithArguments);
    assert_eq!(
        &text[d.span.start..d.span.end],
        "power-of-n(sample_count=4)"
    );
    // The same file is a valid route file.
    assert!(check_route_file("a.routes", text).0.is_some());
}

#[test]
fn import_writes_the_canonical_route_file() {
    let (routes, report) = import("lb-config.json", JSON);
    assert!(report.diagnostics.is_empty());
    assert_eq!(
        routes.as_deref(),
        Some(
            r#"default = random

allow pulsar(seed="v1")

model "llama" = pulsar-wait-and-widen(
    seed = "v1",
    max_queue_time_floor_ms = 500,
    max_queue_time_ceil_ms = 2000,
    cache_affinity_wait_ms = 300,
) {
    allow wait-and-widen(next_bucket_unlock_factor=0.0625)
}

model "small" = round-robin
"#
        )
    );
}

#[test]
fn import_writes_normalised_values_as_what_they_mean() {
    let json = r#"{"models": {
        "a": {"algorithm": "wait-and-widen", "n": 0, "cache_affinity_virtual_nodes": 0,
              "cache_affinity_backend_selection_count": 0},
        "b": {"algorithm": "pulsar-wait-and-widen", "cache_affinity_virtual_nodes": 9,
              "cache_affinity_backend_selection_count": 0, "rendezvous_weight": "last-mean-input-tps"}}}"#;
    let (routes, _) = import("lb-config.json", json);
    let routes = routes.expect("imports");
    assert_eq!(
        routes,
        r#"default = power-of-n

model "a" = wait-and-widen(n=1, cache_affinity_virtual_nodes=1)

model "b" = pulsar-wait-and-widen(
    rendezvous_weight = last-mean-input-tps,
    cache_affinity_backend_selection_count = 1,
)
"#
    );
    let (imported, report) = check_route_file("imported.routes", &routes);
    assert!(report.diagnostics.is_empty(), "{:?}", report.diagnostics);
    let original = check_lb_config("lb-config.json", json).0.unwrap();
    let imported = imported.unwrap();
    for id in ["a", "b"] {
        assert_eq!(
            imported.models[id].definition.policy,
            original.models[id].definition.policy
        );
    }
}

#[test]
fn import_of_invalid_json_reports_and_writes_nothing() {
    let (routes, report) = import("lb-config.json", "{\"default\": 3}");
    assert!(routes.is_none());
    assert_eq!(report.diagnostics[0].code, Code::InvalidType);
}

fn value_strategy(field: Field) -> BoxedStrategy<Typed> {
    match field {
        Field::RequireCacheAffinityKey
        | Field::RequireInputTokens
        | Field::ConsiderKvFreeTokens
        | Field::IgnoreQueueTime
        | Field::IgnoreInputProcessingTime
        | Field::LastClusterAffinity => any::<bool>().prop_map(Typed::Bool).boxed(),
        Field::Seed => "[a-z0-9 \"\\\\=;-]{0,8}".prop_map(Typed::Text).boxed(),
        Field::Comparator => prop::sample::select(Comparator::ALL.to_vec())
            .prop_map(Typed::Comparator)
            .boxed(),
        Field::RendezvousWeight => prop::sample::select(vec![
            RendezvousWeight::MaxInputTps,
            RendezvousWeight::LastMeanInputTps,
        ])
        .prop_map(Typed::Weight)
        .boxed(),
        Field::MaxInputWorkSeconds => (1u32..100_000)
            .prop_map(|v| Typed::Decimal(f64::from(v) / 64.0))
            .boxed(),
        Field::NextBucketUnlockFactor => (-1000i32..1000)
            .prop_map(|v| Typed::Decimal(f64::from(v) / 16.0))
            .boxed(),
        Field::CacheAffinityInputTokensScale => (0u32..=100)
            .prop_map(|v| Typed::Decimal(f64::from(v) / 100.0))
            .boxed(),
        Field::SampleCount => (1u64..=64).prop_map(Typed::Unsigned).boxed(),
        Field::CacheAffinityVirtualNodes => (1u64..=1024).prop_map(Typed::Unsigned).boxed(),
        Field::N | Field::TtftBucketSizeMs | Field::CacheAffinityBackendSelectionCount => {
            (1u64..10_000).prop_map(Typed::Unsigned).boxed()
        }
        _ => prop_oneof![Just(u64::MAX), any::<u64>(), 0u64..1000]
            .prop_map(Typed::Unsigned)
            .boxed(),
    }
}

/// A valid route-file configuration of some algorithm.
fn config_strategy() -> impl Strategy<Value = AlgorithmConfig> {
    prop::sample::select(Algorithm::ALL.to_vec())
        .prop_flat_map(|alg| {
            let fields: Vec<Field> = Field::ALL
                .into_iter()
                .filter(|f| f.route_file_algorithms().contains(&alg))
                .collect();
            let values: Vec<_> = fields
                .iter()
                .map(|f| prop::option::weighted(0.4, value_strategy(*f)))
                .collect();
            (Just(alg), Just(fields), values, any::<bool>())
        })
        .prop_map(|(alg, fields, values, slo)| {
            let mut config = AlgorithmConfig::named(alg);
            for (field, value) in fields.into_iter().zip(values) {
                if let Some(v) = value {
                    set(&mut config.fields, field, v).unwrap();
                }
            }
            // The bounds come in pairs in a strict route file.
            let f = &mut config.fields;
            if slo && matches!(alg, Algorithm::WaitAndWiden | Algorithm::PulsarWaitAndWiden) {
                f.max_queue_time_floor_ms = Some(f.max_queue_time_floor_ms.unwrap_or(1));
                f.max_queue_time_ceil_ms = Some(f.max_queue_time_ceil_ms.unwrap_or(2));
            } else {
                f.max_queue_time_floor_ms = None;
                f.max_queue_time_ceil_ms = None;
            }
            config
        })
}

/// Route-file text with a bare default, some allows and models.
fn routes_strategy() -> impl Strategy<Value = String> {
    (
        prop::sample::select(Algorithm::ALL.to_vec()),
        prop::collection::vec(config_strategy(), 0..4),
        prop::collection::vec(
            (
                "[a-z][a-z0-9./-]{0,6}",
                config_strategy(),
                prop::collection::vec(config_strategy(), 0..3),
            ),
            0..4,
        ),
    )
        .prop_map(|(default, allows, models)| {
            let mut text = format!("default = {default}\n");
            let mut seen = Vec::new();
            for a in allows.iter().filter(|a| {
                let fresh = !seen.contains(&a.algorithm);
                seen.push(a.algorithm);
                fresh
            }) {
                text.push_str(&format!("allow {}\n", expression_text(a)));
            }
            let mut ids = Vec::new();
            for (id, config, allows) in models {
                if ids.contains(&id) {
                    continue;
                }
                text.push_str(&format!(
                    "model \"{id}\" = {} {{\n",
                    expression_text(&config)
                ));
                let mut seen = Vec::new();
                for a in allows {
                    if !seen.contains(&a.algorithm) {
                        seen.push(a.algorithm);
                        text.push_str(&format!("  allow {}\n", expression_text(&a)));
                    }
                }
                text.push_str("}\n");
                ids.push(id);
            }
            text
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn build_then_import_round_trips_route_tables(text in routes_strategy()) {
        let (table, report) = check_route_file("gen.routes", &text);
        prop_assert!(!report.has_errors(), "{}\n{:?}", text, report.diagnostics);
        let table = table.unwrap();
        let (json, report) = build("gen.routes", &text);
        prop_assert!(!report.has_errors(), "{:?}", report.diagnostics);
        let json = json.unwrap();
        let (from_json, report) = check_lb_config("gen.json", &json);
        prop_assert!(!report.has_errors(), "{}\n{:?}", json, report.diagnostics);
        prop_assert_eq!(from_json.as_ref(), Some(&table));
        let (routes, _) = import("gen.json", &json);
        let routes = routes.unwrap();
        prop_assert_eq!(routex::syntax::format_route_file(&routes).ok(), Some(routes.clone()));
        let (again, report) = check_route_file("imported.routes", &routes);
        prop_assert!(!report.has_errors(), "{}\n{:?}", routes, report.diagnostics);
        prop_assert_eq!(again.as_ref(), Some(&table));
    }
}

#[test]
fn import_refuses_values_a_strict_route_file_cannot_say() {
    let json = r#"{"request_algorithms": {"groq-multiregion": {"algorithm": "wait-and-widen",
            "ttft_bucket_size_ms": 0, "cache_affinity_virtual_nodes": 5000}},
        "models": {"m": {"algorithm": "random", "max_input_work_seconds": 0,
            "request_algorithms": {"wait-and-widen": {"algorithm": "wait-and-widen",
                "next_bucket_unlock_factor": -2.5, "n": 0}}}}}"#;
    let (routes, report) = import("lb-config.json", json);
    assert!(routes.is_none());
    let found: Vec<_> = report
        .diagnostics
        .iter()
        .filter(|d| d.code == Code::NotRepresentableInRouteFile)
        .map(|d| (d.message.clone(), &json[d.span.start..d.span.end]))
        .collect();
    assert_eq!(
        found,
        vec![
            (
                "ttft_bucket_size_ms 0 is accepted in lb-config.json but inert in a route file"
                    .to_string(),
                "\"ttft_bucket_size_ms\""
            ),
            (
                "cache_affinity_virtual_nodes 5000 is above the route-file maximum of 1024"
                    .to_string(),
                "\"cache_affinity_virtual_nodes\""
            ),
            (
                "max_input_work_seconds 0 must be finite and above 0 in a route file".to_string(),
                "\"max_input_work_seconds\""
            ),
        ]
    );
}

#[test]
fn import_drops_a_lone_queue_bound() {
    let json = r#"{"models": {"m": {"algorithm": "wait-and-widen", "seed": "s", "max_queue_time_ceil_ms": 300}}}"#;
    let (routes, report) = import("lb-config.json", json);
    assert_eq!(report.diagnostics[0].code, Code::IncompleteQueueSlo);
    assert_eq!(
        routes.as_deref(),
        Some("default = power-of-n\n\nmodel \"m\" = wait-and-widen(seed=\"s\")\n")
    );
}
