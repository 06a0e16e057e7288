//! The protocol's rules: cancellation, shutdown and exit, bad messages,
//! unknown documents and methods.

use super::client::{at, frame, Client};
use serde_json::{json, Value};

#[test]
fn shutdown_then_exit_is_status_0_and_requests_after_shutdown_fail() {
    let mut client = Client::start();
    let response = client.request("shutdown", Value::Null);
    assert_eq!(response["result"], Value::Null);
    let after = client.request("textDocument/hover", at("file:///x.routes", 0, 0));
    assert_eq!(after["error"]["code"], -32600);
    assert_eq!(client.exit(), 0);
}

#[test]
fn exit_without_shutdown_is_status_1_and_so_is_end_of_input() {
    let client = Client::start();
    assert_eq!(client.exit(), 1);
    let client = Client::start();
    assert_eq!(client.status(), 1);
}

#[test]
fn a_cancelled_request_waiting_in_the_queue_is_answered_cancelled() {
    let mut client = Client::start();
    // Checking a large document (the first hover asks for it) keeps the
    // server busy while the second hover and its cancellation queue.
    let models: String = (0..20_000)
        .map(|i| format!("\"a{i}\": \"random\", "))
        .collect();
    let big = format!("{{\"models\": {{{models}\"m\": \"pulsar\"}}}}");
    let uri = "file:///work/lb-config.json";
    let open = json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
        "textDocument": {"uri": uri, "languageId": "json", "version": 1, "text": big}}});
    let slow = json!({"jsonrpc": "2.0", "id": 899, "method": "textDocument/hover",
        "params": at(uri, 0, 12)});
    let hover = json!({"jsonrpc": "2.0", "id": 900, "method": "textDocument/hover",
        "params": at(uri, 0, 12)});
    let cancel = json!({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 900}});
    let mut bytes = frame(&open);
    bytes.extend(frame(&slow));
    bytes.extend(frame(&hover));
    bytes.extend(frame(&cancel));
    client.write_raw(&bytes);
    let first = client.response(899);
    assert!(first["result"]["contents"]["value"]
        .as_str()
        .is_some_and(|v| v.starts_with("**model \"a0\"**: random")));
    let response = client.response(900);
    assert_eq!(response["error"]["code"], -32800, "{response}");
    // Cancelling something already answered (or unknown) changes nothing.
    client.notify("$/cancelRequest", json!({"id": 12345}));
    let ok = client.request("textDocument/hover", at(uri, 0, 3));
    assert!(ok.get("error").is_none(), "{ok}");
    assert_eq!(client.shutdown(), 0);
}

#[test]
fn bad_params_unknown_methods_and_unknown_documents() {
    let mut client = Client::start();
    let bad = client.request("textDocument/hover", json!({"textDocument": 3}));
    assert_eq!(bad["error"]["code"], -32602);
    let unknown = client.request("workspace/frobnicate", json!({}));
    assert_eq!(unknown["error"]["code"], -32601);
    let nowhere = "file:///work/never-opened.routes";
    assert_eq!(
        client.result("textDocument/hover", at(nowhere, 0, 0)),
        Value::Null
    );
    assert_eq!(
        client.result("textDocument/completion", at(nowhere, 0, 0)),
        json!([])
    );
    assert_eq!(
        client.result(
            "textDocument/documentSymbol",
            json!({"textDocument": {"uri": nowhere}})
        ),
        json!([])
    );
    // Malformed notifications are dropped; the server keeps answering.
    client.notify("textDocument/didOpen", json!({"textDocument": {"uri": 7}}));
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": nowhere, "version": 2},
        "contentChanges": [{"text": "x"}]}),
    );
    // Positions far outside the text clamp.
    client.open("file:///work/a.routes", "default = pulsar\n");
    assert_eq!(
        client.result(
            "textDocument/completion",
            at("file:///work/a.routes", 99, 99)
        ),
        json!([
            {"label": "default", "kind": 14, "filterText": "default = ",
             "textEdit": {"range": super::client::range((1, 0), (1, 0)), "newText": "default = "}},
            {"label": "allow", "kind": 14, "filterText": "allow ",
             "textEdit": {"range": super::client::range((1, 0), (1, 0)), "newText": "allow "}},
            {"label": "model", "kind": 14, "filterText": "model ",
             "textEdit": {"range": super::client::range((1, 0), (1, 0)), "newText": "model "}},
        ])
    );
    assert_eq!(client.shutdown(), 0);
}

#[test]
fn binary_garbage_in_a_document_never_stops_the_server() {
    let mut client = Client::start();
    let uri = "file:///work/lb-config.json";
    let nasty = "{\"models\": {\"\u{0}\u{1b}[31m\": {\"algorithm\": [[[[[[[[[[[[[[[[[[[[\"\u{fffd}😀\n\r\r\n\"}}";
    client.open(uri, nasty);
    let _ = client.diagnostics(uri);
    for line in 0..4 {
        for character in [0, 1, 5, 17, 40, 1000] {
            let _ = client.result("textDocument/hover", at(uri, line, character));
            let _ = client.result("textDocument/completion", at(uri, line, character));
        }
    }
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    client.replace(uri, 2, &deep);
    assert_eq!(client.diagnostics(uri)[0]["code"], "invalid_json");
    let _ = client.result("textDocument/completion", at(uri, 0, 50_000));
    assert_eq!(client.shutdown(), 0);
}

#[test]
fn codes_link_to_the_repositorys_catalogue_by_default() {
    let mut client = Client::spawn();
    let init = client.request(
        "initialize",
        json!({"processId": null, "rootUri": null, "capabilities": {}}),
    );
    assert_eq!(init["result"]["capabilities"]["positionEncoding"], "utf-16");
    assert_eq!(
        init["result"]["capabilities"]["textDocumentSync"]["change"],
        2
    );
    client.notify("initialized", json!({}));
    let uri = "file:///work/a.routes";
    client.open(uri, "default = pulsra\n");
    let diagnostics = client.diagnostics(uri);
    assert_eq!(
        diagnostics[0]["codeDescription"]["href"],
        concat!(
            env!("CARGO_PKG_REPOSITORY"),
            "/blob/main/docs/diagnostics.md#unknown_method"
        )
    );
    assert_eq!(client.shutdown(), 0);
}
