//! Shared estimates (docs/stargate.md 3.1, 3.2, 3.6.2).

use super::ms;
use routex::balancer::estimate::{
    self, has_capacity, least_queue_time, prefill_ms, processing_delay_s, queue_estimate,
    queue_limit_ms, queue_ms, ttft, IgnoreFlags, QueueEstimate, Score,
};
use routex::balancer::{ClusterSnapshot, Request};
use routex::ir::{Comparator, QueueSlo};
use std::cmp::Ordering;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

/// rtt 7, tps 100, queued 999, map {4: 25}.
fn worked() -> ClusterSnapshot {
    ClusterSnapshot {
        rtt_ms: 7.0,
        last_mean_input_tps: 100.0,
        queued_input_size: 999,
        queue_time_estimate_ms_by_priority: vec![(4, 25)],
        ..ClusterSnapshot::new("w")
    }
}

const NONE: IgnoreFlags = IgnoreFlags {
    queue_time: false,
    input_processing_time: false,
};

#[test]
fn wait_and_widen_ttft_uses_priority_queue_and_ignore_flags() {
    let c = worked();
    assert_eq!(queue_estimate(&c, 4), QueueEstimate::Ms(25));
    assert_eq!(queue_ms(&c, 4), 25.0);
    let full = ttft(&c, 200, 4, 1.0, NONE);
    assert!(close(full.bucket_ms, 2032.0) && close(full.comparator_ms, 2032.0));
    let scaled = ttft(&c, 200, 4, 0.1, NONE);
    assert!(close(scaled.bucket_ms, 232.0) && close(scaled.comparator_ms, 232.0));
    let iq = IgnoreFlags {
        queue_time: true,
        ..NONE
    };
    let ip = IgnoreFlags {
        input_processing_time: true,
        ..NONE
    };
    assert!(close(ttft(&c, 200, 4, 1.0, iq).bucket_ms, 2007.0));
    assert!(close(ttft(&c, 200, 4, 1.0, ip).bucket_ms, 32.0));
    // The flags never apply to the comparator TTFT.
    assert!(close(ttft(&c, 200, 4, 1.0, iq).comparator_ms, 2032.0));
    assert!(close(ttft(&c, 200, 4, 0.1, ip).comparator_ms, 232.0));
}

fn engine(running: u64, max: u64) -> ClusterSnapshot {
    ClusterSnapshot {
        rtt_ms: 5.0,
        last_mean_input_tps: 8000.0,
        queued_input_size: 80_000,
        num_running_queries: running,
        max_engine_concurrency: max,
        ..ClusterSnapshot::new("e")
    }
}

#[test]
fn wait_and_widen_free_slot_removes_queue_delay_but_keeps_request_prefill() {
    let free = engine(24, 25);
    assert_eq!(queue_ms(&free, 0), 0.0);
    assert!(close(ttft(&free, 8000, 0, 1.0, NONE).bucket_ms, 1005.0));
    for busy in [engine(25, 25), engine(26, 25), engine(24, 0)] {
        assert_eq!(queue_estimate(&busy, 0), QueueEstimate::Ms(10_000));
        assert!(close(ttft(&busy, 8000, 0, 1.0, NONE).bucket_ms, 11_005.0));
    }
}

#[test]
fn wait_and_widen_treats_lower_priority_only_queue_as_zero_for_higher_priority_request() {
    // Entries only for priorities greater than p: queue 0.
    let c = ClusterSnapshot {
        queue_time_estimate_ms_by_priority: vec![(5, 1000), (9, 3000)],
        queued_input_size: 1_000_000,
        last_mean_input_tps: 1.0,
        ..ClusterSnapshot::new("p")
    };
    assert_eq!(queue_ms(&c, 1), 0.0);
    assert_eq!(queue_ms(&c, 5), 1000.0);
    assert_eq!(queue_ms(&c, 8), 1000.0);
    assert_eq!(queue_ms(&c, u32::MAX), 3000.0);
}

