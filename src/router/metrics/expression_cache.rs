//! Expression-cache metrics (docs/stargate.md 5.6): a counter per
//! (algorithm, hit|build|rebuild) and an entries gauge.

use crate::ir::Algorithm;
use crate::router::metrics::counters::CounterSnapshot;
use crate::sync::{stripe_of_this_thread, STRIPES};
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};

/// The counter's name as a stargate router exports it.
pub const EXPRESSIONS_TOTAL: &str = "stargate_routing_expressions_total";
/// The gauge's name as a stargate router exports it.
pub const CACHE_ENTRIES: &str = "stargate_routing_expression_cache_entries";

/// How a value with parameters was resolved by the expression cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CacheOutcome {
    /// Same bytes as the target's current or previous expression.
    Hit,
    /// Compiled for a target without an entry.
    Build,
    /// Compiled for a target whose entry held other expressions.
    Rebuild,
}

impl CacheOutcome {
    /// Every outcome: hit, build, rebuild.
    pub const ALL: [CacheOutcome; 3] = [
        CacheOutcome::Hit,
        CacheOutcome::Build,
        CacheOutcome::Rebuild,
    ];

    /// The `cache` label value.
    pub const fn as_str(self) -> &'static str {
        match self {
            CacheOutcome::Hit => "hit",
            CacheOutcome::Build => "build",
            CacheOutcome::Rebuild => "rebuild",
        }
    }

    const fn index(self) -> usize {
        match self {
            CacheOutcome::Hit => 0,
            CacheOutcome::Build => 1,
            CacheOutcome::Rebuild => 2,
        }
    }
}

/// The algorithm's position in `Algorithm::ALL`, which lists the variants
/// in declaration order (checked by the test below).
fn algorithm_index(algorithm: Algorithm) -> usize {
    algorithm as usize
}

/// One stripe of counters, on its own cache lines. Each thread adds to its
/// own (the stripe its locks read, crate::sync), so request threads do not
/// contend on one cache line; a scrape sums them.
#[derive(Debug, Default)]
#[repr(align(64))]
struct Stripe([[AtomicU64; 3]; 6]);

#[derive(Debug, Default)]
pub(crate) struct Counters {
    stripes: [Stripe; STRIPES],
}

impl Counters {
    pub(crate) fn record(&self, algorithm: Algorithm, outcome: CacheOutcome) {
        let stripe = &self.stripes[stripe_of_this_thread()];
        stripe.0[algorithm_index(algorithm)][outcome.index()].fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn get(&self, algorithm: Algorithm, outcome: CacheOutcome) -> u64 {
        self.stripes
            .iter()
            .map(|s| s.0[algorithm_index(algorithm)][outcome.index()].load(Ordering::Relaxed))
            .fold(0, u64::wrapping_add)
    }
}

/// A scrape of the router's metrics: the expression cache's (stargate's
/// two series) and the router's own counters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Metrics {
    /// Non-zero counters, in algorithm then outcome order.
    pub expressions: Vec<(Algorithm, CacheOutcome, u64)>,
    /// Targets with a cache entry after the scrape's maintenance.
    pub entries: u64,
    /// Targets holding state after the scrape's maintenance.
    pub targets: u64,
    /// Targets, routings, waits, rejections and health events.
    pub counters: CounterSnapshot,
}

impl Metrics {
    pub(crate) fn collect(
        counters: &Counters,
        entries: u64,
        targets: u64,
        events: CounterSnapshot,
    ) -> Self {
        let expressions = Algorithm::ALL
            .iter()
            .flat_map(|&a| CacheOutcome::ALL.iter().map(move |&o| (a, o)))
            .map(|(a, o)| (a, o, counters.get(a, o)))
            .filter(|(_, _, n)| *n > 0)
            .collect();
        Metrics {
            expressions,
            entries,
            targets,
            counters: events,
        }
    }

    /// The count of one (algorithm, outcome) pair.
    pub fn count(&self, algorithm: Algorithm, outcome: CacheOutcome) -> u64 {
        self.expressions
            .iter()
            .find(|(a, o, _)| *a == algorithm && *o == outcome)
            .map_or(0, |(_, _, n)| *n)
    }

    /// Prometheus text exposition.
    pub fn to_prometheus(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "# TYPE {EXPRESSIONS_TOTAL} counter");
        for (algorithm, outcome, n) in &self.expressions {
            let _ = writeln!(
                out,
                "{EXPRESSIONS_TOTAL}{{algorithm=\"{algorithm}\",cache=\"{}\"}} {n}",
                outcome.as_str()
            );
        }
        let _ = writeln!(out, "# TYPE {CACHE_ENTRIES} gauge");
        let _ = writeln!(out, "{CACHE_ENTRIES} {}", self.entries);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn algorithm_index_is_the_position_in_all() {
        for (i, a) in Algorithm::ALL.into_iter().enumerate() {
            assert_eq!(algorithm_index(a), i, "{a:?}");
        }
    }
}
