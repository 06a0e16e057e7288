//! Integration tests of the `routex` command: one binary, one module per
//! area. Inputs are the repository's (`tests/inputs/`, `examples/`,
//! `docs/`), found through [`repo`]; snapshots stay in `snapshots/`.

mod cli;
mod decide;
mod docs;
// The editor server is tested through the binary.
mod lsp;
mod sim;

/// The repository root, where the inputs, examples, docs and snapshots
/// are (canonical, so `file:` URIs built from it match the binary's).
pub fn repo() -> &'static std::path::Path {
    static ROOT: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    ROOT.get_or_init(|| {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
        std::fs::canonicalize(root).unwrap_or_else(|e| panic!("{root}: {e}"))
    })
}