#[test]
fn queue_estimate_from_queued_tokens_and_unknown() {
    let c = |queued, tps| ClusterSnapshot {
        queued_input_size: queued,
        last_mean_input_tps: tps,
        ..ClusterSnapshot::new("q")
    };
    assert_eq!(queue_estimate(&c(0, f64::NAN), 0), QueueEstimate::Ms(0));
    // ceil(1001 / 1000 * 1000) = 1001; ceil(1 / 3 * 1000) = 334.
    assert_eq!(queue_estimate(&c(1001, 1000.0), 0), QueueEstimate::Ms(1001));
    assert_eq!(queue_estimate(&c(1, 3.0), 0), QueueEstimate::Ms(334));
    for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        assert_eq!(queue_estimate(&c(5, bad), 0), QueueEstimate::Unknown);
        assert_eq!(queue_ms(&c(5, bad), 0), f64::INFINITY);
    }
    // Too large for u64 ms: unknown, then the processing delay in ms.
    let huge = c(u64::MAX, 1e-6);
    assert_eq!(queue_estimate(&huge, 0), QueueEstimate::Unknown);
    assert!(queue_ms(&huge, 0) > 1e24 && queue_ms(&huge, 0).is_finite());
}

#[test]
fn processing_delay_and_prefill_edges() {
    assert_eq!(processing_delay_s(0, None), 0.0);
    assert_eq!(processing_delay_s(10, None), f64::INFINITY);
    assert_eq!(processing_delay_s(300, Some(100.0)), 3.0);
    let slow = ClusterSnapshot {
        last_mean_input_tps: 0.0,
        ..ClusterSnapshot::new("s")
    };
    // Scale 0 keeps invalid-TPS prefill at +inf (edge case 12).
    assert_eq!(prefill_ms(&slow, 100, 0.0), f64::INFINITY);
    assert_eq!(prefill_ms(&slow, 0, 1.0), 0.0);
    // NaN statistics become the worst value, never NaN.
    let nan = ClusterSnapshot {
        rtt_ms: f64::NAN,
        last_mean_input_tps: 100.0,
        ..ClusterSnapshot::new("n")
    };
    assert_eq!(ttft(&nan, 10, 0, 1.0, NONE).bucket_ms, f64::INFINITY);
}

#[test]
fn wait_and_widen_max_queued_at_u64_max_admits_full_candidates() {
    let full = ClusterSnapshot {
        num_running_queries: 1_000_000,
        max_engine_concurrency: 4,
        ..ClusterSnapshot::new("f")
    };
    assert!(has_capacity(&full, u64::MAX));
    assert!(!has_capacity(&full, 5));
    let at_limit = ClusterSnapshot {
        num_running_queries: 6,
        max_engine_concurrency: 4,
        ..ClusterSnapshot::new("l")
    };
    assert!(!has_capacity(&at_limit, 2));
    assert!(has_capacity(&at_limit, 3));
    // Unknown engine limit: never filtered.
    let unknown = ClusterSnapshot {
        num_running_queries: 1000,
        ..ClusterSnapshot::new("u")
    };
    assert!(has_capacity(&unknown, 0));
}

#[test]
fn max_queue_time_interpolates_between_floor_and_ceil() {
    let slo = QueueSlo {
        floor_ms: 100,
        ceil_ms: 300,
    };
    assert!(close(queue_limit_ms(slo, Some(1000), ms(500)), 200.0));
    assert!(close(queue_limit_ms(slo, Some(1000), ms(0)), 100.0));
    assert!(close(queue_limit_ms(slo, Some(1000), ms(5000)), 300.0));
    // floor > ceil is kept: the limit shrinks over time.
    let shrinking = QueueSlo {
        floor_ms: 300,
        ceil_ms: 100,
    };
    assert!(close(queue_limit_ms(shrinking, Some(1000), ms(500)), 200.0));
    assert!(close(queue_limit_ms(shrinking, None, ms(0)), 100.0));
}

#[test]
fn max_queue_time_uses_ceil_when_request_slo_is_missing() {
    let slo = QueueSlo {
        floor_ms: 100,
        ceil_ms: 300,
    };
    assert!(close(queue_limit_ms(slo, None, ms(0)), 300.0));
}

#[test]
fn max_queue_time_uses_ceil_when_request_slo_is_zero() {
    let slo = QueueSlo {
        floor_ms: 100,
        ceil_ms: 300,
    };
    assert!(close(queue_limit_ms(slo, Some(0), ms(0)), 300.0));
}

