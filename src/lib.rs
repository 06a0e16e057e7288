//! routex: a routing-expression compiler and balancer core for LLM inference
//! routers, compatible with the stargate router.
//!
//! The pipeline, one module per stage, data flowing one way:
//!
//! 1. [`syntax`]: source text -> AST with spans (call form, header form,
//!    route files);
//! 2. [`check`]: AST -> diagnostics and the policy [`ir`] (field schema,
//!    stargate precedence, lowering); [`config`] reads and writes
//!    `lb-config.json`;
//! 3. [`balancer`]: interprets a [`ir::Policy`] for a request and a cluster
//!    snapshot;
//! 4. [`router`]: route tables at run time, per-request expressions, the
//!    expression cache, admission and rejections;
//! 5. [`diff`]: what a configuration change does, per model (two route
//!    tables compared, with provenance and newly rejected expressions);
//! 6. [`render`]: diagnostics as JSON, GitHub workflow commands and SARIF
//!    (and, with the `cli` feature, miette's graphical report).
//!
//! The simulator (`sim`, feature `sim`), the editor server (feature `lsp`)
//! and the command-line interface (feature `cli`, on by default) are clients
//! of the library. With `default-features = false` routex builds as a lean
//! embedding library; `docs/embedding.md` lists the public surface and what
//! each feature adds.

pub mod balancer;
pub mod check;
pub mod config;
pub mod diag;
pub mod diff;
pub mod ir;
pub mod render;
pub mod router;
pub mod syntax;

/// serde_json's messages in user words (decide's input, scenarios).
#[cfg(any(feature = "cli", feature = "sim"))]
mod json_words;

#[cfg(feature = "sim")]
pub mod sim;

#[cfg(feature = "lsp")]
pub mod lsp;

/// The `routex` binary's commands. Not part of the library's API: the
/// binary and its tests call [`cli::main`], nothing else is stable.
#[cfg(feature = "cli")]
#[doc(hidden)]
pub mod cli;

pub(crate) mod sync;
