//! One router's view of the backends (docs/simulator-model.md A6): the last stats
//! report received from each backend plus that router's own pending
//! reservations, kept as ready-made `ClusterSnapshot`s in topology order so
//! that a decision reads them without building anything.

use super::pylon::{queue_ms, StatsReport};
use crate::balancer::ClusterSnapshot;
use std::rc::Rc;

/// Running sums of one (router, backend) reservation list.
#[derive(Clone, Debug)]
struct Reservations {
    list: Vec<(u64, u64)>,
    input: u64,
    /// Σ ceil(input / base tps x 1000); `None` once some input met an invalid tps.
    estimate_ms: Option<u64>,
}

impl Default for Reservations {
    fn default() -> Self {
        Reservations {
            list: Vec::new(),
            input: 0,
            estimate_ms: Some(0),
        }
    }
}

/// A router's candidate view.
#[derive(Debug)]
pub struct RouterView {
    base: Vec<Rc<StatsReport>>,
    res: Vec<Reservations>,
    snapshots: Vec<ClusterSnapshot>,
}

impl RouterView {
    /// `ids` and `rtt_ms` per backend in topology order; every backend starts
    /// from `initial` (its idle report).
    pub fn new(ids: &[String], rtt_ms: &[f64], initial: &[Rc<StatsReport>]) -> Self {
        let snapshots = ids
            .iter()
            .zip(rtt_ms)
            .map(|(id, &rtt)| ClusterSnapshot {
                id: id.clone(),
                rtt_ms: rtt,
                ..ClusterSnapshot::default()
            })
            .collect();
        let mut view = RouterView {
            base: initial.to_vec(),
            res: vec![Reservations::default(); ids.len()],
            snapshots,
        };
        for b in 0..ids.len() {
            view.refresh(b);
        }
        view
    }

    pub fn snapshots(&self) -> &[ClusterSnapshot] {
        &self.snapshots
    }

    pub fn pending(&self, backend: usize) -> usize {
        self.res.get(backend).map_or(0, |r| r.list.len())
    }

    /// A stats report arrives: it replaces the view and clears every pending
    /// reservation of this router on that backend.
    pub fn stats_arrive(&mut self, backend: usize, report: Rc<StatsReport>) {
        let (Some(base), Some(res)) = (self.base.get_mut(backend), self.res.get_mut(backend))
        else {
            return;
        };
        *base = report;
        res.list.clear();
        res.input = 0;
        res.estimate_ms = Some(0);
        self.refresh(backend);
    }

    /// Adds a priority-0 reservation of `input` tokens.
    pub fn reserve(&mut self, backend: usize, id: u64, input: u64) {
        let (Some(base), Some(res)) = (self.base.get(backend), self.res.get_mut(backend)) else {
            return;
        };
        res.list.push((id, input));
        res.input += input;
        res.estimate_ms = match (res.estimate_ms, queue_ms(input, base.last_mean_tps)) {
            (Some(sum), Some(ms)) => Some(sum.saturating_add(ms)),
            _ => None,
        };
        self.refresh(backend);
    }

    /// Removes a reservation by id; a no-op (false) if a stats arrival
    /// cleared it.
    pub fn unreserve(&mut self, backend: usize, id: u64) -> bool {
        let Some(res) = self.res.get_mut(backend) else {
            return false;
        };
        let Some(i) = res.list.iter().position(|&(r, _)| r == id) else {
            return false;
        };
        res.list.swap_remove(i);
        // Recompute from the list: removal cannot undo an invalid-tps clear
        // incrementally, and lists hold a handful of entries.
        let tps = self.base[backend].last_mean_tps;
        res.input = res.list.iter().map(|&(_, n)| n).sum();
        res.estimate_ms = res.list.iter().try_fold(0u64, |acc, &(_, n)| {
            queue_ms(n, tps).map(|ms| acc.saturating_add(ms))
        });
        self.refresh(backend);
        true
    }

