//! Fast mode (docs/simulator-model.md A11.2): instead of polling, a request that cannot
//! be routed now is parked until its wait ends, its max-wait deadline
//! passes, or a view change at its router may have made room for it.
//!
//! This module keeps the parked requests and says which backends can wake
//! one; `run` decides when to park and what a wake does, through the
//! router's own routing loop.

use crate::kernel::events::ReqId;
use routex::balancer::{open_prefix, Balancer, ClusterSnapshot, Request, Scratch, SessionState};
use std::time::Duration;

/// How a router waits between decisions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum WaitMode {
    /// Poll as a real router does: recheck timed waits every 25 ms, retry
    /// `Unavailable` every 1-9 ms.
    #[default]
    Faithful,
    /// Park instead of polling; wake on the wait's end or a view change.
    Fast,
}

impl WaitMode {
    pub fn name(self) -> &'static str {
        match self {
            WaitMode::Faithful => "faithful",
            WaitMode::Fast => "fast",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "faithful" => Some(WaitMode::Faithful),
            "fast" => Some(WaitMode::Fast),
            _ => None,
        }
    }
}

/// The bit of backend `b` in a wake mask. Backends past 63 share the last
/// bit, which only wakes more often than needed.
pub fn bit(b: usize) -> u64 {
    1 << b.min(63)
}

#[derive(Clone, Copy, Debug)]
struct Parked {
    req: ReqId,
    token: u32,
    /// The backends whose change can wake this request.
    mask: u64,
}

/// The parked requests of every router of one run.
#[derive(Debug, Default)]
pub struct ParkingLot {
    /// Per router, in parking order (so wakes happen in a fixed order).
    lists: Vec<Vec<Parked>>,
    /// Per request: the token of its current park, 0 when not parked.
    /// Entries of earlier parks stay in the lists until the next sweep.
    current: Vec<u32>,
    next_token: u32,
}

impl ParkingLot {
    pub fn new(routers: usize, requests: usize) -> Self {
        ParkingLot {
            lists: vec![Vec::new(); routers],
            current: vec![0; requests],
            next_token: 0,
        }
    }

    /// Room for `requests` requests (a run that adds requests as it goes).
    pub fn grow(&mut self, requests: usize) {
        if self.current.len() < requests {
            self.current.resize(requests, 0);
        }
    }

    /// Parks `req` at `router`; the token identifies this park in the
    /// deadline event.
    pub fn park(&mut self, router: usize, req: ReqId, mask: u64) -> u32 {
        self.next_token = self.next_token.wrapping_add(1).max(1);
        let token = self.next_token;
        if let (Some(list), Some(cur)) = (
            self.lists.get_mut(router),
            self.current.get_mut(req as usize),
        ) {
            *cur = token;
            list.push(Parked { req, token, mask });
        }
        token
    }

    /// The park's deadline: true (and unparked) if it is still current.
    pub fn take(&mut self, req: ReqId, token: u32) -> bool {
        match self.current.get_mut(req as usize) {
            Some(cur) if *cur == token => {
                *cur = 0;
                true
            }
            _ => false,
        }
    }

    /// A view change of `backend` at `router`: unparks every current park
    /// whose mask holds the backend and appends it to `woken`, in parking
    /// order. Stale entries are dropped on the way.
    pub fn wake(&mut self, router: usize, backend: usize, woken: &mut Vec<ReqId>) {
        let Some(list) = self.lists.get_mut(router) else {
            return;
        };
        let current = &mut self.current;
        let b = bit(backend);
        list.retain(|p| {
            let Some(cur) = current.get_mut(p.req as usize) else {
                return false;
            };
            if *cur != p.token {
                return false;
            }
            if p.mask & b == 0 {
                return true;
            }
            *cur = 0;
            woken.push(p.req);
            false
        });
    }

    /// Requests parked at `router` now (stale entries excluded).
    #[cfg(test)]
    pub fn parked(&self, router: usize) -> usize {
        self.lists.get(router).map_or(0, |list| {
            list.iter()
                .filter(|p| self.current.get(p.req as usize) == Some(&p.token))
                .count()
        })
    }
}

/// Which view changes wake a request parked in fast mode (docs/simulator-model.md
/// A11.2): a change of a backend in the request's candidate prefix that
/// now passes `has_capacity(capacity_limit)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WakeRule {
    /// max(max_queued, fallback_max_queued); `u64::MAX` for policies
    /// without a capacity gate.
    pub capacity_limit: u64,
    pub prefix: Prefix,
}

