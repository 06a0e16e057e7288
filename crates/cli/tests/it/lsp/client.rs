//! A minimal LSP client over the pipes of `routex lsp`: framing, requests
//! with ids, and a buffer of the notifications the server sends.

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

/// The docs link the tests ask for (`initializationOptions`).
pub const DOCS: &str = "https://docs.test/diagnostics.md";

/// Long enough for a debug build on a loaded machine; a hang fails.
const TIMEOUT: Duration = Duration::from_secs(60);

pub struct Client {
    child: Child,
    stdin: Option<ChildStdin>,
    incoming: Receiver<Value>,
    /// Messages received while waiting for something else.
    pending: Vec<Value>,
    next_id: i64,
}

impl Client {
    /// Starts the server and completes the handshake.
    pub fn start() -> Client {
        Client::start_with(&[])
    }

    /// [`Client::start`] with extra arguments after `routex lsp`.
    pub fn start_with(args: &[&str]) -> Client {
        let mut client = Client::spawn_with(args);
        let result = client.request(
            "initialize",
            json!({
                "processId": null,
                "rootUri": null,
                "capabilities": {},
                "initializationOptions": {"diagnosticsDocs": DOCS},
            }),
        );
        assert_eq!(result["result"]["serverInfo"]["name"], "routex");
        client.notify("initialized", json!({}));
        client
    }

    /// Starts the server without the handshake.
    pub fn spawn() -> Client {
        Client::spawn_with(&[])
    }

    /// [`Client::spawn`] with extra arguments after `routex lsp`.
    pub fn spawn_with(args: &[&str]) -> Client {
        let mut child = Command::new(env!("CARGO_BIN_EXE_routex"))
            .arg("lsp")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("routex lsp starts");
        let stdout = child.stdout.take().expect("stdout is piped");
        let (tx, incoming) = channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            while let Some(message) = read_message(&mut reader) {
                if tx.send(message).is_err() {
                    break;
                }
            }
        });
        Client {
            stdin: child.stdin.take(),
            child,
            incoming,
            pending: Vec::new(),
            next_id: 1,
        }
    }

    /// Writes raw bytes (several messages at once, or a broken frame).
    pub fn write_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).expect("write to the server");
        stdin.flush().expect("flush");
    }

    pub fn send(&mut self, message: &Value) {
        let bytes = frame(message);
        self.write_raw(&bytes);
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Sends a request and returns its id (answer with [`Client::response`]).
    pub fn send_request(&mut self, method: &str, params: Value) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    /// The whole response message (with `result` or `error`).
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.send_request(method, params);
        self.response(id)
    }

    /// The `result` of a request that must succeed.
    pub fn result(&mut self, method: &str, params: Value) -> Value {
        let response = self.request(method, params);
        assert!(response.get("error").is_none(), "{method}: {response}");
        response["result"].clone()
    }

    pub fn response(&mut self, id: i64) -> Value {
        self.wait(|m| m.get("id") == Some(&json!(id)) && m.get("method").is_none())
    }

    /// The first message (buffered or new) that `wanted` accepts.
    fn wait(&mut self, wanted: impl Fn(&Value) -> bool) -> Value {
        if let Some(i) = self.pending.iter().position(&wanted) {
            return self.pending.remove(i);
        }
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let message = self
                .incoming
                .recv_timeout(left)
                .expect("the server answers in time");
            if wanted(&message) {
                return message;
            }
            self.pending.push(message);
        }
    }

    /// The next diagnostics published for `uri` (buffered ones first).
    pub fn diagnostics(&mut self, uri: &str) -> Vec<Value> {
        let is_for = |m: &Value| {
            m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri
        };
        let m = self.wait(is_for);
        m["params"]["diagnostics"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    }

    pub fn open(&mut self, uri: &str, text: &str) {
        let language = if uri.ends_with(".routes") {
            "routex"
        } else {
            "json"
        };
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": language, "version": 1, "text": text}}),
        );
    }

    /// Replaces the whole text.
    pub fn replace(&mut self, uri: &str, version: i32, text: &str) {
        self.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version},
                   "contentChanges": [{"text": text}]}),
        );
    }

    /// Replaces a range (line, UTF-16 column pairs).
    pub fn edit(
        &mut self,
        uri: &str,
        version: i32,
        start: (u32, u32),
        end: (u32, u32),
        text: &str,
    ) {
        self.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version},
                   "contentChanges": [{"range": range(start, end), "text": text}]}),
        );
    }

    /// `shutdown`, `exit`, and the exit status.
    pub fn shutdown(mut self) -> i32 {
        let response = self.request("shutdown", Value::Null);
        assert_eq!(response["result"], Value::Null);
        self.exit()
    }

    /// `exit` and the exit status.
    pub fn exit(mut self) -> i32 {
        self.notify("exit", Value::Null);
        self.stdin = None;
        self.status()
    }

    /// Waits for the process to end by itself.
    pub fn status(mut self) -> i32 {
        self.stdin = None;
        let deadline = Instant::now() + TIMEOUT;
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return status.code().unwrap_or(-1);
            }
            assert!(Instant::now() < deadline, "the server did not exit");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn frame(message: &Value) -> Vec<u8> {
    let body = serde_json::to_vec(message).expect("serialise");
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend(body);
    out
}

fn read_message(reader: &mut impl BufRead) -> Option<Value> {
    let mut length = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(n) = line.strip_prefix("Content-Length: ") {
            length = n.parse::<usize>().ok();
        }
    }
    let mut body = vec![0; length?];
    reader.read_exact(&mut body).ok()?;
    serde_json::from_slice(&body).ok()
}

pub fn position(line: u32, character: u32) -> Value {
    json!({"line": line, "character": character})
}

pub fn range(start: (u32, u32), end: (u32, u32)) -> Value {
    json!({"start": position(start.0, start.1), "end": position(end.0, end.1)})
}

/// `textDocument` + `position` params.
pub fn at(uri: &str, line: u32, character: u32) -> Value {
    json!({"textDocument": {"uri": uri}, "position": position(line, character)})
}
