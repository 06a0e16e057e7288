//! Each backend's timeline (docs/simulator.md, "Command line and outputs",
//! `backends.csv`): per 10 s bin (the bins of `timeseries.csv`) and per
//! backend, what the routers sent it, what it served and refused, and its
//! state at the bin's end (registered, stats out, slowed), so that a
//! fault and the fleet's recovery can be read bin by bin.
//!
//! The run counts events in the bin of the instant they happen (not of
//! the request's arrival, as `timeseries.csv` does): a recovery is about
//! when the backend did things. The state columns are sampled at each bin
//! boundary, after every event before it and before any event at it.

use crate::kernel::time::Micros;
use crate::measure::metrics::BIN_US;
use serde::{Deserialize, Serialize};

/// The most (bin, backend) cells one run keeps (96 bytes each): a longer
/// or larger run has no timeline, and a warning says so, rather than
/// memory that grows with the run.
pub const MAX_CELLS: usize = 200_000;

/// The most cells a whole sweep keeps: every run's timeline is held until
/// the files are written, so a matrix of many runs shares this budget
/// (about 96 MB) instead of each run taking [`MAX_CELLS`].
pub const MAX_SWEEP_CELLS: usize = 1_000_000;

/// The cells each run of a matrix of `runs` runs may keep: its share of
/// [`MAX_SWEEP_CELLS`], at most [`MAX_CELLS`]. A function of the whole
/// matrix, not of a shard's slice, so a shard's runs keep what the
/// unsharded runs keep.
pub fn cells_per_run(runs: usize) -> usize {
    (MAX_SWEEP_CELLS / runs.max(1)).min(MAX_CELLS)
}

/// One backend in one bin.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Cell {
    /// Dispatches to it in the bin (every attempt of a request counts).
    pub routed: u64,
    /// Queue-mismatch 429s it answered.
    pub rejected: u64,
    /// Requests whose last token it produced.
    pub completed: u64,
    /// Input tokens of those requests, and the part its cache served.
    pub input_tokens: u64,
    pub reused_tokens: u64,
    /// First tokens it produced, and the sum of their backend TTFTs
    /// (request received to first token), microseconds.
    pub first_tokens: u64,
    pub ttft_sum_us: u64,
    /// At the bin's end: requests it had accepted and not finished.
    pub in_flight: u64,
    /// At the bin's end: the input TPS of its last published report.
    pub input_tps: f64,
    /// At the bin's end: its registration has not ended.
    pub registered: bool,
    /// At the bin's end: the slow-down factor in force (1: its profile's
    /// speed).
    pub slow_factor: f64,
    /// Microseconds of the bin during which a stats outage held its
    /// reports back.
    pub stats_out_us: u64,
}

impl Default for Cell {
    fn default() -> Self {
        Cell {
            routed: 0,
            rejected: 0,
            completed: 0,
            input_tokens: 0,
            reused_tokens: 0,
            first_tokens: 0,
            ttft_sum_us: 0,
            in_flight: 0,
            input_tps: 0.0,
            registered: true,
            slow_factor: 1.0,
            stats_out_us: 0,
        }
    }
}

/// A run's timeline: `bins` x `backends` cells, bin-major.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Timeline {
    /// Backends per bin: the topology's members, in topology order.
    pub backends: usize,
    /// Cell (bin, backend) at `bin * backends + backend`.
    pub cells: Vec<Cell>,
    /// The run needed more than [`MAX_CELLS`] cells: none were kept.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub too_long: bool,
}

impl Timeline {
    /// The bins, each a slice of one cell per backend.
    pub fn bins(&self) -> impl Iterator<Item = &[Cell]> {
        self.cells.chunks(self.backends.max(1))
    }
}

/// A backend's state at a bin boundary, as the run knows it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Sample {
    pub in_flight: u64,
    pub input_tps: f64,
    pub registered: bool,
    pub slow_factor: f64,
}

/// The timeline as a run builds it: the cells of the closed bins and of
/// the open one (the bin of the current instant).
#[derive(Debug)]
pub(crate) struct Recorder {
    backends: usize,
    cells: Vec<Cell>,
    /// The open bin's end.
    next_boundary: Micros,
    /// Per backend, its stats outages as disjoint intervals in time order.
    outages: Vec<Vec<(Micros, Micros)>>,
    /// The most cells this run keeps ([`cells_per_run`]).
    max_cells: usize,
    /// Set when the cells would pass `max_cells`: nothing more is kept.
    full: bool,
}

impl Recorder {
    pub(crate) fn new(backends: usize, max_cells: usize) -> Self {
        let full = backends > max_cells;
        Recorder {
            backends,
            cells: if full {
                Vec::new()
            } else {
                vec![Cell::default(); backends]
            },
            next_boundary: BIN_US,
            outages: vec![Vec::new(); backends],
            max_cells,
            full,
        }
    }

    /// Whether the open bin ends at or before `at`: the run closes it
    /// (with [`Recorder::close`]) before it handles an event at `at`.
    /// Never once the recorder is full, so a run that goes on far beyond
    /// its bins does not close them one by one.
    pub(crate) fn due(&self, at: Micros) -> bool {
        !self.full && at >= self.next_boundary
    }

