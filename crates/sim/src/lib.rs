//! `routex sim`: a deterministic discrete-event simulator that drives the
//! balancer core in virtual time (docs/simulator-model.md). It models the routers
//! around the core (stale stats, reservations, the routing loop), the Pylon
//! stats agents, the engines and the clients; it never decides a route
//! itself.
//!
//! The code map (one folder per role: the scenario, the workload, the
//! simulated world, the simulated routers, one run, measurement,
//! reporting, sweeps and searches) is ARCHITECTURE.md's section "The
//! simulator".
//!
//! The public surface is [`scenario`], [`sweep`], [`measure`],
//! [`report`], [`search`], [`bench`](mod@bench), [`WaitMode`] and a run's
//! [`RunMetrics`] (docs/embedding.md); `kernel`, `run` and `world` are
//! `#[doc(hidden)]` hooks for the integration tests; the rest is private.
//! The scenario's section types (topology, workload, policies) are
//! readable through [`scenario::Prepared`]'s fields but not named.

#![forbid(unsafe_code)]

// The surface (docs/embedding.md, "Cargo features and the public
// surface"): load a scenario, run its sweep, write and plot its outputs,
// shard and merge, search for capacity, tune.
pub mod bench;
pub mod measure;
pub mod report;
pub mod scenario;
pub mod search;
pub mod sweep;

pub use measure::metrics::{Bin, RunDiagnostics, RunMetrics};
pub use routers::park::WaitMode;

// Reached only by the project's integration tests (single runs, the
// engine models, the calibration loop, the Pylon view, the random
// streams); they may change in any release.
#[doc(hidden)]
pub mod kernel;
#[doc(hidden)]
pub mod run;
#[doc(hidden)]
pub mod world;
/// Growing conversations' laws and plan (the tests check them directly).
#[doc(hidden)]
pub mod conversations {
    pub use crate::workload::conversation_client::{
        ConversationClient, ConversationCounts, FollowUp,
    };
    pub use crate::workload::conversations::*;
    pub use crate::workload::sizes::{draw, Dist, Sizes};
    pub use crate::workload::{BlockSpan, Plan, PlanShape, PlannedRequest};
}

// Internals.
mod routers;
mod workload;
