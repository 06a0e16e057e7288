//! Shared estimates (docs/stargate.md 3.1, 3.2, 3.6.2): rates, queue
//! and TTFT estimates, capacity, the queue-SLO limit and the comparators.
//!
//! Every f64 produced here is NaN-free: a NaN input becomes +inf, the worst
//! value, so `total_cmp` orders scores as the spec's total order does.

use super::{ClusterSnapshot, Request};
use crate::ir::{Comparator, QueueSlo};
use std::cmp::Ordering;
use std::time::Duration;

/// NaN is the worst score, like +inf.
pub(crate) fn worst_if_nan(x: f64) -> f64 {
    if x.is_nan() {
        f64::INFINITY
    } else {
        x
    }
}

/// A rate is valid when finite and > 0.
pub(crate) fn valid_rate(rate: f64) -> Option<f64> {
    (rate.is_finite() && rate > 0.0).then_some(rate)
}

/// `last_mean_input_tps` when it is a valid rate.
pub fn tps(c: &ClusterSnapshot) -> Option<f64> {
    valid_rate(c.last_mean_input_tps)
}

/// Seconds to process `work` tokens at `rate`: 0 for no work, +inf without
/// a valid rate.
pub fn processing_delay_s(work: u64, rate: Option<f64>) -> f64 {
    match (work, rate) {
        (0, _) => 0.0,
        (_, None) => f64::INFINITY,
        (w, Some(r)) => w as f64 / r,
    }
}

/// A known engine limit with a slot left (reservations included).
pub fn has_free_slot(c: &ClusterSnapshot) -> bool {
    c.max_engine_concurrency > 0 && c.num_running_queries < c.max_engine_concurrency
}

/// The queue estimate of 3.1 steps 1-3, before "unknown" is resolved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueEstimate {
    /// A known estimate, in whole ms (0 with a free engine slot).
    Ms(u64),
    /// Queued tokens without a valid input rate, or an estimate that does
    /// not fit u64 ms: [`queue_ms`] turns it into a processing delay.
    Unknown,
}

/// The queue estimate for a request of `priority` on `c`
/// (docs/stargate.md 3.1 steps 1-3): 0 with a free engine slot, else the
/// published estimate of the greatest priority <= `priority` (0 if none),
/// else the queued input tokens over the input rate, rounded up to a ms.
pub fn queue_estimate(c: &ClusterSnapshot, priority: u32) -> QueueEstimate {
    if has_free_slot(c) {
        return QueueEstimate::Ms(0);
    }
    if !c.queue_time_estimate_ms_by_priority.is_empty() {
        // Greatest published priority <= p; the map is not trusted to be sorted.
        let best = c
            .queue_time_estimate_ms_by_priority
            .iter()
            .filter(|(p, _)| *p <= priority)
            .max_by_key(|(p, _)| *p);
        return QueueEstimate::Ms(best.map_or(0, |(_, ms)| *ms));
    }
    if c.queued_input_size == 0 {
        return QueueEstimate::Ms(0);
    }
    match tps(c) {
        Some(rate) => {
            let ms = (c.queued_input_size as f64 / rate * 1000.0).ceil();
            // `u64::MAX as f64` is 2^64, which itself does not fit.
            if ms.is_finite() && ms < u64::MAX as f64 {
                QueueEstimate::Ms(ms as u64)
            } else {
                QueueEstimate::Unknown
            }
        }
        None => QueueEstimate::Unknown,
    }
}

/// The queue estimate as a number of ms (3.1 step 4: unknown becomes the
/// processing delay of the queued tokens, +inf without a valid rate).
pub fn queue_ms(c: &ClusterSnapshot, priority: u32) -> f64 {
    match queue_estimate(c, priority) {
        QueueEstimate::Ms(ms) => ms as f64,
        QueueEstimate::Unknown => processing_delay_s(c.queued_input_size, tps(c)) * 1000.0,
    }
}

