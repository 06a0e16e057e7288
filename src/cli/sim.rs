//! `routex sim`: the routing simulator's command line.

/// Arguments of `routex sim`.
#[derive(Debug, clap::Args)]
pub struct SimArgs {
    #[arg(trailing_var_arg = true)]
    pub rest: Vec<String>,
}

/// Runs `routex sim`; returns the exit code.
pub fn run(args: &SimArgs) -> i32 {
    let _ = args;
    eprintln!("routex sim: not yet implemented");
    2
}
