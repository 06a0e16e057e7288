//! Is a run's measured window a steady state? (docs/simulator.md,
//! "Steady-state measurement"). A window is steady when the fleet's
//! backlog (requests arrived and not yet finished, wherever they are)
//! does not grow across it beyond noise: the requests it admits are then
//! served at the rate they arrive, and its goodput is a rate the fleet
//! sustains. A growing backlog means the window's requests are being
//! stored in queues, to be served (or to miss) after it: its goodput is a
//! transient, not a capacity.

use crate::kernel::time::Micros;
use crate::measure::record::Record;

/// Growth allowed, as a share of the window's requests.
pub const GROWTH_SHARE: f64 = 0.02;
/// Growth allowed on top, in standard deviations of a Poisson backlog of
/// the starting size (the backlog's own noise).
pub const NOISE_SIGMAS: f64 = 2.0;

/// What a window's requests say about steadiness.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Steadiness {
    /// Requests arrived and not finished at the window's start and end.
    pub backlog_start: u64,
    pub backlog_end: u64,
    /// (end - start) / the window's requests.
    pub backlog_growth: f64,
    /// Share of the window's requests finished after the window ends.
    pub late_share: f64,
    /// Nearest-rank p99 of finish - arrival over the window's requests, ms.
    pub lifetime_p99_ms: f64,
    pub steady: bool,
}

/// Requests in the system at `t`: arrived at or before `t`, finished after.
fn backlog(records: &[Record], t: Micros) -> u64 {
    records
        .iter()
        .filter(|r| r.arrival <= t && r.finished > t)
        .count() as u64
}

/// The rule: steady when the window measured at least one request and the
/// backlog grew by at most 2 % of the window's requests plus two standard
/// deviations of a Poisson backlog of the starting size.
pub fn is_steady(measured: u64, start: u64, end: u64) -> bool {
    let allowed = GROWTH_SHARE * measured as f64 + NOISE_SIGMAS * (start as f64 + 1.0).sqrt();
    measured > 0 && (end as f64 - start as f64) <= allowed
}

/// Assesses the window [from, to) of a run's records.
pub fn assess(records: &[Record], from: Micros, to: Micros) -> Steadiness {
    let measured: Vec<&Record> = records
        .iter()
        .filter(|r| r.arrival >= from && r.arrival < to)
        .collect();
    let n = measured.len() as u64;
    // The backlog just before the window's first arrival and at its end.
    let start = backlog(records, from.saturating_sub(1));
    let end = backlog(records, to.saturating_sub(1));
    let late = measured.iter().filter(|r| r.finished >= to).count() as f64;
    let mut life: Vec<Micros> = measured
        .iter()
        .map(|r| r.finished.saturating_sub(r.arrival))
        .collect();
    life.sort_unstable();
    let p99 = if life.is_empty() {
        0
    } else {
        let rank = ((0.99 * life.len() as f64).ceil() as usize).clamp(1, life.len());
        life[rank - 1]
    };
    let share = |x: f64| if n > 0 { x / n as f64 } else { 0.0 };
    Steadiness {
        backlog_start: start,
        backlog_end: end,
        backlog_growth: share(end as f64 - start as f64),
        late_share: share(late),
        lifetime_p99_ms: p99 as f64 / 1_000.0,
        steady: is_steady(n, start, end),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::record::Outcome;

    fn rec(arrival: Micros, finished: Micros) -> Record {
        Record {
            arrival,
            finished,
            outcome: Outcome::Succeeded,
            input: 1,
            reused: 0,
            ttft_us: 0,
            backend_ttft_us: 0,
            routing_delay_us: 0,
            backend: 0,
            rank_depth: 1,
            cross_region: false,
            route_attempts: 1,
            mismatch_rejections: 0,
        }
    }

    #[test]
    fn a_constant_lifetime_is_steady_and_a_growing_queue_is_not() {
        // One arrival per second for 100 s, each living 3 s.
        let steady: Vec<Record> = (0..100)
            .map(|i| rec(i * 1_000_000, i * 1_000_000 + 3_000_000))
            .collect();
        let s = assess(&steady, 10_000_000, 90_000_000);
        assert_eq!((s.backlog_start, s.backlog_end), (3, 3));
        assert!(s.steady);
        assert_eq!(s.lifetime_p99_ms, 3_000.0);
        assert!((s.late_share - 3.0 / 80.0).abs() < 1e-12);
        // Served at half the arrival rate: request i finishes at 2 i + 1 s.
        let growing: Vec<Record> = (0..100)
            .map(|i| rec(i * 1_000_000, (2 * i + 1) * 1_000_000))
            .collect();
        let g = assess(&growing, 10_000_000, 90_000_000);
        assert!(g.backlog_end > g.backlog_start + 30, "{g:?}");
        assert!(!g.steady);
        assert!(g.backlog_growth > 0.4);
        assert!(!assess(&[], 0, 10).steady, "nothing measured");
    }

    #[test]
    fn noise_allowance() {
        assert!(is_steady(1_000, 100, 100 + 20 + 20));
        assert!(!is_steady(1_000, 100, 100 + 20 + 21));
        assert!(is_steady(10, 0, 2));
        assert!(!is_steady(0, 0, 0));
    }
}