/// Prefill of `tokens` at scale `scale`: +inf without a valid rate, even at
/// scale 0 (edge case 12).
pub fn prefill_ms(c: &ClusterSnapshot, tokens: u64, scale: f64) -> f64 {
    if tokens == 0 {
        return 0.0;
    }
    match tps(c) {
        Some(rate) => worst_if_nan(tokens as f64 * scale / rate * 1000.0),
        None => f64::INFINITY,
    }
}

/// The flags that only bucketing honours.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IgnoreFlags {
    /// `ignore_queue_time`: the bucket TTFT leaves out the queue estimate.
    pub queue_time: bool,
    /// `ignore_input_processing_time`: the bucket TTFT leaves out the
    /// prefill.
    pub input_processing_time: bool,
}

/// The TTFT estimates of one cluster for one request and prefill scale.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ttft {
    /// The queue estimate in ms ([`queue_ms`]), whatever the flags.
    pub queue_ms: f64,
    /// rtt + queue + prefill, minus what the ignore flags drop.
    pub bucket_ms: f64,
    /// rtt + queue + scaled prefill; the flags never apply.
    pub comparator_ms: f64,
}

/// The TTFT estimates (docs/stargate.md 3.1) of `c` for a request of
/// `tokens` input tokens at `priority`, the prefill scaled by `scale`
/// (0.0..=1.0, 1.0 outside an affinity group); every value in ms and
/// NaN-free.
pub fn ttft(
    c: &ClusterSnapshot,
    tokens: u64,
    priority: u32,
    scale: f64,
    flags: IgnoreFlags,
) -> Ttft {
    let rtt = rtt_ms(c.rtt_ms);
    let queue = queue_ms(c, priority);
    let prefill = prefill_ms(c, tokens, scale);
    let bucket = rtt
        + if flags.queue_time { 0.0 } else { queue }
        + if flags.input_processing_time {
            0.0
        } else {
            prefill
        };
    Ttft {
        queue_ms: queue,
        bucket_ms: worst_if_nan(bucket),
        comparator_ms: worst_if_nan(rtt + queue + prefill),
    }
}

/// The free-slot rule every algorithm's capacity gate uses: a cluster has
/// room for one more request when its running queries are below its engine
/// concurrency plus `max_queued` (docs/stargate.md 3.1, "Capacity"). A cluster that
/// reports no engine limit (`max_engine_concurrency` 0) is never filtered;
/// the addition saturates. Public for routers and simulators that must
/// decide, as the balancer does, whether a view change can admit a waiting
/// request.
pub fn has_capacity(c: &ClusterSnapshot, max_queued: u64) -> bool {
    c.max_engine_concurrency == 0
        || c.num_running_queries < c.max_engine_concurrency.saturating_add(max_queued)
}

/// Milliseconds of a duration as stargate reads one (docs/stargate.md
/// 2.3 item 3): `as_secs_f64() * 1000`, so 1344 ms reads 1343.9999999999998
/// and 1005 ms 1004.9999999999999. The bucket clock, RTTs and the
/// queue-time bounds all go through it.
pub fn duration_ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// A millisecond value stored as a `Duration` the way stargate stores
/// one (seconds as f64, rounded to the nearest nanosecond, saturating at
/// `Duration::MAX`). Negative and NaN inputs are `None`.
pub fn ms_to_duration(ms: f64) -> Option<Duration> {
    // Whole milliseconds below 2^32 (every RTT and queue bound in
    // practice) skip the float conversion, with the same result: ms / 1000
    // is then under 2^22 s, within half an ulp (2^-32 s, 0.23 ns) of the
    // exact quotient, so the nearest nanosecond is the whole millisecond.
    // The cast saturates and sends NaN to 0, which no NaN equals.
    let whole = ms as u32;
    if f64::from(whole) == ms {
        return Some(Duration::from_millis(u64::from(whole)));
    }
    if ms.is_nan() || ms < 0.0 {
        return None;
    }
    Some(Duration::try_from_secs_f64(ms / 1000.0).unwrap_or(Duration::MAX))
}

/// A cluster's RTT in ms as stargate's balancer reads it: the RTT is a
/// `Duration` there, read back through f64 (1005 ms is
/// 1004.9999999999999). NaN is the worst value; a negative RTT, which no
/// `Duration` holds, is kept as given.
pub fn rtt_ms(rtt: f64) -> f64 {
    match ms_to_duration(rtt) {
        Some(d) if d != Duration::MAX => duration_ms(d),
        _ => worst_if_nan(rtt),
    }
}

