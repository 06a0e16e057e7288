//! Hover, completion, quick fixes, formatting and symbols over the wire,
//! with exact answers.

use super::client::{at, range, Client};
use serde_json::{json, Value};

const CONFIG: &str = "file:///work/lb-config.json";
const ROUTES: &str = "file:///work/fleet.routes";

const GOOD_CONFIG: &str = r#"{
  "default": "powerOf2",
  "models": {
    "llama": {"algorithm": "pulsar-wait-and-widen", "seed": "v1", "cache_affinity_wait_ms": 300,
      "max_queue_time_floor_ms": 500, "max_queue_time_ceil_ms": 2000}
  }
}
"#;

const GOOD_ROUTES: &str = "default = random\nmodel \"m\" = power-of-n(sample_count = 3, comparator = queue-time) {\n  allow pulsar(seed=\"x\")\n}\n";

fn hover_text(client: &mut Client, uri: &str, line: u32, character: u32) -> (String, Value) {
    let hover = client.result("textDocument/hover", at(uri, line, character));
    assert_eq!(hover["contents"]["kind"], "markdown", "{hover}");
    (
        hover["contents"]["value"].as_str().unwrap().to_string(),
        hover["range"].clone(),
    )
}

fn labels(items: &Value) -> Vec<&str> {
    items
        .as_array()
        .expect("a completion list")
        .iter()
        .map(|i| i["label"].as_str().unwrap())
        .collect()
}

#[test]
fn hover_shows_schema_and_effective_value_with_provenance() {
    let mut client = Client::start();
    client.open(CONFIG, GOOD_CONFIG);
    let (text, hover_range) = hover_text(&mut client, CONFIG, 3, 54);
    assert_eq!(
        text,
        "**seed**: a token or a quoted string\n\nText mixed into every ring and ranking hash: another seed, another placement.\n\ndefault: `\"\"`\n\n\
         applies to: wait-and-widen, pulsar, pulsar-wait-and-widen\n\n\
         effective for model \"llama\" (pulsar-wait-and-widen): `\"v1\"` from config (model entry)\n"
    );
    assert_eq!(hover_range, range((3, 52), (3, 58)));
    // On a value: the same field; band_widen_interval_ms is derived.
    let (text, _) = hover_text(&mut client, CONFIG, 3, 93);
    assert!(
        text.ends_with("(pulsar-wait-and-widen): `300` from config (model entry)\n"),
        "{text}"
    );
    // On an alias: the canonical name.
    let (text, hover_range) = hover_text(&mut client, CONFIG, 1, 16);
    assert!(
        text.starts_with("**power-of-n**\n\nSamples `sample_count` distinct"),
        "{text}"
    );
    assert!(text.contains("`powerOf2` is a deprecated alias of `power-of-n`: write `power-of-n`."));
    assert_eq!(hover_range, range((1, 13), (1, 23)));
    // On a model id: what `routex explain` shows.
    let (text, _) = hover_text(&mut client, CONFIG, 3, 6);
    assert!(text
        .starts_with("**model \"llama\"**: pulsar-wait-and-widen\n\n| field | value | from |\n"));
    // explain's words: unset, it follows cache_affinity_wait_ms.
    assert!(text.contains(
        "| band_widen_interval_ms | `300` | default, follows cache_affinity_wait_ms |\n"
    ));
    assert!(text.contains("| n | `2` | default |\n"));
    // Whitespace, punctuation and positions past the end: nothing.
    assert_eq!(
        client.result("textDocument/hover", at(CONFIG, 0, 0)),
        Value::Null
    );
    assert_eq!(
        client.result("textDocument/hover", at(CONFIG, 40, 3)),
        Value::Null
    );
    assert_eq!(client.shutdown(), 0);
}

#[test]
fn hover_in_route_files() {
    let mut client = Client::start();
    client.open(ROUTES, GOOD_ROUTES);
    let (text, hover_range) = hover_text(&mut client, ROUTES, 1, 25);
    assert_eq!(
        text,
        "**sample_count**: an integer from 0 to 2^64-1\n\nHow many candidates power-of-n samples before comparing them.\n\ndefault: `2`\n\naccepted: 1..=64\n\n\
         applies to: power-of-n\n\neffective for model \"m\" (power-of-n): `3` from config (model entry)\n"
    );
    assert_eq!(hover_range, range((1, 23), (1, 35)));
    let (text, _) = hover_text(&mut client, ROUTES, 0, 12);
    assert_eq!(
        text,
        "**random**\n\nTakes an eligible cluster uniformly at random.\n\n\
         parameters: `require_cache_affinity_key`, `require_input_tokens`, `max_input_work_seconds`\n"
    );
    // An allow entry of a model resolves inside that model.
    let (text, _) = hover_text(&mut client, ROUTES, 2, 16);
    assert!(
        text.ends_with(
            "effective for model \"m\" (pulsar): `\"x\"` from config (model request_algorithms)\n"
        ),
        "{text}"
    );
    assert_eq!(client.shutdown(), 0);
}

