//! The candidate view (docs/stargate.md 1.3) and what feeds it: a
//! backend's stats report (`stats`), the snapshots routers decide on
//! (`candidate`), the same behind a lock with reservation guards for
//! request threads (`shared`), backend health across requests
//! (`health`), and one view per model (`models`).

pub(super) mod candidate;
pub(super) mod health;
pub(super) mod models;
pub(super) mod shared;
pub(super) mod stats;
