//! The search space of `routex sim tune`: the five pulsar-wait-and-widen
//! parameters, seeded Latin-hypercube sampling over them, and the rewrite of
//! the template policy's expression (on its syntax tree) for one setting.

use rand::seq::SliceRandom;
use rand::Rng;
use routex::diag::Span;
use routex::syntax::ast::{Arg, Expr, Spanned, Value};
use std::collections::BTreeSet;

/// One point of the space: the values a trial routes with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Setting {
    /// X, `cache_affinity_wait_ms`.
    pub wait_ms: u64,
    /// S, `band_widen_interval_ms`.
    pub interval_ms: u64,
    pub max_queued: u64,
    pub fallback_max_queued: u64,
    /// k, `cache_affinity_backend_selection_count` (the affinity group).
    pub group: u64,
}

impl Setting {
    /// The expression arguments, in the order they are written.
    pub fn args(&self) -> [(&'static str, u64); 5] {
        [
            ("max_queued", self.max_queued),
            ("cache_affinity_wait_ms", self.wait_ms),
            ("band_widen_interval_ms", self.interval_ms),
            ("fallback_max_queued", self.fallback_max_queued),
            ("cache_affinity_backend_selection_count", self.group),
        ]
    }
}

/// An inclusive integer range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Range {
    pub lo: u64,
    pub hi: u64,
}

impl Range {
    pub const fn new(lo: u64, hi: u64) -> Self {
        Range { lo, hi }
    }

    /// u in [0, 1) to a value on a grid of `step` from `lo`, uniformly.
    fn linear(self, u: f64, step: u64) -> u64 {
        let step = step.max(1);
        let cells = (self.hi.saturating_sub(self.lo)) / step + 1;
        let i = ((u * cells as f64) as u64).min(cells - 1);
        self.lo.saturating_add(i.saturating_mul(step))
    }

    /// u in [0, 1) to an integer, uniformly in log(value) (lo >= 1).
    fn logarithmic(self, u: f64) -> u64 {
        let (lo, hi) = (
            self.lo.max(1) as f64,
            self.hi.max(self.lo.max(1)) as f64 + 1.0,
        );
        let v = (lo.ln() + u * (hi.ln() - lo.ln())).exp().floor() as u64;
        v.clamp(self.lo.max(1), self.hi.max(self.lo.max(1)))
    }
}

/// The ranges searched. The defaults bracket the deployment's suggested
/// values (300 / 300 / 0, `max_queued` 4, group 1) on every side.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Space {
    pub wait_ms: Range,
    pub interval_ms: Range,
    /// Grid of both times (ms).
    pub time_step_ms: u64,
    /// Sampled uniformly in log scale.
    pub max_queued: Range,
    /// Clamped to at most the trial's `max_queued`.
    pub fallback_max_queued: Range,
    pub group: Range,
}

impl Default for Space {
    fn default() -> Self {
        Space {
            wait_ms: Range::new(0, 2_000),
            interval_ms: Range::new(0, 2_000),
            time_step_ms: 25,
            max_queued: Range::new(1, 32),
            fallback_max_queued: Range::new(0, 4),
            group: Range::new(1, 4),
        }
    }
}

impl Space {
    /// The setting at the point `u` of the unit cube.
    pub fn at(&self, u: [f64; 5]) -> Setting {
        let max_queued = self.max_queued.logarithmic(u[2]);
        Setting {
            wait_ms: self.wait_ms.linear(u[0], self.time_step_ms),
            interval_ms: self.interval_ms.linear(u[1], self.time_step_ms),
            max_queued,
            fallback_max_queued: self.fallback_max_queued.linear(u[3], 1).min(max_queued),
            group: self.group.linear(u[4], 1),
        }
    }

    /// `n` Latin-hypercube points: along every axis each of the n equal
    /// strata holds exactly one point (jittered inside it), the strata
    /// paired across axes by independent shuffles. Duplicates left by the
    /// integer grid are dropped, so fewer than `n` may come back.
    pub fn latin_hypercube(&self, n: usize, rng: &mut impl Rng) -> Vec<Setting> {
        let mut points = vec![[0.0; 5]; n];
        for axis in 0..5 {
            let mut strata: Vec<usize> = (0..n).collect();
            strata.shuffle(rng);
            for (point, s) in points.iter_mut().zip(strata) {
                point[axis] = (s as f64 + rng.random::<f64>()) / n as f64;
            }
        }
        let mut seen = BTreeSet::new();
        points
            .into_iter()
            .map(|u| self.at(u))
            .filter(|s| seen.insert(*s))
            .collect()
    }
}

