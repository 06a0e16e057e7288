//! Searches over many runs: the capacity at an SLO (bisection over the
//! rate) and `sim tune` (the policy's fields).

pub mod capacity;
pub mod tune;