    /// Backend b's cell in the open bin; `None` once the recorder is full.
    pub(crate) fn cell(&mut self, b: usize) -> Option<&mut Cell> {
        if self.full {
            return None;
        }
        let open = self.cells.len() - self.backends;
        self.cells.get_mut(open + b)
    }

    /// A stats outage of backend b over [from, to); an outage that
    /// overlaps the previous one extends it.
    pub(crate) fn outage(&mut self, b: usize, from: Micros, to: Micros) {
        let Some(list) = self.outages.get_mut(b) else {
            return;
        };
        match list.last_mut() {
            Some(last) if from <= last.1 => last.1 = last.1.max(to),
            _ => list.push((from, to)),
        }
    }

    /// Closes the open bin with each backend's state at its end and opens
    /// the next.
    pub(crate) fn close(&mut self, sample: impl Fn(usize) -> Sample) {
        let end = self.next_boundary;
        let start = end.saturating_sub(BIN_US);
        self.next_boundary = end.saturating_add(BIN_US);
        if self.full {
            return;
        }
        let open = self.cells.len() - self.backends;
        for b in 0..self.backends {
            let s = sample(b);
            let out: Micros = self.outages[b]
                .iter()
                .map(|&(from, to)| to.min(end).saturating_sub(from.max(start)))
                .sum();
            let c = &mut self.cells[open + b];
            c.in_flight = s.in_flight;
            c.input_tps = s.input_tps;
            c.registered = s.registered;
            c.slow_factor = s.slow_factor;
            c.stats_out_us = out;
        }
        if self.cells.len() + self.backends > self.max_cells {
            self.full = true;
            return;
        }
        self.cells
            .extend(std::iter::repeat_n(Cell::default(), self.backends));
    }

    /// The timeline of the bins over [0, horizon): bins the run did not
    /// reach are closed with `sample` (the state at the end), and the bins
    /// after the horizon (the run's drain) are dropped.
    pub(crate) fn finish(mut self, horizon: Micros, sample: impl Fn(usize) -> Sample) -> Timeline {
        let bins = horizon.div_ceil(BIN_US) as usize;
        let too_long = bins.saturating_mul(self.backends) > self.max_cells;
        while !self.full && self.cells.len() / self.backends.max(1) <= bins {
            self.close(&sample);
        }
        if too_long || self.backends == 0 {
            return Timeline {
                backends: self.backends,
                cells: Vec::new(),
                too_long,
            };
        }
        self.cells.truncate(bins * self.backends);
        Timeline {
            backends: self.backends,
            cells: self.cells,
            too_long: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(b: usize) -> Sample {
        Sample {
            in_flight: b as u64,
            input_tps: 10.0,
            registered: b == 0,
            slow_factor: 2.0,
        }
    }

    #[test]
    fn counts_go_to_the_open_bin_and_states_are_sampled_at_its_end() {
        let mut r = Recorder::new(2, MAX_CELLS);
        r.cell(1).expect("open").routed += 1;
        // A 5 s outage from 8 s: 2 s in bin 0, 3 s in bin 1.
        r.outage(0, 8 * 1_000_000, 13 * 1_000_000);
        r.close(sample);
        r.cell(0).expect("open").completed += 2;
        let t = r.finish(25 * 1_000_000, sample);
        let bins: Vec<&[Cell]> = t.bins().collect();
        assert_eq!(bins.len(), 3);
        assert_eq!(bins[0][1].routed, 1);
        assert_eq!(bins[0][1].in_flight, 1);
        assert!(bins[0][0].registered && !bins[0][1].registered);
        assert_eq!(bins[0][0].stats_out_us, 2_000_000);
        assert_eq!(bins[1][0].stats_out_us, 3_000_000);
        assert_eq!(bins[1][0].completed, 2);
        assert_eq!(bins[2][0].stats_out_us, 0);
        assert_eq!(bins[2][0].slow_factor, 2.0);
    }

    #[test]
    fn a_run_past_the_cell_limit_keeps_no_timeline() {
        let backends = MAX_CELLS / 4;
        let mut r = Recorder::new(backends, MAX_CELLS);
        for _ in 0..5 {
            r.close(sample);
        }
        assert!(r.cell(0).is_none());
        assert!(!r.due(Micros::MAX));
        let t = r.finish(50 * 1_000_000, sample);
        assert!(t.too_long && t.cells.is_empty());
        let t = Recorder::new(2, MAX_CELLS).finish(0, sample);
        assert!(!t.too_long && t.cells.is_empty());
        // More backends than cells: nothing allocated for them.
        let r = Recorder::new(11, 10);
        assert!(r.full && r.cells.is_empty());
    }

    #[test]
    fn a_sweep_shares_its_budget_and_a_cell_is_96_bytes() {
        assert_eq!(std::mem::size_of::<Cell>(), 96);
        assert_eq!(cells_per_run(1), MAX_CELLS);
        assert_eq!(cells_per_run(5), MAX_CELLS);
        assert_eq!(cells_per_run(36), 27_777);
        assert_eq!(cells_per_run(210), 4_761);
        assert_eq!(cells_per_run(0), MAX_CELLS);
        // Within budget, whatever the matrix.
        for runs in [1, 7, 36, 1_000, 1_000_000] {
            assert!(cells_per_run(runs) * runs <= MAX_SWEEP_CELLS, "{runs}");
        }
    }
}
