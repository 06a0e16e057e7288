//! Integration tests: one binary, one module per area.

mod balancer;
mod check;
mod cli;
mod config;
mod router;
mod sim;
mod syntax;
