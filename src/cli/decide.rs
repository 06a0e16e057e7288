//! `routex decide`: one routing decision through the router runtime.

/// Arguments of `routex decide` (language.md 5.3).
#[derive(Debug, clap::Args)]
pub struct DecideArgs {
    /// Request and cluster snapshot (JSON).
    #[arg(long)]
    pub input: std::path::PathBuf,
}

/// Runs `routex decide`; returns the exit code.
pub fn run(args: &DecideArgs) -> i32 {
    let _ = args;
    eprintln!("routex decide: not yet implemented");
    2
}
