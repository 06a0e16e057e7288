//! The start-up builder: configured fields -> resolved policy, with the
//! defaults and normalisations of docs/stargate.md 3.6.1, 3.8.2 and 4.3.

use super::schema::{configured, configured_iter, Field};
use crate::ir::{
    Admission, Algorithm, AlgorithmConfig, BucketSettings, FieldSet, Policy, PowerOfNSettings,
    PulsarSettings, PulsarWaitAndWidenSettings, Settings, Target, WaitAndWidenSettings, IR_VERSION,
};

/// Whether stargate at `target` parses `field` in `alg`'s detailed object:
/// a field of a later target is as unknown to it as any other.
fn parses(field: Field, alg: Algorithm, target: Target) -> bool {
    field.json_algorithms().contains(&alg) && field.accepted_by(target)
}

/// Resolves a configured algorithm for `target`; the error names the
/// offending field.
pub fn build_policy(config: &AlgorithmConfig, target: Target) -> Result<Policy, String> {
    let alg = config.algorithm;
    let f = &config.fields;
    let unsupported = |field: &Field| !parses(*field, alg, target);
    if configured_iter(f).any(|field| unsupported(&field)) {
        let mut unsupported: Vec<&str> = configured_iter(f)
            .filter(unsupported)
            .map(Field::name)
            .collect();
        unsupported.sort_unstable();
        return Err(format!(
            "{alg} config does not support field(s): {}",
            unsupported.join(", ")
        ));
    }
    if alg == Algorithm::WaitAndWiden {
        for (field, set) in [
            (
                Field::BandWidenIntervalMs,
                f.band_widen_interval_ms.is_some(),
            ),
            (Field::FallbackMaxQueued, f.fallback_max_queued.is_some()),
        ] {
            if set {
                return Err(format!(
                    "{} is only supported for pulsar-wait-and-widen, not wait-and-widen",
                    field.name()
                ));
            }
        }
    }
    if alg == Algorithm::PulsarWaitAndWiden && f.comparator.is_some() {
        return Err("comparator is not supported for pulsar-wait-and-widen".to_string());
    }
    let consider_kv = f.consider_kv_free_tokens.unwrap_or(false);
    let admission = Admission {
        require_cache_affinity_key: f.require_cache_affinity_key.unwrap_or(false),
        require_input_tokens: f.require_input_tokens.unwrap_or(false) || consider_kv,
        max_input_work_seconds: f.max_input_work_seconds,
    };
    let settings = match alg {
        Algorithm::PowerOfN => {
            let sample_count = f.sample_count.unwrap_or(2);
            if !(1..=64).contains(&sample_count) {
                return Err(format!(
                    "power-of-n sample_count must be between 1 and 64, got {sample_count}"
                ));
            }
            Settings::PowerOfN(PowerOfNSettings {
                sample_count,
                comparator: f.comparator.unwrap_or_default(),
            })
        }
        Algorithm::RoundRobin => Settings::RoundRobin {},
        Algorithm::Random => Settings::Random {},
        Algorithm::Pulsar => Settings::Pulsar(PulsarSettings {
            seed: f.seed.clone().unwrap_or_default(),
            consider_kv_free_tokens: consider_kv,
            rendezvous_weight: f.rendezvous_weight.unwrap_or_default(),
        }),
        Algorithm::WaitAndWiden => Settings::WaitAndWiden(WaitAndWidenSettings {
            seed: f.seed.clone().unwrap_or_default(),
            comparator: f.comparator.unwrap_or_default(),
            cache_affinity_virtual_nodes: f.cache_affinity_virtual_nodes.unwrap_or(150).max(1),
            cache_affinity_backend_selection_count: f
                .cache_affinity_backend_selection_count
                .filter(|k| *k > 0),
            cache_affinity_input_tokens_scale: scale(f)?,
            cache_affinity_wait_ms: f.cache_affinity_wait_ms.unwrap_or(0),
            last_cluster_affinity: f.last_cluster_affinity.unwrap_or(false),
            bucket: bucket(f),
        }),
        Algorithm::PulsarWaitAndWiden => {
            let wait = f.cache_affinity_wait_ms.unwrap_or(0);
            Settings::PulsarWaitAndWiden(PulsarWaitAndWidenSettings {
                seed: f.seed.clone().unwrap_or_default(),
                consider_kv_free_tokens: consider_kv,
                rendezvous_weight: f.rendezvous_weight.unwrap_or_default(),
                cache_affinity_backend_selection_count: f
                    .cache_affinity_backend_selection_count
                    .unwrap_or(1)
                    .max(1),
                cache_affinity_input_tokens_scale: scale(f)?,
                cache_affinity_wait_ms: wait,
                band_widen_interval_ms: f.band_widen_interval_ms.unwrap_or(wait),
                band_widen_interval_is_default: f.band_widen_interval_ms.is_none(),
                fallback_max_queued: f.fallback_max_queued.unwrap_or(0),
                last_cluster_affinity: f.last_cluster_affinity.unwrap_or(false),
                no_queue_slo_shortcut: target.has_no_queue_slo_shortcut(),
                bucket: bucket(f),
            })
        }
    };
    Ok(Policy {
        version: IR_VERSION,
        stargate: target,
        algorithm: alg,
        admission,
        settings,
    })
}

