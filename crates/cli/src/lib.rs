//! The binary: argument parsing and rendering only. Each command lives in its
//! own file; they share [`input`] (reading files, usage errors) and
//! [`output`] (rendering reports, exit status).
//!
//! Exit status: 0 no error, 1 an error (or a warning under
//! `--deny-warnings`), 2 a usage or I/O error with one line on stderr.

#![forbid(unsafe_code)]

mod check;
mod convert;
pub mod decide;
mod diff;
mod fmt;
mod git;
pub mod human;
pub mod input;
pub mod interrupt;
pub mod lint;
pub mod output;
pub mod project;
pub mod schema;
pub mod sim;
pub mod target;

use clap::{Parser, Subcommand, ValueEnum};

pub use check::{CheckArgs, ExplainArgs};
pub use convert::{BuildArgs, ImportArgs};
pub use fmt::FmtArgs;
pub use lint::LintArgs;

/// routex: compile, lint and explain stargate routing expressions.
#[derive(Debug, Parser)]
#[command(name = "routex", version, about, propagate_version = true)]
pub struct Cli {
    /// Colours in the human format: `auto` (a terminal, unless NO_COLOR is
    /// set; CLICOLOR_FORCE forces them when piped), `always` or `never`.
    #[arg(long, global = true, value_enum, default_value_t, value_name = "WHEN")]
    pub color: output::ColorChoice,
    /// The stargate state to check and decide for: `sessions` (the
    /// newest, the default) or `widening` (docs/stargate.md 0.1). A
    /// simulator scenario that names its own target keeps it.
    #[arg(long, global = true, value_name = "TARGET", value_parser = target::parse)]
    pub stargate: Option<routex::ir::Target>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Compile expressions (call or header form) and report every problem.
    Check(CheckArgs),
    /// Print the resolved policy of an expression and where each field came from.
    Explain(ExplainArgs),
    /// Lint route files and lb-config.json files (directories are searched).
    Lint(LintArgs),
    /// Print expressions or route files in canonical form, or check them.
    Fmt(FmtArgs),
    /// Compare two configurations (or git revisions of one): per model,
    /// what resolves differently and which expressions are now rejected.
    Diff(diff::DiffArgs),
    /// Convert a route file to lb-config.json.
    Build(BuildArgs),
    /// Convert an lb-config.json to a route file.
    Import(ImportArgs),
    /// One routing decision for a request and cluster snapshot.
    Decide(decide::DecideArgs),
    /// The routing simulator.
    Sim(sim::SimArgs),
    /// Print the JSON Schema (2020-12) of lb-config.json (or of
    /// routex.toml), for editors.
    Schema(SchemaArgs),
    /// The editor server: Language Server Protocol over stdin and stdout.
    Lsp(LspArgs),
    /// Print a shell completion script (bash, elvish, fish, powershell, zsh).
    Completions(CompletionsArgs),
    /// Print the man page (roff): routex(1), or routex-COMMAND(1).
    Man(ManArgs),
}

/// `routex lsp` takes no options; `--stdio` is accepted because many
/// editors pass it.
#[derive(Debug, clap::Args)]
pub struct LspArgs {
    /// Speak LSP on standard input and output (the only transport).
    #[arg(long)]
    pub stdio: bool,
}

/// How diagnostics are printed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Graphical report (colours and unicode on a terminal, plain ASCII otherwise).
    #[default]
    Human,
    /// The version-1 JSON document.
    Json,
    /// GitHub Actions workflow commands.
    Github,
    /// SARIF 2.1.0.
    Sarif,
}

/// Runs the CLI on the process arguments and returns the exit status.
pub fn main() -> i32 {
    run(std::env::args_os())
}

/// Runs the CLI on `args` (the first is the program name).
pub fn run<I, T>(args: I) -> i32
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    match Cli::try_parse_from(args) {
        Ok(cli) => {
            output::set_color(cli.color);
            target::set(cli.stargate);
            dispatch(&cli.command)
        }
        Err(error) => {
            // Help and version exit 0; usage errors exit 2 (clap's codes).
            let _ = error.print();
            error.exit_code()
        }
    }
}

fn dispatch(command: &Command) -> i32 {
    match command {
        Command::Check(args) => check::run_check(args),
        Command::Explain(args) => check::run_explain(args),
        Command::Lint(args) => lint::run(args),
        Command::Fmt(args) => fmt::run(args),
        Command::Diff(args) => diff::run(args),
        Command::Build(args) => convert::run_build(args),
        Command::Import(args) => convert::run_import(args),
        Command::Decide(args) => decide::run(args),
        Command::Sim(args) => sim::run(args),
        Command::Schema(args) => schema::run(args.file),
        Command::Lsp(_) => routex_lsp::run_stdio_with(target::chosen()),
        Command::Completions(args) => completions(args.shell),
        Command::Man(args) => man(args),
    }
}

/// `routex schema [FILE]`.
#[derive(Debug, clap::Args)]
pub struct SchemaArgs {
    /// Which file's schema: lb-config.json or the project configuration.
    #[arg(value_enum, default_value_t, value_name = "FILE")]
    pub file: schema::SchemaFile,
}

#[derive(Debug, clap::Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

fn completions(shell: clap_complete::Shell) -> i32 {
    use clap::CommandFactory;
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "routex", &mut out);
    output::stdout(&String::from_utf8_lossy(&out));
    output::OK
}

/// routex(1), or routex-COMMAND(1) for one command.
fn man(args: &ManArgs) -> i32 {
    use clap::CommandFactory;
    let mut command = Cli::command();
    // Built, so that subcommands carry the global flags and the version.
    command.build();
    let page = match &args.command {
        None => clap_mangen::Man::new(command),
        Some(name) => match command.find_subcommand(name) {
            Some(sub) => clap_mangen::Man::new(sub.clone().name(format!("routex-{name}"))),
            None => return output::usage_error(format!("man: no command `{name}`")),
        },
    };
    let mut out = Vec::new();
    if page.render(&mut out).is_err() {
        return output::usage_error("man: cannot render the man page");
    }
    output::stdout(&String::from_utf8_lossy(&out));
    output::OK
}

#[derive(Debug, clap::Args)]
pub struct ManArgs {
    /// A command's page (routex-COMMAND(1)) instead of routex(1).
    #[arg(value_name = "COMMAND")]
    pub command: Option<String>,
}
