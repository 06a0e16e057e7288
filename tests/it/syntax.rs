//! Tests for the syntax layer: both expression forms, route files, the
//! printer, properties, the RFC 8941 differential and the docs examples.

mod call;
mod differential;
mod docs;
mod header;
mod print;
mod properties;
mod route_file;
mod snapshots;
mod support;