#[test]
fn comparators_score_as_specified() {
    let c = ClusterSnapshot {
        rtt_ms: 7.0,
        last_mean_input_tps: 100.0,
        queued_input_size: 300,
        queue_size: 9,
        num_running_queries: 3,
        max_engine_concurrency: 4,
        ..ClusterSnapshot::new("c")
    };
    let r = Request {
        input_tokens: Some(200),
        ..Request::default()
    };
    // No free slot is false here (3 < 4): queue 0; ttft = 7 + 0 + 2000.
    assert_eq!(
        estimate::score(Comparator::Ttft, &c, &r),
        Score::Real(2007.0)
    );
    assert_eq!(
        estimate::score(Comparator::QueueTime, &c, &r),
        Score::Real(0.0)
    );
    assert_eq!(
        estimate::score(Comparator::InputWorkSeconds, &c, &r),
        Score::Real(5.0)
    );
    assert_eq!(
        estimate::score(Comparator::Utilization, &c, &r),
        Score::Real(0.75)
    );
    assert_eq!(
        estimate::score(Comparator::NumRequestsQueued, &c, &r),
        Score::Count(9)
    );
    let unknown_max = ClusterSnapshot {
        num_running_queries: 3,
        ..ClusterSnapshot::new("u")
    };
    assert_eq!(
        estimate::score(Comparator::Utilization, &unknown_max, &r),
        Score::Real(3.0)
    );
}

#[test]
fn least_queue_time_breaks_ties_by_utilisation() {
    let c = |running, max| ClusterSnapshot {
        num_running_queries: running,
        max_engine_concurrency: max,
        ..ClusterSnapshot::new("c")
    };
    assert_eq!(
        least_queue_time(&c(9, 10), 1.0, &c(0, 10), 2.0),
        Ordering::Less
    );
    // Ratios when both limits are known: 1/2 > 3/8.
    assert_eq!(
        least_queue_time(&c(1, 2), 0.0, &c(3, 8), 0.0),
        Ordering::Greater
    );
    // Raw running counts when either limit is unknown: 1 < 3.
    assert_eq!(
        least_queue_time(&c(1, 2), 0.0, &c(3, 0), 0.0),
        Ordering::Less
    );
}

#[test]
fn waits_round_to_the_nearest_nanosecond_and_keep_huge_values() {
    // docs/stargate.md 2.3 items 1 and 4.
    use std::time::Duration;
    assert_eq!(
        estimate::wait_from_ms(123.75),
        Some(Duration::from_nanos(123_750_000))
    );
    // 5.25 - 1.1 is 4.1499999999999995 in f64: the nearest nanosecond,
    // not one more.
    assert_eq!(
        estimate::wait_from_ms(5.25 - 1.1),
        Some(Duration::from_nanos(4_150_000))
    );
    assert_eq!(estimate::wait_from_ms(0.0000004), Some(Duration::ZERO));
    assert_eq!(
        estimate::wait_from_ms(0.0000006),
        Some(Duration::from_nanos(1))
    );
    assert_eq!(estimate::wait_from_ms(1e-12), Some(Duration::ZERO));
    assert_eq!(estimate::wait_from_ms(0.0), Some(Duration::ZERO));
    // Beyond 2^64 ns (about 584 years) the exact duration is kept.
    assert_eq!(
        estimate::wait_from_ms(1e14),
        Some(Duration::from_secs(100_000_000_000))
    );
    assert!(estimate::wait_from_ms(1e14).unwrap().as_nanos() > u128::from(u64::MAX));
    assert_eq!(estimate::wait_from_ms(1e300), Some(Duration::MAX));
    assert_eq!(estimate::wait_from_ms(f64::INFINITY), Some(Duration::MAX));
    assert_eq!(estimate::wait_from_ms(f64::NAN), None);
    assert_eq!(estimate::wait_from_ms(-1.0), None);
}

#[test]
fn durations_read_back_through_f64_as_stargate_reads_them() {
    // docs/stargate.md 2.3 items 2 and 3.
    use std::time::Duration;
    assert_eq!(
        estimate::duration_ms(Duration::from_millis(1344)),
        1343.9999999999998
    );
    assert_eq!(estimate::rtt_ms(1005.0), 1004.9999999999999);
    assert_eq!(estimate::rtt_ms(1025.0), 1025.0);
    assert_eq!(estimate::rtt_ms(0.0), 0.0);
    assert_eq!(estimate::rtt_ms(f64::NAN), f64::INFINITY);
    assert_eq!(estimate::rtt_ms(-3.0), -3.0);
    // Idempotent: an RTT already read through f64 reads the same.
    assert_eq!(estimate::rtt_ms(1004.9999999999999), 1004.9999999999999);
    let slo = routex::ir::QueueSlo {
        floor_ms: 1001,
        ceil_ms: 1001,
    };
    assert_eq!(
        estimate::queue_limit_ms(slo, None, Duration::ZERO),
        1000.9999999999999
    );
}
