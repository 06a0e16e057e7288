//! A real client: Neovim's built-in LSP client, set up with the `lua`
//! block of docs/editors.md and driven headless by crates/cli/tests/inputs/lsp/nvim.lua,
//! opens a broken lb-config.json and must show the server's diagnostics
//! with their codes and lines, a hover and a completion. `.ci/run` installs Debian's `neovim` and sets
//! `ROUTEX_REQUIRE_NVIM=1`, so in CI a missing `nvim` fails; elsewhere the
//! test says it was skipped.

use serde_json::{json, Value};
use std::process::Command;

const BROKEN: &str = r#"{
  "default": "pulsra",
  "models": {
    "llama": {"algorithm": "pulsar", "seed": "v1", "n": 3},
    "mixtral": "groq-multiregion"
  }
}
"#;

fn nvim_available() -> bool {
    Command::new("nvim")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn neovim_shows_codes_and_lines_of_a_broken_lb_config() {
    if !nvim_available() {
        assert!(
            std::env::var_os("ROUTEX_REQUIRE_NVIM").is_none(),
            "nvim is required here (ROUTEX_REQUIRE_NVIM is set) but not installed"
        );
        eprintln!("SKIPPED neovim_shows_codes_and_lines_of_a_broken_lb_config: nvim is not installed (Debian package `neovim`)");
        return;
    }
    let dir = std::env::temp_dir().join(format!("routex-nvim-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("lb-config.json");
    std::fs::write(&file, BROKEN).unwrap();
    let out = dir.join("result.json");
    let init = dir.join("init.lua");
    std::fs::write(&init, super::editors::doc_block("lua")).unwrap();
    let script = concat!(
        concat!(env!("CARGO_MANIFEST_DIR"), "/../.."),
        "/crates/cli/tests/inputs/lsp/nvim.lua"
    );
    // The documented setup runs `routex` from PATH.
    let bin_dir = std::path::Path::new(env!("CARGO_BIN_EXE_routex"))
        .parent()
        .unwrap();
    let path = std::env::join_paths(std::iter::once(bin_dir.to_path_buf()).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .unwrap();
    let status = Command::new("nvim")
        .args(["--headless", "--clean", "-n", "-c"])
        .arg(format!("luafile {}", init.display()))
        .arg("-c")
        .arg(format!("luafile {script}"))
        .env("PATH", path)
        .env("ROUTEX_FILE", &file)
        .env("ROUTEX_OUT", &out)
        // On "seed" of line 4.
        .env("ROUTEX_HOVER_LINE", "3")
        .env("ROUTEX_HOVER_CHARACTER", "39")
        .env("HOME", &dir)
        .env("XDG_STATE_HOME", &dir)
        .env("XDG_DATA_HOME", &dir)
        .status()
        .expect("nvim runs");
    assert!(status.success(), "nvim exited with {status}");
    let result: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(result["filetype"], "json");
    // Severity 1 is error, 2 warning (vim.diagnostic.severity).
    assert_eq!(
        result["diagnostics"],
        json!([
            {"code": "unknown_method", "line": 2, "col": 13, "severity": 1, "source": "routex"},
            {"code": "unsupported_field", "line": 4, "col": 51, "severity": 1, "source": "routex"},
            {"code": "deprecated_alias", "line": 5, "col": 15, "severity": 2, "source": "routex"},
        ]),
        "{result}"
    );
    assert_eq!(
        result["hover"],
        "**seed**: a token or a quoted string\n\nText mixed into every ring and ranking hash: another seed, another placement.\n\ndefault: `\"\"`\n\n\
         applies to: wait-and-widen, pulsar, pulsar-wait-and-widen\n\n\
         effective value: shown once the file has no errors\n"
    );
    assert_eq!(
        result["completion"],
        json!([
            "request_algorithms",
            "require_cache_affinity_key",
            "require_input_tokens",
            "max_input_work_seconds",
            "seed",
            "consider_kv_free_tokens",
            "rendezvous_weight"
        ])
    );
}
