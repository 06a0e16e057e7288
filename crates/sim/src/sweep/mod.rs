//! Runs a scenario's matrix (policy x rate x seed) on `jobs` threads. Runs
//! are independent; results come back in run order whatever the thread
//! count, so outputs do not depend on `--jobs`.

pub(crate) mod pool;
pub mod shard;

use crate::run::{run, RunResult};
use crate::scenario::Prepared;
use crate::sweep::pool::{run_chains, Chain};
use std::sync::atomic::AtomicBool;
use std::time::Instant;

/// One cell of the matrix.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RunKey {
    /// Index into `Prepared::policies`.
    pub policy: usize,
    pub rate_rps: f64,
    pub seed: u64,
}

#[derive(Clone, Debug)]
pub struct RunOutput {
    pub key: RunKey,
    pub result: RunResult,
    /// Wall-clock time of the run: printed, never written to files.
    pub wall_ms: f64,
}

/// Run order: policy (file order), then rate, then seed.
pub fn run_keys(p: &Prepared) -> Vec<RunKey> {
    let mut keys = Vec::new();
    for policy in 0..p.policies.len() {
        for &rate_rps in &p.file.rates_rps {
            for &seed in &p.file.seeds {
                keys.push(RunKey {
                    policy,
                    rate_rps,
                    seed,
                });
            }
        }
    }
    keys
}

/// Runs every key; `progress(done, total)` is called on the calling thread.
pub fn sweep(p: &Prepared, jobs: usize, progress: &mut dyn FnMut(usize, usize)) -> Vec<RunOutput> {
    sweep_keys(p, &run_keys(p), jobs, progress)
}

/// Runs the given keys (a shard's slice of the matrix), results in the
/// keys' order.
pub fn sweep_keys(
    p: &Prepared,
    keys: &[RunKey],
    jobs: usize,
    progress: &mut dyn FnMut(usize, usize),
) -> Vec<RunOutput> {
    sweep_keys_until(p, keys, jobs, &AtomicBool::new(false), progress)
}

/// [`sweep_keys`] that starts no new run once `stop` is set (Ctrl-C): the
/// runs in progress finish, and the finished runs come back in the keys'
/// order.
pub fn sweep_keys_until(
    p: &Prepared,
    keys: &[RunKey],
    jobs: usize,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(usize, usize),
) -> Vec<RunOutput> {
    let cells: Vec<Cell> = keys
        .iter()
        .map(|&key| Cell {
            key,
            started: false,
            out: None,
        })
        .collect();
    // Every run's timeline is held until the files are written: the
    // whole matrix (not this slice of it) shares one budget.
    let timeline_cells = crate::measure::timeline::cells_per_run(run_keys(p).len());
    let work = |&key: &RunKey| {
        let started = Instant::now();
        let policy = &p.policies[key.policy];
        let mut settings = p.settings_for(policy);
        if settings.timeline_cells != timeline_cells {
            settings.to_mut().timeline_cells = timeline_cells;
        }
        let result = run(&settings, &policy.kind, key.rate_rps, key.seed);
        RunOutput {
            key,
            result,
            wall_ms: started.elapsed().as_secs_f64() * 1_000.0,
        }
    };
    run_chains(cells, jobs, stop, &work, progress)
        .into_iter()
        .filter_map(|cell| cell.out)
        .collect()
}

/// One cell of the matrix as a chain of one run.
struct Cell {
    key: RunKey,
    started: bool,
    out: Option<RunOutput>,
}

impl Chain for Cell {
    type Job = RunKey;
    type Outcome = RunOutput;
    fn next_job(&mut self) -> Option<RunKey> {
        (!std::mem::replace(&mut self.started, true)).then_some(self.key)
    }
    fn record(&mut self, out: RunOutput) {
        self.out = Some(out);
    }
}
