//! A stargate-bench file's requests (docs/simulator.md, "stargate-bench
//! files"): drawn from its `traffic_pattern` and `seed` as stargate-bench's
//! `materialize` does (same laws, routex's own random stream), or replayed
//! from a manifest stargate-bench wrote, so that both tools run the very
//! same requests.

use super::format::{Arrival, BenchFile, Traffic};
use crate::kernel::rng::{stream, Stream};
use crate::kernel::time::{from_ms, from_secs, Micros};
use crate::workload::{Plan, PlanShape, PlannedRequest, WorkloadSource};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use std::sync::Arc;

/// One request of the plan, before it is placed on a router.
#[derive(Clone, Debug, PartialEq)]
pub struct BenchRequest {
    pub offset: Micros,
    /// The `x-cache-affinity-key`, if any.
    pub key: Option<String>,
    pub input: u64,
    pub output: u64,
}

/// Draws a value of a size law (the scenario's laws draw the same way).
pub use crate::workload::sizes::draw;

/// Exponential inter-arrival at `rps`.
fn exponential(rng: &mut ChaCha8Rng, rps: f64) -> Micros {
    let u: f64 = 1.0 - rng.random::<f64>();
    from_secs(-u.ln() / rps.max(1e-9))
}

/// The gap before request `i` (the first request is sent at 0).
fn gap(t: &Traffic, i: u32, rng: &mut ChaCha8Rng) -> Micros {
    match t.kind.as_str() {
        "bursty" => {
            let period = t.burst_period_requests.unwrap_or(1).max(1);
            // The first period is the burst (as stargate-bench's manifests
            // show), then quiet, and so on.
            let rps = if (i / period) % 2 == 0 {
                t.burst_rps.unwrap_or(1.0)
            } else {
                t.quiet_rps.unwrap_or(1.0)
            };
            exponential(rng, rps)
        }
        "stair_step" => {
            let step = t.step_requests.unwrap_or(1).max(1);
            let rps = t.start_rps.unwrap_or(1.0) + t.step_rps.unwrap_or(0.0) * f64::from(i / step);
            exponential(rng, rps)
        }
        _ => match t.arrival {
            Some(Arrival::Poisson { target_rps }) => exponential(rng, target_rps),
            Some(Arrival::Constant { interval_ms }) => from_ms(interval_ms),
            None => 0,
        },
    }
}

/// The file's requests, drawn from its seed.
pub fn materialize(f: &BenchFile) -> Vec<BenchRequest> {
    let t = &f.traffic_pattern;
    let mut rng = stream(f.seed, Stream::Workload);
    let keys = t.cache_affinity_keys;
    let hot =
        ((f64::from(keys) * t.hotset_fraction.unwrap_or(0.0)).round() as u32).clamp(1, keys.max(1));
    let mut sizes: Vec<u64> = vec![0; keys as usize];
    let mut at = 0;
    let mut out = Vec::with_capacity(f.request_count as usize);
    for i in 0..f.request_count {
        if i > 0 {
            at += gap(t, i, &mut rng);
        }
        let key = match (keys, t.kind.as_str()) {
            (0, _) => None,
            (_, "zipf_hotset") => {
                let share = t.hotset_share.unwrap_or(0.0);
                Some(if rng.random::<f64>() < share {
                    rng.random_range(0..hot)
                } else {
                    rng.random_range(0..keys)
                })
            }
            _ => Some(rng.random_range(0..keys)),
        };
        let (input, output) = match t.kind.as_str() {
            "prefix_reuse" => {
                let slot = key.map(|k| k as usize);
                let previous = slot.and_then(|k| sizes.get(k).copied()).unwrap_or(0);
                let input = match (&t.initial_input_tokens, &t.incremental_input_tokens) {
                    (Some(first), _) if previous == 0 => draw(first, &mut rng),
                    (_, Some(more)) if previous > 0 => previous + draw(more, &mut rng),
                    _ => previous.max(1),
                };
                if let Some(s) = slot.and_then(|k| sizes.get_mut(k)) {
                    *s = input;
                }
                let output = t.output_tokens.as_ref().map_or(1, |d| draw(d, &mut rng));
                (input, output)
            }
            "mixed_size" => {
                let small = rng.random::<f64>() < t.small_share.unwrap_or(0.5);
                let class = if small { &t.small } else { &t.large };
                match class {
                    Some(c) => (
                        draw(&c.input_tokens, &mut rng),
                        draw(&c.output_tokens, &mut rng),
                    ),
                    None => (1, 1),
                }
            }
            _ => (
                t.input_tokens.as_ref().map_or(1, |d| draw(d, &mut rng)),
                t.output_tokens.as_ref().map_or(1, |d| draw(d, &mut rng)),
            ),
        };
        out.push(BenchRequest {
            offset: at,
            key: key.map(|k| format!("cak-{k:04}")),
            input,
            output,
        });
    }
    out
}

