//! Integration tests: one binary, one module per area.

mod balancer;
mod check;
mod config;
mod diag;
mod diff;
mod router;
mod support;
mod syntax;
