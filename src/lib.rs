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
//! 5. [`sim`]: the discrete-event simulator, [`lsp`]: the editor server,
//!    and [`cli`]: the binary.

pub mod balancer;
pub mod check;
pub mod cli;
pub mod config;
pub mod diag;
pub mod ir;
pub mod lsp;
pub mod render;
pub mod router;
pub mod sim;
pub(crate) mod sync;
pub mod syntax;
