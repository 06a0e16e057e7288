//! A12 determinism: reruns and thread counts give byte-identical files.

use super::support::small;
use routex_sim::{output, plot, sweep};

fn files(jobs: usize) -> Vec<String> {
    let mut p = small();
    p.set_window(5.0, 10.0);
    let runs = sweep::sweep(&p, jobs, &mut |_, _| {});
    assert_eq!(runs.len(), 6);
    vec![
        output::summary_json(&p, "faithful", &runs),
        output::summary_csv(&p, &runs),
        output::timeseries_csv(&p, &runs),
        plot::svg(&p, &runs),
    ]
}

#[test]
fn reruns_and_job_counts_give_identical_files() {
    let one = files(1);
    assert_eq!(one, files(1), "rerun");
    assert_eq!(one, files(2), "--jobs 2");
    assert!(one[0].contains("\"policy\": \"guard\""));
    assert!(!one[0].contains("wall"), "no wall-clock value in files");
}
