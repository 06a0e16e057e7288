//! The event queue: a min-heap on (time, insertion sequence), so events at
//! the same instant run in the order they were scheduled (docs/simulator-model.md A2).

use crate::kernel::time::Micros;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// Index of a request in the run's plan.
pub type ReqId = u32;

/// What happens at an instant (handlers live in `run`).
#[derive(Clone, Debug)]
pub enum Event {
    /// The client wants to send this request now: a planned request (the
    /// next one is chained from it) or a conversation's turn or retry.
    /// Under a closed loop it waits for a place when none is free.
    Arrive(ReqId),
    /// Closed loop: a request that waited was handed a freed place and is
    /// sent now.
    Send(ReqId),
    /// The scenario's fault of this index happens now.
    Fault(u32),
    /// The slow-down of the fault of this index ends now.
    FaultEnds(u32),
    RouteAttempt(ReqId),
    /// Fast mode: the end of a park (the wait is over or the max-wait
    /// deadline came); stale when `token` is not the request's current park.
    Unpark {
        req: ReqId,
        token: u32,
    },
    /// The dispatched request reaches its backend. A request has at most one
    /// dispatch in flight, so its reservation id and expected queue time
    /// live in the request's state, which keeps events small.
    BackendReceive(ReqId),
    /// The 429 of the dispatch in flight reaches the router.
    MismatchReturn(ReqId),
    /// A successful response reaches the client (and the gateway's
    /// last-cluster store learns its backend); scheduled only when the
    /// scenario has a store.
    ResponseAtClient(ReqId),
    /// A timer of engine `backend`, a member's (or with shared engines a
    /// cluster's); `id` and `tag` are the engine's
    /// [`Timer`](crate::world::engine::Timer).
    Engine {
        backend: u32,
        id: u32,
        tag: u32,
    },
    /// A member's Pylon heartbeat (members are a cluster's backends; with
    /// one per cluster, the cluster's index).
    Heartbeat(u32),
    /// A change-driven publication of this member's stats (off by default).
    Publish(u32),
    /// A member's report reaches a router; `report` indexes the run's list
    /// of published reports.
    StatsArrive {
        backend: u32,
        router: u32,
        report: u32,
    },
}

struct Entry {
    /// (time, sequence) in one integer: one comparison per heap step.
    key: u128,
    event: Event,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    // Reversed: BinaryHeap is a max-heap and the earliest event must pop first.
    fn cmp(&self, other: &Self) -> Ordering {
        other.key.cmp(&self.key)
    }
}

fn time_of(key: u128) -> Micros {
    (key >> 64) as Micros
}

/// Pending events of one run.
#[derive(Default)]
pub struct EventQueue {
    heap: BinaryHeap<Entry>,
    seq: u64,
}

impl EventQueue {
    pub fn push(&mut self, at: Micros, event: Event) {
        self.seq += 1;
        self.heap.push(Entry {
            key: (u128::from(at) << 64) | u128::from(self.seq),
            event,
        });
    }

    pub fn pop(&mut self) -> Option<(Micros, Event)> {
        self.heap.pop().map(|e| (time_of(e.key), e.event))
    }

    /// The instant of the next event.
    pub fn peek_time(&self) -> Option<Micros> {
        self.heap.peek().map(|e| time_of(e.key))
    }

    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_by_time_then_fifo() {
        let mut q = EventQueue::default();
        q.push(5, Event::RouteAttempt(1));
        q.push(3, Event::RouteAttempt(2));
        q.push(5, Event::RouteAttempt(3));
        q.push(3, Event::RouteAttempt(4));
        let order: Vec<_> = std::iter::from_fn(|| q.pop())
            .map(|(t, e)| match e {
                Event::RouteAttempt(r) => (t, r),
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(order, vec![(3, 2), (3, 4), (5, 1), (5, 3)]);
        assert!(q.is_empty());
    }

    #[test]
    fn heap_entries_stay_small() {
        // The heap moves entries on every push and pop of the hot loop.
        assert_eq!(std::mem::size_of::<Entry>(), 32);
    }
}
