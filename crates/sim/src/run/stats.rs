//! Stats publication (docs/simulator-model.md A2 `Heartbeat`, `Publish`,
//! `StatsArrive`): each Pylon's report goes to every router after the
//! one-way delay plus the relay delay. A report in flight lives in a slab
//! until its last delivery, so memory follows the reports in flight, not
//! the run's length.

use super::Sim;
use crate::kernel::events::Event;
use crate::kernel::time::{from_ms, one_way};
use crate::world::engine::blocks::KvEvent;
use crate::world::pylon::StatsReport;
use std::rc::Rc;

struct InFlight {
    report: Rc<StatsReport>,
    /// The engine's KV events since its previous report (engine v2, for
    /// routers that follow them).
    kv: Rc<[KvEvent]>,
    /// Deliveries still to come.
    remaining: u32,
}

/// Reports in flight, by slot; freed slots are reused.
#[derive(Default)]
pub(super) struct ReportSlab {
    slots: Vec<Option<InFlight>>,
    free: Vec<u32>,
}

impl ReportSlab {
    fn insert(&mut self, entry: InFlight) -> u32 {
        match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = Some(entry);
                i
            }
            None => {
                self.slots.push(Some(entry));
                u32::try_from(self.slots.len() - 1).unwrap_or(u32::MAX)
            }
        }
    }

    /// One delivery of report `i`; the slot is freed after the last one.
    fn deliver(&mut self, i: u32) -> Option<(Rc<StatsReport>, Rc<[KvEvent]>)> {
        let slot = self.slots.get_mut(i as usize)?;
        let entry = slot.as_mut()?;
        let out = (Rc::clone(&entry.report), Rc::clone(&entry.kv));
        entry.remaining = entry.remaining.saturating_sub(1);
        if entry.remaining == 0 {
            *slot = None;
            self.free.push(i);
        }
        Some(out)
    }

    /// Reports still in flight.
    fn in_flight(&self) -> usize {
        self.slots.len() - self.free.len()
    }
}

impl Sim<'_> {
    /// Whether member m's Pylon publishes now: a removed backend, or one in
    /// a stats outage, publishes nothing (heartbeats and change-driven
    /// publications alike).
    pub(super) fn publishes(&self, m: usize) -> bool {
        self.removed_at.get(m).is_some_and(Option::is_none)
            && self.silent_until.get(m).is_none_or(|&t| t <= self.now)
    }

    pub(super) fn heartbeat(&mut self, b: u32) {
        let i = b as usize;
        if self.publishes(i) {
            self.publish(b);
        }
        self.queue
            .push(self.now + self.s.heartbeat_us.max(1), Event::Heartbeat(b));
    }

    /// Change-driven publishing: backend b's Pylon state changed now.
    pub(super) fn pylon_changed(&mut self, b: usize) {
        if let Some(at) = self.coalescers.get_mut(b).and_then(|c| c.changed(self.now)) {
            self.queue.push(at, Event::Publish(b as u32));
        }
    }

    /// Takes member b's stats report and sends it to every router, after
    /// the one-way delay plus the relay delay.
    pub(super) fn publish(&mut self, b: u32) {
        let s = self.s;
        let topo = &s.topology;
        let e = self.engine_of[b as usize] as usize;
        let mut kv = Vec::new();
        if let Some(e) = self.engines.get_mut(e) {
            e.take_kv_events(&mut kv);
        }
        let mut stats = self.pylons[b as usize].report();
        if self.s.publish_kv {
            if let Some(e) = self.engines.get(e) {
                // Engine v3 reports its whole memory, reservations included.
                stats.kv_capacity = e.kv_capacity();
                stats.kv_used = e.kv_used();
            }
        }
        if self.s.shared_engines {
            stats.engine_running = Some(self.engine_live(b as usize));
        }
        self.published_tps[b as usize] = stats.last_mean_tps;
        let report = self.reports.insert(InFlight {
            report: Rc::new(stats),
            kv: kv.into(),
            remaining: u32::try_from(topo.routers.len()).unwrap_or(u32::MAX),
        });
        let in_flight = self.reports.in_flight() as u64;
        self.stats.max_reports_in_flight = self.stats.max_reports_in_flight.max(in_flight);
        let from = topo.backends[topo.members[b as usize].cluster].region;
        let relay = from_ms(topo.stats_relay_ms);
        for (r, router) in topo.routers.iter().enumerate() {
            let delay = one_way(topo.rtt_ms(from, router.region)) + relay;
            self.queue.push(
                self.now + delay,
                Event::StatsArrive {
                    backend: b,
                    router: r as u32,
                    report,
                },
            );
        }
    }

    /// A report of member `member` reaches a router: it replaces the
    /// router's view of that backend of its cluster (clearing its
    /// reservations there) and brings the KV events.
    pub(super) fn stats_arrive(&mut self, member: usize, router: usize, report: u32) {
        let Some((report, kv)) = self.reports.deliver(report) else {
            return;
        };
        if self.out_of_view[member] {
            return; // its registration ended: nothing left to update
        }
        let backend = self.s.topology.members[member].cluster;
        let position = self.view_position(member);
        if let Some(v) = self.views.get_mut(router) {
            // Pylon reports are well-formed; a malformed one is ignored.
            let _ = v.report_at(backend, position, &report.backend_stats());
            if !kv.is_empty() {
                self.routers[router].kv_events(backend, &kv);
            }
            self.view_changed(router, backend);
        }
    }
}
