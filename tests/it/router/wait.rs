//! The routing loop's timing (docs/stargate.md 2.2, 7.7).

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use routex::balancer::{Choice, Decision};
use routex::router::{SleepKind, Step, WaitLoop, RECHECK_PERIOD, WAIT_CAP};
use std::time::Duration;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn rng() -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(42)
}

/// Drives the loop in virtual time until it selects or gives up, with the
/// balancer answering `decide(elapsed)`. Returns the final step and when.
fn drive(
    wait_loop: WaitLoop,
    mut decide: impl FnMut(Duration) -> Decision,
) -> (Step, Duration, usize) {
    let mut rng = rng();
    let mut now = Duration::ZERO;
    for iteration in 0.. {
        match wait_loop.step(&decide(now), now, &mut rng) {
            Step::Sleep(d, _) => {
                assert!(d > Duration::ZERO);
                now += d;
            }
            done => return (done, now, iteration),
        }
    }
    unreachable!()
}

#[test]
fn constants_are_stargates() {
    assert_eq!(RECHECK_PERIOD, ms(25));
    assert_eq!(WAIT_CAP, ms(60_000));
    assert_eq!(routex::router::RETRY_SLEEP_MS, 1..10);
}

#[test]
fn affinity_wait_rechecks_capacity_and_respects_explicit_deadline() {
    let wait_loop = WaitLoop::new(Some(100));
    let mut rng = rng();
    let wait = |d| Decision::Wait(ms(d));
    // delay = min(d, 25 ms, deadline - now)
    assert_eq!(
        wait_loop.step(&wait(200), ms(0), &mut rng),
        Step::Sleep(ms(25), SleepKind::Recheck)
    );
    assert_eq!(
        wait_loop.step(&wait(7), ms(0), &mut rng),
        Step::Sleep(ms(7), SleepKind::Recheck)
    );
    assert_eq!(
        wait_loop.step(&wait(200), ms(90), &mut rng),
        Step::Sleep(ms(10), SleepKind::Recheck)
    );
    assert_eq!(
        wait_loop.step(&wait(3), ms(95), &mut rng),
        Step::Sleep(ms(3), SleepKind::Recheck)
    );
    // At the deadline the wait is unusable and the retry budget is spent.
    assert_eq!(wait_loop.step(&wait(200), ms(100), &mut rng), Step::GiveUp);
    // A 300 ms affinity wait with x-max-wait-ms 100 ends in 503 at 100 ms,
    // rechecking every 25 ms.
    let (step, at, rechecks) = drive(wait_loop, |t| Decision::Wait(ms(300) - t));
    assert_eq!((step, at, rechecks), (Step::GiveUp, ms(100), 4));
    // Capacity that frees at 60 ms is seen at the 75 ms recheck.
    let choice = Choice {
        index: 2,
        rank_depth: 1,
        selected_after_kv_free_tokens_skip: false,
    };
    let (step, at, _) = drive(wait_loop, |t| {
        if t >= ms(60) {
            Decision::Selected(choice)
        } else {
            Decision::Wait(ms(300) - t)
        }
    });
    assert_eq!((step, at), (Step::Select(choice), ms(75)));
}

#[test]
fn routing_wait_deadline_is_bounded_without_max_wait_header() {
    let without = WaitLoop::new(None);
    assert_eq!(without.wait_deadline(), ms(60_000));
    assert_eq!(without.retry_deadline(), None);
    let long = WaitLoop::new(Some(120_000));
    assert_eq!(long.wait_deadline(), ms(60_000));
    assert_eq!(long.retry_deadline(), Some(ms(60_000)));
    let mut rng = rng();
    assert_eq!(
        without.step(&Decision::Wait(ms(200)), ms(59_990), &mut rng),
        Step::Sleep(ms(10), SleepKind::Recheck)
    );
    // Waits are honoured without the header, up to the cap.
    let (step, at, rechecks) = drive(without, |_| Decision::Wait(ms(1_000_000)));
    assert_eq!((step, at, rechecks), (Step::GiveUp, ms(60_000), 2400));
}

#[test]
fn routing_wait_stops_at_default_deadline_without_max_wait_header() {
    let without = WaitLoop::new(None);
    let mut rng = rng();
    assert_eq!(
        without.step(&Decision::Wait(ms(5)), ms(60_000), &mut rng),
        Step::GiveUp
    );
    assert_eq!(
        without.step(&Decision::Wait(ms(5)), ms(70_000), &mut rng),
        Step::GiveUp
    );
    // Without the header Unavailable is final at once.
    assert_eq!(
        without.step(&Decision::Unavailable, ms(0), &mut rng),
        Step::GiveUp
    );
}

#[test]
fn wait_zero_decides_again_at_once_until_the_deadline() {
    // docs/stargate.md 2.3 item 2: a zero wait is no wait, and the loop decides
    // again at once (a real clock has moved on by then).
    let mut rng = rng();
    let zero = Decision::Wait(Duration::ZERO);
    for wait_loop in [WaitLoop::new(None), WaitLoop::new(Some(50))] {
        assert_eq!(
            wait_loop.step(&zero, ms(0), &mut rng),
            Step::Sleep(Duration::ZERO, SleepKind::Recheck)
        );
    }
    // At the wait deadline it is an unusable wait: retry or 503 (2.2).
    assert_eq!(
        WaitLoop::new(None).step(&zero, ms(60_000), &mut rng),
        Step::GiveUp
    );
    assert_eq!(
        WaitLoop::new(Some(50)).step(&zero, ms(50), &mut rng),
        Step::GiveUp
    );
}

#[test]
fn unavailable_retries_with_1_to_9_ms_sleeps_until_the_max_wait() {
    let wait_loop = WaitLoop::new(Some(1000));
    let mut rng = rng();
    let mut seen = [false; 10];
    for _ in 0..2000 {
        match wait_loop.step(&Decision::Unavailable, ms(0), &mut rng) {
            Step::Sleep(d, SleepKind::Retry) => {
                assert_eq!(d.subsec_nanos() % 1_000_000, 0, "whole milliseconds");
                seen[d.as_millis() as usize] = true;
            }
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(
        seen,
        [false, true, true, true, true, true, true, true, true, true]
    );
    // Capped by the time left.
    assert_eq!(
        wait_loop.step(
            &Decision::Unavailable,
            Duration::from_micros(999_500),
            &mut rng
        ),
        Step::Sleep(Duration::from_micros(500), SleepKind::Retry)
    );
    let (step, at, _) = drive(wait_loop, |_| Decision::Unavailable);
    assert_eq!((step, at), (Step::GiveUp, ms(1000)));
}

#[test]
fn selected_is_passed_through() {
    let choice = Choice {
        index: 0,
        rank_depth: 3,
        selected_after_kv_free_tokens_skip: true,
    };
    let step = WaitLoop::new(None).step(&Decision::Selected(choice), ms(70_000), &mut rng());
    assert_eq!(step, Step::Select(choice));
}

#[test]
fn giving_up_is_a_503() {
    let r = WaitLoop::new(None).give_up_rejection();
    assert_eq!((r.status, r.header_value()), (503, "routing_unavailable"));
}
