#![forbid(unsafe_code)]

fn main() {
    std::process::exit(routex_cli::main());
}
