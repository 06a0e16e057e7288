//! `routex sim run FILE.yaml`: a stargate-bench scenario file, every
//! algorithm in virtual time (docs/simulator.md, "stargate-bench files").
//! Reading files, printing and writing only; the runner is
//! `routex_sim::bench`.

use crate::sim::RunArgs;
use routex_sim::bench::{self, plan, report};
use std::io::Write;
use std::path::Path;
use std::time::Instant;

/// Whether `path` names a stargate-bench file (YAML).
pub fn is_bench(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("yaml" | "yml")
    )
}

/// Runs the file; 0 ok, 1 invalid file, 2 usage or I/O.
pub fn run(path: &Path, a: &RunArgs) -> i32 {
    let text = match crate::input::read_text(path) {
        Ok(t) => t,
        Err(e) => return crate::output::usage_error(e),
    };
    let name = crate::input::source_name(path);
    let mut loaded = match bench::load(&name, &text) {
        Ok(b) => b,
        Err(r) => {
            crate::sim::print_report(&r);
            return 1;
        }
    };
    crate::sim::print_report(&loaded.warnings);
    if let Some(seed) = a.options.rng_seed {
        loaded.file.seed = seed;
    }
    let requests = match &a.manifest {
        Some(m) => match crate::input::read_text(m).map(|t| plan::read_manifest(&t)) {
            Ok(Ok(r)) => r,
            Ok(Err(e)) => {
                return crate::output::usage_error(format!("{}: not a manifest: {e}", m.display()))
            }
            Err(e) => return crate::output::usage_error(e),
        },
        None => plan::materialize(&loaded.file),
    };
    let started = Instant::now();
    let runs = bench::run(&loaded, &requests, a.jobs.max(1));
    let wall = started.elapsed().as_secs_f64();
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(report::table(&loaded, &runs).as_bytes());
    let simulated: u64 = runs.iter().map(|r| r.result.stats.requests).sum();
    let _ = writeln!(
        stdout,
        "{} algorithms, {simulated} simulated requests in {wall:.2} s wall",
        runs.len()
    );
    if let Some(dir) = &a.out {
        let written = std::fs::create_dir_all(dir)
            .and_then(|()| std::fs::write(dir.join("bench.json"), report::json(&loaded, &runs)));
        if let Err(e) = written {
            return crate::output::usage_error(format!("{}: cannot write: {e}", dir.display()));
        }
    }
    0
}
