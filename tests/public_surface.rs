//! The core crate's public surface is deliberate: rustdoc's JSON output
//! of `routex` (every feature but `testing`) is walked from the crate root, and every
//! reachable public item (modules, types, functions, constants, fields,
//! variants, inherent methods) is compared with the committed list
//! `docs/public-surface.txt`, which docs/embedding.md points to. Adding or
//! removing a public item fails here until the list is updated:
//! `ROUTEX_BLESS=1 cargo test -p routex --all-features --test public_surface`
//! rewrites it, and the diff shows the change for review.
//!
//! rustdoc's JSON output is unstable: it is requested with
//! `RUSTC_BOOTSTRAP=1` from the machine's stable toolchain, set for the
//! rustdoc process alone (a wrapper named by `RUSTDOC`): set for the whole
//! build, it would re-run proc-macro2's build script, which watches it,
//! and rebuild every proc macro, twice per test run. So the run shares the
//! target directory of the running `cargo test` (which holds no lock while
//! tests run) and reuses its proc macros and build scripts.

// The rustdoc wrapper is a shell script.
#![cfg(unix)]

use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every feature of the core but `testing`, which opens internals to the
/// tests and is no part of the API: read from Cargo.toml's `[features]`.
fn api_features() -> String {
    let manifest = std::fs::read_to_string(root().join("Cargo.toml")).expect("Cargo.toml");
    let mut in_features = false;
    let mut names = Vec::new();
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_features = line == "[features]";
            continue;
        }
        if !in_features || line.starts_with('#') {
            continue;
        }
        if let Some((name, _)) = line.split_once('=') {
            let name = name.trim();
            if !name.is_empty() && name != "default" && name != "testing" {
                names.push(name.to_string());
            }
        }
    }
    names.join(",")
}

/// A `RUSTDOC` that runs the real one (`$RUSTDOC`, else `rustdoc`) with
/// `RUSTC_BOOTSTRAP=1`.
fn bootstrapping_rustdoc(dir: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let real = std::env::var("RUSTDOC").unwrap_or_else(|_| "rustdoc".into());
    let path = dir.join("rustdoc-bootstrap.sh");
    let script = format!(
        "#!/bin/sh\nRUSTC_BOOTSTRAP=1 exec '{}' \"$@\"\n",
        real.replace('\'', "'\\''")
    );
    std::fs::write(&path, script).expect("the wrapper is written");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
        .expect("the wrapper is executable");
    path
}

fn rustdoc_json() -> Value {
    // CARGO_TARGET_TMPDIR is `<target dir>/tmp`, wherever the target dir
    // was configured.
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let target = tmp.parent().expect("the target directory").to_path_buf();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(cargo)
        .current_dir(root())
        .env("RUSTDOC", bootstrapping_rustdoc(tmp))
        .env("CARGO_TARGET_DIR", &target)
        .env_remove("RUSTC_BOOTSTRAP")
        .env_remove("RUSTDOCFLAGS")
        .args([
            "rustdoc",
            "-q",
            "-p",
            "routex",
            "--lib",
            "--features",
            &api_features(),
            "--",
        ])
        .args(["-Z", "unstable-options", "--output-format", "json"])
        .status()
        .expect("cargo rustdoc runs");
    assert!(
        status.success(),
        "cargo rustdoc --output-format json failed"
    );
    let text = std::fs::read_to_string(target.join("doc").join("routex.json"))
        .expect("rustdoc wrote routex.json");
    serde_json::from_str(&text).expect("rustdoc JSON")
}

