//! The simulation kernel: virtual time, the seeded random streams and the
//! event queue that every run is built on.

pub(crate) mod events;
#[doc(hidden)]
pub mod rng;
pub(crate) mod time;
