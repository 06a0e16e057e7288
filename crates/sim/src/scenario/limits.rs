//! The bounds every scenario value is checked against, and the callback a
//! section's check reports through. Each section's checks (`validate`
//! and the per-section files beside it) read these; none reads another's.

/// The longest duration a scenario may give in ms (about 11.6 days): times
/// in µs then stay far below `u64::MAX` whatever is added to them.
pub const MAX_MS: u64 = 1_000_000_000;
/// The longest RTT, relay delay, TTFT base or jitter, in ms.
pub(super) const MAX_DELAY_MS: f64 = 1_000_000.0;
/// The longest run: warmup + measure, in seconds.
pub const MAX_HORIZON_S: f64 = 1_000_000.0;
/// The most backends (and routers) a topology may have.
pub const MAX_BACKENDS: u64 = 10_000;
/// The longest input-TPS window, in first tokens.
pub(super) const MAX_TPS_WINDOW: usize = 10_000;

/// Reports one invalid value at the named key.
pub(super) type Err<'e> = dyn FnMut(&str, String) + 'e;
