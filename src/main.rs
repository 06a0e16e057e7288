fn main() {
    std::process::exit(routex::cli::main());
}
