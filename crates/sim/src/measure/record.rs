//! What a run remembers of each request, the input of every measurement:
//! how it ended and its times, tokens and placement.

use crate::kernel::time::Micros;
use serde::Serialize;

/// How a request ended; every request has exactly one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Succeeded,
    NoRoute,
    RetriesExhausted,
    TimedOut,
    /// Refused by input-work admission (`max_input_work_seconds`,
    /// docs/stargate.md 3.9): a 503 before any decision.
    InputWorkRejected,
}

/// What a run remembers of one request.
#[derive(Clone, Copy, Debug)]
pub struct Record {
    pub arrival: Micros,
    /// When the request was resolved, whatever its outcome.
    pub finished: Micros,
    pub outcome: Outcome,
    pub input: u64,
    pub reused: u64,
    /// Client first token - arrival (succeeded requests).
    pub ttft_us: Micros,
    /// Engine first token - backend receive.
    pub backend_ttft_us: Micros,
    /// Dispatch of the final attempt - arrival.
    pub routing_delay_us: Micros,
    pub backend: u32,
    pub rank_depth: u32,
    pub cross_region: bool,
    pub route_attempts: u32,
    pub mismatch_rejections: u32,
}