#[test]
fn completion_offers_canonical_names_unset_parameters_and_values() {
    let mut client = Client::start();
    let text = "model \"m\" = pulsar(seed=\"x\", )\nallow power-of-n(comparator=)\ndefault = ";
    client.open(ROUTES, text);
    let items = client.result("textDocument/completion", at(ROUTES, 0, 29));
    assert_eq!(
        labels(&items),
        [
            "require_cache_affinity_key",
            "require_input_tokens",
            "max_input_work_seconds",
            "consider_kv_free_tokens",
            "rendezvous_weight"
        ]
    );
    assert_eq!(items[3]["detail"], "default: false");
    assert_eq!(
        items[3]["textEdit"],
        json!({"range": range((0, 29), (0, 29)), "newText": "consider_kv_free_tokens="})
    );
    let items = client.result("textDocument/completion", at(ROUTES, 1, 28));
    assert_eq!(
        labels(&items),
        [
            "ttft",
            "queue-time",
            "input-work-seconds",
            "utilization",
            "num-requests-queued"
        ]
    );
    // Algorithm names: canonical only, never an alias.
    let items = client.result("textDocument/completion", at(ROUTES, 2, 10));
    assert_eq!(
        labels(&items),
        [
            "power-of-n",
            "wait-and-widen",
            "round-robin",
            "random",
            "pulsar",
            "pulsar-wait-and-widen"
        ]
    );
    // In lb-config.json: the keys the entry's algorithm takes, not yet set.
    let config = "{\"models\": {\"m\": {\"algorithm\": \"pulsar\", \"seed\": \"a\", \"\n  }}}";
    client.open(CONFIG, config);
    let items = client.result("textDocument/completion", at(CONFIG, 0, 55));
    assert_eq!(
        labels(&items),
        [
            "request_algorithms",
            "require_cache_affinity_key",
            "require_input_tokens",
            "max_input_work_seconds",
            "consider_kv_free_tokens",
            "rendezvous_weight"
        ]
    );
    assert_eq!(
        items[5]["textEdit"],
        json!({"range": range((0, 54), (0, 55)), "newText": "\"rendezvous_weight\": "})
    );
    assert_eq!(client.shutdown(), 0);
}

#[test]
fn completion_of_model_names_from_other_open_configurations() {
    let mut client = Client::start();
    client.open(ROUTES, GOOD_ROUTES);
    client.open(CONFIG, "{\"models\": {\"\"}}");
    let items = client.result("textDocument/completion", at(CONFIG, 0, 13));
    assert_eq!(labels(&items), ["m"]);
    assert_eq!(items[0]["textEdit"]["newText"], "\"m\": ");
    assert_eq!(client.shutdown(), 0);
}

#[test]
fn completion_in_scenario_policy_expressions() {
    let mut client = Client::start();
    let uri = "file:///work/scenario.json";
    client.open(
        uri,
        "{\"topology\": {}, \"policies\": {\"a\": \"power-of-n(sa\"}}",
    );
    let items = client.result("textDocument/completion", at(uri, 0, 49));
    // The client filters by the typed prefix; the server lists them all.
    assert_eq!(
        labels(&items),
        [
            "require_cache_affinity_key",
            "require_input_tokens",
            "max_input_work_seconds",
            "sample_count",
            "comparator"
        ]
    );
    assert_eq!(
        items[3]["textEdit"],
        json!({"range": range((0, 47), (0, 49)), "newText": "sample_count="})
    );
    assert_eq!(client.shutdown(), 0);
}

fn actions(
    client: &mut Client,
    uri: &str,
    from: (u32, u32),
    to: (u32, u32),
) -> Vec<(String, Value)> {
    let result = client.result(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": range(from, to), "context": {"diagnostics": []}}),
    );
    result
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            assert_eq!(a["kind"], "quickfix");
            (
                a["title"].as_str().unwrap().to_string(),
                a["edit"]["changes"][uri].clone(),
            )
        })
        .collect()
}

