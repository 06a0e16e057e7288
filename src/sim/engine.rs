//! Engine model v1, `mockdynamo-v1` (docs/simulator-model.md A4): slots with a FIFO wait
//! queue, independent per-request prefill of uncached tokens, a per-key LRU
//! KV cache and a per-request decode rate. This type holds the state; the run
//! loop schedules its events with the timings computed here.

use super::events::ReqId;
use super::kv::KvLru;
use super::time::{from_ms, from_secs, Micros};
use std::collections::VecDeque;

/// Parameters of one engine profile (A4.1).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EngineParams {
    #[serde(default = "default_model")]
    pub model: String,
    pub slots: u32,
    /// Per request; concurrent prefills do not share compute.
    pub prefill_tps: f64,
    pub ttft_base_ms: f64,
    pub ttft_jitter_ms: f64,
    /// Uniform range of the per-request decode rate.
    pub decode_tps: [f64; 2],
    pub kv_capacity_tokens: u64,
    #[serde(default = "default_speed")]
    pub backend_speed: f64,
}

fn default_model() -> String {
    "mockdynamo-v1".into()
}
fn default_speed() -> f64 {
    1.0
}

impl EngineParams {
    /// Profile A, "parity" (the default).
    pub fn profile_a() -> Self {
        EngineParams {
            model: default_model(),
            slots: 25,
            prefill_tps: 7_000.0,
            ttft_base_ms: 10.0,
            ttft_jitter_ms: 20.0,
            decode_tps: [128.0, 200.0],
            kv_capacity_tokens: 400_000,
            backend_speed: 1.0,
        }
    }

    /// Profile B, "capacity-250".
    pub fn profile_b() -> Self {
        EngineParams {
            prefill_tps: 13_250.0,
            decode_tps: [110.0, 150.0],
            ..EngineParams::profile_a()
        }
    }

    /// The Pylon's initial input TPS: slots x prefill rate x speed.
    pub fn initial_tps(&self) -> f64 {
        f64::from(self.slots) * self.prefill_tps * self.backend_speed
    }

    /// Prefill time of `uncached` tokens.
    pub fn prefill_us(&self, uncached: u64) -> Micros {
        if uncached == 0 {
            return 0;
        }
        from_secs(uncached as f64 / (self.prefill_tps * self.backend_speed))
    }

    /// From prefill end to the first token: base + this request's jitter.
    pub fn settle_us(&self, jitter_ms: f64) -> Micros {
        from_ms(self.ttft_base_ms + jitter_ms)
    }

    /// From first token to the last: (out - 1) / (decode rate x speed).
    pub fn decode_us(&self, output_tokens: u64, decode_tps: f64) -> Micros {
        let rest = output_tokens.saturating_sub(1);
        if rest == 0 {
            return 0;
        }
        from_secs(rest as f64 / (decode_tps * self.backend_speed))
    }
}

/// Slots, wait queue and KV cache of one backend.
#[derive(Clone, Debug)]
pub struct Engine {
    slots: u32,
    free_slots: u32,
    fifo: VecDeque<ReqId>,
    pub kv: KvLru,
}

impl Engine {
    pub fn new(params: &EngineParams) -> Self {
        Engine {
            slots: params.slots,
            free_slots: params.slots,
            fifo: VecDeque::new(),
            kv: KvLru::new(params.kv_capacity_tokens),
        }
    }

    /// Admits a request: `true` if it took a free slot (prefill starts now),
    /// `false` if it waits in the FIFO.
    pub fn admit(&mut self, req: ReqId) -> bool {
        if self.free_slots > 0 {
            self.free_slots -= 1;
            true
        } else {
            self.fifo.push_back(req);
            false
        }
    }

    /// Frees one slot. The FIFO head, if any, takes it over and must start
    /// prefill now.
    pub fn release_slot(&mut self) -> Option<ReqId> {
        match self.fifo.pop_front() {
            Some(next) => Some(next),
            None => {
                debug_assert!(self.free_slots < self.slots, "slot released twice");
                self.free_slots = (self.free_slots + 1).min(self.slots);
                None
            }
        }
    }

    /// Removes a waiting request (client timeout); `false` if it was not waiting.
    pub fn remove_waiting(&mut self, req: ReqId) -> bool {
        match self.fifo.iter().position(|&r| r == req) {
            Some(i) => {
                self.fifo.remove(i);
                true
            }
            None => false,
        }
    }

    pub fn slots_in_use(&self) -> u32 {
        self.slots - self.free_slots
    }

    pub fn waiting(&self) -> usize {
        self.fifo.len()
    }

    pub fn is_idle(&self) -> bool {
        self.free_slots == self.slots && self.fifo.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profile_a_timings_are_exact() {
        let p = EngineParams::profile_a();
        assert_eq!(p.prefill_us(6_661), 951_571); // 6661 / 7000 s
        assert_eq!(p.prefill_us(0), 0);
        assert_eq!(p.settle_us(0.0), 10_000);
        assert_eq!(p.settle_us(20.0), 30_000);
        assert_eq!(p.decode_us(256, 128.0), 1_992_188); // 255 / 128 s
        assert_eq!(p.decode_us(1, 128.0), 0);
        assert_eq!(p.initial_tps(), 175_000.0);
        assert_eq!(EngineParams::profile_b().initial_tps(), 331_250.0);
    }

    #[test]
    fn fifo_hands_slots_over_in_order() {
        let mut p = EngineParams::profile_a();
        p.slots = 2;
        let mut e = Engine::new(&p);
        assert!(e.admit(1));
        assert!(e.admit(2));
        assert!(!e.admit(3));
        assert!(!e.admit(4));
        assert_eq!(e.waiting(), 2);
        assert!(e.remove_waiting(4));
        assert!(!e.remove_waiting(4));
        assert_eq!(e.release_slot(), Some(3));
        assert_eq!(e.slots_in_use(), 2);
        assert_eq!(e.release_slot(), None);
        assert_eq!(e.release_slot(), None);
        assert!(e.is_idle());
    }
}
