//! Time sources for the expression cache: the system's monotonic clock, or a
//! manual one that tests (and the simulator) advance by hand.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// A monotonic clock read as the time since its own origin.
pub trait Clock: Send + Sync {
    /// The exact time since the clock's origin; never goes backwards.
    fn now(&self) -> Duration;

    /// A reading that may lag [`Clock::now`] by up to one scheduler tick (10 ms) but is
    /// cheap: cache hits use it to check and refresh idle expiry. Exact
    /// unless a clock says otherwise.
    fn now_coarse(&self) -> Duration {
        self.now()
    }
}

/// The most a kernel's coarse monotonic clock lags the exact one (one
/// scheduler tick: 4 ms at the common 250 Hz, 10 ms at 100 Hz).
pub(crate) const COARSE_TICK: Duration = Duration::from_millis(10);

/// The process's monotonic clock. The coarse reading is the kernel's coarse
/// monotonic clock (`CLOCK_MONOTONIC_COARSE` on Linux, read through the
/// `coarsetime` crate without its cached-timestamp updater): no thread, no
/// shared write, a few ns per read.
#[derive(Debug)]
pub struct SystemClock {
    origin: Instant,
    /// The coarse clock's reading at `origin` plus one [`COARSE_TICK`]:
    /// that reading lagged by somewhere in [0, tick), so assuming the
    /// whole tick keeps every coarse reading at or behind [`Clock::now`].
    coarse_origin: u64,
}

impl SystemClock {
    /// A clock whose origin (reading 0) is now.
    pub fn new() -> Self {
        let coarse = coarse_now_ns();
        SystemClock {
            origin: Instant::now(),
            coarse_origin: coarse.saturating_add(nanos(COARSE_TICK)),
        }
    }
}

fn coarse_now_ns() -> u64 {
    coarsetime::Instant::now_without_cache_update()
        .duration_since(coarsetime::Instant::from_u64(0))
        .as_nanos()
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

impl Default for SystemClock {
    fn default() -> Self {
        SystemClock::new()
    }
}

impl Clock for SystemClock {
    fn now(&self) -> Duration {
        self.origin.elapsed()
    }

    fn now_coarse(&self) -> Duration {
        Duration::from_nanos(coarse_now_ns().saturating_sub(self.coarse_origin))
    }
}
/// A clock that only moves when told to; shareable across threads.
#[derive(Debug, Default)]
pub struct ManualClock {
    nanos: AtomicU64,
}

impl ManualClock {
    /// A clock reading 0 until it is moved.
    pub fn new() -> Self {
        ManualClock::default()
    }

    /// Moves the clock forward by `by`, saturating at `u64::MAX` ns
    /// (about 584 years).
    pub fn advance(&self, by: Duration) {
        let by = u64::try_from(by.as_nanos()).unwrap_or(u64::MAX);
        // fetch_update cannot fail with a closure that always returns Some.
        let _ = self
            .nanos
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                Some(n.saturating_add(by))
            });
    }

    /// Sets the reading to `to` (saturating at `u64::MAX` ns), earlier
    /// than the current reading included.
    pub fn set(&self, to: Duration) {
        let to = u64::try_from(to.as_nanos()).unwrap_or(u64::MAX);
        self.nanos.store(to, Ordering::Relaxed);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Duration {
        Duration::from_nanos(self.nanos.load(Ordering::Relaxed))
    }
}

impl<C: Clock + ?Sized> Clock for std::sync::Arc<C> {
    fn now(&self) -> Duration {
        (**self).now()
    }

    fn now_coarse(&self) -> Duration {
        (**self).now_coarse()
    }
}
