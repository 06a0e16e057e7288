//! A12 determinism: reruns and thread counts give byte-identical files,
//! with and without faults.

use super::support::{input, prepared, small};
use routex_sim::scenario::Prepared;
use routex_sim::{report::output, report::plot, sweep};
use serde_json::json;

fn files(p: &Prepared, jobs: usize) -> Vec<String> {
    let runs = sweep::sweep(p, jobs, &mut |_, _| {});
    assert_eq!(runs.len(), 6);
    vec![
        output::summary_json(p, "faithful", &runs),
        output::summary_csv(p, &runs),
        output::timeseries_csv(p, &runs),
        output::backends_csv(p, &runs),
        plot::svg(p, &runs),
    ]
}

#[test]
fn reruns_and_job_counts_give_identical_files() {
    let mut p = small();
    p.set_window(5.0, 10.0);
    let one = files(&p, 1);
    assert_eq!(one, files(&p, 1), "rerun");
    assert_eq!(one, files(&p, 2), "--jobs 2");
    assert!(one[0].contains("\"policy\": \"guard\""));
    assert!(!one[0].contains("wall"), "no wall-clock value in files");
}

/// The small scenario with one fault of each kind, by time and by
/// request: a fault run is as reproducible as any other, and its
/// faults show in `backends.csv`.
#[test]
fn fault_runs_are_identical_across_reruns_and_job_counts() {
    let mut v: serde_json::Value = serde_json::from_str(&input("small.json")).expect("json");
    v["warmup_s"] = json!(5);
    v["measure_s"] = json!(15);
    v["faults"] = json!([
        {"at_s": 8, "backend": "near-b0", "action": "remove"},
        {"at_request": 40, "backend": "near-b1", "action": "slow_down", "factor": 3, "duration_s": 6},
        {"at_s": 4, "backend": "near-b2", "action": "stats_outage", "duration_s": 7.5}
    ]);
    let p = prepared(&v.to_string());
    let one = files(&p, 1);
    assert_eq!(one, files(&p, 1), "rerun");
    assert_eq!(one, files(&p, 2), "--jobs 2");
    // near-b2's outage covers 4-11.5 s: 6 s of the bin 0-10 s, 1.5 s of
    // the next; near-b0 is unregistered at the end of the bin 0-10 s.
    let rows: Vec<&str> = one[3]
        .lines()
        .filter(|l| l.starts_with("guard,8,1,"))
        .collect();
    assert_eq!(rows.len(), 2 * 6, "two bins x six backends");
    let field = |row: &str, i: usize| row.split(',').nth(i).unwrap_or("").to_string();
    assert_eq!(field(rows[0], 4), "near-b0");
    assert_eq!(field(rows[0], 7), "0", "near-b0 removed at 8 s");
    assert_eq!(field(rows[2], 8), "6", "near-b2's outage in the bin 0-10 s");
    assert_eq!(field(rows[8], 8), "1.5", "and in the bin 10-20 s");
}
