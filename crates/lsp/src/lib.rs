//! `routex lsp`: the editor server (Language Server Protocol 3.17 over
//! standard input and output). A client of `check`, `config`, `syntax` and
//! `render`, like the CLI; nothing below imports it.
//!
//! It serves route files (`*.routes`), lb-config.json files (by name, by a
//! `$schema` naming routex's schema, or by content as `routex lint`
//! decides) and simulator scenarios: diagnostics on open and change,
//! hover, completion, quick fixes, formatting and document symbols. Setup
//! per editor: docs/editors.md.
//!
//! - [`transport`]: stdin/stdout with a read-ahead queue;
//! - [`server`]: the message loop, cancellation, shutdown;
//! - [`documents`]: open documents and incremental edits; [`kind`]: what
//!   kind each is;
//! - [`analysis`]: the checker's report, table and trees of one text;
//! - [`position`]: byte offsets <-> UTF-16 positions;
//! - [`diagnostics`], [`hover`], [`completion`], [`actions`], [`symbols`]:
//!   one feature each; `context` and `scan` find what the cursor is on.

#![forbid(unsafe_code)]

pub mod actions;
pub mod analysis;
pub mod completion;
mod context;
pub mod diagnostics;
pub mod documents;
pub mod hover;
pub mod kind;
pub mod position;
mod scan;
pub mod server;
pub mod symbols;
pub mod transport;

/// The protocol types the server's API speaks (documents are keyed by
/// `lsp_types::Uri`), re-exported for benches and embedders.
pub use lsp_types;

use lsp_server::Connection;
use lsp_types::{
    CodeActionKind, CodeActionOptions, CodeActionProviderCapability, CompletionOptions,
    HoverProviderCapability, InitializeResult, OneOf, PositionEncodingKind, ServerCapabilities,
    ServerInfo, TextDocumentSyncCapability, TextDocumentSyncKind, TextDocumentSyncOptions,
};

/// What the server offers the client.
pub fn capabilities() -> ServerCapabilities {
    ServerCapabilities {
        position_encoding: Some(PositionEncodingKind::UTF16),
        text_document_sync: Some(TextDocumentSyncCapability::Options(
            TextDocumentSyncOptions {
                open_close: Some(true),
                change: Some(TextDocumentSyncKind::INCREMENTAL),
                // didSave of a routex.toml re-checks every open document.
                save: Some(lsp_types::TextDocumentSyncSaveOptions::Supported(true)),
                ..TextDocumentSyncOptions::default()
            },
        )),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        completion_provider: Some(CompletionOptions {
            trigger_characters: Some(
                ["\"", "(", ",", "=", " "]
                    .into_iter()
                    .map(String::from)
                    .collect(),
            ),
            ..CompletionOptions::default()
        }),
        code_action_provider: Some(CodeActionProviderCapability::Options(CodeActionOptions {
            code_action_kinds: Some(vec![CodeActionKind::QUICKFIX]),
            ..CodeActionOptions::default()
        })),
        document_formatting_provider: Some(OneOf::Left(true)),
        document_symbol_provider: Some(OneOf::Left(true)),
        ..ServerCapabilities::default()
    }
}

/// The stargate target given to the server (docs/stargate.md 0.1): 0
/// none (each document follows its `routex.toml`, else the newest), else 1
/// + the position in `Target::ALL`.
static TARGET: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

thread_local! {
    /// The target of the document a request is about, while it is answered.
    static DOCUMENT_TARGET: std::cell::Cell<Option<routex::ir::Target>> =
        const { std::cell::Cell::new(None) };
}

/// The target given on the command line, if any: it wins over every
/// project configuration.
pub fn chosen_target() -> Option<routex::ir::Target> {
    match TARGET.load(std::sync::atomic::Ordering::Relaxed) {
        0 => None,
        code => routex::ir::Target::ALL.get(usize::from(code - 1)).copied(),
    }
}

/// The stargate target documents are checked for: the current document's
/// (the command line's, else its project configuration's), else the
/// command line's, else the newest.
pub fn target() -> routex::ir::Target {
    DOCUMENT_TARGET
        .with(std::cell::Cell::get)
        .or_else(chosen_target)
        .unwrap_or(routex::ir::Target::NEWEST)
}

/// Answers with `target` as the document's target (completion and hover
/// offer the fields it accepts).
fn with_document_target<T>(target: routex::ir::Target, answer: impl FnOnce() -> T) -> T {
    DOCUMENT_TARGET.with(|t| t.set(Some(target)));
    let out = answer();
    DOCUMENT_TARGET.with(|t| t.set(None));
    out
}

/// [`run_stdio`] checking documents for the stargate `target`: its fields
/// in completion and hover, its diagnostics, whatever `routex.toml` says.
pub fn run_stdio_for(target: routex::ir::Target) -> i32 {
    run_stdio_with(Some(target))
}

/// [`run_stdio`] with the command line's target, if any; without one, each
/// document follows the `stargate` of its project configuration.
pub fn run_stdio_with(target: Option<routex::ir::Target>) -> i32 {
    let code = target.map_or(0, |t| t as u8 + 1);
    TARGET.store(code, std::sync::atomic::Ordering::Relaxed);
    run_stdio()
}

/// Serves one client on standard input and output; returns the exit
/// status (0 after `shutdown` then `exit`, 1 otherwise).
pub fn run_stdio() -> i32 {
    let (connection, io_threads) = transport::stdio();
    let status = serve(&connection);
    drop(connection);
    io_threads.join();
    status
}

/// The handshake, then the message loop.
pub fn serve(connection: &Connection) -> i32 {
    let (id, params) = match connection.initialize_start() {
        Ok(started) => started,
        Err(error) => {
            eprintln!("routex lsp: {error}");
            return 1;
        }
    };
    let docs_base = params
        .pointer("/initializationOptions/diagnosticsDocs")
        .and_then(|v| v.as_str())
        .map_or_else(diagnostics::default_docs_base, String::from);
    let result = InitializeResult {
        capabilities: capabilities(),
        server_info: Some(ServerInfo {
            name: "routex".into(),
            version: Some(env!("CARGO_PKG_VERSION").into()),
        }),
    };
    let result = serde_json::to_value(result).unwrap_or_default();
    if let Err(error) = connection.initialize_finish(id, result) {
        eprintln!("routex lsp: {error}");
        return 1;
    }
    server::Server::new(docs_base).run(connection)
}
