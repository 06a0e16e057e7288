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
//! The simulator (crate `routex-sim`), the editor server (`routex-lsp`)
//! and the command-line tool (`routex-cli`, the `routex` binary) are
//! separate crates of this workspace and clients of this library's public
//! API. `docs/embedding.md` lists the public surface and what the features
//! `tokio` and `http` add.

#![forbid(unsafe_code)]
// Embedders and the workspace's applications use only the documented public
// API: a new public item without documentation fails the build. Here rather
// than in `[lints]`, which inherits the workspace table and cannot add to it.
#![deny(missing_docs)]

pub mod balancer;
pub mod check;
pub mod config;
pub mod diag;
pub mod diff;
pub mod ir;
pub mod render;
pub mod router;
pub mod syntax;

pub mod json_words;

pub(crate) mod sync;
