//! Virtual time: integer microseconds from 0 (docs/simulator-model.md A2).

use std::time::Duration;

/// Microseconds of virtual time.
pub type Micros = u64;

pub const US_PER_MS: Micros = 1_000;
pub const US_PER_S: Micros = 1_000_000;

/// Nearest microsecond of a non-negative number of milliseconds; negative
/// and NaN give 0, overflow saturates.
pub fn from_ms(ms: f64) -> Micros {
    from_us_f64(ms * 1_000.0)
}

/// Nearest microsecond of a number of seconds.
pub fn from_secs(s: f64) -> Micros {
    from_us_f64(s * 1_000_000.0)
}

fn from_us_f64(us: f64) -> Micros {
    if us.is_nan() || us <= 0.0 {
        0
    } else {
        // `as` saturates at u64::MAX for huge values and +inf.
        us.round() as Micros
    }
}

/// One-way network delay of a round trip: round(RTT_ms x 500) us.
pub fn one_way(rtt_ms: f64) -> Micros {
    from_us_f64(rtt_ms * 500.0)
}

/// A balancer `Wait(d)` in microseconds, rounded **up** so that a non-zero
/// wait never reads as already expired.
pub fn wait_up(d: Duration) -> Micros {
    let nanos = d.as_nanos();
    let us = nanos.div_ceil(1_000);
    Micros::try_from(us).unwrap_or(Micros::MAX)
}

/// The elapsed value handed to the core.
pub fn to_duration(us: Micros) -> Duration {
    Duration::from_micros(us)
}

/// Milliseconds as f64, for metrics.
pub fn to_ms(us: Micros) -> f64 {
    us as f64 / 1_000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions_round_as_specified() {
        assert_eq!(one_way(1.0), 500);
        assert_eq!(one_way(65.0), 32_500);
        assert_eq!(from_ms(0.0004), 0);
        assert_eq!(from_ms(0.0005), 1);
        assert_eq!(from_ms(f64::NAN), 0);
        assert_eq!(from_ms(-3.0), 0);
        assert_eq!(from_secs(f64::INFINITY), Micros::MAX);
        assert_eq!(wait_up(Duration::from_nanos(1)), 1);
        assert_eq!(wait_up(Duration::from_nanos(1_000)), 1);
        assert_eq!(wait_up(Duration::from_nanos(1_001)), 2);
        assert_eq!(wait_up(Duration::ZERO), 0);
        assert_eq!(wait_up(Duration::MAX), Micros::MAX);
    }
}
