//! stargate-bench's mock backend (docs/simulator.md, "stargate-bench
//! files"): the engine its real-time runs use, modelled as it is. One per
//! cluster; slots with a FIFO, the affinity key's LRU sized in tokens (0 =
//! no cache), prefill of the uncached tokens at `prefill_tokens_per_s`,
//! then `ttft_mean` + a whole-millisecond jitter before the first token,
//! then each further token after the per-token delay plus its own jitter.
//! The per-token delay is max(1, floor(1000 / `decode_tokens_per_s`)) ms
//! (320, 220 and 120 tokens/s become 3, 4 and 8 ms). Jitters are uniform on
//! 0..=J ms, drawn from a hash of the request and the token, so a request
//! has the same draws whichever cluster serves it.

use super::kv::KvLru;
use super::slots::{SlotEngine, Timing};
use super::{BlockPlan, Job};
use crate::kernel::time::{from_secs, Micros, US_PER_MS};

/// One cluster's mock engine: a stargate-bench profile times the pylons of
/// the cluster (slots and KV capacity).
#[derive(Clone, Debug, PartialEq)]
pub struct MockParams {
    pub slots: u32,
    pub kv_capacity_tokens: u64,
    pub prefill_tokens_per_s: f64,
    pub ttft_mean_ms: f64,
    pub ttft_jitter_ms: u64,
    pub decode_tokens_per_s: f64,
    pub decode_jitter_ms: u64,
    /// Mixed into the jitter hash (the scenario's seed).
    pub seed: u64,
}

impl MockParams {
    /// The per-token delay in whole ms.
    pub fn token_delay_ms(&self) -> u64 {
        let rate = self.decode_tokens_per_s.max(f64::MIN_POSITIVE);
        ((1_000.0 / rate).floor() as u64).max(1)
    }

    fn jitter_ms(&self, id: u32, token: u64, max: u64) -> u64 {
        if max == 0 {
            return 0;
        }
        let h = splitmix(self.seed ^ splitmix((u64::from(id) << 32) ^ token));
        h % (max + 1)
    }
}

fn splitmix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Timing for MockParams {
    fn prefill_us(&self, uncached: u64) -> Micros {
        if uncached == 0 {
            return 0;
        }
        from_secs(uncached as f64 / self.prefill_tokens_per_s.max(f64::MIN_POSITIVE))
    }

    fn settle_us(&self, job: &Job) -> Micros {
        let jitter = self.jitter_ms(job.id, 0, self.ttft_jitter_ms);
        crate::kernel::time::from_ms(self.ttft_mean_ms) + jitter * US_PER_MS
    }

    fn decode_us(&self, job: &Job) -> Micros {
        let delay = self.token_delay_ms();
        let ms: u64 = (1..job.output.max(1))
            .map(|t| delay + self.jitter_ms(job.id, t, self.decode_jitter_ms))
            .sum();
        ms * US_PER_MS
    }
}

/// The mock engine of one cluster.
pub type MockEngine = SlotEngine<KvLru, MockParams>;

/// An idle mock engine.
pub fn mock_engine(p: &MockParams) -> MockEngine {
    SlotEngine::new(
        p.clone(),
        p.slots.max(1),
        &BlockPlan::default(),
        KvLru::new(p.kv_capacity_tokens),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::world::engine::{Action, EngineModel, Timer};

    #[test]
    fn timings_follow_the_mock_backend() {
        let p = MockParams {
            slots: 1,
            kv_capacity_tokens: 10_000,
            prefill_tokens_per_s: 4_000.0,
            ttft_mean_ms: 100.0,
            ttft_jitter_ms: 0,
            decode_tokens_per_s: 220.0,
            decode_jitter_ms: 0,
            seed: 1,
        };
        assert_eq!(p.token_delay_ms(), 4);
        let mut e = mock_engine(&p);
        let job = Job {
            id: 1,
            key: 3,
            input: 2_000,
            output: 11,
            jitter_ms: 0.0,
            decode_tps: 0.0,
            blocks: Default::default(),
        };
        let mut out = Vec::new();
        e.accept(0, job, &mut out);
        // 2 000 tokens at 4 000/s, 100 ms to the first token, 10 x 4 ms.
        assert_eq!(
            out[1],
            Action::Schedule {
                at: 500_000,
                timer: Timer { id: 1, tag: 0 }
            }
        );
        out.clear();
        e.timer(500_000, Timer { id: 1, tag: 0 }, &mut out);
        assert_eq!(
            out[0],
            Action::Schedule {
                at: 600_000,
                timer: Timer { id: 1, tag: 1 }
            }
        );
        out.clear();
        e.timer(600_000, Timer { id: 1, tag: 1 }, &mut out);
        assert_eq!(
            out[0],
            Action::Schedule {
                at: 640_000,
                timer: Timer { id: 1, tag: 2 }
            }
        );
        // Jitters stay within 0..=J.
        let q = MockParams {
            ttft_jitter_ms: 5,
            decode_jitter_ms: 3,
            ..p
        };
        let settle: Vec<u64> = (0..200).map(|id| q.settle_us(&Job { id, ..job })).collect();
        assert!(settle.iter().all(|&s| (100_000..=105_000).contains(&s)));
        assert!(settle.iter().any(|&s| s != settle[0]));
        let d = q.decode_us(&job);
        assert!((40_000..=70_000).contains(&d), "{d}");
    }
}