/// The tuned values a template expression already carries; absent ones
/// take the reference defaults (`band_widen_interval_ms` defaults to X,
/// group 1, `fallback_max_queued` 0, `max_queued` 4 as in docs/stargate.md 3.8.3).
pub fn template_setting(s: &routex::ir::PulsarWaitAndWidenSettings) -> Setting {
    Setting {
        wait_ms: s.cache_affinity_wait_ms,
        interval_ms: s.band_widen_interval_ms,
        max_queued: s.bucket.max_queued,
        fallback_max_queued: s.fallback_max_queued,
        group: s.cache_affinity_backend_selection_count.max(1),
    }
}

/// The template with the five tuned arguments set to `setting`: existing
/// arguments keep their place, missing ones are appended; every other
/// argument is kept as written.
pub fn rewrite(template: &Expr, setting: &Setting) -> Expr {
    let mut expr = template.clone();
    let none = Span::new(0, 0);
    for (name, value) in setting.args() {
        let value = Spanned::new(Value::Integer(value.to_string()), none);
        match expr.args.iter_mut().find(|a| a.name.node == name) {
            Some(arg) => arg.value = value,
            None => expr.args.push(Arg {
                name: Spanned::new(name.to_string(), none),
                value,
                span: none,
            }),
        }
    }
    expr
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::rng::{stream, Stream};

    #[test]
    fn unit_cube_corners_map_to_the_range_ends() {
        let space = Space::default();
        let low = space.at([0.0; 5]);
        assert_eq!(
            low,
            Setting {
                wait_ms: 0,
                interval_ms: 0,
                max_queued: 1,
                fallback_max_queued: 0,
                group: 1
            }
        );
        let high = space.at([0.999_999; 5]);
        assert_eq!(
            high,
            Setting {
                wait_ms: 2_000,
                interval_ms: 2_000,
                max_queued: 32,
                fallback_max_queued: 4,
                group: 4
            }
        );
        // The middle of the log axis: sqrt(1 x 33) = 5.7 -> 5.
        assert_eq!(space.at([0.5; 5]).max_queued, 5);
        // 81 grid cells of 25 ms: u = 0.5 is cell 40 = 1 000 ms.
        assert_eq!(space.at([0.5; 5]).wait_ms, 1_000);
    }

    #[test]
    fn fallback_never_exceeds_max_queued() {
        let space = Space::default();
        let s = space.at([0.0, 0.0, 0.0, 0.99, 0.0]);
        assert_eq!((s.max_queued, s.fallback_max_queued), (1, 1));
    }

    #[test]
    fn latin_hypercube_fills_every_stratum_once() {
        let space = Space {
            group: Range::new(1, 10),
            fallback_max_queued: Range::new(0, 9),
            max_queued: Range::new(10, 10),
            ..Space::default()
        };
        let mut rng = stream(1, Stream::Workload);
        let points = space.latin_hypercube(10, &mut rng);
        assert_eq!(points.len(), 10);
        // 10 strata over 10 values: each value exactly once per axis.
        let mut groups: Vec<u64> = points.iter().map(|p| p.group).collect();
        groups.sort_unstable();
        assert_eq!(groups, (1..=10).collect::<Vec<_>>());
        let mut fallbacks: Vec<u64> = points.iter().map(|p| p.fallback_max_queued).collect();
        fallbacks.sort_unstable();
        assert_eq!(fallbacks, (0..10).collect::<Vec<_>>());
        // Same seed, same points.
        let again = space.latin_hypercube(10, &mut stream(1, Stream::Workload));
        assert_eq!(points, again);
    }

    #[test]
    fn rewrite_replaces_and_appends_on_the_tree() {
        let text = r#"pulsar-wait-and-widen(max_queued=4, cache_affinity_wait_ms=300, seed="s")"#;
        let expr = routex::syntax::parse_call(text).unwrap();
        let s = Setting {
            wait_ms: 125,
            interval_ms: 50,
            max_queued: 8,
            fallback_max_queued: 1,
            group: 2,
        };
        assert_eq!(
            routex::syntax::print_call(&rewrite(&expr, &s)),
            "pulsar-wait-and-widen(max_queued=8, cache_affinity_wait_ms=125, seed=\"s\", \
             band_widen_interval_ms=50, fallback_max_queued=1, \
             cache_affinity_backend_selection_count=2)"
        );
    }
}
