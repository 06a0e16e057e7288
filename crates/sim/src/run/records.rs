//! The end of a run: one record per request, then the A9 metrics.

use super::{RunResult, Sim};
use crate::kernel::time::Micros;
use crate::measure::metrics;
use crate::measure::record::{Outcome, Record};
use crate::measure::timeline::{Recorder, Sample};
use crate::world::fleet::{RequestLog, RunDetail};
use crate::world::pylon::Pylon;

impl Sim<'_> {
    /// Every request's log, the engines' evictions and the removals.
    fn detail(&self) -> RunDetail {
        let requests = self
            .plan
            .requests
            .iter()
            .zip(&self.reqs)
            .map(|(p, st)| RequestLog {
                sent: p.arrival,
                asked: st.asked,
                resolved: st.resolved_at,
                succeeded: st.outcome == Some(Outcome::Succeeded),
                first_token: st.client_first_token,
                done: st.client_done,
                backend: st.backend,
                member: st.member,
                rank_depth: st.rank_depth,
                input: p.input,
                output: p.output,
                reused: st.reused,
                key: p.key,
                rejections: st.rejections,
            })
            .collect();
        RunDetail {
            requests,
            evictions: self.engines.iter().map(|e| e.evictions()).collect(),
            removed_at: self.removed_at.clone(),
        }
    }

    pub(super) fn finish(mut self, from: Micros, to: Micros) -> RunResult {
        // Under a closed loop requests go out after their planned arrival:
        // the window ends after the last one sent.
        let to = match self.s.max_in_flight {
            Some(_) => to.max(self.last_sent + 1),
            None => to,
        };
        let detail = self.s.keep_detail.then(|| self.detail());
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
                    finished: st.resolved_at,
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
        let (mut metrics, diagnostics) =
            metrics::summarize(&records, from, to, topo.backends.len(), self.s.ttft_slo_us);
        if let Some(client) = &self.client {
            let sent: Vec<Micros> = self.plan.requests.iter().map(|p| p.arrival).collect();
            let c = client.counts(&sent, from, to);
            metrics.conversations = Some(c.started);
            metrics.abandoned_conversations = Some(c.abandoned);
            metrics.abandoned_share = Some(if c.started > 0 {
                c.abandoned as f64 / c.started as f64
            } else {
                0.0
            });
            metrics.turn_retries = Some(c.retries);
        }
        let series = metrics::time_series(&records, to, self.s.ttft_slo_us);
        let samples: Vec<Sample> = (0..self.pylons.len()).map(|m| self.sample(m)).collect();
        let timeline =
            std::mem::replace(&mut self.timeline, Recorder::new(0, 0)).finish(to, |m| samples[m]);
        debug_assert!(
            self.routers.iter().all(|r| r.held_requests() == 0),
            "a router still holds a finished request"
        );
        debug_assert!(
            self.stats.engines_idle_at_end,
            "an engine is busy after the run"
        );
        debug_assert_eq!(
            metrics.succeeded
                + metrics.no_route
                + metrics.retries_exhausted
                + metrics.timed_out
                + metrics.input_work_rejected,
            metrics.measured
        );
        RunResult {
            metrics,
            diagnostics,
            series,
            timeline,
            stats: self.stats,
            detail,
        }
    }
}
