//! Guards linear CPU cost of `lint` where tests/alloc_lint.rs is blind: a
//! quadratic path that allocates nothing (a `Vec::contains` scan of the
//! model ids, a rescan of the text per diagnostic) keeps allocations per
//! item constant. This test counts instructions instead, with valgrind's
//! callgrind, which is deterministic (not a timing): the binary re-runs
//! itself under callgrind for each input size, collecting only inside
//! `measured_work`.
//!
//! For sizes N, 2N and 4N the growth from 2N to 4N is compared with the
//! growth from N to 2N: 2.0 for linear work (fixed costs cancel), 4.0 for
//! quadratic work; the check fails above 2.1. Measured when this test was
//! written (at twice today's sizes): 1.99-2.05 for every case; with the model ids of
//! `config::read` kept in a `Vec` searched with `contains` (a quadratic
//! path that allocates nothing, which tests/alloc_lint.rs passed),
//! `check_errors` gave 2.89 and failed.
//!
//! Without valgrind the test says it skipped, unless
//! `ROUTEX_REQUIRE_VALGRIND` is set (`.ci/run` sets it once valgrind is
//! installed), which makes a missing valgrind a failure.

#[path = "support/lint_inputs.rs"]
mod inputs;

use routex::config::load_table;
use routex::diag::Report;
use routex::render::{github, json, sarif};
use std::hint::black_box;
use std::process::Command;

/// Set in the child: `CASE:N`.
const CHILD: &str = "ROUTEX_LINEAR_CHILD";
/// Growth from 2N to 4N over growth from N to 2N, at most.
const MAX_GROWTH: f64 = 2.1;

/// (case, N): each case runs at N, 2N and 4N items. Checking and rendering
/// are counted apart, so that a quadratic term in one is not diluted by
/// the linear cost of the other.
/// (`import` is left to tests/alloc_lint.rs: it costs ten times a check
/// under callgrind; `routex import` measured 2.000 there.)
/// Sizes are as small as keeps a quadratic term visible: with cost
/// `aN + bN^2`, the `contains` scan below (growth 2.89 at N = 1 000, so
/// `bN/a` about 0.27 there) gives about 2.57 at N = 500, still well above
/// the bound.
const CASES: [(&str, usize); 5] = [
    ("check_errors", 500),
    ("render_errors", 500),
    ("check_clean", 500),
    ("unknown_keys", 500),
    ("route_errors", 250),
];

fn input(case: &str, n: usize) -> (&'static str, String) {
    match case {
        "check_errors" | "render_errors" => ("lb-config.json", inputs::lb_config(n, true)),
        "check_clean" => ("lb-config.json", inputs::lb_config(n, false)),
        "unknown_keys" => ("lb-config.json", inputs::unknown_keys(n)),
        "route_errors" => ("fleet.routes", inputs::route_file(n, true)),
        other => panic!("unknown case {other}"),
    }
}

fn render_all(reports: &[Report]) {
    black_box(json::render(reports));
    black_box(github::render(reports));
    black_box(sarif::render(reports));
    black_box(routex_cli::human::render(
        reports,
        routex_cli::human::Style::Plain,
    ));
}

/// What is counted: checking, rendering in every format, or both.
#[inline(never)]
fn measured_work(case: &str, name: &str, text: &str, checked: Option<&[Report]>) {
    match (case, checked) {
        (_, Some(reports)) => render_all(reports),
        ("check_errors" | "check_clean", _) => {
            black_box(load_table(name, text));
        }
        _ => render_all(&[load_table(name, text).1]),
    }
}

fn child(spec: &str) {
    let (case, n) = spec.split_once(':').expect("CASE:N");
    let n: usize = n.parse().expect("N");
    let (name, text) = input(case, n);
    // Rendering alone: the report is made before counting starts.
    let checked = (case == "render_errors").then(|| [load_table(name, &text).1]);
    measured_work(case, name, &text, checked.as_ref().map(|r| &r[..]));
}

fn valgrind_available() -> bool {
    Command::new("valgrind")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Instructions executed inside `measured_work` for `case` at `n` items.
fn instructions(case: &str, n: usize) -> u64 {
    let exe = std::env::current_exe().expect("test binary");
    let out = Command::new("valgrind")
        .args([
            "--tool=callgrind",
            "--callgrind-out-file=/dev/null",
            "--toggle-collect=*measured_work*",
        ])
        .arg(&exe)
        .env(CHILD, format!("{case}:{n}"))
        .output()
        .expect("run valgrind");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{case} at {n}: {stderr}");
    stderr
        .lines()
        .find_map(|l| l.split_once("Collected :").map(|(_, v)| v.trim()))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no instruction count in: {stderr}"))
}

fn main() {
    if let Ok(spec) = std::env::var(CHILD) {
        child(&spec);
        return;
    }
    if !valgrind_available() {
        if std::env::var_os("ROUTEX_REQUIRE_VALGRIND").is_some() {
            panic!("ROUTEX_REQUIRE_VALGRIND is set but valgrind does not run");
        }
        eprintln!("linear_lint: valgrind is not installed; skipped");
        return;
    }
    // The fifteen callgrind runs are independent: all at once, so the
    // machine's cores share them (the counts do not depend on it).
    let counts: Vec<[u64; 3]> = std::thread::scope(|scope| {
        let runs: Vec<_> = CASES
            .iter()
            .map(|&(case, n)| {
                [n, 2 * n, 4 * n].map(|size| scope.spawn(move || instructions(case, size)))
            })
            .collect();
        runs.into_iter()
            .map(|sizes| sizes.map(|run| run.join().expect("a callgrind run")))
            .collect()
    });
    let mut failures = Vec::new();
    for ((case, n), [a, b, c]) in CASES.into_iter().zip(counts) {
        let growth = c.saturating_sub(b) as f64 / b.saturating_sub(a).max(1) as f64;
        println!(
            "linear_lint: {case}: {a} / {b} / {c} instructions at {n} / {} / {}: growth {growth:.3}",
            2 * n,
            4 * n
        );
        if growth > MAX_GROWTH {
            failures.push(format!(
                "{case}: instructions grow {growth:.2}x from {} to {} items but {:.0}x is linear (at most {MAX_GROWTH})",
                2 * n,
                4 * n,
                2.0
            ));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
    println!("linear_lint: ok");
}
