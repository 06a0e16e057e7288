//! Token-size laws (docs/simulator.md, "Size laws"): how a workload draws
//! an input, a message or a reply size. A scenario writes a size as
//! `[min, max]` (uniform over the whole numbers, the scenario's first
//! form, drawn exactly as before the laws existed) or as a distribution
//! object in stargate-bench's words (`constant`, `uniform`, `lognormal`),
//! which the stargate-bench reader shares, so a law copied between the two
//! formats draws the same way.
//!
//! stargate's lognormal: `mean` is the **median** (value = exp(ln mean +
//! sigma z), z standard normal) and `p99_cap` a hard clamp (so the mean of
//! the draws is about exp(sigma^2 / 2) x `mean`, less what the cap cuts).

use rand::Rng;
use serde::{Deserialize, Serialize};

/// A size distribution (stargate-bench's `distribution:` objects).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "distribution", rename_all = "snake_case")]
pub enum Dist {
    Constant {
        value: f64,
    },
    Uniform {
        min: f64,
        max: f64,
    },
    /// `mean` is the median: value = exp(ln mean + sigma z), clamped to
    /// [`min`, `p99_cap`].
    Lognormal {
        mean: f64,
        sigma: f64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        min: Option<f64>,
        p99_cap: f64,
    },
}

/// The law names of [`Dist`], as a scenario spells them.
pub const LAWS: [&str; 3] = ["constant", "uniform", "lognormal"];

/// Draws a value of `d` (at least 1, whole tokens).
pub fn draw(d: &Dist, rng: &mut impl Rng) -> u64 {
    let v = match *d {
        Dist::Constant { value } => value,
        Dist::Uniform { min, max } => {
            let (lo, hi) = (min.round() as u64, max.round() as u64);
            return rng.random_range(lo.min(hi)..=hi.max(lo)).max(1);
        }
        Dist::Lognormal {
            mean,
            sigma,
            min,
            p99_cap,
        } => {
            // `mean` is the median; `p99_cap` a hard clamp.
            let v = (mean.max(f64::MIN_POSITIVE).ln() + sigma * normal(rng)).exp();
            v.min(p99_cap).max(min.unwrap_or(1.0))
        }
    };
    (v.round() as u64).max(1)
}

/// A standard normal draw (Box-Muller).
pub fn normal(rng: &mut impl Rng) -> f64 {
    let u1: f64 = 1.0 - rng.random::<f64>(); // (0, 1]
    let u2: f64 = rng.random();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// A scenario's size: a whole number, `[min, max]` or a law.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Sizes {
    /// Always this size (no draw): the synthetic workload's
    /// `output_tokens` as it was first written.
    Fixed(u64),
    /// Uniform over `min..=max` (whole tokens; a draw only when max > min).
    Range([u64; 2]),
    Law(Dist),
}

impl From<[u64; 2]> for Sizes {
    fn from(range: [u64; 2]) -> Self {
        Sizes::Range(range)
    }
}

impl Sizes {
    /// One size. The range form draws exactly as it always has (nothing
    /// when min = max), so scenarios written with it keep their plans.
    pub fn draw(&self, rng: &mut impl Rng) -> u64 {
        match self {
            Sizes::Fixed(n) => *n,
            Sizes::Range([lo, hi]) if hi > lo => rng.random_range(*lo..=*hi),
            Sizes::Range([lo, _]) => *lo,
            Sizes::Law(d) => draw(d, rng),
        }
    }

    /// The least and the most a draw can give, in whole tokens (a law
    /// never gives less than 1; a lognormal never more than its cap).
    pub fn bounds(&self) -> [u64; 2] {
        let whole = |v: f64| (v.round() as u64).max(1);
        match *self {
            Sizes::Fixed(n) => [n, n],
            Sizes::Range(range) => range,
            Sizes::Law(Dist::Constant { value }) => [whole(value); 2],
            Sizes::Law(Dist::Uniform { min, max }) => {
                let (a, b) = (whole(min), whole(max));
                [a.min(b), a.max(b)]
            }
            Sizes::Law(Dist::Lognormal { min, p99_cap, .. }) => {
                let lo = whole(min.unwrap_or(1.0));
                [lo, lo.max(whole(p99_cap))]
            }
        }
    }

    /// What is wrong with a law's parameters: the key at fault (below the
    /// size's own key) and the message. The range form is checked by the
    /// caller, which knows its limits.
    pub fn problem(&self) -> Option<(&'static str, String)> {
        let Sizes::Law(d) = self else {
            return None;
        };
        let bad = |v: f64| !(v.is_finite() && v >= 0.0);
        match *d {
            Dist::Constant { value } if bad(value) => Some((
                "value",
                format!("`value` must be a number >= 0, got {value}"),
            )),
            Dist::Uniform { min, .. } if bad(min) => {
                Some(("min", format!("`min` must be a number >= 0, got {min}")))
            }
            Dist::Uniform { min, max } if bad(max) || max < min => Some((
                "max",
                format!("`max` must be a number >= `min` ({min}), got {max}"),
            )),
            Dist::Lognormal { mean, .. } if bad(mean) || mean <= 0.0 => Some((
                "mean",
                format!("`mean` (the median) must be a number > 0, got {mean}"),
            )),
            Dist::Lognormal { sigma, .. } if bad(sigma) => Some((
                "sigma",
                format!("`sigma` must be a number >= 0, got {sigma}"),
            )),
            Dist::Lognormal { p99_cap, .. } if bad(p99_cap) || p99_cap < 1.0 => Some((
                "p99_cap",
                format!("`p99_cap` must be a number >= 1, got {p99_cap}"),
            )),
            Dist::Lognormal {
                min: Some(min),
                p99_cap,
                ..
            } if bad(min) || min > p99_cap => Some((
                "min",
                format!("`min` must be a number from 0 to `p99_cap` ({p99_cap}), got {min}"),
            )),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_follow_the_clamps() {
        let ln = |min, cap| {
            Sizes::Law(Dist::Lognormal {
                mean: 100.0,
                sigma: 1.0,
                min,
                p99_cap: cap,
            })
        };
        assert_eq!(ln(None, 400.4).bounds(), [1, 400]);
        assert_eq!(ln(Some(50.0), 400.0).bounds(), [50, 400]);
        assert_eq!(Sizes::Range([3, 9]).bounds(), [3, 9]);
        assert_eq!(Sizes::Fixed(7).bounds(), [7, 7]);
        assert_eq!(Sizes::Fixed(7).problem(), None);
        let c = Sizes::Law(Dist::Constant { value: 0.2 });
        assert_eq!(c.bounds(), [1, 1]);
        assert_eq!(ln(Some(500.0), 400.0).problem().map(|p| p.0), Some("min"));
        assert_eq!(ln(None, 0.5).problem().map(|p| p.0), Some("p99_cap"));
        assert_eq!(ln(None, 400.0).problem(), None);
    }
}
