//! Diagnostics over the wire: codes, UTF-16 ranges after multibyte text,
//! help, links; cleared when fixed and on close; a document mid-edit.

use super::client::{at, Client, DOCS};
use serde_json::{json, Value};

const CONFIG: &str = "file:///work/lb-config.json";
const ROUTES: &str = "file:///work/fleet.routes";

/// `(code, start line, start character, end line, end character)`.
fn summary(diagnostics: &[Value]) -> Vec<(String, u64, u64, u64, u64)> {
    diagnostics
        .iter()
        .map(|d| {
            let r = &d["range"];
            (
                d["code"].as_str().unwrap_or("").to_string(),
                r["start"]["line"].as_u64().unwrap(),
                r["start"]["character"].as_u64().unwrap(),
                r["end"]["line"].as_u64().unwrap(),
                r["end"]["character"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn row(code: &str, l0: u64, c0: u64, l1: u64, c1: u64) -> (String, u64, u64, u64, u64) {
    (code.to_string(), l0, c0, l1, c1)
}

#[test]
fn config_diagnostics_have_codes_utf16_ranges_help_and_links() {
    let mut client = Client::start();
    // 🦙 is two UTF-16 units (four bytes), é one (two bytes).
    let text = "{\"models\": {\"🦙é\": {\"algorithm\": \"pulsra\"},\n \"m2\": {\"algorithm\": \"pulsar\", \"n\": 3}}, \"default\": \"powerOf2\"}";
    client.open(CONFIG, text);
    let diagnostics = client.diagnostics(CONFIG);
    assert_eq!(
        diagnostics[0],
        json!({
            "range": {"start": {"line": 0, "character": 33}, "end": {"line": 0, "character": 41}},
            "severity": 1,
            "code": "unknown_method",
            "codeDescription": {"href": format!("{DOCS}#unknown_method")},
            "source": "routex",
            "message": "unknown algorithm \"pulsra\"\nhelp: did you mean \"pulsar\"? (names are exact and case-sensitive)",
        })
    );
    assert_eq!(
        summary(&diagnostics),
        [
            row("unknown_method", 0, 33, 0, 41),
            row("unsupported_field", 1, 31, 1, 34),
            row("deprecated_alias", 1, 52, 1, 62),
        ]
    );
    assert_eq!(diagnostics[2]["severity"], 2);
    assert_eq!(client.shutdown(), 0);
}

#[test]
fn fixed_problems_are_cleared_and_closing_leaves_none() {
    let mut client = Client::start();
    client.open(CONFIG, r#"{"default": "pulsra"}"#);
    assert_eq!(
        summary(&client.diagnostics(CONFIG)),
        [row("unknown_method", 0, 12, 0, 20)]
    );
    client.replace(CONFIG, 2, r#"{"default": "pulsar"}"#);
    assert_eq!(client.diagnostics(CONFIG), Vec::<Value>::new());
    client.replace(CONFIG, 3, r#"{"default": "pulsr"}"#);
    assert_eq!(
        summary(&client.diagnostics(CONFIG)),
        [row("unknown_method", 0, 12, 0, 19)]
    );
    client.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": CONFIG}}),
    );
    assert_eq!(client.diagnostics(CONFIG), Vec::<Value>::new());
    // Closed means unknown: empty answers.
    assert_eq!(
        client.result("textDocument/hover", at(CONFIG, 0, 14)),
        Value::Null
    );
    assert_eq!(client.shutdown(), 0);
}

#[test]
fn a_document_mid_edit_is_served() {
    let mut client = Client::start();
    // `{"models": {"m": {` is 18 units; "seed" 18..24, "pul 44..48.
    client.open(
        CONFIG,
        "{\"models\": {\"m\": {\"seed\": \"x\", \"algorithm\": \"pul",
    );
    assert_eq!(
        summary(&client.diagnostics(CONFIG)),
        [row("invalid_json", 0, 48, 0, 48)]
    );
    // Completion inside the unterminated string, hover on broken text.
    let items = client.result("textDocument/completion", at(CONFIG, 0, 48));
    let labels: Vec<&str> = items
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["label"].as_str().unwrap())
        .collect();
    assert_eq!(
        labels,
        [
            "power-of-n",
            "wait-and-widen",
            "round-robin",
            "random",
            "pulsar",
            "pulsar-wait-and-widen"
        ]
    );
    assert_eq!(
        items[4]["textEdit"],
        json!({"range": {"start": {"line": 0, "character": 44}, "end": {"line": 0, "character": 48}},
               "newText": "\"pulsar\""})
    );
    let hover = client.result("textDocument/hover", at(CONFIG, 0, 20));
    assert_eq!(
        hover["contents"]["value"],
        "**seed**: a token or a quoted string\n\nText mixed into every ring and ranking hash: another seed, another placement.\n\ndefault: `\"\"`\n\n\
         applies to: wait-and-widen, pulsar, pulsar-wait-and-widen\n"
    );
    assert_eq!(
        client.result("textDocument/hover", at(CONFIG, 0, 46)),
        Value::Null
    );
    assert_eq!(
        client.result(
            "textDocument/formatting",
            json!({
                "textDocument": {"uri": CONFIG}, "options": {"tabSize": 2, "insertSpaces": true}
            })
        ),
        Value::Null
    );
    // Typing on: still answered, then valid again.
    client.edit(CONFIG, 2, (0, 48), (0, 48), "sar\"}}}");
    assert_eq!(client.diagnostics(CONFIG), Vec::<Value>::new());
    let hover = client.result("textDocument/hover", at(CONFIG, 0, 20));
    assert!(hover["contents"]["value"]
        .as_str()
        .unwrap()
        .ends_with("effective for model \"m\" (pulsar): `\"x\"` from config (model entry)\n"));
    assert_eq!(client.shutdown(), 0);
}

#[test]
fn route_file_positions_after_multibyte_characters_and_incremental_edits() {
    let mut client = Client::start();
    // `model "` is 7 units, 🦙 2, `" = ` 4: the method starts at 13.
    client.open(ROUTES, "# café ☕\nmodel \"🦙\" = pulsr(n=1)\n");
    assert_eq!(
        summary(&client.diagnostics(ROUTES)),
        [row("unknown_method", 1, 13, 1, 18)]
    );
    client.edit(ROUTES, 2, (1, 13), (1, 18), "pulsar");
    assert_eq!(
        summary(&client.diagnostics(ROUTES)),
        [row("not_applicable", 1, 20, 1, 21)]
    );
    // Two changes in one notification, the second in the first's result.
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": ROUTES, "version": 3}, "contentChanges": [
            {"range": super::client::range((1, 19), (1, 23)), "text": ""},
            {"range": super::client::range((1, 19), (1, 20)), "text": "(seed=\"é\")"},
        ]}),
    );
    assert_eq!(client.diagnostics(ROUTES), Vec::<Value>::new());
    let symbols = client.result(
        "textDocument/documentSymbol",
        json!({"textDocument": {"uri": ROUTES}}),
    );
    assert_eq!(symbols[0]["name"], "🦙");
    assert_eq!(
        symbols[0]["range"],
        json!({"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 29}})
    );
    assert_eq!(client.shutdown(), 0);
}

#[test]
fn published_diagnostics_are_bounded() {
    let mut client = Client::start();
    let text = "allow pulsra\n".repeat(1200);
    client.open(ROUTES, &text);
    let diagnostics = client.diagnostics(ROUTES);
    assert_eq!(diagnostics.len(), 1001);
    assert_eq!(
        diagnostics[1000]["message"],
        "200 more diagnostics not shown; run `routex lint` for all of them"
    );
    assert_eq!(
        summary(&diagnostics[999..1000]),
        [row("unknown_method", 999, 6, 999, 12)]
    );
    assert_eq!(client.shutdown(), 0);
}

#[test]
fn scenario_policies_are_checked_and_other_json_is_left_alone() {
    let mut client = Client::start();
    let scenario = std::fs::read_to_string(concat!(
        concat!(env!("CARGO_MANIFEST_DIR"), "/../.."),
        "/examples/scenario-zipf-z1.json"
    ))
    .unwrap();
    let broken = scenario.replacen(
        "\"wait-only\": \"pulsar-wait-and-widen(",
        "\"wait-only\": \"pulsr-wait-and-widen(",
        1,
    );
    let uri = "file:///work/scenario.json";
    client.open(uri, &broken);
    let diagnostics = client.diagnostics(uri);
    assert_eq!(
        summary(&diagnostics),
        [row("unknown_method", 147, 18, 147, 38)]
    );
    assert_eq!(
        diagnostics[0]["message"],
        "policy `wait-only`: unknown routing method 'pulsr-wait-and-widen'\nhelp: did you mean `pulsar-wait-and-widen`?"
    );
    let other = "file:///work/package.json";
    client.open(other, r#"{"name": "x"}"#);
    assert_eq!(client.diagnostics(other), Vec::<Value>::new());
    assert_eq!(client.shutdown(), 0);
}
