//! Adapts the router's sans-IO routing loop (`router::wait`, docs/stargate.md 2.2) to
//! virtual time: durations become whole microseconds, a balancer wait
//! rounded up so that a non-zero wait never reads as already expired.
//! Fast mode (A11.2) asks the same loop and only replaces its sleeps by
//! parks.

use crate::kernel::time::{to_duration, wait_up, Micros};
use rand::RngCore;
use routex::balancer::{Choice, Decision};
use routex::router::{SleepKind, Step as LoopStep, WaitLoop};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    Dispatch(Choice),
    /// Decide again after this many microseconds (> 0).
    SleepFor(Micros),
    /// 503: the request ends as `no_route`.
    GiveUp,
}

fn convert(step: LoopStep) -> Step {
    match step {
        LoopStep::Select(choice) => Step::Dispatch(choice),
        // A zero wait is "decide again at once" (docs/stargate.md 2.2): in
        // virtual time, one microsecond later, so the clock moves on.
        LoopStep::Sleep(d, SleepKind::Recheck) if d.is_zero() => Step::SleepFor(1),
        LoopStep::Sleep(d, _) => match wait_up(d) {
            0 => Step::GiveUp,
            us => Step::SleepFor(us),
        },
        LoopStep::GiveUp => Step::GiveUp,
    }
}

/// The step after a decision, `elapsed_us` after arrival; `rng` draws
/// generic retry sleeps.
pub fn after_decision(
    wait: &WaitLoop,
    decision: Decision,
    elapsed_us: Micros,
    rng: &mut dyn RngCore,
) -> Step {
    convert(wait.step(&decision, to_duration(elapsed_us), rng))
}

/// What fast mode does after a decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FastStep {
    Dispatch(Choice),
    /// Park for at most this many microseconds (> 0): the balancer's whole
    /// wait, or the rest of the retry budget after `Unavailable`, both
    /// capped by the loop's deadlines. A view change may wake it earlier.
    Park(Micros),
    GiveUp,
}

/// The fast-mode step: the routing loop decides between selecting, waiting,
/// retrying and giving up; a recheck or retry sleep becomes a park. The
/// loop's retry sleep is drawn (and unused) as in faithful mode.
pub fn fast_after_decision(
    wait: &WaitLoop,
    decision: Decision,
    elapsed_us: Micros,
    rng: &mut dyn RngCore,
) -> FastStep {
    let elapsed = to_duration(elapsed_us);
    match wait.step(&decision, elapsed, rng) {
        LoopStep::Select(choice) => FastStep::Dispatch(choice),
        LoopStep::GiveUp => FastStep::GiveUp,
        LoopStep::Sleep(_, kind) => {
            let deadline = match kind {
                SleepKind::Recheck => wait.wait_deadline(),
                SleepKind::Retry => wait.retry_deadline().unwrap_or(wait.wait_deadline()),
            };
            let mut left = deadline.saturating_sub(elapsed);
            if let (SleepKind::Recheck, Decision::Wait(d)) = (kind, decision) {
                // A zero wait decides again a microsecond later, as in
                // faithful mode.
                left = left.min(d.max(std::time::Duration::from_micros(1)));
            }
            match wait_up(left) {
                0 => FastStep::GiveUp,
                us => FastStep::Park(us),
            }
        }
    }
}

/// A generic retry (nothing selectable, some backend not excluded).
pub fn retry(wait: &WaitLoop, elapsed_us: Micros, rng: &mut dyn RngCore) -> Step {
    convert(wait.retry(to_duration(elapsed_us), rng))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::rng::{stream, Stream};
    use std::time::Duration;

    #[test]
    fn waits_are_capped_by_recheck_and_deadline() {
        let w = WaitLoop::new(Some(1_000));
        let mut rng = stream(1, Stream::Infra);
        let wait = |ns| Decision::Wait(Duration::from_nanos(ns));
        let mut step = |d, e| after_decision(&w, d, e, &mut rng);
        assert_eq!(step(wait(10_000_000), 0), Step::SleepFor(10_000));
        assert_eq!(step(wait(300_000_000), 0), Step::SleepFor(25_000));
        assert_eq!(step(wait(300_000_000), 990_000), Step::SleepFor(10_000));
        assert_eq!(step(wait(1), 5), Step::SleepFor(1), "rounded up");
        assert_eq!(step(wait(300_000_000), 1_000_000), Step::GiveUp);
        match step(Decision::Unavailable, 0) {
            Step::SleepFor(us) => assert!((1_000..=9_000).contains(&us) && us % 1_000 == 0),
            other => panic!("{other:?}"),
        }
        assert_eq!(step(Decision::Unavailable, 999_999), Step::SleepFor(1));
    }

    #[test]
    fn fast_mode_parks_for_the_whole_wait_or_the_rest_of_the_budget() {
        let w = WaitLoop::new(Some(1_000));
        let mut rng = stream(1, Stream::Infra);
        let wait = |ms| Decision::Wait(Duration::from_millis(ms));
        let mut step = |d, e| fast_after_decision(&w, d, e, &mut rng);
        assert_eq!(
            step(wait(300), 0),
            FastStep::Park(300_000),
            "no 25 ms recheck"
        );
        assert_eq!(step(wait(300), 900_000), FastStep::Park(100_000));
        assert_eq!(
            step(Decision::Unavailable, 250_000),
            FastStep::Park(750_000)
        );
        assert_eq!(step(wait(300), 1_000_000), FastStep::GiveUp);
        assert_eq!(step(Decision::Unavailable, 1_000_000), FastStep::GiveUp);
    }
}
