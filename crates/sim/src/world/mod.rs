//! The simulated world: the engines behind each backend, the Pylon stats
//! agents and their publishing, the topology (regions, clusters, RTTs),
//! how the fleet changes during a run, the gateway's last-cluster store,
//! and the closed-loop engine calibration.

#[doc(hidden)]
pub mod calibrate;
#[doc(hidden)]
pub mod engine;
#[doc(hidden)]
pub mod fleet;
#[doc(hidden)]
pub mod gateway;
pub(crate) mod publish;
#[doc(hidden)]
pub mod pylon;
pub(crate) mod topology;
