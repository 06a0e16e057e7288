//! Integration tests: one binary, one module per area.

mod balancer;
mod check;
mod cli;
mod config;
mod docs;
mod lsp;
mod router;
mod sim;
mod support;
mod syntax;
