//! The message loop: one thread reads the queue the transport fills,
//! answers requests in order, and publishes diagnostics once the queue is
//! empty, so a burst of edits is checked once. `$/cancelRequest` removes a
//! request still waiting in the queue (answered `RequestCancelled`); a
//! request already answered is not affected. After `shutdown` every request
//! is refused; `exit` ends the loop (status 0 after `shutdown`, else 1).

use super::documents::{is_project_file, Document, Documents};
use super::{actions, completion, diagnostics, hover, symbols};
use lsp_server::{Connection, ErrorCode, Message, Notification, Request, RequestId, Response};
use lsp_types::notification::{
    DidChangeTextDocument, DidChangeWatchedFiles, DidCloseTextDocument, DidOpenTextDocument,
    DidSaveTextDocument, Notification as NotificationTrait, PublishDiagnostics,
};
use lsp_types::request::{
    CodeActionRequest, Completion, DocumentSymbolRequest, Formatting, HoverRequest,
    Request as RequestTrait,
};
use lsp_types::{
    CancelParams, CodeActionParams, CompletionParams, DidChangeTextDocumentParams,
    DidChangeWatchedFilesParams, DidCloseTextDocumentParams, DidOpenTextDocumentParams,
    DidSaveTextDocumentParams, DocumentFormattingParams, DocumentSymbolParams,
    DocumentSymbolResponse, HoverParams, NumberOrString, PublishDiagnosticsParams, Uri,
};
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::collections::{HashSet, VecDeque};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Messages taken from the transport ahead of the one being handled:
/// enough to see a cancellation or a newer edit, bounded so memory is too.
const MAX_QUEUED: usize = super::transport::READ_AHEAD;

pub struct Server {
    documents: Documents,
    /// Documents whose diagnostics are to be published, in change order.
    dirty: Vec<Uri>,
    docs_base: String,
    shut_down: bool,
}

impl Server {
    pub fn new(docs_base: String) -> Self {
        Server {
            documents: Documents::default(),
            dirty: Vec::new(),
            docs_base,
            shut_down: false,
        }
    }

    /// Runs until `exit` or the end of input; returns the exit status.
    pub fn run(&mut self, connection: &Connection) -> i32 {
        let mut queue: VecDeque<Message> = VecDeque::new();
        loop {
            if queue.is_empty() {
                self.publish(connection);
                match connection.receiver.recv() {
                    Ok(message) => queue.push_back(message),
                    // The client went away without `exit`.
                    Err(_) => return self.exit_status(),
                }
            }
            while queue.len() < MAX_QUEUED {
                match connection.receiver.try_recv() {
                    Ok(message) => queue.push_back(message),
                    Err(_) => break,
                }
            }
            cancel_queued(&mut queue, connection);
            let Some(message) = queue.pop_front() else {
                continue;
            };
            match message {
                Message::Request(request) => {
                    let response = self.request(request);
                    let _ = connection.sender.send(Message::Response(response));
                }
                Message::Notification(n) if n.method == "exit" => return self.exit_status(),
                Message::Notification(n) => self.notification(n, connection),
                Message::Response(_) => {}
            }
        }
    }

    fn exit_status(&self) -> i32 {
        if self.shut_down {
            0
        } else {
            1
        }
    }

    /// Publishes the diagnostics of every changed document.
    fn publish(&mut self, connection: &Connection) {
        for uri in std::mem::take(&mut self.dirty) {
            let Some(document) = self.documents.get(&uri) else {
                continue;
            };
            let docs_base = self.docs_base.as_str();
            let diagnostics = catch_unwind(AssertUnwindSafe(|| {
                diagnostics::of_document(document, docs_base)
            }))
            .unwrap_or_default();
            let params = PublishDiagnosticsParams {
                uri,
                diagnostics,
                version: Some(document.version),
            };
            send_notification::<PublishDiagnostics>(connection, params);
            document.prepare_cursor();
        }
    }

