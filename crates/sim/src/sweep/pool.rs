//! The simulator's worker pool. Work comes in *chains*: a chain's next run
//! may depend on its previous runs' results (one seed's capacity
//! bisection), or a chain is a single run (one cell of a sweep's matrix).
//! A free thread takes the next run of the lowest-numbered chain that has
//! no run in flight, so the seeds of a bisection share the threads run by
//! run rather than seed by seed (three seeds on two threads no longer
//! leave a thread idle for a third of the search), and a sweep runs its
//! cells in order.
//!
//! Each chain sees its own results only, in its own order, so what it
//! computes does not depend on the thread count or on scheduling.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Condvar, Mutex, MutexGuard};

/// A sequence of runs, each chosen from the outcomes before it.
pub trait Chain: Send {
    /// What one run needs to know.
    type Job: Send;
    /// What one run found.
    type Outcome: Send;
    /// The next run, or `None` when the chain is finished. Called again
    /// only after the outcome of the returned job was recorded.
    fn next_job(&mut self) -> Option<Self::Job>;
    /// The outcome of the job `next_job` last returned.
    fn record(&mut self, outcome: Self::Outcome);
}

struct Board<C> {
    chains: Vec<C>,
    /// A run of the chain is in flight.
    busy: Vec<bool>,
    /// The chain returned `None`.
    done: Vec<bool>,
    /// Every chain before this one is done.
    first_open: usize,
    finished: usize,
}

impl<C: Chain> Board<C> {
    /// The next job of the lowest-numbered chain without one in flight,
    /// marking chains that turn out finished; `finished` is sent one unit
    /// per chain that finishes.
    fn take(&mut self, finished: &mpsc::Sender<()>) -> Option<(usize, C::Job)> {
        while self.first_open < self.chains.len() && self.done[self.first_open] {
            self.first_open += 1;
        }
        for i in self.first_open..self.chains.len() {
            if self.busy[i] || self.done[i] {
                continue;
            }
            match self.chains[i].next_job() {
                Some(job) => {
                    self.busy[i] = true;
                    return Some((i, job));
                }
                None => {
                    self.done[i] = true;
                    self.finished += 1;
                    let _ = finished.send(());
                }
            }
        }
        None
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A worker that panicked has already failed the run; the board itself
    // is consistent between two statements, so carry on with it.
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Runs every chain to its end on `jobs` threads (at least one) and gives
/// the chains back in their order. Once `stop` is set no new run starts:
/// runs in flight finish and are recorded, and the chains keep what they
/// have. `progress(finished, total)` is called on the calling thread each
/// time a chain finishes.
pub fn run_chains<C: Chain>(
    chains: Vec<C>,
    jobs: usize,
    stop: &AtomicBool,
    work: &(dyn Fn(&C::Job) -> C::Outcome + Sync),
    progress: &mut dyn FnMut(usize, usize),
) -> Vec<C> {
    let total = chains.len();
    let board = Mutex::new(Board {
        busy: vec![false; total],
        done: vec![false; total],
        chains,
        first_open: 0,
        finished: 0,
    });
    let wake = Condvar::new();
    let (tx, rx) = mpsc::channel::<()>();
    std::thread::scope(|scope| {
        for _ in 0..jobs.clamp(1, total.max(1)) {
            let tx = tx.clone();
            let (board, wake) = (&board, &wake);
            scope.spawn(move || loop {
                let (i, job) = {
                    let mut b = lock(board);
                    loop {
                        if stop.load(Ordering::SeqCst) || b.finished == total {
                            wake.notify_all();
                            return;
                        }
                        if let Some(taken) = b.take(&tx) {
                            break taken;
                        }
                        if b.finished == total {
                            wake.notify_all();
                            return;
                        }
                        // Every open chain has a run in flight: wait for one.
                        b = wake.wait(b).unwrap_or_else(|p| p.into_inner());
                    }
                };
                let outcome = work(&job);
                let mut b = lock(board);
                b.chains[i].record(outcome);
                b.busy[i] = false;
                drop(b);
                wake.notify_all();
            });
        }
        drop(tx);
        let mut done = 0;
        while rx.recv().is_ok() {
            done += 1;
            progress(done, total);
        }
    });
    board.into_inner().unwrap_or_else(|p| p.into_inner()).chains
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts to `len`, each step's job the count so far.
    struct Count {
        len: usize,
        seen: Vec<usize>,
    }

    impl Chain for Count {
        type Job = usize;
        type Outcome = usize;
        fn next_job(&mut self) -> Option<usize> {
            (self.seen.len() < self.len).then_some(self.seen.len())
        }
        fn record(&mut self, outcome: usize) {
            self.seen.push(outcome);
        }
    }

    fn chains() -> Vec<Count> {
        (0..7)
            .map(|len| Count {
                len,
                seen: Vec::new(),
            })
            .collect()
    }

    #[test]
    fn every_chain_runs_to_its_end_in_order_whatever_the_thread_count() {
        for jobs in [1, 2, 3, 16] {
            let mut calls = Vec::new();
            let out = run_chains(
                chains(),
                jobs,
                &AtomicBool::new(false),
                &|&step| step * 10,
                &mut |done, total| calls.push((done, total)),
            );
            for (len, chain) in out.iter().enumerate() {
                let want: Vec<usize> = (0..len).map(|s| s * 10).collect();
                assert_eq!(chain.seen, want, "jobs {jobs}");
            }
            let want: Vec<(usize, usize)> = (1..=7).map(|d| (d, 7)).collect();
            assert_eq!(calls, want, "jobs {jobs}");
        }
    }

    #[test]
    fn a_set_stop_starts_nothing() {
        let out = run_chains(chains(), 2, &AtomicBool::new(true), &|&s| s, &mut |_, _| {});
        assert!(out.iter().all(|c| c.seen.is_empty()));
    }

    #[test]
    fn no_chains_and_no_threads_are_fine() {
        let none: Vec<Count> = Vec::new();
        assert!(run_chains(none, 0, &AtomicBool::new(false), &|&s| s, &mut |_, _| {}).is_empty());
        let out = run_chains(
            chains(),
            0,
            &AtomicBool::new(false),
            &|&s| s,
            &mut |_, _| {},
        );
        assert_eq!(out[6].seen.len(), 6);
    }
}
