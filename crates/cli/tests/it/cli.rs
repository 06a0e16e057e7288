//! Tests for the cli layer: renderers on hand-made reports, renderers on the
//! diagnostics fixtures, and the real binary end to end.

mod binary;
mod commands;
mod diff;
mod distribution;
mod fixtures;
mod human;
mod json_schema;
mod messages;
mod project;
mod project_commands;
mod props;
mod render;
mod rough_edges;
pub mod run;
mod sarif;
mod schema;