    /// The expected queue time the router sends with a dispatch (ref 3.1 for
    /// priority 0), read before the new reservation.
    pub fn expected_queue_ms(&self, backend: usize) -> Option<u64> {
        let s = self.snapshots.get(backend)?;
        if s.max_engine_concurrency > 0 && s.num_running_queries < s.max_engine_concurrency {
            return Some(0);
        }
        if let Some(&(_, ms)) = s
            .queue_time_estimate_ms_by_priority
            .iter()
            .rfind(|(p, _)| *p == 0)
        {
            return Some(ms);
        }
        queue_ms(s.queued_input_size, s.last_mean_input_tps)
    }

    fn refresh(&mut self, backend: usize) {
        let (Some(base), Some(res), Some(s)) = (
            self.base.get(backend),
            self.res.get(backend),
            self.snapshots.get_mut(backend),
        ) else {
            return;
        };
        let n = res.list.len() as u64;
        s.last_mean_input_tps = base.last_mean_tps;
        s.max_input_tps = base.max_input_tps;
        s.queue_size = base.input_phase + n;
        s.queued_input_size = base.prompt_work + res.input;
        s.num_running_queries = base.input_phase + base.output_phase + n;
        s.max_engine_concurrency = base.slots;
        s.queue_time_estimate_ms_by_priority.clear();
        if let Some(published) = base.queue_estimate_ms {
            // An invalid tps with reserved tokens clears the whole map.
            if let Some(extra) = res.estimate_ms {
                s.queue_time_estimate_ms_by_priority
                    .push((0, published.saturating_add(extra)));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(input_phase: u64, output_phase: u64, prompt_work: u64) -> Rc<StatsReport> {
        Rc::new(StatsReport {
            last_mean_tps: 7_000.0,
            max_input_tps: Some(175_000.0),
            input_phase,
            output_phase,
            prompt_work,
            total_input: prompt_work,
            slots: 25,
            queue_estimate_ms: queue_ms(prompt_work, 7_000.0).filter(|_| prompt_work > 0),
        })
    }

    fn view() -> RouterView {
        let ids = vec!["a".to_string(), "b".to_string()];
        RouterView::new(&ids, &[1.0, 65.0], &[report(0, 0, 0), report(0, 0, 0)])
    }

    #[test]
    fn reservations_add_to_the_view_and_clear_on_stats() {
        let mut v = view();
        v.reserve(1, 10, 7_000);
        v.reserve(1, 11, 3_500);
        let s = &v.snapshots()[1];
        assert_eq!((s.queue_size, s.num_running_queries), (2, 2));
        assert_eq!(s.queued_input_size, 10_500);
        assert!(
            s.queue_time_estimate_ms_by_priority.is_empty(),
            "empty map stays empty"
        );
        assert_eq!(s.rtt_ms, 65.0);
        assert_eq!(v.snapshots()[0].queue_size, 0);
        v.unreserve(1, 10);
        assert_eq!(v.snapshots()[1].queued_input_size, 3_500);
        v.unreserve(1, 99);
        assert_eq!(v.pending(1), 1);
        v.stats_arrive(1, report(25, 0, 14_000));
        let s = &v.snapshots()[1];
        assert_eq!((s.queue_size, s.queued_input_size), (25, 14_000));
        assert_eq!(s.queue_time_estimate_ms_by_priority, vec![(0, 2_000)]);
        v.reserve(1, 12, 7_000);
        let s = &v.snapshots()[1];
        assert_eq!(s.queue_time_estimate_ms_by_priority, vec![(0, 3_000)]);
        assert_eq!(s.num_running_queries, 26);
    }

    #[test]
    fn expected_queue_follows_the_shared_estimate() {
        let mut v = view();
        assert_eq!(v.expected_queue_ms(0), Some(0), "free slot");
        v.stats_arrive(0, report(25, 0, 14_000));
        assert_eq!(v.expected_queue_ms(0), Some(2_000), "published estimate");
        let mut no_map = (*report(20, 5, 14_000)).clone();
        no_map.queue_estimate_ms = None;
        v.stats_arrive(0, Rc::new(no_map));
        assert_eq!(v.expected_queue_ms(0), Some(2_000), "from queued input");
        let mut bad = (*report(20, 5, 14_000)).clone();
        bad.queue_estimate_ms = None;
        bad.last_mean_tps = 0.0;
        v.stats_arrive(0, Rc::new(bad));
        assert_eq!(v.expected_queue_ms(0), None, "unknown");
    }
}
