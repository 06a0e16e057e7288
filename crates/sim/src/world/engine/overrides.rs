//! Engine profiles per region and per backend (docs/simulator.md,
//! "Heterogeneous fleets"): a scenario's `engine.regions` and
//! `engine.backends` give objects of engine fields that replace the fleet's
//! for some backends. Every field is optional; the most specific object
//! that sets a field wins (backend, then cluster, then region, then the
//! fleet's `engine`). A partial `batched` object replaces only the step
//! fields it names.

use super::batched::BatchedParams;
use super::{EngineParams, V3};
use serde::{Deserialize, Serialize};

/// One override object: the engine fields it sets, and the rate the
/// backend registers with.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EngineOverride {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slots: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefill_tps: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttft_base_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttft_jitter_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decode_tps: Option<[f64; 2]>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kv_capacity_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backend_speed: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batched: Option<BatchedOverride>,
    /// The input TPS the backend's Pylon registers with before it has
    /// served anything (the fleet's `pylon.input_tps.initial` otherwise,
    /// scaled by the backend's prefill capacity).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_input_tps: Option<f64>,
}

/// The engine v3 step fields an override sets.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BatchedOverride {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub num_gpu_workers: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_num_seqs: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_batched_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_fixed_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_decode_ms_per_seq: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_prefill_ms_per_token: Option<f64>,
}

impl EngineOverride {
    /// Whether the object sets the field `name` (a top-level key).
    pub fn sets(&self, name: &str) -> bool {
        match name {
            "model" => self.model.is_some(),
            "slots" => self.slots.is_some(),
            "prefill_tps" => self.prefill_tps.is_some(),
            "ttft_base_ms" => self.ttft_base_ms.is_some(),
            "ttft_jitter_ms" => self.ttft_jitter_ms.is_some(),
            "decode_tps" => self.decode_tps.is_some(),
            "kv_capacity_tokens" => self.kv_capacity_tokens.is_some(),
            "backend_speed" => self.backend_speed.is_some(),
            "batched" => self.batched.is_some(),
            "initial_input_tps" => self.initial_input_tps.is_some(),
            _ => false,
        }
    }

    /// `params` with this object's fields in place of its own.
    pub fn apply(&self, params: &mut EngineParams) {
        let set = |to: &mut f64, v: Option<f64>| {
            if let Some(v) = v {
                *to = v;
            }
        };
        if let Some(m) = &self.model {
            params.model.clone_from(m);
        }
        if let Some(v) = self.slots {
            params.slots = v;
        }
        set(&mut params.prefill_tps, self.prefill_tps);
        set(&mut params.ttft_base_ms, self.ttft_base_ms);
        set(&mut params.ttft_jitter_ms, self.ttft_jitter_ms);
        if let Some(v) = self.decode_tps {
            params.decode_tps = v;
        }
        if let Some(v) = self.kv_capacity_tokens {
            params.kv_capacity_tokens = v;
        }
        set(&mut params.backend_speed, self.backend_speed);
        if let Some(b) = &self.batched {
            let to = params.batched.get_or_insert_with(BatchedParams::default);
            if let Some(v) = b.num_gpu_workers {
                to.num_gpu_workers = v;
            }
            if let Some(v) = b.max_num_seqs {
                to.max_num_seqs = v;
            }
            if let Some(v) = b.max_batched_tokens {
                to.max_batched_tokens = v;
            }
            set(&mut to.step_fixed_ms, b.step_fixed_ms);
            set(&mut to.step_decode_ms_per_seq, b.step_decode_ms_per_seq);
            set(
                &mut to.step_prefill_ms_per_token,
                b.step_prefill_ms_per_token,
            );
        }
    }
}

impl EngineParams {
    /// Input tokens per second the engine prefills with every slot (or
    /// worker) busy: slots x `prefill_tps` x speed for engines v1 and v2,
    /// workers / `step_prefill_ms_per_token` x speed for engine v3. The
    /// ratio of two of them scales the fleet's registration rate to a
    /// backend's profile.
    pub fn prefill_capacity_tps(&self) -> f64 {
        match self.model.as_str() {
            V3 => {
                let b = self.batched.clone().unwrap_or_default();
                f64::from(b.num_gpu_workers) * 1_000.0 / b.step_prefill_ms_per_token
                    * self.backend_speed
            }
            _ => self.initial_tps(),
        }
    }

    /// The parameters without their override maps (one backend's).
    pub fn without_overrides(&self) -> EngineParams {
        EngineParams {
            regions: Default::default(),
            backends: Default::default(),
            ..self.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partial_objects_replace_only_what_they_name() {
        let mut p = EngineParams::profile_a();
        let o = EngineOverride {
            backend_speed: Some(2.0),
            batched: Some(BatchedOverride {
                num_gpu_workers: Some(2),
                ..Default::default()
            }),
            ..Default::default()
        };
        o.apply(&mut p);
        assert_eq!(p.backend_speed, 2.0);
        assert_eq!(p.slots, 25);
        let b = p.batched.clone().expect("batched");
        assert_eq!((b.num_gpu_workers, b.max_num_seqs), (2, 25));
        assert!(o.sets("batched") && !o.sets("slots"));
        // Profile A at twice the speed prefills twice as fast.
        assert_eq!(p.prefill_capacity_tps(), 350_000.0);
        p.model = V3.into();
        // Two workers at 0.05 ms per token, twice as fast: 80 000 tokens/s.
        assert_eq!(p.prefill_capacity_tps(), 80_000.0);
    }
}
