//! Loading a table from a path (`config::load_table_path`) and the plain
//! `Display` of reports and diagnostics an embedder logs.

use std::path::PathBuf;

use routex::config::{load_table_path, LoadError, MAX_INPUT_BYTES};
use routex::diag::{Code, Diagnostic, Span};

fn scratch(name: &str, bytes: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("routex-load-path-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn bundled_configurations_load_with_their_models() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples");
    let (table, report) = load_table_path(root.join("lb-config.json")).unwrap();
    assert!(!report.has_errors());
    assert!(table.models.contains_key("llama-3-70b"));
    let (table, _) = load_table_path(root.join("fleet.routes")).unwrap();
    assert!(table.models.contains_key("llama-3-70b"));
}

#[test]
fn an_invalid_file_is_an_error_whose_display_has_one_line_per_diagnostic() {
    let path = scratch(
        "bad.json",
        b"{\n  \"default\": \"pulsar\",\n  \"models\": {\"m\": {\"algorithm\": \"pulsr\"}}\n}\n",
    );
    let Err(LoadError::Invalid(report)) = load_table_path(&path) else {
        panic!("expected an invalid-configuration error");
    };
    let text = report.to_string();
    let shown = path.to_string_lossy();
    let first = text.lines().next().unwrap();
    assert!(
        first.starts_with(&format!("{shown}:3:")),
        "position first: {first}"
    );
    assert!(first.contains("error[unknown_method]"), "{first}");
    assert_eq!(
        text.lines().filter(|l| l.contains("error[")).count(),
        report.errors()
    );
    // The error's own Display is the report's.
    assert_eq!(LoadError::Invalid(report.clone()).to_string(), text);
}

#[test]
fn unreadable_inputs_are_errors_naming_the_file_and_the_cause() {
    let missing = std::env::temp_dir().join("routex-no-such-dir/lb-config.json");
    let err = load_table_path(&missing).unwrap_err();
    assert!(matches!(err, LoadError::Io { .. }));
    assert_eq!(
        err.to_string(),
        format!("{}: no such file or directory", missing.display())
    );

    let path = scratch("latin1.json", b"{\"default\": \"caf\xe9\"}");
    let err = load_table_path(&path).unwrap_err();
    assert!(
        matches!(err, LoadError::NotUtf8 { byte: 16, .. }),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        format!("{}: not valid UTF-8 (byte 16)", path.display())
    );

    let big = vec![b' '; MAX_INPUT_BYTES as usize + 1];
    let path = scratch("big.json", &big);
    let err = load_table_path(&path).unwrap_err();
    assert!(matches!(err, LoadError::TooLarge { .. }));
    assert_eq!(
        err.to_string(),
        format!(
            "{}: file is larger than the 4 MiB input limit",
            path.display()
        )
    );
}

#[test]
fn a_diagnostic_displays_severity_code_message_and_help_inertly() {
    let d = Diagnostic::new(
        Code::UnknownMethod,
        Span::new(0, 5),
        "unknown `pul\u{1b}sr`",
    )
    .with_help("did you mean `pulsar`?");
    assert_eq!(
        d.to_string(),
        "error[unknown_method]: unknown `pul\u{fffd}sr`\n  help: did you mean `pulsar`?"
    );
}
