//! A request's progress through one run.

use crate::kernel::time::Micros;
use crate::measure::record::Outcome;
use routex::balancer::SessionState;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Phase {
    /// Not at an engine.
    Routing,
    /// At the engine, waiting for a slot.
    Queued,
    /// Holds a slot, before its first token (the Pylon's input phase).
    Started,
    /// After the first token (the Pylon's output phase).
    Decoding,
    Done,
}

#[derive(Clone, Debug)]
pub(super) struct ReqState {
    pub(super) outcome: Option<Outcome>,
    pub(super) phase: Phase,
    /// The cluster chosen, and its member the request went to.
    pub(super) backend: u32,
    pub(super) member: u32,
    pub(super) excluded: Vec<u32>,
    /// Members of a several-backend cluster that answered 429.
    pub(super) failed: Vec<u32>,
    pub(super) rejections: u32,
    pub(super) attempts: u32,
    pub(super) dispatched_at: Micros,
    pub(super) rank_depth: u32,
    /// The dispatch in flight: its reservation and expected queue time.
    pub(super) reservation: Option<routex::router::ReservationId>,
    pub(super) expected_queue_ms: Option<u64>,
    /// Dispatched and not yet reported finished to its router.
    pub(super) held: bool,
    pub(super) received_at: Micros,
    pub(super) slot_since: Micros,
    pub(super) reused: u64,
    pub(super) engine_first_token: Micros,
    pub(super) client_first_token: Micros,
    /// Client-side last token of a completed request.
    pub(super) client_done: Micros,
    /// When the request was resolved (succeeded, failed or timed out).
    pub(super) resolved_at: Micros,
    /// When the client wanted to send it (its planned arrival, or when the
    /// conversation's client asked for it); under a closed loop it may go
    /// out later.
    pub(super) asked: Micros,
    /// The session's last backend as the gateway sent it
    /// (`x-stargate-last-cluster-id`), read once when the request is sent.
    pub(super) last_backend: Option<u32>,
    /// The session's classification, made once when the request is sent
    /// and reused by every attempt (docs/stargate.md 3.10).
    pub(super) session: Option<SessionState>,
    /// The last decision answered `Unavailable` and the router said it
    /// lasts: (its view's version, the excluded count) then. A poll that
    /// finds both unchanged reuses the answer (`routing_loop`).
    pub(super) unavailable_at: Option<(u64, usize)>,
}

impl ReqState {
    pub(super) fn new() -> Self {
        ReqState {
            outcome: None,
            phase: Phase::Routing,
            backend: 0,
            member: 0,
            excluded: Vec::new(),
            failed: Vec::new(),
            rejections: 0,
            attempts: 0,
            dispatched_at: 0,
            rank_depth: 0,
            reservation: None,
            expected_queue_ms: None,
            held: false,
            received_at: 0,
            slot_since: 0,
            reused: 0,
            engine_first_token: 0,
            client_first_token: 0,
            client_done: 0,
            resolved_at: 0,
            asked: 0,
            last_backend: None,
            session: None,
            unavailable_at: None,
        }
    }
}
