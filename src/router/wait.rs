//! The routing loop's timing rules (docs/stargate.md 2.2) as a sans-IO
//! state machine: it says how long to sleep or when to give up, and never
//! sleeps itself, so the simulator can drive it in virtual time.

use super::rejection::{Rejection, RejectionCode};
use crate::balancer::{Choice, Decision};
use rand::{Rng, RngCore};
use std::time::Duration;

/// The cap on any routing wait, with or without `x-max-wait-ms`.
pub const WAIT_CAP: Duration = Duration::from_millis(60_000);
/// Timed waits are rechecked at least this often.
pub const RECHECK_PERIOD: Duration = Duration::from_millis(25);
/// Generic retry sleeps are whole milliseconds drawn from this range.
pub const RETRY_SLEEP_MS: std::ops::Range<u64> = 1..10;

/// Why the loop sleeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SleepKind {
    /// A timed wait from the balancer (a routing retry).
    Recheck,
    /// A generic retry after Unavailable or an unusable wait.
    Retry,
}

/// What the caller does next.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Step {
    /// Route to this choice.
    Select(Choice),
    /// Sleep this long, then decide again. A zero duration (after a
    /// balancer's zero wait) means deciding again at once.
    Sleep(Duration, SleepKind),
    /// Stop with 503.
    GiveUp,
}

/// One request's deadlines, fixed at arrival. Times are offsets from the
/// request's arrival on the caller's clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WaitLoop {
    wait_deadline: Duration,
    retry_deadline: Option<Duration>,
}

impl WaitLoop {
    /// `max_wait_ms` is the `x-max-wait-ms` header, if present.
    pub fn new(max_wait_ms: Option<u64>) -> Self {
        let capped = max_wait_ms.map(|ms| Duration::from_millis(ms).min(WAIT_CAP));
        WaitLoop {
            wait_deadline: capped.unwrap_or(WAIT_CAP),
            retry_deadline: capped,
        }
    }

    /// Timed waits end here (elapsed since arrival).
    pub fn wait_deadline(&self) -> Duration {
        self.wait_deadline
    }

    /// Generic retries end here; `None` without `x-max-wait-ms`.
    pub fn retry_deadline(&self) -> Option<Duration> {
        self.retry_deadline
    }

    /// The next step after `decision`, `elapsed` after arrival. `rng` draws
    /// the generic retry sleep.
    pub fn step(&self, decision: &Decision, elapsed: Duration, rng: &mut dyn RngCore) -> Step {
        match *decision {
            Decision::Selected(choice) => Step::Select(choice),
            Decision::Wait(d) => {
                let left = self.wait_deadline.saturating_sub(elapsed);
                let delay = d.min(RECHECK_PERIOD).min(left);
                if delay > Duration::ZERO || (d.is_zero() && !left.is_zero()) {
                    // A zero wait (a bucket unlocking a hair after the f64
                    // clock reads it, docs/stargate.md 2.3 item 2) is no wait:
                    // decide again at once, before the deadline.
                    Step::Sleep(delay, SleepKind::Recheck)
                } else {
                    self.retry(elapsed, rng)
                }
            }
            Decision::Unavailable => self.retry(elapsed, rng),
        }
    }

    /// The 503 to answer after [`Step::GiveUp`].
    pub fn give_up_rejection(&self) -> Rejection {
        Rejection::new(
            RejectionCode::RoutingUnavailable,
            "no cluster became selectable before the routing deadline",
        )
    }

    /// Step 7: a generic retry while the retry deadline lasts, else 503.
    pub fn retry(&self, elapsed: Duration, rng: &mut dyn RngCore) -> Step {
        match self.retry_deadline {
            Some(deadline) if elapsed < deadline => {
                let sleep = Duration::from_millis(rng.random_range(RETRY_SLEEP_MS));
                Step::Sleep(sleep.min(deadline - elapsed), SleepKind::Retry)
            }
            _ => Step::GiveUp,
        }
    }
}