/// A parked request's candidate prefix, over the core's affinity order
/// (`Balancer::affinity_order`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Prefix {
    /// Every candidate (the legacy walk tries every band at once).
    All,
    /// pulsar-wait-and-widen: the ranking's first k ranks before X, the
    /// open prefix after it.
    Bands(Bands),
    /// wait-and-widen: the ring group before X (ms), every candidate after.
    GroupUntil(u64),
}

/// The band schedule of pulsar-wait-and-widen (docs/stargate.md 3.8.4).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bands {
    pub k: usize,
    pub wait_ms: u64,
    pub interval_ms: u64,
    /// The interval of a new or stale session under
    /// `last_cluster_affinity`, whose wait is 0 (docs/stargate.md 3.10).
    pub fresh_interval_ms: u64,
}

impl Bands {
    /// The number of leading ranks open `elapsed` after arrival.
    pub fn open_ranks(self, ranked: usize, elapsed: Duration) -> usize {
        match elapsed.checked_sub(Duration::from_millis(self.wait_ms)) {
            None => self.k.min(ranked),
            Some(w) => {
                let interval = Duration::from_millis(self.interval_ms);
                open_prefix(self.k, ranked, interval, w).0
            }
        }
    }
}

/// Fast mode: the backends whose change can wake this request, its
/// candidate prefix less its excluded backends (A11.2).
pub fn wake_mask(
    rule: WakeRule,
    balancer: &Balancer,
    snapshots: &[ClusterSnapshot],
    request: &Request<'_>,
    scratch: &mut Scratch,
) -> u64 {
    let excluded: u64 = snapshots
        .iter()
        .enumerate()
        // Past bit 63 backends share a bit: never clear it for one of them.
        .filter(|(b, c)| *b < 63 && request.excluded.contains(&c.id.as_str()))
        .fold(0, |m, (b, _)| m | bit(b));
    // A new or stale session of `last_cluster_affinity` does not wait for
    // its affinity group (docs/stargate.md 3.10).
    let fresh = || {
        matches!(
            balancer.classify(request, snapshots),
            Some(SessionState::New | SessionState::Stale)
        )
    };
    let open = match rule.prefix {
        Prefix::All => return !excluded,
        Prefix::GroupUntil(x) if request.elapsed >= Duration::from_millis(x) || fresh() => {
            return !excluded
        }
        Prefix::Bands(_) | Prefix::GroupUntil(_) => {
            let Some(order) = balancer.affinity_order(request, snapshots, scratch) else {
                return !excluded;
            };
            match rule.prefix {
                Prefix::Bands(bands) => {
                    let bands = if fresh() {
                        Bands {
                            wait_ms: 0,
                            interval_ms: bands.fresh_interval_ms,
                            ..bands
                        }
                    } else {
                        bands
                    };
                    &order[..bands.open_ranks(order.len(), request.elapsed)]
                }
                _ => order,
            }
        }
    };
    open.iter().fold(0, |m, &b| m | bit(b)) & !excluded
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wakes_only_matching_current_parks_in_order() {
        let mut lot = ParkingLot::new(2, 5);
        let t0 = lot.park(0, 0, bit(1) | bit(2));
        lot.park(0, 1, bit(3));
        lot.park(0, 2, bit(2));
        lot.park(1, 3, bit(2));
        assert!(lot.take(0, t0), "deadline of the current park");
        assert!(!lot.take(0, t0), "only once");
        let mut woken = Vec::new();
        lot.wake(0, 2, &mut woken);
        assert_eq!(woken, vec![2], "request 0 left at its deadline");
        assert_eq!((lot.parked(0), lot.parked(1)), (1, 1));
        woken.clear();
        lot.wake(0, 3, &mut woken);
        assert_eq!(woken, vec![1]);
        assert_eq!(lot.parked(0), 0);
    }

    #[test]
    fn a_new_park_makes_the_old_deadline_stale() {
        let mut lot = ParkingLot::new(1, 1);
        let first = lot.park(0, 0, u64::MAX);
        let mut woken = Vec::new();
        lot.wake(0, 0, &mut woken);
        let second = lot.park(0, 0, u64::MAX);
        assert!(!lot.take(0, first));
        assert!(lot.take(0, second));
        assert_eq!(bit(70), bit(63));
    }
}
