//! `routex sim tune` through the real binary.

use crate::cli::run::{routex, scratch};

/// The real binary: progress on stderr, the table and both pastes on
/// stdout, each read back by `routex check` and `routex lint`.
#[test]
fn the_command_prints_what_the_checkers_accept() {
    let args = [
        "sim",
        "tune",
        "crates/sim/tests/inputs/fast-check.json",
        "--policy",
        "guard",
        "--rate",
        "12",
        "--ttft-p99-ms",
        "4000",
        "--trials",
        "6",
        "--jobs",
        "2",
    ];
    let out = routex(&args);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stderr.contains("rung 1/3: 6 trials"), "{}", out.stderr);
    assert!(out.stderr.contains("rung 3/3"), "{}", out.stderr);
    assert!(
        out.stdout.starts_with("rank trial wait_ms"),
        "{}",
        out.stdout
    );
    let after = |label: &str| {
        let at = out.stdout.find(label).expect(label) + label.len();
        out.stdout[at..].trim_start().to_string()
    };
    let expression = after("routing expression:");
    let expression = expression.lines().next().unwrap();
    assert!(
        expression.starts_with("pulsar-wait-and-widen("),
        "{expression}"
    );
    let check = routex(&["check", expression]);
    assert_eq!(check.code, 0, "{check:?}");
    // The entry follows its heading's line and ends at the blank line
    // before the diff.
    let entry =
        after("lb-config.json model entry (the base configuration's, with the winner's fields):");
    let entry = entry.split("\n\n").next().unwrap_or_default().to_string();
    assert!(entry.starts_with("\"m\": {"), "{entry}");
    let dir = scratch("sim-tune");
    let file = dir.join("lb-config.json");
    std::fs::write(
        &file,
        format!(
            "{{\"default\": \"random\", \"models\": {{\n{}\n}}}}",
            entry.trim_end()
        ),
    )
    .unwrap();
    let lint = routex(&["lint", file.to_str().unwrap()]);
    assert_eq!(lint.code, 0, "{lint:?}");
    // Usage errors exit 2; a template of another algorithm exits 1.
    let mut bad = args;
    bad[7] = "0";
    assert_eq!(routex(&bad).code, 2);
    let mut legacy = args;
    legacy[4] = "legacy";
    assert_eq!(routex(&legacy).code, 1);
}
