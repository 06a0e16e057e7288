//! How the fleet and its clients differ from the homogeneous open-loop
//! default (docs/simulator.md, "Fleets"): per-backend engine and Pylon
//! profiles, the client's in-flight cap (a closed loop), and faults that
//! change the fleet during a run. The run loop reads these settings; none of
//! them changes a run that does not use them.

use super::engine::EngineParams;
use super::pylon::PylonConfig;
use super::time::Micros;

/// One backend's engine and Pylon, when they differ between backends.
#[derive(Clone, Debug, PartialEq)]
pub struct BackendProfile {
    pub engine: EngineParams,
    pub pylon: PylonConfig,
}

/// When a fault happens.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Trigger {
    /// When the request of this index (in the plan) is sent.
    Request(u32),
    /// At this instant.
    At(Micros),
}

/// What happens to the backend.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FaultAction {
    /// Its registration ends: routers stop choosing it (what it already
    /// serves completes).
    Remove,
    /// Its Pylon publishes nothing for this long; routers keep its last
    /// report.
    StatsOutage(Micros),
}

/// A change of one backend during a run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fault {
    pub trigger: Trigger,
    pub backend: u32,
    pub action: FaultAction,
}

/// One request as a client and its backend saw it (kept on request, for
/// scores that need every request: stargate-bench's).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RequestLog {
    /// When the client sent it (its planned arrival, later under a closed
    /// loop).
    pub sent: Micros,
    pub succeeded: bool,
    /// Client-side first and last token; 0 when it did not get there.
    pub first_token: Micros,
    pub done: Micros,
    /// The backend of the final attempt.
    pub backend: u32,
    pub rank_depth: u32,
    pub input: u64,
    pub output: u64,
    pub reused: u64,
    /// The affinity key's index.
    pub key: u32,
    /// 429s received.
    pub rejections: u32,
}

/// What a run keeps beyond its metrics when asked to.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunDetail {
    pub requests: Vec<RequestLog>,
    /// Prefix-cache evictions per backend.
    pub evictions: Vec<u64>,
    /// When each backend was removed, if it was.
    pub removed_at: Vec<Option<Micros>>,
}
