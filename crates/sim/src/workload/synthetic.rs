//! The synthetic workloads (docs/simulator-model.md A8): keys with Zipf
//! popularity (or stargate-bench's hot set), Poisson arrivals (or another
//! law of [`arrival`](super::arrival)), and optionally a fixed chain of
//! prefix blocks per key for engine v2.

use super::arrival::{ArrivalSpec, Arrivals, HotSetSpec};
use super::classes::{self, KeySizes, SizeClass};
use super::sizes::Sizes;
use super::weighted::{cdf, pick};
use super::{BlockSpan, Plan, PlanShape, PlannedRequest, WorkloadSource};
use crate::kernel::time::from_secs;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// The scenario's `workload` object.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadSpec {
    pub keys: u32,
    pub zipf_s: f64,
    /// Each key's input size, drawn once per key: `[min, max]` uniform,
    /// or a size law ([`Sizes`]).
    pub input_tokens: Sizes,
    /// Each request's reply size: a whole number (no draw, as first
    /// written), `[min, max]` or a size law, drawn per request.
    pub output_tokens: Sizes,
    /// Gives each key a fixed chain of ceil(input / block_tokens) blocks of
    /// its own, for engine v2; absent = no blocks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_tokens: Option<u64>,
    /// When requests arrive; absent = Poisson at the rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arrival: Option<ArrivalSpec>,
    /// stargate-bench's hot-set popularity instead of the Zipf law
    /// (`zipf_s` must then be 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hot_set: Option<HotSetSpec>,
    /// Size classes of keys (stargate-bench's small and large requests);
    /// empty: every key has the workload's sizes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub classes: Vec<SizeClass>,
}

impl WorkloadSpec {
    /// The least and most input a key can get, over every class.
    pub fn input_bounds(&self) -> [u64; 2] {
        classes::bounds(
            &self.input_tokens,
            self.classes.iter().map(|c| c.input_tokens.as_ref()),
        )
    }

    /// The least and most reply a request can get, over every class.
    pub fn output_bounds(&self) -> [u64; 2] {
        classes::bounds(
            &self.output_tokens,
            self.classes.iter().map(|c| c.output_tokens.as_ref()),
        )
    }
}

impl WorkloadSpec {
    /// Workload R (reproduction).
    pub fn r() -> Self {
        WorkloadSpec {
            keys: 768,
            zipf_s: 0.0,
            input_tokens: Sizes::Range([6_661, 6_661]),
            output_tokens: Sizes::Fixed(256),
            block_tokens: None,
            arrival: None,
            hot_set: None,
            classes: Vec::new(),
        }
    }
}

impl WorkloadSource for WorkloadSpec {
    fn plan(&self, shape: &PlanShape<'_>, rng: &mut ChaCha8Rng) -> Plan {
        plan(self, shape, rng)
    }
}

fn uniform(rng: &mut impl Rng, [lo, hi]: [f64; 2]) -> f64 {
    lo + (hi - lo) * rng.random::<f64>()
}

/// Draws the whole plan.
pub fn plan(spec: &WorkloadSpec, shape: &PlanShape<'_>, rng: &mut impl Rng) -> Plan {
    let keys = spec.keys.max(1);
    let laws = KeySizes::new(
        &spec.input_tokens,
        &spec.output_tokens,
        &spec.classes,
        keys,
        rng,
    );
    let in_lo = spec.input_bounds()[0];
    let sizes: Vec<u64> = (0..keys as usize)
        .map(|k| laws.input(k).draw(rng))
        .collect();
    let (chains, blocks) = key_chains(&sizes, spec.block_tokens);
    let key_cdf = match &spec.hot_set {
        Some(h) => cdf(h.weights(keys)),
        None => cdf((1..=keys).map(|i| 1.0 / f64::from(i).powf(spec.zipf_s))),
    };
    let router_cdf = cdf(shape.router_weights.iter().copied());
    let mut requests = Vec::with_capacity((shape.rate_rps * shape.horizon_s * 1.05) as usize);
    let mut arrivals = Arrivals::new(spec.arrival.as_ref(), shape.rate_rps, shape.horizon_s);
    if !router_cdf.is_empty() {
        while let Some(t) = arrivals.next(rng) {
            let key = pick(&key_cdf, rng.random::<f64>());
            let router = pick(&router_cdf, rng.random::<f64>());
            let jitter_ms = uniform(rng, [0.0, shape.ttft_jitter_ms]);
            let decode_tps = uniform(rng, shape.decode_tps);
            // Last, and no draw for a fixed size: a plan written before
            // reply sizes could vary draws as it did.
            let output = laws.output(key).draw(rng);
            requests.push(PlannedRequest {
                arrival: from_secs(t),
                key: key as u32,
                input: sizes.get(key).copied().unwrap_or(in_lo),
                output,
                router: router as u32,
                jitter_ms,
                decode_tps,
                blocks: chains.get(key).copied().unwrap_or_default(),
            });
        }
    }
    Plan {
        requests,
        key_names: (1..=keys)
            .map(|i| format!("k{i}"))
            .collect::<Vec<_>>()
            .into(),
        block_ids: blocks.len() as u32,
        blocks: blocks.into(),
        block_tokens: spec.block_tokens.unwrap_or(1),
        end: from_secs(shape.horizon_s),
        conversations: None,
    }
}

