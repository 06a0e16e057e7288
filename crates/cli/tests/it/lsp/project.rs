//! The editor server honours the project configuration as `routex lint`
//! does: levels and suppressions from the nearest `routex.toml`, re-read
//! when a saved or watched `routex.toml` changes.

use super::client::Client;
use serde_json::{json, Value};

/// `(code, severity)` of each diagnostic.
fn codes(diagnostics: &[Value]) -> Vec<(String, u64)> {
    diagnostics
        .iter()
        .map(|d| {
            (
                d["code"].as_str().unwrap_or("").to_string(),
                d["severity"].as_u64().unwrap_or(0),
            )
        })
        .collect()
}

#[test]
fn levels_and_suppressions_follow_routex_toml_and_its_changes() {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("lsp-project");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("sub")).expect("dir");
    let config = dir.join("routex.toml");
    std::fs::write(&config, "[levels]\ndeprecated_alias = \"deny\"\n").expect("write");
    let base = format!("file://{}", dir.display());
    let routes = format!("{base}/sub/a.routes");
    let mut client = Client::start();
    client.open(
        &routes,
        "default = powerOf2\nmodel \"m\" = powerOf2  # routex: allow(deprecated_alias) -- migrating\n",
    );
    // Denied by the file (severity 1 = error); the line comment suppresses
    // the second one.
    assert_eq!(
        codes(&client.diagnostics(&routes)),
        [("deprecated_alias".to_string(), 1)]
    );
    // The file changes and is saved: every open document is checked again.
    std::fs::write(&config, "[levels]\ndeprecated_alias = \"allow\"\n").expect("write");
    client.notify(
        "textDocument/didSave",
        json!({"textDocument": {"uri": format!("{base}/routex.toml")}}),
    );
    assert_eq!(codes(&client.diagnostics(&routes)), []);
    // A watched-file event does the same.
    std::fs::write(&config, "[levels]\ndeprecated_alias = \"warn\"\n").expect("write");
    client.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": format!("{base}/routex.toml"), "type": 2}]}),
    );
    assert_eq!(
        codes(&client.diagnostics(&routes)),
        [("deprecated_alias".to_string(), 2)]
    );
    assert_eq!(client.shutdown(), 0);
}

/// Waits for the no-queue-SLO shortcut, which only `widening` has
/// (docs/stargate.md 3.8.3).
const SHORTCUT: &str = "default = pulsar-wait-and-widen(cache_affinity_wait_ms = 300)\n";

#[test]
fn the_stargate_target_follows_routex_toml_and_the_command_line_wins() {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("lsp-project-target");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("dir");
    std::fs::write(dir.join("routex.toml"), "stargate = \"widening\"\n").expect("write");
    let routes = format!("file://{}/a.routes", dir.display());
    // The file's target: widening's shortcut is reported.
    let mut client = Client::start();
    client.open(&routes, SHORTCUT);
    assert_eq!(
        codes(&client.diagnostics(&routes)),
        [("no_queue_slo".to_string(), 2)]
    );
    // Completion offers widening's fields: no `last_cluster_affinity`.
    let labels = completion_labels(&mut client, &routes);
    assert!(
        labels.iter().any(|l| l == "band_widen_interval_ms"),
        "{labels:?}"
    );
    assert!(
        !labels.iter().any(|l| l == "last_cluster_affinity"),
        "{labels:?}"
    );
    assert_eq!(client.shutdown(), 0);
    // `routex lsp --stargate sessions` wins over the file.
    let mut client = Client::start_with(&["--stargate", "sessions"]);
    client.open(&routes, SHORTCUT);
    assert_eq!(codes(&client.diagnostics(&routes)), []);
    let labels = completion_labels(&mut client, &routes);
    assert!(
        labels.iter().any(|l| l == "last_cluster_affinity"),
        "{labels:?}"
    );
    assert_eq!(client.shutdown(), 0);
}

/// The labels completion offers inside the `default` entry's parentheses.
fn completion_labels(client: &mut Client, uri: &str) -> Vec<String> {
    let at = SHORTCUT.find('(').expect("an opening parenthesis") + 1;
    let answer = client.request(
        "textDocument/completion",
        json!({"textDocument": {"uri": uri}, "position": {"line": 0, "character": at}}),
    );
    answer["result"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|item| item["label"].as_str().map(String::from))
        .collect()
}
