//! The proxy example reloads its configuration on SIGHUP while requests
//! run (the fleet of tests/support/proxy_fleet.rs): no request fails, the
//! new policy decides afterwards, and a configuration with errors is
//! refused with the old one kept. Alone in its binary: the signal goes to
//! the whole test process.
#![cfg(all(feature = "tokio", feature = "http", feature = "metrics"))]

// The test uses a part of the fake backend's controls.
#[allow(dead_code)]
#[path = "../examples/proxy/backend.rs"]
mod backend;
#[path = "../examples/proxy/client.rs"]
mod client;
#[path = "support/proxy_fleet.rs"]
mod fleet;
// The gateway's store serves tests/proxy/routing.rs.
#[allow(dead_code)]
#[path = "../examples/proxy/gateway.rs"]
mod gateway;
// Each test binary uses a part of the front end (reloads, views).
#[allow(dead_code)]
#[path = "../examples/proxy/front.rs"]
mod front;
#[path = "../examples/proxy/heartbeat.rs"]
mod heartbeat;

use backend::BackendConfig;
use fleet::{ranking, run, until, Fleet, CLUSTERS, MODEL, SLOTS, TPS};
use front::ProxyOptions;
use http::StatusCode;
use std::collections::BTreeSet;
use std::path::Path;

fn hangup() {
    let status = std::process::Command::new("kill")
        .args(["-HUP", &std::process::id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success());
}

/// examples/lb-config.json with `llama-3-70b`'s entry replaced.
fn config_with(model_entry: serde_json::Value) -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/lb-config.json");
    let mut config: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    config["models"][MODEL] = model_entry;
    serde_json::to_string_pretty(&config).unwrap()
}

#[test]
fn sighup_replaces_the_policy_mid_traffic_and_refuses_a_broken_file() {
    let dir = std::env::temp_dir().join(format!("routex-reload-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("lb-config.json");
    let original = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/lb-config.json");
    std::fs::copy(original, &path).unwrap();
    run(async {
        let table = routex::config::load_table_path(&path).unwrap().0;
        let configs = CLUSTERS
            .iter()
            .map(|c| BackendConfig::new(c, &[MODEL], SLOTS, TPS))
            .collect();
        let fleet = Fleet::start_table(table, configs, ProxyOptions::default()).await;
        fleet
            .proxy
            .reload_on_sighup(path.to_str().unwrap().to_owned())
            .unwrap();
        let key = "reloaded";
        let primary = ranking(key)[0].clone();
        // Traffic on one key throughout: pulsar-wait-and-widen keeps it on
        // its primary until the reload.
        let mut traffic = tokio::task::JoinSet::new();
        for _ in 0..20 {
            traffic.spawn(fleet.keyed(key));
        }
        write(&path, &config_with(serde_json::json!("round-robin")));
        hangup();
        for _ in 0..20 {
            traffic.spawn(fleet.keyed(key));
        }
        let reloads = || async {
            let scrape = fleet.scrape().await;
            scrape
                .samples
                .iter()
                .find(|s| s.metric == "routex_reloads_total")
                .map_or(0.0, |s| match s.value {
                    prometheus_parse::Value::Counter(v) => v,
                    _ => 0.0,
                })
        };
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(20);
        while reloads().await < 1.0 {
            assert!(tokio::time::Instant::now() < deadline, "no reload");
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        while let Some(reply) = traffic.join_next().await {
            let reply = reply.unwrap();
            assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
        }
        // Round-robin now: one key visits every cluster in turn.
        fleet.heartbeats().await;
        let mut seen = BTreeSet::new();
        for _ in 0..3 {
            let reply = fleet.keyed(key).await;
            assert_eq!(reply.status, StatusCode::OK);
            seen.insert(reply.cluster().to_owned());
        }
        assert_eq!(seen.len(), 3, "round-robin after the reload: {seen:?}");

        // A file with an error: refused, round-robin stays.
        write(&path, "{\"version\": 1, \"models\": {");
        hangup();
        until("the refusal", || fleet.proxy.reloads_refused() == 1).await;
        assert_eq!(reloads().await, 1.0);
        let mut seen = BTreeSet::new();
        for _ in 0..3 {
            seen.insert(fleet.keyed(key).await.cluster().to_owned());
        }
        assert_eq!(seen.len(), 3, "still round-robin: {seen:?}");

        // Back to the original policy: the key returns to its primary.
        write(&path, &std::fs::read_to_string(original).unwrap());
        hangup();
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(20);
        while reloads().await < 2.0 {
            assert!(tokio::time::Instant::now() < deadline, "no second reload");
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        fleet.heartbeats().await;
        assert_eq!(fleet.keyed(key).await.cluster(), primary);
    });
    let _ = std::fs::remove_dir_all(&dir);
}

fn write(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
}
