fn main() {
    std::process::exit(routex_cli::main());
}