    /// Forgets every analysis and republishes every open document.
    fn reload_project(&mut self) {
        let mut uris = Vec::new();
        for (uri, document) in self.documents.all_mut() {
            document.invalidate();
            uris.push(uri.clone());
        }
        for uri in uris {
            self.mark_dirty(uri);
        }
    }

    fn mark_dirty(&mut self, uri: Uri) {
        if !self.dirty.contains(&uri) {
            self.dirty.push(uri);
        }
    }

    fn notification(&mut self, n: Notification, connection: &Connection) {
        match n.method.as_str() {
            DidOpenTextDocument::METHOD => {
                let Some(p) = parse::<DidOpenTextDocumentParams>(n.params) else {
                    return;
                };
                let doc = p.text_document;
                let document = Document::new(&doc.uri, &doc.language_id, doc.version, doc.text);
                if self.documents.open(doc.uri.clone(), document) {
                    self.mark_dirty(doc.uri);
                } else {
                    log(
                        connection,
                        "routex: too many open documents; this one is ignored",
                    );
                }
            }
            DidChangeTextDocument::METHOD => {
                let Some(p) = parse::<DidChangeTextDocumentParams>(n.params) else {
                    return;
                };
                let uri = p.text_document.uri;
                let Some(document) = self.documents.get_mut(&uri) else {
                    return;
                };
                if document
                    .apply(p.text_document.version, p.content_changes)
                    .is_err()
                {
                    self.documents.close(&uri);
                    clear(connection, uri);
                    log(
                        connection,
                        "routex: document too large; it is no longer served",
                    );
                    return;
                }
                self.mark_dirty(uri);
            }
            DidCloseTextDocument::METHOD => {
                let Some(p) = parse::<DidCloseTextDocumentParams>(n.params) else {
                    return;
                };
                let uri = p.text_document.uri;
                self.dirty.retain(|u| *u != uri);
                if self.documents.close(&uri).is_some() {
                    clear(connection, uri);
                }
            }
            // A saved or watched routex.toml changes what every open
            // document reports: check them all again.
            DidSaveTextDocument::METHOD => {
                let Some(p) = parse::<DidSaveTextDocumentParams>(n.params) else {
                    return;
                };
                if is_project_file(&p.text_document.uri) {
                    self.reload_project();
                }
            }
            DidChangeWatchedFiles::METHOD => {
                let Some(p) = parse::<DidChangeWatchedFilesParams>(n.params) else {
                    return;
                };
                if p.changes.iter().any(|c| is_project_file(&c.uri)) {
                    self.reload_project();
                }
            }
            // initialized, $/setTrace, $/cancelRequest for a request
            // already answered, and anything else: nothing to do.
            _ => {}
        }
    }

    fn request(&mut self, request: Request) -> Response {
        let id = request.id.clone();
        if self.shut_down {
            return Response::new_err(
                id,
                ErrorCode::InvalidRequest as i32,
                "the server is shut down".into(),
            );
        }
        if request.method == "shutdown" {
            self.shut_down = true;
            return Response::new_ok(id, Value::Null);
        }
        // A bug must cost one answer, never the session.
        match catch_unwind(AssertUnwindSafe(|| self.answer(request))) {
            Ok(Ok(value)) => Response::new_ok(id, value),
            Ok(Err((code, message))) => Response::new_err(id, code as i32, message),
            Err(_) => Response::new_err(
                id,
                ErrorCode::InternalError as i32,
                "internal error (please report it)".into(),
            ),
        }
    }