/// One request of a stargate-bench manifest (its other fields are read and
/// ignored).
#[derive(Clone, Debug, serde::Deserialize)]
struct ManifestRequest {
    scheduled_offset_ms: f64,
    #[serde(default)]
    cache_affinity_key: Option<String>,
    input_tokens: u64,
    output_tokens: u64,
}

#[derive(Clone, Debug, serde::Deserialize)]
struct Manifest {
    requests: Vec<ManifestRequest>,
}

/// The requests of a manifest (`inspect-manifest`'s JSON).
pub fn read_manifest(text: &str) -> Result<Vec<BenchRequest>, String> {
    let m: Manifest =
        serde_json::from_str(text).map_err(|e| routex::json_words::user_message(&e.to_string()))?;
    Ok(m.requests
        .into_iter()
        .map(|r| BenchRequest {
            offset: from_ms(r.scheduled_offset_ms.max(0.0)),
            key: r.cache_affinity_key,
            input: r.input_tokens.max(1),
            output: r.output_tokens.max(1),
        })
        .collect())
}

/// The requests as the simulator's workload: keys indexed in order of first
/// use, routers taken in turn (stargate-bench's pool of stargates).
#[derive(Clone, Debug)]
pub struct BenchWorkload {
    plan: Plan,
}

impl BenchWorkload {
    pub fn new(requests: &[BenchRequest], routers: u32) -> Self {
        let mut names: Vec<String> = Vec::new();
        let mut index = std::collections::BTreeMap::new();
        let planned = requests
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let key = match &r.key {
                    Some(k) => *index.entry(k.clone()).or_insert_with(|| {
                        names.push(k.clone());
                        names.len() as u32 - 1
                    }),
                    None => crate::world::engine::NO_KEY,
                };
                PlannedRequest {
                    arrival: r.offset,
                    key,
                    input: r.input,
                    output: r.output,
                    router: (i as u32) % routers.max(1),
                    jitter_ms: 0.0,
                    decode_tps: 1.0,
                    blocks: Default::default(),
                }
            })
            .collect::<Vec<_>>();
        let end = planned.last().map_or(0, |p| p.arrival) + 1;
        BenchWorkload {
            plan: Plan {
                requests: planned,
                key_names: names.into(),
                blocks: Arc::from(Vec::new()),
                block_ids: 0,
                block_tokens: 1,
                end,
                conversations: None,
            },
        }
    }
}

impl WorkloadSource for BenchWorkload {
    fn plan(&self, _shape: &PlanShape<'_>, _rng: &mut ChaCha8Rng) -> Plan {
        self.plan.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::super::format::Dist;
    use super::*;

    fn moments(d: &Dist, n: usize) -> (f64, f64, Vec<u64>) {
        let mut rng = stream(3, Stream::Workload);
        let mut v: Vec<u64> = (0..n).map(|_| draw(d, &mut rng)).collect();
        let mean = v.iter().sum::<u64>() as f64 / n as f64;
        v.sort_unstable();
        let median = v[n / 2] as f64;
        (mean, median, v)
    }

    #[test]
    fn distributions_have_their_moments() {
        let (mean, _, v) = moments(
            &Dist::Uniform {
                min: 100.0,
                max: 300.0,
            },
            20_000,
        );
        assert!((mean / 200.0 - 1.0).abs() < 0.01, "{mean}");
        assert_eq!((v[0], *v.last().unwrap_or(&0)), (100, 300));
        // Lognormal: `mean` is the median; the mean is exp(sigma^2 / 2)
        // higher; p99_cap clamps.
        let d = Dist::Lognormal {
            mean: 1_000.0,
            sigma: 0.5,
            min: None,
            p99_cap: 1_000_000.0,
        };
        let (mean, median, _) = moments(&d, 40_000);
        assert!((median / 1_000.0 - 1.0).abs() < 0.02, "{median}");
        let want = 1_000.0 * (0.125f64).exp();
        assert!((mean / want - 1.0).abs() < 0.02, "{mean} vs {want}");
        let capped = Dist::Lognormal {
            mean: 1_000.0,
            sigma: 0.5,
            min: Some(900.0),
            p99_cap: 1_500.0,
        };
        let (_, _, v) = moments(&capped, 5_000);
        assert_eq!((v[0], *v.last().unwrap_or(&0)), (900, 1_500));
        let (mean, _, _) = moments(&Dist::Constant { value: 64.0 }, 10);
        assert_eq!(mean, 64.0);
    }
}
