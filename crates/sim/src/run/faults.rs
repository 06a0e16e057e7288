//! How the fleet changes during a run (docs/simulator.md, "Faults"): the
//! run's [`Fault`](crate::world::fleet::Fault) list applied to its backends. The
//! event loop only dispatches `Event::Fault` and `Event::FaultEnds` here;
//! what a fault does to the views, the Pylons and the engines is this
//! file's.

use super::Sim;
use crate::kernel::events::{Event, ReqId};
use crate::world::fleet::{FaultAction, Trigger};

impl Sim<'_> {
    /// Applies the faults triggered by sending request i.
    pub(super) fn request_faults(&mut self, i: ReqId) {
        for f in 0..self.s.faults.len() {
            if self.s.faults[f].trigger == Trigger::Request(i) {
                self.fault(f);
            }
        }
    }

    /// Applies fault `f` now.
    pub(super) fn fault(&mut self, f: usize) {
        let Some(fault) = self.s.faults.get(f).copied() else {
            return;
        };
        let b = fault.backend as usize;
        if b >= self.removed_at.len() {
            return;
        }
        match fault.action {
            FaultAction::Remove => {
                if self.removed_at[b].is_none() {
                    self.removed_at[b] = Some(self.now);
                    self.remove_member(b);
                }
            }
            FaultAction::StatsOutage(us) => {
                let until = self.now.saturating_add(us);
                self.silent_until[b] = self.silent_until[b].max(until);
                self.timeline.outage(b, self.now, until);
            }
            FaultAction::SlowDown { factor, duration } => {
                let e = self.engine_of[b] as usize;
                self.set_slow_down(e, factor);
                if self.slowed_by.is_empty() {
                    self.slowed_by = vec![None; self.engines.len()];
                }
                self.slowed_by[e] = Some(f);
                if let Some(d) = duration {
                    self.queue
                        .push(self.now.saturating_add(d), Event::FaultEnds(f as u32));
                }
            }
        }
    }

    /// Member m's registration ended. In a cluster that keeps other
    /// members it leaves every router's candidate view (the view
    /// aggregates the others from now on); the last member of a cluster
    /// leaves the cluster in the views, excluded from routing (so that
    /// rankings and rings keep their membership).
    fn remove_member(&mut self, m: usize) {
        let s = self.s;
        let topo = &s.topology;
        let c = topo.members[m].cluster;
        let cluster = &topo.backends[c];
        let others = cluster
            .members
            .clone()
            .any(|o| o != m && self.removed_at[o].is_none());
        if !others {
            self.cluster_removed[c] = true;
            self.removed_any = true;
            return;
        }
        self.out_of_view[m] = true;
        for r in 0..self.views.len() {
            if let Some(view) = self.views.get_mut(r) {
                view.remove_backend(&cluster.id, &topo.members[m].id);
            }
            self.view_changed(r, c);
        }
    }

    /// The slow-down of fault `f` is over: its engine serves at its
    /// profile's speed again, unless a later slow-down replaced it.
    pub(super) fn fault_ends(&mut self, f: usize) {
        let Some(fault) = self.s.faults.get(f) else {
            return;
        };
        let Some(e) = self
            .engine_of
            .get(fault.backend as usize)
            .map(|&e| e as usize)
        else {
            return;
        };
        if self.slowed_by.get(e).copied().flatten() == Some(f) {
            self.slowed_by[e] = None;
            self.set_slow_down(e, 1.0);
        }
    }

    /// Engine e serves `factor` times slower than its profile from now.
    fn set_slow_down(&mut self, e: usize, factor: f64) {
        if self.slow_factor.is_empty() {
            self.slow_factor = vec![1.0; self.engines.len()];
        }
        if let Some(f) = self.slow_factor.get_mut(e) {
            *f = factor;
        }
        let mut out = std::mem::take(&mut self.actions);
        if let Some(engine) = self.engines.get_mut(e) {
            engine.slow_down(self.now, factor, &mut out);
        }
        self.apply(e, &mut out);
        self.actions = out;
    }
}