fn scale(f: &FieldSet) -> Result<f64, String> {
    let s = f.cache_affinity_input_tokens_scale.unwrap_or(1.0);
    if (0.0..=1.0).contains(&s) {
        Ok(s)
    } else {
        Err(format!(
            "cache_affinity_input_tokens_scale must be between 0.0 and 1.0, got {s}"
        ))
    }
}

fn bucket(f: &FieldSet) -> BucketSettings {
    BucketSettings {
        n: f.n.unwrap_or(2).max(1),
        max_queued: f.max_queued.unwrap_or(0),
        ttft_bucket_size_ms: f.ttft_bucket_size_ms.unwrap_or(20),
        next_bucket_unlock_factor: f.next_bucket_unlock_factor.unwrap_or(0.25),
        max_queue_time_floor_ms: f.max_queue_time_floor_ms,
        max_queue_time_ceil_ms: f.max_queue_time_ceil_ms,
        ignore_queue_time: f.ignore_queue_time.unwrap_or(false),
        ignore_input_processing_time: f.ignore_input_processing_time.unwrap_or(false),
    }
}

/// Every refusal of the builder, in the order [`build_policy`] checks them
/// (so the first is its error), each with the field it names. `lb-config.json`
/// checking reports them all; the builder stops at the first.
pub fn builder_errors(config: &AlgorithmConfig, target: Target) -> Vec<(Option<Field>, String)> {
    let alg = config.algorithm;
    let f = &config.fields;
    let mut out = Vec::new();
    let mut unsupported: Vec<Field> = configured_iter(f)
        .filter(|field| !parses(*field, alg, target))
        .collect();
    if !unsupported.is_empty() {
        unsupported.sort_unstable_by_key(|f| f.name());
        let names: Vec<&str> = unsupported.iter().map(|f| f.name()).collect();
        out.push((
            unsupported.first().copied(),
            format!(
                "{alg} config does not support field(s): {}",
                names.join(", ")
            ),
        ));
        return out;
    }
    if alg == Algorithm::WaitAndWiden {
        for field in [Field::BandWidenIntervalMs, Field::FallbackMaxQueued] {
            if super::schema::is_set(f, field) {
                out.push((
                    Some(field),
                    format!(
                        "{} is only supported for pulsar-wait-and-widen, not wait-and-widen",
                        field.name()
                    ),
                ));
            }
        }
    }
    if alg == Algorithm::PulsarWaitAndWiden && f.comparator.is_some() {
        out.push((
            Some(Field::Comparator),
            "comparator is not supported for pulsar-wait-and-widen".to_string(),
        ));
    }
    if alg == Algorithm::PowerOfN {
        let sample_count = f.sample_count.unwrap_or(2);
        if !(1..=64).contains(&sample_count) {
            out.push((
                Some(Field::SampleCount),
                format!("power-of-n sample_count must be between 1 and 64, got {sample_count}"),
            ));
        }
    }
    if matches!(alg, Algorithm::WaitAndWiden | Algorithm::PulsarWaitAndWiden) {
        if let Err(message) = scale(f) {
            out.push((Some(Field::CacheAffinityInputTokensScale), message));
        }
    }
    out
}

/// The field a builder message is about, so a caller can point at it.
pub fn field_of_builder_error(config: &AlgorithmConfig, message: &str) -> Option<Field> {
    let mut fields = configured(&config.fields);
    // Longest names first: `n` must not match inside another name.
    fields.sort_by_key(|f| std::cmp::Reverse(f.name().len()));
    fields.into_iter().find(|f| message.contains(f.name()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::schema::{set, Typed};

    /// The first of [`builder_errors`] is [`build_policy`]'s error, for
    /// every algorithm and every combination of the refused values.
    #[test]
    fn the_first_builder_error_is_the_builders() {
        let refused = [
            (Field::BandWidenIntervalMs, Typed::Unsigned(5)),
            (Field::FallbackMaxQueued, Typed::Unsigned(0)),
            (Field::Comparator, Typed::Comparator(Default::default())),
            (Field::SampleCount, Typed::Unsigned(65)),
            (Field::CacheAffinityInputTokensScale, Typed::Decimal(2.0)),
            (Field::Seed, Typed::Text("s".into())),
            (Field::LastClusterAffinity, Typed::Bool(false)),
        ];
        for alg in Algorithm::ALL {
            for mask in 0..(1u32 << refused.len()) {
                let mut config = AlgorithmConfig::named(alg);
                for (i, (field, value)) in refused.iter().enumerate() {
                    if mask & (1 << i) != 0 {
                        set(&mut config.fields, *field, value.clone()).unwrap();
                    }
                }
                for target in Target::ALL {
                    let all = builder_errors(&config, target);
                    assert_eq!(
                        all.first().map(|(_, m)| m.clone()),
                        build_policy(&config, target).err(),
                        "{alg} {mask:b} {target}"
                    );
                }
            }
        }
    }
}
