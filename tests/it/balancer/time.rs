//! Exact time arithmetic (docs/stargate.md 2.1): the four cases of its
//! table, and more derived from the same rules. Clusters as the table
//! gives them: `last_mean_input_tps` = `max_input_tps` = 100, no input
//! tokens, running/max concurrency as stated.

use super::{check, ms, policy, pww, ww};
use routex::balancer::{ClusterSnapshot, Decision, Request};
use routex::ir::{PulsarWaitAndWidenSettings, Settings, WaitAndWidenSettings};
use std::time::Duration;

fn cluster(id: &str, rtt_ms: f64, running: u64, max: u64) -> ClusterSnapshot {
    ClusterSnapshot {
        rtt_ms,
        last_mean_input_tps: 100.0,
        max_input_tps: Some(100.0),
        num_running_queries: running,
        max_engine_concurrency: max,
        ..ClusterSnapshot::new(id)
    }
}

fn at(elapsed: Duration) -> Request<'static> {
    Request {
        model: "m",
        elapsed,
        ..Request::default()
    }
}

fn ww_with(f: impl FnOnce(&mut WaitAndWidenSettings)) -> routex::ir::Policy {
    let mut s = ww();
    f(&mut s);
    policy(Settings::WaitAndWiden(s))
}

/// `wait-and-widen;n=2`, a: 1005 ms, 1/1; b: 1025 ms, 0/1; at 0: the RTTs
/// read 1004.9999999999999 and 1025, a gap of 20.0000000000001 that misses
/// the 20 ms bucket: wait 5 ms for b's bucket.
#[test]
fn an_rtt_read_through_f64_misses_the_bucket() {
    let cs = [cluster("a", 1005.0, 1, 1), cluster("b", 1025.0, 0, 1)];
    let d = check(&ww_with(|s| s.bucket.n = 2), &at(Duration::ZERO), &cs);
    assert_eq!(d, Decision::Wait(ms(5)));
}

/// `wait-and-widen`, a: 0 ms, 1/1; b: 21 ms, 0/1; at 1.1 ms: 5.25 - 1.1
/// rounds to the nearest nanosecond, 4.15 ms (not 4.150001).
#[test]
fn a_wait_rounds_to_the_nearest_nanosecond() {
    let cs = [cluster("a", 0.0, 1, 1), cluster("b", 21.0, 0, 1)];
    let d = check(&ww_with(|_| {}), &at(Duration::from_micros(1100)), &cs);
    assert_eq!(d, Decision::Wait(Duration::from_nanos(4_150_000)));
}

/// `wait-and-widen;n=2`, a: 0 ms, 1/1; b: 5376 ms, 0/1; at 1344 ms the
/// f64 clock reads 1343.9999999999998, a hair before b's unlock at 1344:
/// a wait of 0, and the next decision (the clock has moved on) takes b.
#[test]
fn the_f64_clock_answers_a_zero_wait_at_an_unlock() {
    let cs = [cluster("a", 0.0, 1, 1), cluster("b", 5376.0, 0, 1)];
    let p = ww_with(|s| s.bucket.n = 2);
    assert_eq!(
        check(&p, &at(ms(1344)), &cs),
        Decision::Wait(Duration::ZERO)
    );
    let later = at(ms(1344) + Duration::from_nanos(1));
    assert!(matches!(check(&p, &later, &cs), Decision::Selected(c) if c.index == 1));
    // Well before the unlock the wait is the rest of it.
    assert_eq!(check(&p, &at(ms(1000)), &cs), Decision::Wait(ms(344)));
}

/// `max_queued=1;max_queue_time_floor_ms=1001;max_queue_time_ceil_ms=1001`,
/// a: 5 ms, 1/1, estimate {0: 1001}: the limit reads 1000.9999999999999,
/// so an estimate of exactly 1001 ms exceeds it: unavailable.
#[test]
fn a_queue_limit_read_through_f64_excludes_an_equal_estimate() {
    let mut a = cluster("a", 5.0, 1, 1);
    a.queue_time_estimate_ms_by_priority = vec![(0, 1001)];
    let p = ww_with(|s| {
        s.bucket.max_queued = 1;
        s.bucket.max_queue_time_floor_ms = Some(1001);
        s.bucket.max_queue_time_ceil_ms = Some(1001);
    });
    assert_eq!(
        check(&p, &at(Duration::ZERO), &[a.clone()]),
        Decision::Unavailable
    );
    // 1000 ms is within it.
    a.queue_time_estimate_ms_by_priority = vec![(0, 1000)];
    assert!(matches!(
        check(&p, &at(Duration::ZERO), &[a]),
        Decision::Selected(_)
    ));
}

/// Derived: two RTTs that read exactly (1000 and 1020) stay within one
/// bucket; only the one that reads below its value opens the gap.
#[test]
fn exact_rtts_keep_an_exact_gap() {
    let cs = [cluster("a", 1000.0, 1, 1), cluster("b", 1020.0, 0, 1)];
    let d = check(&ww_with(|s| s.bucket.n = 2), &at(Duration::ZERO), &cs);
    assert!(matches!(d, Decision::Selected(c) if c.index == 1), "{d:?}");
}

/// Derived: a band interval of 999999999999999 ms is waited exactly, far
/// beyond 2^64 ns (docs/stargate.md 2.3 item 4).
#[test]
fn a_huge_band_interval_is_waited_exactly() {
    let s = PulsarWaitAndWidenSettings {
        band_widen_interval_ms: 999_999_999_999_999,
        no_queue_slo_shortcut: false,
        ..pww()
    };
    // Four full clusters: rank 1 is the group, ranks 2-3 open at X = 0,
    // rank 4 waits one interval.
    let cs: Vec<_> = (0..4)
        .map(|i| cluster(&format!("c{i}"), 10.0, 1, 1))
        .collect();
    let d = check(
        &policy(Settings::PulsarWaitAndWiden(s)),
        &at(Duration::ZERO),
        &cs,
    );
    let expected = Duration::from_millis(999_999_999_999_999);
    assert!(expected.as_nanos() > u128::from(u64::MAX));
    assert_eq!(d, Decision::Wait(expected));
}

/// Derived: the affinity wait X is a duration, not an f64: at 1 ns before
/// X the wait is 1 ns.
#[test]
fn the_affinity_wait_is_exact() {
    let s = WaitAndWidenSettings {
        cache_affinity_backend_selection_count: Some(1),
        cache_affinity_wait_ms: 300,
        ..ww()
    };
    let cs = [cluster("a", 0.0, 1, 1), cluster("b", 0.0, 1, 1)];
    let r = Request {
        cache_affinity_key: Some("k"),
        elapsed: ms(300) - Duration::from_nanos(1),
        ..at(Duration::ZERO)
    };
    let d = check(&policy(Settings::WaitAndWiden(s)), &r, &cs);
    assert_eq!(d, Decision::Wait(Duration::from_nanos(1)));
}
