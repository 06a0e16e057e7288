//! The editor setups of docs/editors.md: each block is valid for its
//! editor's format as far as a test here can tell, and starts `routex lsp`.
//! The Neovim block is run for real by `neovim.rs`.

use serde_json::Value;

/// The first fenced block of docs/editors.md whose info string is `lang`.
pub fn doc_block(lang: &str) -> String {
    let page = std::fs::read_to_string(concat!(
        concat!(env!("CARGO_MANIFEST_DIR"), "/../.."),
        "/docs/editors.md"
    ))
    .expect("docs/editors.md exists");
    let fence = format!("```{lang}\n");
    let start = page
        .find(&fence)
        .unwrap_or_else(|| panic!("no ```{lang} block"))
        + fence.len();
    let end = start + page[start..].find("\n```").expect("the block is closed");
    page[start..end].to_string() + "\n"
}

#[test]
fn vs_code_settings_are_json_that_start_routex_lsp() {
    let settings: Value = serde_json::from_str(&doc_block("json")).expect("valid JSON");
    assert_eq!(settings["glspc.server.command"], "routex");
    assert_eq!(
        settings["glspc.server.commandArguments"],
        serde_json::json!(["lsp"])
    );
    assert_eq!(settings["files.associations"]["*.routes"], "routex");
    assert_eq!(
        settings["json.schemas"][0]["fileMatch"][0],
        "lb-config.json"
    );
}

#[test]
fn helix_languages_start_routex_lsp_for_route_files_and_json() {
    let toml = doc_block("toml");
    let lines: Vec<&str> = toml.lines().collect();
    let server = lines
        .iter()
        .position(|l| *l == "[language-server.routex]")
        .expect("a routex server");
    assert_eq!(
        lines[server + 1..server + 3],
        ["command = \"routex\"", "args = [\"lsp\"]"]
    );
    assert!(lines.contains(&"file-types = [\"routes\"]"));
    assert!(lines.contains(&"language-servers = [\"vscode-json-language-server\", \"routex\"]"));
    // Every line is blank, a table header or `key = value`.
    for line in lines {
        assert!(
            line.is_empty() || line.starts_with('[') || line.split_once(" = ").is_some(),
            "{line}"
        );
    }
}