    fn answer(&self, request: Request) -> Result<Value, (ErrorCode, String)> {
        let docs = &self.documents;
        match request.method.as_str() {
            HoverRequest::METHOD => {
                let p: HoverParams = params(request.params)?;
                let at = p.text_document_position_params;
                let result = docs.get(&at.text_document.uri).and_then(|d| {
                    let offset = d.lines.offset(&d.text, at.position);
                    crate::with_document_target(d.analysis().target, || hover::hover(d, offset))
                });
                Ok(serde_json::to_value(result).unwrap_or(Value::Null))
            }
            Completion::METHOD => {
                let p: CompletionParams = params(request.params)?;
                let at = p.text_document_position;
                let uri = &at.text_document.uri;
                let items = docs.get(uri).map_or_else(Vec::new, |d| {
                    let offset = d.lines.offset(&d.text, at.position);
                    crate::with_document_target(d.analysis().target, || {
                        completion::complete(d, offset, docs.others(uri))
                    })
                });
                Ok(serde_json::to_value(items).unwrap_or(Value::Null))
            }
            CodeActionRequest::METHOD => {
                let p: CodeActionParams = params(request.params)?;
                let uri = &p.text_document.uri;
                let result = docs.get(uri).map_or_else(Vec::new, |d| {
                    actions::code_actions(d, uri, p.range, &self.docs_base)
                });
                Ok(serde_json::to_value(result).unwrap_or(Value::Null))
            }
            Formatting::METHOD => {
                let p: DocumentFormattingParams = params(request.params)?;
                let edits = docs.get(&p.text_document.uri).and_then(symbols::format);
                Ok(serde_json::to_value(edits).unwrap_or(Value::Null))
            }
            DocumentSymbolRequest::METHOD => {
                let p: DocumentSymbolParams = params(request.params)?;
                let found = docs
                    .get(&p.text_document.uri)
                    .map_or_else(Vec::new, symbols::symbols);
                let result = DocumentSymbolResponse::Nested(found);
                Ok(serde_json::to_value(result).unwrap_or(Value::Null))
            }
            other => Err((
                ErrorCode::MethodNotFound,
                format!("routex does not serve {other}"),
            )),
        }
    }
}

/// Answers and drops every queued request a queued `$/cancelRequest`
/// names; drops the cancellations.
fn cancel_queued(queue: &mut VecDeque<Message>, connection: &Connection) {
    let mut cancelled: HashSet<RequestId> = HashSet::new();
    queue.retain(|m| match m {
        Message::Notification(n) if n.method == "$/cancelRequest" => {
            if let Some(p) = parse::<CancelParams>(n.params.clone()) {
                cancelled.insert(match p.id {
                    NumberOrString::Number(n) => RequestId::from(n),
                    NumberOrString::String(s) => RequestId::from(s),
                });
            }
            false
        }
        _ => true,
    });
    if cancelled.is_empty() {
        return;
    }
    queue.retain(|m| match m {
        Message::Request(r) if cancelled.contains(&r.id) => {
            let response = Response::new_err(
                r.id.clone(),
                ErrorCode::RequestCanceled as i32,
                "cancelled".into(),
            );
            let _ = connection.sender.send(Message::Response(response));
            false
        }
        _ => true,
    });
}

fn params<P: DeserializeOwned>(value: Value) -> Result<P, (ErrorCode, String)> {
    serde_json::from_value(value).map_err(|e| (ErrorCode::InvalidParams, e.to_string()))
}

fn parse<P: DeserializeOwned>(value: Value) -> Option<P> {
    serde_json::from_value(value).ok()
}

fn send_notification<N: NotificationTrait>(connection: &Connection, params: N::Params) {
    let n = Notification::new(N::METHOD.to_string(), params);
    let _ = connection.sender.send(Message::Notification(n));
}

/// Empty diagnostics: nothing stale stays in the editor.
fn clear(connection: &Connection, uri: Uri) {
    let params = PublishDiagnosticsParams {
        uri,
        diagnostics: Vec::new(),
        version: None,
    };
    send_notification::<PublishDiagnostics>(connection, params);
}

fn log(connection: &Connection, message: &str) {
    let params = lsp_types::LogMessageParams {
        typ: lsp_types::MessageType::WARNING,
        message: message.to_string(),
    };
    send_notification::<lsp_types::notification::LogMessage>(connection, params);
}
