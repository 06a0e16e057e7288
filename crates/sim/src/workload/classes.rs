//! Size classes of the synthetic workload (docs/simulator.md, "Arrival
//! laws and key popularity"): stargate-bench's `mixed_size` small and
//! large requests, as classes of keys. A key's prompt is the same on every
//! request (that is what a cache reuses), so each key is drawn into one
//! class by the classes' shares, and its input and every reply of its
//! requests follow that class's sizes; a class that leaves a size out
//! takes the workload's.

use super::sizes::Sizes;
use super::weighted::{cdf, pick};
use rand::Rng;
use serde::{Deserialize, Serialize};

/// The most classes a workload may have.
pub const MAX_CLASSES: usize = 16;

/// One entry of `workload.classes`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SizeClass {
    /// The share of the keys in this class (the shares add up to 1).
    pub share: f64,
    /// The input size of its keys; absent: the workload's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<Sizes>,
    /// The reply size of its requests; absent: the workload's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<Sizes>,
}

/// Each key's sizes: its class's, or the workload's.
pub struct KeySizes<'a> {
    input: &'a Sizes,
    output: &'a Sizes,
    classes: &'a [SizeClass],
    /// The class of each key; empty without classes.
    class_of: Vec<u8>,
}

impl<'a> KeySizes<'a> {
    /// Draws each of `keys` keys' class (nothing without classes, so a
    /// workload without them draws as before).
    pub fn new(
        input: &'a Sizes,
        output: &'a Sizes,
        classes: &'a [SizeClass],
        keys: u32,
        rng: &mut impl Rng,
    ) -> Self {
        let class_of = if classes.is_empty() {
            Vec::new()
        } else {
            let shares = cdf(classes.iter().map(|c| c.share));
            (0..keys)
                .map(|_| pick(&shares, rng.random::<f64>()) as u8)
                .collect()
        };
        KeySizes {
            input,
            output,
            classes,
            class_of,
        }
    }

    fn class(&self, key: usize) -> Option<&'a SizeClass> {
        let c = *self.class_of.get(key)?;
        self.classes.get(usize::from(c))
    }

    /// Key `key`'s input size law.
    pub fn input(&self, key: usize) -> &'a Sizes {
        self.class(key)
            .and_then(|c| c.input_tokens.as_ref())
            .unwrap_or(self.input)
    }

    /// The reply size law of key `key`'s requests.
    pub fn output(&self, key: usize) -> &'a Sizes {
        self.class(key)
            .and_then(|c| c.output_tokens.as_ref())
            .unwrap_or(self.output)
    }
}

/// The least and most of `base` and every class's override of it.
pub fn bounds<'a>(base: &Sizes, overrides: impl Iterator<Item = Option<&'a Sizes>>) -> [u64; 2] {
    overrides
        .flatten()
        .map(Sizes::bounds)
        .fold(base.bounds(), |[lo, hi], [a, b]| [lo.min(a), hi.max(b)])
}
