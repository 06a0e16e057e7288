//! Time sources for the expression cache: the system's monotonic clock, or a
//! manual one that tests (and the simulator) advance by hand.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// A monotonic clock read as the time since its own origin.
pub trait Clock: Send + Sync {
    fn now(&self) -> Duration;

    /// A reading that may lag [`Clock::now`] by up to [`COARSE_TICK`] (plus
    /// scheduling delay) but is cheap: cache hits use it to check and
    /// refresh idle expiry. Exact unless a clock says otherwise.
    fn now_coarse(&self) -> Duration {
        self.now()
    }
}

/// How often the process-wide coarse time is refreshed.
pub const COARSE_TICK: Duration = Duration::from_millis(10);

/// The process-wide coarse time: nanoseconds since `COARSE_ORIGIN`, stored
/// by one ticker thread every [`COARSE_TICK`]. Reading it is one relaxed
/// load, where `Instant::now` is a vDSO call (~25 ns on the bench host).
static COARSE_NANOS: AtomicU64 = AtomicU64::new(0);
/// The coarse time's origin, or `None` when the ticker thread could not be
/// started (then [`SystemClock::now_coarse`] reads the exact clock).
static COARSE_ORIGIN: OnceLock<Option<Instant>> = OnceLock::new();

fn coarse_origin() -> Option<Instant> {
    *COARSE_ORIGIN.get_or_init(|| {
        let origin = Instant::now();
        let spawned = std::thread::Builder::new()
            .name("routex-coarse-clock".into())
            .spawn(move || loop {
                std::thread::sleep(COARSE_TICK);
                COARSE_NANOS.store(nanos(origin.elapsed()), Ordering::Relaxed);
            });
        spawned.ok().map(|_| origin)
    })
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// The process's monotonic clock.
#[derive(Debug)]
pub struct SystemClock {
    origin: Instant,
    /// This clock's origin on the coarse time's scale; `None` = no ticker.
    coarse_offset: Option<u64>,
}

impl SystemClock {
    pub fn new() -> Self {
        let coarse = coarse_origin();
        let origin = Instant::now();
        SystemClock {
            origin,
            coarse_offset: coarse.map(|c| nanos(origin.saturating_duration_since(c))),
        }
    }
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
        match self.coarse_offset {
            Some(offset) => {
                Duration::from_nanos(COARSE_NANOS.load(Ordering::Relaxed).saturating_sub(offset))
            }
            None => self.now(),
        }
    }
}

/// A clock that only moves when told to; shareable across threads.
#[derive(Debug, Default)]
pub struct ManualClock {
    nanos: AtomicU64,
}

impl ManualClock {
    pub fn new() -> Self {
        ManualClock::default()
    }

    pub fn advance(&self, by: Duration) {
        let by = u64::try_from(by.as_nanos()).unwrap_or(u64::MAX);
        // fetch_update cannot fail with a closure that always returns Some.
        let _ = self
            .nanos
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                Some(n.saturating_add(by))
            });
    }

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
