//! A trace as a workload source: time compressed to the offered rate and
//! the trace repeated until the horizon, each repetition with the same or
//! fresh block ids and keys ([`super::Repeat`]).

use super::*;

impl WorkloadSource for Trace {
    /// Compresses time by rate / native rate and repeats the trace until
    /// the horizon: repetition k starts k periods (span plus one mean gap)
    /// after the first, with fresh block ids and keys unless the trace
    /// says `"repeat": "same"`. Per request, in replay order, the
    /// `WORKLOAD` stream draws the entry router, the TTFT jitter and the
    /// decode rate, so every speed-up and policy sees the same draws.
    fn plan(&self, shape: &PlanShape<'_>, rng: &mut ChaCha8Rng) -> Plan {
        let scale = if shape.rate_rps > 0.0 {
            self.native_rps() / shape.rate_rps
        } else {
            f64::INFINITY
        };
        let horizon = from_secs(shape.horizon_s);
        let mut total = 0.0;
        let router_cdf: Vec<f64> = shape
            .router_weights
            .iter()
            .map(|w| {
                total += w.max(0.0);
                total
            })
            .collect();
        let replay = self.replay(shape.rate_rps, shape.horizon_s);
        let reps = replay.repetitions.max(1);
        let fresh = self.repeat == Repeat::Fresh && reps > 1;
        let mut requests = Vec::with_capacity(replay.requests.min(50_000_000) as usize);
        let keys = self.key_names.len() as u32;
        let period = self.period_us() * scale;
        let mut used = 0u64;
        'reps: for k in 0..reps {
            if router_cdf.is_empty() || !scale.is_finite() {
                break;
            }
            let offset = k as f64 * period;
            let (block_shift, key_shift) = if fresh {
                ((k as usize * self.blocks.len()) as u32, k as u32 * keys)
            } else {
                (0, 0)
            };
            for r in &self.requests {
                let arrival = (offset + (r.at_us as f64 * scale).round()).round() as Micros;
                if arrival >= horizon {
                    break 'reps;
                }
                let u: f64 = rng.random();
                let router = router_cdf
                    .partition_point(|&c| c <= u * total)
                    .min(router_cdf.len() - 1);
                let jitter_ms = shape.ttft_jitter_ms * rng.random::<f64>();
                let [lo, hi] = shape.decode_tps;
                let decode_tps = lo + (hi - lo) * rng.random::<f64>();
                used = k + 1;
                requests.push(PlannedRequest {
                    arrival,
                    key: if r.key == u32::MAX {
                        r.key
                    } else {
                        r.key + key_shift
                    },
                    input: r.input,
                    output: r.output,
                    router: router as u32,
                    jitter_ms,
                    decode_tps,
                    blocks: BlockSpan {
                        start: r.blocks.start + block_shift,
                        len: r.blocks.len,
                    },
                });
            }
        }
        let (key_names, blocks, block_ids) = if fresh && used > 1 {
            self.fresh_ids(used as usize)
        } else {
            (
                Arc::clone(&self.key_names),
                Arc::clone(&self.blocks),
                self.block_ids,
            )
        };
        Plan {
            requests,
            key_names,
            blocks,
            block_ids,
            block_tokens: self.block_tokens,
            end: horizon,
            conversations: None,
        }
    }
}

impl Trace {
    /// Keys, block list and block-id count for `reps` repetitions with
    /// fresh ids: repetition k's block ids are the trace's plus k x the
    /// trace's distinct blocks, its keys the trace's with `~k` appended.
    fn fresh_ids(&self, reps: usize) -> (Arc<[String]>, Arc<[u32]>, u32) {
        let mut names = Vec::with_capacity(self.key_names.len() * reps);
        let mut blocks = Vec::with_capacity(self.blocks.len() * reps);
        for k in 0..reps {
            let shift = k as u32 * self.block_ids;
            blocks.extend(self.blocks.iter().map(|b| b + shift));
            names.extend(self.key_names.iter().map(|name| {
                if k == 0 {
                    name.clone()
                } else {
                    format!("{name}~{k}")
                }
            }));
        }
        (
            names.into(),
            blocks.into(),
            self.block_ids.saturating_mul(reps as u32),
        )
    }
}