#[test]
fn quick_fixes_replace_and_remove() {
    let mut client = Client::start();
    let text = "{\"models\": {\"m\": {\"algorithm\": \"pulsra\"},\n \"m2\": {\"algorithm\": \"pulsar\", \"seed\": \"x\", \"n\": 3},\n \"m3\": {\"algorithm\": \"wait-and-widen\", \"sed\": \"a\"}}, \"default\": \"powerOf2\"}";
    client.open(CONFIG, text);
    let found = actions(&mut client, CONFIG, (0, 0), (3, 0));
    let edit =
        |l0, c0, l1, c1, t: &str| json!([{"range": range((l0, c0), (l1, c1)), "newText": t}]);
    assert_eq!(
        found,
        [
            (
                "Replace \"pulsra\" with \"pulsar\"".to_string(),
                edit(0, 31, 0, 39, "\"pulsar\"")
            ),
            ("Remove \"n\"".to_string(), edit(1, 42, 1, 50, "")),
            (
                "Replace \"sed\" with \"seed\"".to_string(),
                edit(2, 39, 2, 44, "\"seed\"")
            ),
            (
                "Replace \"powerOf2\" with \"power-of-n\"".to_string(),
                edit(2, 64, 2, 74, "\"power-of-n\"")
            ),
        ]
    );
    // Only the diagnostics the range touches.
    assert_eq!(actions(&mut client, CONFIG, (1, 45), (1, 45)).len(), 1);
    let routes = "model \"m\" = pulsar(seed=\"v\", n=1) {\n  allow pulsar  # shadowed\n  allow random\n}\nallow groq-multiregion\n";
    client.open(ROUTES, routes);
    let found = actions(&mut client, ROUTES, (0, 0), (5, 0));
    assert_eq!(
        found,
        [
            ("Remove n".to_string(), edit(0, 27, 0, 32, "")),
            ("Remove allow pulsar".to_string(), edit(1, 0, 2, 0, "")),
            (
                "Replace groq-multiregion with wait-and-widen".to_string(),
                edit(4, 6, 4, 22, "wait-and-widen")
            ),
        ]
    );
    assert_eq!(client.shutdown(), 0);
}

#[test]
fn formatting_and_symbols() {
    let mut client = Client::start();
    client.open(ROUTES, "model \"m\"=pulsar(seed=\"x\",n=1)\nallow  random");
    let options = json!({"tabSize": 2, "insertSpaces": true});
    // Not formattable while it has errors? `n` is a check error, not syntax.
    let edits = client.result(
        "textDocument/formatting",
        json!({"textDocument": {"uri": ROUTES}, "options": options}),
    );
    assert_eq!(
        edits,
        json!([{"range": range((0, 0), (1, 13)), "newText": "model \"m\" = pulsar(seed=\"x\", n=1)\nallow random\n"}])
    );
    client.replace(
        ROUTES,
        2,
        "model \"m\" = pulsar(seed=\"x\", n=1)\nallow random\n",
    );
    let edits = client.result(
        "textDocument/formatting",
        json!({"textDocument": {"uri": ROUTES}, "options": options}),
    );
    assert_eq!(edits, json!([]));
    client.replace(ROUTES, 3, GOOD_ROUTES);
    let symbols = client.result(
        "textDocument/documentSymbol",
        json!({"textDocument": {"uri": ROUTES}}),
    );
    let outline: Vec<(String, u64, usize)> = symbols
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap().to_string(),
                s["kind"].as_u64().unwrap(),
                s["children"].as_array().map_or(0, Vec::len),
            )
        })
        .collect();
    assert_eq!(
        outline,
        [("default".to_string(), 14, 0), ("m".to_string(), 2, 1)]
    );
    assert_eq!(symbols[1]["children"][0]["name"], "allow pulsar");
    client.open(CONFIG, GOOD_CONFIG);
    let symbols = client.result(
        "textDocument/documentSymbol",
        json!({"textDocument": {"uri": CONFIG}}),
    );
    assert_eq!(symbols[0]["name"], "default");
    assert_eq!(symbols[0]["detail"], "powerOf2");
    assert_eq!(symbols[1]["name"], "llama");
    assert_eq!(symbols[1]["detail"], "pulsar-wait-and-widen");
    assert_eq!(symbols[1]["selectionRange"], range((3, 4), (3, 11)));
    assert_eq!(client.shutdown(), 0);
}

#[test]
fn hover_in_scenario_policy_expressions() {
    let mut client = Client::start();
    let uri = "file:///work/scenario.json";
    client.open(
        uri,
        "{\"topology\": {}, \"policies\": {\"a\": \"pulsar(seed=\\\"x\\\")\", \"b\": \"powerOf2\"}}",
    );
    // On `seed` inside the first policy: the schema, no effective value.
    let (text, hover_range) = hover_text(&mut client, uri, 0, 45);
    assert_eq!(
        text,
        "**seed**: a token or a quoted string\n\nText mixed into every ring and ranking hash: another seed, another placement.\n\ndefault: `\"\"`\n\n\
         applies to: wait-and-widen, pulsar, pulsar-wait-and-widen\n"
    );
    assert_eq!(hover_range, range((0, 43), (0, 47)));
    let (text, hover_range) = hover_text(&mut client, uri, 0, 66);
    assert!(text.starts_with("**power-of-n**"), "{text}");
    assert_eq!(hover_range, range((0, 63), (0, 71)));
    assert_eq!(client.shutdown(), 0);
}