/// An id as the index's key (numbers in newer formats, strings in older).
fn key(id: &Value) -> String {
    match id {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Whether an item is compiled only with the `testing` feature (its cfg
/// survives in rustdoc's attributes): not part of the API, whatever
/// features the documentation was built with.
fn behind_testing(item: &Value) -> bool {
    item["attrs"].as_array().is_some_and(|attrs| {
        attrs
            .iter()
            .any(|a| a.to_string().contains("\\\"testing\\\""))
    })
}

struct Walk<'a> {
    index: &'a serde_json::Map<String, Value>,
    out: BTreeSet<String>,
    seen: BTreeSet<String>,
}

impl Walk<'_> {
    fn item(&mut self, id: &Value, path: &str, name_override: Option<&str>) {
        let Some(item) = self.index.get(&key(id)) else {
            return;
        };
        if item["visibility"] != "public" || behind_testing(item) {
            return;
        }
        let Some((kind, inner)) = item["inner"].as_object().and_then(|o| o.iter().next()) else {
            return;
        };
        let name = name_override
            .map(str::to_owned)
            .or_else(|| item["name"].as_str().map(str::to_owned));
        let here = match &name {
            Some(n) if path.is_empty() => n.clone(),
            Some(n) => format!("{path}::{n}"),
            None => path.to_string(),
        };
        match kind.as_str() {
            "use" => {
                if inner["is_glob"].as_bool() == Some(true) {
                    self.out.insert(format!("glob-use {here}::*"));
                    return;
                }
                let target = &inner["id"];
                let alias = inner["name"].as_str();
                if target.is_null() || !self.index.contains_key(&key(target)) {
                    // A re-export of another crate's item: part of the
                    // surface, and a semver tie worth seeing.
                    let source = inner["source"].as_str().unwrap_or("?");
                    self.out.insert(format!(
                        "reexport {path}::{} = {source}",
                        alias.unwrap_or("?")
                    ));
                } else {
                    self.item(target, path, alias);
                }
            }
            "module" => {
                if !self.seen.insert(format!("mod {here}")) {
                    return;
                }
                if !here.is_empty() && here != "routex" {
                    self.out.insert(format!("mod {here}"));
                }
                for child in inner["items"].as_array().into_iter().flatten() {
                    self.item(child, &here, None);
                }
            }
            "struct" | "enum" | "union" | "trait" => {
                self.out.insert(format!("{kind} {here}"));
                let fields = match &inner["kind"] {
                    Value::Object(k) => k
                        .get("plain")
                        .and_then(|p| p["fields"].as_array())
                        .or_else(|| k.get("tuple").and_then(Value::as_array))
                        .cloned()
                        .unwrap_or_default(),
                    _ => inner["fields"].as_array().cloned().unwrap_or_default(),
                };
                for field in fields.iter().filter(|f| !f.is_null()) {
                    if let Some(f) = self.index.get(&key(field)) {
                        if f["visibility"] == "public" {
                            let n = f["name"].as_str().unwrap_or("?");
                            self.out.insert(format!("field {here}.{n}"));
                        }
                    }
                }
                for variant in inner["variants"].as_array().into_iter().flatten() {
                    if let Some(v) = self.index.get(&key(variant)) {
                        let n = v["name"].as_str().unwrap_or("?");
                        self.out.insert(format!("variant {here}::{n}"));
                    }
                }
                for member in inner["items"].as_array().into_iter().flatten() {
                    if let Some(m) = self.index.get(&key(member)) {
                        let n = m["name"].as_str().unwrap_or("?");
                        self.out.insert(format!("trait-item {here}::{n}"));
                    }
                }
                for imp in inner["impls"].as_array().into_iter().flatten() {
                    let Some(block) = self.index.get(&key(imp)) else {
                        continue;
                    };
                    let block = &block["inner"]["impl"];
                    if !block["trait"].is_null() || block["is_synthetic"] == true {
                        continue;
                    }
                    for member in block["items"].as_array().into_iter().flatten() {
                        if let Some(m) = self.index.get(&key(member)) {
                            if m["visibility"] == "public" {
                                let n = m["name"].as_str().unwrap_or("?");
                                self.out.insert(format!("method {here}::{n}"));
                            }
                        }
                    }
                }
            }
            other => {
                self.out.insert(format!("{other} {here}"));
            }
        }
    }
}

fn surface() -> Vec<String> {
    let doc = rustdoc_json();
    let index = doc["index"].as_object().expect("index");
    let mut walk = Walk {
        index,
        out: BTreeSet::new(),
        seen: BTreeSet::new(),
    };
    walk.item(&doc["root"], "", None);
    walk.out.into_iter().collect()
}

fn committed() -> PathBuf {
    root().join("docs").join("public-surface.txt")
}

const HEADER: &str = "# The public surface of the core crate `routex` (every feature but\n\
# `testing`), one item a line, generated by tests/public_surface.rs from\n\
# rustdoc's JSON output and checked on every test run (docs/embedding.md\n\
# explains the surface).\n";

#[test]
fn the_public_surface_is_the_committed_list() {
    let now = surface();
    let text = format!("{HEADER}{}\n", now.join("\n"));
    let path = committed();
    if std::env::var_os("ROUTEX_BLESS").is_some() {
        std::fs::write(&path, &text).expect("write docs/public-surface.txt");
        return;
    }
    let before = std::fs::read_to_string(&path).unwrap_or_default();
    let listed: BTreeSet<&str> = before
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .collect();
    let current: BTreeSet<&str> = now.iter().map(String::as_str).collect();
    let added: Vec<&&str> = current.difference(&listed).collect();
    let removed: Vec<&&str> = listed.difference(&current).collect();
    assert!(
        added.is_empty() && removed.is_empty(),
        "the public surface changed ({} items now): update {} with ROUTEX_BLESS=1 \
         and say why in the commit\nadded: {added:#?}\nremoved: {removed:#?}",
        current.len(),
        relative(&path)
    );
    // No other crate's item is re-exported: it would tie routex's semver
    // to that crate's.
    let foreign: Vec<&&str> = current
        .iter()
        .filter(|l| l.starts_with("reexport "))
        .collect();
    assert!(
        foreign.is_empty(),
        "re-exports of other crates: {foreign:#?}"
    );
}

fn relative(path: &Path) -> String {
    path.strip_prefix(root())
        .unwrap_or(path)
        .display()
        .to_string()
}