/// The queue-SLO limit in ms at `elapsed` (3.6.2): interpolated over a
/// non-zero request SLO, the ceiling otherwise. floor > ceil is kept.
/// Like stargate, the bounds and the limit are `Duration`s read back
/// through f64 (docs/stargate.md 2.3 item 3): a 1001 ms limit reads
/// 1000.9999999999999, so an estimate of exactly 1001 ms exceeds it.
pub fn queue_limit_ms(slo: QueueSlo, request_slo_ms: Option<u64>, elapsed: Duration) -> f64 {
    let floor = duration_ms(Duration::from_millis(slo.floor_ms));
    let ceil = duration_ms(Duration::from_millis(slo.ceil_ms));
    let phi = match request_slo_ms {
        Some(total) if total > 0 => (duration_ms(elapsed) / total as f64).clamp(0.0, 1.0),
        _ => 1.0,
    };
    let limit = floor + (ceil - floor) * phi;
    ms_to_duration(limit).map_or(limit, duration_ms)
}

/// A policy's queue-SLO limit ([`queue_limit_ms`]) with its value for a
/// request without a request SLO worked out once: that value depends on
/// the bounds alone, and most requests carry no request SLO, so their
/// decisions skip the conversions through `Duration`.
#[derive(Clone, Copy, Debug)]
pub struct QueueLimit {
    slo: QueueSlo,
    without_request_slo: f64,
}

impl QueueLimit {
    /// `None` without a queue SLO.
    pub fn new(slo: Option<QueueSlo>) -> Option<Self> {
        slo.map(|slo| QueueLimit {
            slo,
            without_request_slo: queue_limit_ms(slo, None, Duration::ZERO),
        })
    }

    /// [`queue_limit_ms`] for this request.
    pub fn at(&self, request_slo_ms: Option<u64>, elapsed: Duration) -> f64 {
        match request_slo_ms {
            Some(total) if total > 0 => queue_limit_ms(self.slo, request_slo_ms, elapsed),
            _ => self.without_request_slo,
        }
    }

    /// Whether [`QueueLimit::at`] answers the same at every elapsed from
    /// `elapsed` on: without a request SLO (the ceiling), with floor =
    /// ceiling (floor + 0 x phi is the floor), or once the request SLO is
    /// spent (phi is clamped to 1 from then on).
    pub fn fixed_from(&self, request_slo_ms: Option<u64>, elapsed: Duration) -> bool {
        match request_slo_ms {
            Some(total) if total > 0 => {
                self.slo.floor_ms == self.slo.ceil_ms || duration_ms(elapsed) >= total as f64
            }
            _ => true,
        }
    }
}

/// running / max(max_engine_concurrency, 1).
pub fn utilization(c: &ClusterSnapshot) -> f64 {
    c.num_running_queries as f64 / c.max_engine_concurrency.max(1) as f64
}

/// A standalone comparator score (3.2); `num-requests-queued` compares
/// integers, so it is kept apart from the f64 scores.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Score {
    /// A NaN-free score: ms for `ttft` and `queue-time`, seconds for
    /// `input-work-seconds`, a ratio for `utilization`.
    Real(f64),
    /// `num-requests-queued`'s queue size, compared as an integer.
    Count(u64),
}

impl Score {
    /// Orders two scores, lower (better) first: reals by `total_cmp`,
    /// counts as integers. Scores of one comparator are never mixed; if
    /// they were, a count would order before a real.
    pub fn compare(self, other: Score) -> Ordering {
        match (self, other) {
            (Score::Real(a), Score::Real(b)) => a.total_cmp(&b),
            (Score::Count(a), Score::Count(b)) => a.cmp(&b),
            // Never mixed within one comparator; keep an order anyway.
            (Score::Count(_), Score::Real(_)) => Ordering::Less,
            (Score::Real(_), Score::Count(_)) => Ordering::Greater,
        }
    }
}

