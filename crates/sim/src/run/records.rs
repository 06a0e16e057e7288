//! The end of a run: one record per request, then the A9 metrics.

use super::{RunResult, Sim};
use crate::metrics::{self, Outcome, Record};
use crate::pylon::Pylon;
use crate::time::Micros;

impl Sim<'_> {
    pub(super) fn finish(mut self, from: Micros, to: Micros) -> RunResult {
        self.stats.engines_idle_at_end =
            self.engines.iter().all(|e| e.is_idle()) && self.pylons.iter().all(Pylon::is_idle);
        let topo = &self.s.topology;
        let records: Vec<Record> = self
            .plan
            .requests
            .iter()
            .zip(&self.reqs)
            .map(|(p, st)| {
                let served_region = topo.backends.get(st.backend as usize).map(|b| b.region);
                let entry_region = topo.routers.get(p.router as usize).map(|r| r.region);
                Record {
                    arrival: p.arrival,
                    outcome: st.outcome.unwrap_or(Outcome::TimedOut),
                    input: p.input,
                    reused: st.reused,
                    ttft_us: st.client_first_token.saturating_sub(p.arrival),
                    backend_ttft_us: st.engine_first_token.saturating_sub(st.received_at),
                    routing_delay_us: st.dispatched_at.saturating_sub(p.arrival),
                    backend: st.backend,
                    rank_depth: st.rank_depth,
                    cross_region: served_region != entry_region,
                    route_attempts: st.attempts,
                    mismatch_rejections: st.rejections,
                }
            })
            .collect();
        let (metrics, diagnostics) =
            metrics::summarize(&records, from, to, topo.backends.len(), self.s.ttft_slo_us);
        let series = metrics::time_series(&records, to, self.s.ttft_slo_us);
        debug_assert!(
            self.routers.iter().all(|r| r.held_requests() == 0),
            "a router still holds a finished request"
        );
        debug_assert!(
            self.stats.engines_idle_at_end,
            "an engine is busy after the run"
        );
        debug_assert_eq!(
            metrics.succeeded + metrics.no_route + metrics.retries_exhausted + metrics.timed_out,
            metrics.measured
        );
        RunResult {
            metrics,
            diagnostics,
            series,
            stats: self.stats,
        }
    }
}
