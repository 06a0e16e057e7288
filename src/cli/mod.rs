//! The binary: argument parsing and rendering only.

pub mod decide;
pub mod sim;

/// Runs the CLI and returns the process exit code.
pub fn main() -> i32 {
    eprintln!("routex: not yet implemented");
    2
}
