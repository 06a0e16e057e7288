//! The simulated routers (docs/simulator.md, codemap): how each router of
//! a run decides.
//! A [`SimRouter`] is one router's decision maker for one policy: the
//! routex core for routing expressions and `legacy-band-walk`
//! ([`CoreRouter`], here), or one of the peers' routers ([`peers`]). The run loop owns the
//! views, the waiting and the dispatch; a router only answers
//! `Selected`, `Wait` or `Unavailable`, and may follow what it dispatched
//! and the engines' KV events.

use crate::kernel::events::ReqId;
use crate::kernel::time::Micros;
use crate::routers::park::{wake_mask, WakeRule};
use crate::world::engine::blocks::KvEvent;
use rand::RngCore;

use routex::balancer::{Balancer, ClusterSnapshot, Decision, Membership, Request, Scratch};
use routex::ir::Policy;
use routex::router::check_input_work;

pub(crate) mod baselines;
pub(crate) mod park;
pub mod peers;
pub(crate) mod policy;
pub(crate) mod wait;

/// What a router knows of a request when it decides.
pub struct Ask<'a> {
    /// The request's index in the plan (routers that follow their
    /// requests key their records by it).
    pub id: ReqId,
    /// The core's request: model, keys, input tokens, elapsed, excluded.
    pub request: Request<'a>,
    /// The request's prefix blocks, first block first (empty when the
    /// workload has none).
    pub blocks: &'a [u32],
    /// Tokens per block.
    pub block_tokens: u64,
    pub now: Micros,
    /// Names the ids of the router's view (constant while its membership
    /// is), so the core's ranking cache need not compare them.
    pub membership: Membership,
}

/// One router's decision maker. Instances are per router and never shared.
pub trait SimRouter {
    /// Decides for `ask` over the router's candidate view (topology order).
    fn decide(
        &mut self,
        ask: &Ask<'_>,
        view: &[ClusterSnapshot],
        rng: &mut dyn RngCore,
        scratch: &mut Scratch,
    ) -> Decision;

    /// Input-work admission before each decision (docs/stargate.md 2.2
    /// step 3 and 3.9): `false` refuses the request with a 503. Only
    /// stargate's routers with `max_input_work_seconds` set refuse.
    fn admits(&self, _ask: &Ask<'_>, _view: &[ClusterSnapshot]) -> bool {
        true
    }

    /// The request was sent to `backend` (block-aware routers index it).
    fn dispatched(&mut self, _ask: &Ask<'_>, _backend: usize) {}

    /// Whether this router needs the engines' KV events (engine v2).
    fn wants_kv_events(&self) -> bool {
        false
    }

    /// KV events of `backend`, delivered with its stats report.
    fn kv_events(&mut self, _backend: usize, _events: &[KvEvent]) {}

    /// Whether dispatches carry the expected queue time that Pylon's
    /// queue-mismatch admission checks (stargate's routers do; the peers'
    /// routers send none, so their requests are never rejected).
    fn sends_expected_queue(&self) -> bool {
        true
    }

    /// The request's first token left `backend` (its prefill is over).
    fn first_token(&mut self, _request: ReqId, _backend: usize) {}

    /// The request no longer occupies `backend`: it completed, the client
    /// gave up, or a 429 came back. Called once per dispatch.
    fn finished(&mut self, _request: ReqId, _backend: usize) {}

    /// Requests the router still keeps a record of (0 once every dispatch
    /// has been finished: checked at the end of each run in debug builds).
    fn held_requests(&self) -> usize {
        0
    }

    /// Whether an `Unavailable` answer to `ask` lasts: the same request
    /// over the same view (every snapshot unchanged) would be answered
    /// `Unavailable` at any later time, with no random draw and no state a
    /// later decision reads changed (`Balancer::unavailable_lasts`). The
    /// run loop then reuses it while the view is unchanged. False by
    /// default: the router is asked every time.
    fn unavailable_lasts(&self, _ask: &Ask<'_>) -> bool {
        false
    }

    /// Fast mode: the backends whose view change can wake a request parked
    /// after `ask` (bit b = backend b, see `park::bit`); all by default.
    fn wake_mask(&self, _ask: &Ask<'_>, _view: &[ClusterSnapshot], _scratch: &mut Scratch) -> u64 {
        u64::MAX
    }
}

/// The routex core: a routing expression or the legacy band walk.
pub struct CoreRouter {
    pub balancer: Balancer,
    pub wake: WakeRule,
    /// The policy, when it sets `max_input_work_seconds` (the core's
    /// admission check reads its settings); `None` admits everything.
    pub admission: Option<Policy>,
}

impl SimRouter for CoreRouter {
    fn decide(
        &mut self,
        ask: &Ask<'_>,
        view: &[ClusterSnapshot],
        rng: &mut dyn RngCore,
        scratch: &mut Scratch,
    ) -> Decision {
        self.balancer
            .decide_named(&ask.request, view, ask.membership, rng, scratch)
    }

    fn wake_mask(&self, ask: &Ask<'_>, view: &[ClusterSnapshot], scratch: &mut Scratch) -> u64 {
        wake_mask(self.wake, &self.balancer, view, &ask.request, scratch)
    }

    fn unavailable_lasts(&self, ask: &Ask<'_>) -> bool {
        self.balancer.unavailable_lasts(&ask.request)
    }

    fn admits(&self, ask: &Ask<'_>, view: &[ClusterSnapshot]) -> bool {
        self.admission
            .as_ref()
            .is_none_or(|policy| check_input_work(policy, &ask.request, view).is_ok())
    }
}
