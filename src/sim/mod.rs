//! `routex sim`: a deterministic discrete-event simulator that drives the
//! balancer core in virtual time (docs/simulator-model.md). It models the routers
//! around the core (stale stats, reservations, the routing loop), the Pylon
//! stats agents, the engines and the clients; it never decides a route
//! itself.
//!
//! Codemap: [`scenario`] (file, validation, policies) -> [`sweep`] (threads,
//! run order) -> [`run`] (one run: events, routers, engines) -> [`metrics`]
//! -> [`output`] and [`plot`]. A run plugs together three parts behind small
//! interfaces: [`workload`] (where requests come from), [`engine`] (how a
//! backend serves them) and [`routers`] (how a simulated router decides).

pub mod baselines;
pub mod calibrate;
pub mod engine;
pub mod events;
pub mod metrics;
pub mod output;
pub mod park;
pub mod plot;
pub mod policy;
pub mod publish;
pub mod pylon;
pub mod rng;
pub mod routers;
pub mod run;
pub mod scenario;
pub mod shard;
pub mod sweep;
pub mod time;
pub mod topology;
pub mod tune;
pub mod wait;
pub mod workload;
