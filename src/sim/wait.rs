//! The routing wait step of ref 2.2 as the simulator's routers apply it:
//! what to do after one decision. The one place the loop is written, so it
//! can be swapped for the router's own sans-IO helper.

use super::time::{wait_up, Micros};
use crate::balancer::{Choice, Decision};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    Dispatch(Choice),
    /// Decide again at this instant.
    RecheckAt(Micros),
    /// Unavailable, or a wait that cannot be honoured: generic retry or fail.
    NoChoice,
}

/// `Wait(d)` sleeps min(d rounded up, recheck period, time to the wait
/// deadline); a zero delay falls through to the generic retry.
pub fn next_step(decision: Decision, now: Micros, deadline: Micros, recheck_us: Micros) -> Step {
    match decision {
        Decision::Selected(choice) => Step::Dispatch(choice),
        Decision::Wait(d) => {
            let delay = wait_up(d).min(recheck_us).min(deadline.saturating_sub(now));
            if delay > 0 {
                Step::RecheckAt(now + delay)
            } else {
                Step::NoChoice
            }
        }
        Decision::Unavailable => Step::NoChoice,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn waits_are_capped_by_recheck_and_deadline() {
        let wait = |ms| Decision::Wait(Duration::from_millis(ms));
        assert_eq!(
            next_step(wait(10), 0, 1_000_000, 25_000),
            Step::RecheckAt(10_000)
        );
        assert_eq!(
            next_step(wait(300), 0, 1_000_000, 25_000),
            Step::RecheckAt(25_000)
        );
        assert_eq!(
            next_step(wait(300), 990_000, 1_000_000, 25_000),
            Step::RecheckAt(1_000_000)
        );
        assert_eq!(
            next_step(wait(300), 1_000_000, 1_000_000, 25_000),
            Step::NoChoice
        );
        assert_eq!(next_step(wait(0), 0, 1_000_000, 25_000), Step::NoChoice);
        assert_eq!(
            next_step(
                Decision::Wait(Duration::from_nanos(1)),
                5,
                1_000_000,
                25_000
            ),
            Step::RecheckAt(6)
        );
        assert_eq!(
            next_step(Decision::Unavailable, 0, 9, 25_000),
            Step::NoChoice
        );
    }
}