/// Key i's chain is blocks [Σ_{j<i} n_j, Σ_{j<=i} n_j) with n_i =
/// ceil(input_i / block_tokens): no two keys share a block.
fn key_chains(sizes: &[u64], block_tokens: Option<u64>) -> (Vec<BlockSpan>, Vec<u32>) {
    let Some(bt) = block_tokens.filter(|&b| b > 0) else {
        return (Vec::new(), Vec::new());
    };
    let mut spans = Vec::with_capacity(sizes.len());
    let mut next = 0u32;
    for &size in sizes {
        let len = u32::try_from(size.div_ceil(bt)).unwrap_or(u32::MAX);
        spans.push(BlockSpan { start: next, len });
        next = next.saturating_add(len);
    }
    (spans, (0..next).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::rng::{stream, Stream};

    fn shape(weights: &[f64]) -> PlanShape<'_> {
        PlanShape {
            rate_rps: 100.0,
            horizon_s: 100.0,
            router_weights: weights,
            ttft_jitter_ms: 20.0,
            decode_tps: [128.0, 200.0],
        }
    }

    #[test]
    fn plan_is_reproducible_and_poisson() {
        let w = [1.0, 1.0, 1.0];
        let a = plan(
            &WorkloadSpec::r(),
            &shape(&w),
            &mut stream(1, Stream::Workload),
        );
        let b = plan(
            &WorkloadSpec::r(),
            &shape(&w),
            &mut stream(1, Stream::Workload),
        );
        assert_eq!(a.requests, b.requests);
        let n = a.requests.len() as f64;
        assert!((n - 10_000.0).abs() < 400.0, "{n}");
        assert!(a.requests.windows(2).all(|p| p[0].arrival <= p[1].arrival));
        assert!(a.requests.iter().all(|r| r.input == 6_661 && r.key < 768));
        assert!(a
            .requests
            .iter()
            .all(|r| (0.0..=20.0).contains(&r.jitter_ms)));
        assert!(a
            .requests
            .iter()
            .all(|r| (128.0..=200.0).contains(&r.decode_tps)));
        let per_router: Vec<usize> = (0..3)
            .map(|i| a.requests.iter().filter(|r| r.router == i).count())
            .collect();
        assert!(per_router
            .iter()
            .all(|&c| (c as f64 - n / 3.0).abs() < 300.0));
    }

    #[test]
    fn zipf_popularity_matches_the_spec_shares() {
        // Z2: K = 4 096, s = 0.8: the top key takes 4.6 % of traffic.
        let z2 = cdf((1..=4_096u32).map(|i| 1.0 / f64::from(i).powf(0.8)));
        let total = z2[4_095];
        assert!((z2[0] / total - 0.046).abs() < 0.001);
        assert!((z2[1_199] / total - 0.738).abs() < 0.001);
        // Z1: K = 1 536, s = 0.6: top key 2.2 %, top 1 200 keys 90.2 %.
        let z1 = cdf((1..=1_536u32).map(|i| 1.0 / f64::from(i).powf(0.6)));
        let total = z1[1_535];
        assert!((z1[0] / total - 0.022).abs() < 0.001);
        assert!((z1[1_199] / total - 0.902).abs() < 0.001);
    }
}