/// The score of `comparator` for one cluster: `ttft` uses the unscaled
/// prefill. Lower is better.
pub fn score(comparator: Comparator, c: &ClusterSnapshot, request: &Request<'_>) -> Score {
    let tokens = request.input_tokens.unwrap_or(0);
    match comparator {
        Comparator::Ttft => Score::Real(
            ttft(c, tokens, request.priority, 1.0, IgnoreFlags::default()).comparator_ms,
        ),
        Comparator::QueueTime => Score::Real(queue_ms(c, request.priority)),
        Comparator::InputWorkSeconds => input_work_seconds(c, tokens),
        Comparator::Utilization => Score::Real(utilization(c)),
        Comparator::NumRequestsQueued => Score::Count(c.queue_size),
    }
}

pub(crate) fn input_work_seconds(c: &ClusterSnapshot, tokens: u64) -> Score {
    Score::Real(processing_delay_s(
        c.queued_input_size.saturating_add(tokens),
        tps(c),
    ))
}

/// PWW's least-queue-time comparator: queue estimate, then utilisation
/// (raw running counts when either side has an unknown engine limit).
pub fn least_queue_time(
    a: &ClusterSnapshot,
    a_queue_ms: f64,
    b: &ClusterSnapshot,
    b_queue_ms: f64,
) -> Ordering {
    a_queue_ms.total_cmp(&b_queue_ms).then_with(|| {
        if a.max_engine_concurrency == 0 || b.max_engine_concurrency == 0 {
            a.num_running_queries.cmp(&b.num_running_queries)
        } else {
            utilization(a).total_cmp(&utilization(b))
        }
    })
}

/// A wait of `ms` milliseconds as stargate makes one (docs/stargate.md
/// 2.3 items 1 and 4): `Duration::try_from_secs_f64(ms / 1000)`, rounded to
/// the nearest nanosecond (so a sliver below 0.5 ns is a zero wait), a
/// wait beyond 2^64 ns kept, saturating only at `Duration::MAX`. `None`
/// only for a negative or NaN input, which no caller produces.
pub fn wait_from_ms(ms: f64) -> Option<Duration> {
    ms_to_duration(ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// stargate's conversion, without the whole-millisecond shortcut.
    fn converted(ms: f64) -> Option<Duration> {
        (!ms.is_nan() && ms >= 0.0)
            .then(|| Duration::try_from_secs_f64(ms / 1000.0).unwrap_or(Duration::MAX))
    }

    #[test]
    fn the_worked_out_limit_is_the_limit() {
        for (floor_ms, ceil_ms) in [(500, 2000), (2000, 500), (1001, 1001), (0, 7)] {
            let slo = QueueSlo { floor_ms, ceil_ms };
            let limit = QueueLimit::new(Some(slo)).unwrap();
            for elapsed in [0, 1, 1344, 10_000].map(Duration::from_millis) {
                for request_slo in [None, Some(0), Some(1), Some(3000)] {
                    assert_eq!(
                        limit.at(request_slo, elapsed).to_bits(),
                        queue_limit_ms(slo, request_slo, elapsed).to_bits(),
                        "{slo:?} {request_slo:?} {elapsed:?}"
                    );
                }
            }
        }
        assert!(QueueLimit::new(None).is_none());
    }

    #[test]
    fn whole_milliseconds_convert_as_the_float_path_does() {
        let every_small = 0..1u64 << 20;
        let spread = (0..=u64::from(u32::MAX)).step_by(4099);
        let top = u64::from(u32::MAX) - 1000..=u64::from(u32::MAX) + 1000;
        for m in every_small.chain(spread).chain(top) {
            let ms = m as f64;
            assert_eq!(ms_to_duration(ms), converted(ms), "{m} ms");
        }
        for ms in [-0.0, 0.5, 1004.9999999999999, 1e300, f64::INFINITY, 2.5e-7] {
            assert_eq!(ms_to_duration(ms), converted(ms), "{ms} ms");
        }
        for ms in [-1.0, -0.5, f64::NAN, f64::NEG_INFINITY] {
            assert_eq!(ms_to_duration(ms), None, "{ms} ms");
        }
    }
}
