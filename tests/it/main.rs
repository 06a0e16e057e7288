//! Integration tests: one binary, one module per area.

mod balancer;
mod check;
// The binary and the simulator are features; the library's own tests
// also run with `--no-default-features`.
#[cfg(feature = "cli")]
mod cli;
mod config;
mod diff;
#[cfg(feature = "cli")]
mod docs;
// The editor server is tested through the binary.
#[cfg(feature = "cli")]
mod lsp;
mod router;
#[cfg(feature = "sim")]
mod sim;
mod support;
mod syntax;
