//! The field schema: every configurable field, its kind, default, range and
//! the algorithms it applies to, separately for expressions
//! (docs/stargate.md 5.4) and for lb-config.json (4.3). The two tables
//! differ on purpose; see docs/configuration.md.

use crate::ir::{Algorithm, Comparator, FieldSet, RendezvousWeight};

use Algorithm::{PowerOfN, Pulsar, PulsarWaitAndWiden, WaitAndWiden};

/// The value kind a field takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Boolean,
    Text,
    Unsigned,
    Decimal,
    Comparator,
    Weight,
}

impl Kind {
    /// How a kind is named in messages ("expected ...").
    pub const fn describe(self) -> &'static str {
        match self {
            Kind::Boolean => "true or false",
            Kind::Text => "a token or a quoted string",
            Kind::Unsigned => "an integer from 0 to 2^64-1",
            Kind::Decimal => "a finite number",
            Kind::Comparator => {
                "one of ttft, queue-time, input-work-seconds, utilization, num-requests-queued"
            }
            Kind::Weight => "one of max-input-tps, last-mean-input-tps",
        }
    }
}

/// Every field of [`FieldSet`], in its declaration order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Field {
    RequireCacheAffinityKey,
    RequireInputTokens,
    MaxInputWorkSeconds,
    SampleCount,
    Comparator,
    Seed,
    ConsiderKvFreeTokens,
    RendezvousWeight,
    N,
    MaxQueued,
    MaxQueueTimeFloorMs,
    MaxQueueTimeCeilMs,
    TtftBucketSizeMs,
    NextBucketUnlockFactor,
    IgnoreQueueTime,
    IgnoreInputProcessingTime,
    CacheAffinityVirtualNodes,
    CacheAffinityBackendSelectionCount,
    CacheAffinityInputTokensScale,
    CacheAffinityWaitMs,
    BandWidenIntervalMs,
    FallbackMaxQueued,
}

const ALL_ALGS: &[Algorithm] = &Algorithm::ALL;
const WW_PWW: &[Algorithm] = &[WaitAndWiden, PulsarWaitAndWiden];
const PULSAR_FAMILY: &[Algorithm] = &[Pulsar, PulsarWaitAndWiden];
const SEEDED: &[Algorithm] = &[WaitAndWiden, Pulsar, PulsarWaitAndWiden];
const NONE: &[Algorithm] = &[];

/// A typed field value, before range checks.
#[derive(Clone, Debug, PartialEq)]
pub enum Typed {
    Bool(bool),
    Text(String),
    Unsigned(u64),
    Decimal(f64),
    Comparator(Comparator),
    Weight(RendezvousWeight),
}

impl Field {
    pub const ALL: [Field; 22] = [
        Field::RequireCacheAffinityKey,
        Field::RequireInputTokens,
        Field::MaxInputWorkSeconds,
        Field::SampleCount,
        Field::Comparator,
        Field::Seed,
        Field::ConsiderKvFreeTokens,
        Field::RendezvousWeight,
        Field::N,
        Field::MaxQueued,
        Field::MaxQueueTimeFloorMs,
        Field::MaxQueueTimeCeilMs,
        Field::TtftBucketSizeMs,
        Field::NextBucketUnlockFactor,
        Field::IgnoreQueueTime,
        Field::IgnoreInputProcessingTime,
        Field::CacheAffinityVirtualNodes,
        Field::CacheAffinityBackendSelectionCount,
        Field::CacheAffinityInputTokensScale,
        Field::CacheAffinityWaitMs,
        Field::BandWidenIntervalMs,
        Field::FallbackMaxQueued,
    ];

    /// The lb-config.json key and expression parameter name.
    pub const fn name(self) -> &'static str {
        match self {
            Field::RequireCacheAffinityKey => "require_cache_affinity_key",
            Field::RequireInputTokens => "require_input_tokens",
            Field::MaxInputWorkSeconds => "max_input_work_seconds",
            Field::SampleCount => "sample_count",
            Field::Comparator => "comparator",
            Field::Seed => "seed",
            Field::ConsiderKvFreeTokens => "consider_kv_free_tokens",
            Field::RendezvousWeight => "rendezvous_weight",
            Field::N => "n",
            Field::MaxQueued => "max_queued",
            Field::MaxQueueTimeFloorMs => "max_queue_time_floor_ms",
            Field::MaxQueueTimeCeilMs => "max_queue_time_ceil_ms",
            Field::TtftBucketSizeMs => "ttft_bucket_size_ms",
            Field::NextBucketUnlockFactor => "next_bucket_unlock_factor",
            Field::IgnoreQueueTime => "ignore_queue_time",
            Field::IgnoreInputProcessingTime => "ignore_input_processing_time",
            Field::CacheAffinityVirtualNodes => "cache_affinity_virtual_nodes",
            Field::CacheAffinityBackendSelectionCount => "cache_affinity_backend_selection_count",
            Field::CacheAffinityInputTokensScale => "cache_affinity_input_tokens_scale",
            Field::CacheAffinityWaitMs => "cache_affinity_wait_ms",
            Field::BandWidenIntervalMs => "band_widen_interval_ms",
            Field::FallbackMaxQueued => "fallback_max_queued",
        }
    }

    pub fn from_name(name: &str) -> Option<Field> {
        Field::ALL.into_iter().find(|f| f.name() == name)
    }

    pub const fn kind(self) -> Kind {
        match self {
            Field::RequireCacheAffinityKey
            | Field::RequireInputTokens
            | Field::ConsiderKvFreeTokens
            | Field::IgnoreQueueTime
            | Field::IgnoreInputProcessingTime => Kind::Boolean,
            Field::Seed => Kind::Text,
            Field::Comparator => Kind::Comparator,
            Field::RendezvousWeight => Kind::Weight,
            Field::MaxInputWorkSeconds
            | Field::NextBucketUnlockFactor
            | Field::CacheAffinityInputTokensScale => Kind::Decimal,
            _ => Kind::Unsigned,
        }
    }

    /// The algorithms a request expression may set the field for (5.4).
    /// Empty: the parameter does not exist in expressions.
    pub const fn expression_algorithms(self) -> &'static [Algorithm] {
        match self {
            Field::RequireCacheAffinityKey
            | Field::RequireInputTokens
            | Field::MaxInputWorkSeconds => ALL_ALGS,
            Field::SampleCount => &[PowerOfN],
            Field::Comparator => &[PowerOfN, WaitAndWiden],
            Field::Seed => SEEDED,
            Field::ConsiderKvFreeTokens => PULSAR_FAMILY,
            Field::RendezvousWeight => NONE,
            Field::CacheAffinityVirtualNodes => &[WaitAndWiden],
            Field::BandWidenIntervalMs | Field::FallbackMaxQueued => &[PulsarWaitAndWiden],
            _ => WW_PWW,
        }
    }

    /// The algorithms whose lb-config.json detailed object accepts the key
    /// at parse time (4.3). Acceptance is not success: the builder still
    /// refuses `comparator` on PWW and the two band fields on WW.
    pub const fn json_algorithms(self) -> &'static [Algorithm] {
        match self {
            Field::RequireCacheAffinityKey
            | Field::RequireInputTokens
            | Field::MaxInputWorkSeconds => ALL_ALGS,
            Field::SampleCount => &[PowerOfN],
            Field::Comparator => &[PowerOfN, WaitAndWiden, PulsarWaitAndWiden],
            Field::Seed => SEEDED,
            Field::ConsiderKvFreeTokens | Field::RendezvousWeight => PULSAR_FAMILY,
            _ => WW_PWW,
        }
    }

    /// The algorithms a route-file expression may set the field for: the
    /// expression table plus `rendezvous_weight`, which lb-config.json
    /// carries and a route file must be able to say.
    pub const fn route_file_algorithms(self) -> &'static [Algorithm] {
        match self {
            Field::RendezvousWeight => PULSAR_FAMILY,
            _ => self.expression_algorithms(),
        }
    }

    /// The default as written in docs and `explain`.
    pub const fn default_text(self) -> &'static str {
        match self {
            Field::RequireCacheAffinityKey
            | Field::RequireInputTokens
            | Field::ConsiderKvFreeTokens
            | Field::IgnoreQueueTime
            | Field::IgnoreInputProcessingTime => "false",
            Field::MaxInputWorkSeconds
            | Field::MaxQueueTimeFloorMs
            | Field::MaxQueueTimeCeilMs
            | Field::CacheAffinityBackendSelectionCount => "unset",
            Field::SampleCount | Field::N => "2",
            Field::Comparator => "ttft",
            Field::Seed => "\"\"",
            Field::RendezvousWeight => "max-input-tps",
            Field::MaxQueued | Field::CacheAffinityWaitMs | Field::FallbackMaxQueued => "0",
            Field::TtftBucketSizeMs => "20",
            Field::NextBucketUnlockFactor => "0.25",
            Field::CacheAffinityVirtualNodes => "150",
            Field::CacheAffinityInputTokensScale => "1.0",
            Field::BandWidenIntervalMs => "cache_affinity_wait_ms",
        }
    }

    /// The accepted range in a request expression, for help lines.
    pub const fn expression_range(self) -> Option<&'static str> {
        match self {
            Field::MaxInputWorkSeconds => Some("accepted: a finite number greater than 0"),
            Field::SampleCount => Some("accepted: 1..=64"),
            Field::N | Field::TtftBucketSizeMs | Field::CacheAffinityBackendSelectionCount => {
                Some("accepted: an integer of at least 1 (0 would disable the field)")
            }
            Field::CacheAffinityVirtualNodes => Some("accepted: 1..=1024"),
            Field::CacheAffinityInputTokensScale => Some("accepted: 0.0..=1.0"),
            Field::Comparator => Some(
                "accepted: ttft, queue-time, input-work-seconds, utilization, num-requests-queued",
            ),
            Field::RendezvousWeight => Some("accepted: max-input-tps, last-mean-input-tps"),
            _ => None,
        }
    }
}

/// Names a list of algorithms for help lines: "a, b".
pub fn algorithm_list(algorithms: &[Algorithm]) -> String {
    algorithms
        .iter()
        .map(|a| a.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Reads one field of a field set back as a typed value.
pub fn get(fields: &FieldSet, field: Field) -> Option<Typed> {
    let u = |v: Option<u64>| v.map(Typed::Unsigned);
    let b = |v: Option<bool>| v.map(Typed::Bool);
    let d = |v: Option<f64>| v.map(Typed::Decimal);
    match field {
        Field::RequireCacheAffinityKey => b(fields.require_cache_affinity_key),
        Field::RequireInputTokens => b(fields.require_input_tokens),
        Field::MaxInputWorkSeconds => d(fields.max_input_work_seconds),
        Field::SampleCount => u(fields.sample_count),
        Field::Comparator => fields.comparator.map(Typed::Comparator),
        Field::Seed => fields.seed.clone().map(Typed::Text),
        Field::ConsiderKvFreeTokens => b(fields.consider_kv_free_tokens),
        Field::RendezvousWeight => fields.rendezvous_weight.map(Typed::Weight),
        Field::N => u(fields.n),
        Field::MaxQueued => u(fields.max_queued),
        Field::MaxQueueTimeFloorMs => u(fields.max_queue_time_floor_ms),
        Field::MaxQueueTimeCeilMs => u(fields.max_queue_time_ceil_ms),
        Field::TtftBucketSizeMs => u(fields.ttft_bucket_size_ms),
        Field::NextBucketUnlockFactor => d(fields.next_bucket_unlock_factor),
        Field::IgnoreQueueTime => b(fields.ignore_queue_time),
        Field::IgnoreInputProcessingTime => b(fields.ignore_input_processing_time),
        Field::CacheAffinityVirtualNodes => u(fields.cache_affinity_virtual_nodes),
        Field::CacheAffinityBackendSelectionCount => {
            u(fields.cache_affinity_backend_selection_count)
        }
        Field::CacheAffinityInputTokensScale => d(fields.cache_affinity_input_tokens_scale),
        Field::CacheAffinityWaitMs => u(fields.cache_affinity_wait_ms),
        Field::BandWidenIntervalMs => u(fields.band_widen_interval_ms),
        Field::FallbackMaxQueued => u(fields.fallback_max_queued),
    }
}

/// Stores a typed value in its field. A value of the wrong kind for the
/// field is ignored: callers type values with [`Field::kind`] first.
pub fn set(fields: &mut FieldSet, field: Field, value: Typed) {
    match (field, value) {
        (Field::RequireCacheAffinityKey, Typed::Bool(v)) => {
            fields.require_cache_affinity_key = Some(v)
        }
        (Field::RequireInputTokens, Typed::Bool(v)) => fields.require_input_tokens = Some(v),
        (Field::MaxInputWorkSeconds, Typed::Decimal(v)) => fields.max_input_work_seconds = Some(v),
        (Field::SampleCount, Typed::Unsigned(v)) => fields.sample_count = Some(v),
        (Field::Comparator, Typed::Comparator(v)) => fields.comparator = Some(v),
        (Field::Seed, Typed::Text(v)) => fields.seed = Some(v),
        (Field::ConsiderKvFreeTokens, Typed::Bool(v)) => fields.consider_kv_free_tokens = Some(v),
        (Field::RendezvousWeight, Typed::Weight(v)) => fields.rendezvous_weight = Some(v),
        (Field::N, Typed::Unsigned(v)) => fields.n = Some(v),
        (Field::MaxQueued, Typed::Unsigned(v)) => fields.max_queued = Some(v),
        (Field::MaxQueueTimeFloorMs, Typed::Unsigned(v)) => {
            fields.max_queue_time_floor_ms = Some(v)
        }
        (Field::MaxQueueTimeCeilMs, Typed::Unsigned(v)) => fields.max_queue_time_ceil_ms = Some(v),
        (Field::TtftBucketSizeMs, Typed::Unsigned(v)) => fields.ttft_bucket_size_ms = Some(v),
        (Field::NextBucketUnlockFactor, Typed::Decimal(v)) => {
            fields.next_bucket_unlock_factor = Some(v)
        }
        (Field::IgnoreQueueTime, Typed::Bool(v)) => fields.ignore_queue_time = Some(v),
        (Field::IgnoreInputProcessingTime, Typed::Bool(v)) => {
            fields.ignore_input_processing_time = Some(v)
        }
        (Field::CacheAffinityVirtualNodes, Typed::Unsigned(v)) => {
            fields.cache_affinity_virtual_nodes = Some(v)
        }
        (Field::CacheAffinityBackendSelectionCount, Typed::Unsigned(v)) => {
            fields.cache_affinity_backend_selection_count = Some(v)
        }
        (Field::CacheAffinityInputTokensScale, Typed::Decimal(v)) => {
            fields.cache_affinity_input_tokens_scale = Some(v)
        }
        (Field::CacheAffinityWaitMs, Typed::Unsigned(v)) => fields.cache_affinity_wait_ms = Some(v),
        (Field::BandWidenIntervalMs, Typed::Unsigned(v)) => fields.band_widen_interval_ms = Some(v),
        (Field::FallbackMaxQueued, Typed::Unsigned(v)) => fields.fallback_max_queued = Some(v),
        _ => {}
    }
}

/// The fields a field set configures, in declaration order.
pub fn configured(fields: &FieldSet) -> Vec<Field> {
    configured_iter(fields).collect()
}

/// The configured fields in schema order, without collecting them (the
/// builder runs on every expression-cache miss).
pub fn configured_iter(fields: &FieldSet) -> impl Iterator<Item = Field> + '_ {
    Field::ALL.into_iter().filter(|f| is_set(fields, *f))
}

/// Whether `field` is configured; unlike [`get`] it never copies the value.
pub fn is_set(fields: &FieldSet, field: Field) -> bool {
    match field {
        Field::Seed => fields.seed.is_some(),
        other => get(fields, other).is_some(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_set_get_agree() {
        for f in Field::ALL {
            assert_eq!(Field::from_name(f.name()), Some(f));
        }
        let mut fields = FieldSet::default();
        set(&mut fields, Field::N, Typed::Unsigned(7));
        set(&mut fields, Field::N, Typed::Bool(true));
        assert_eq!(get(&fields, Field::N), Some(Typed::Unsigned(7)));
        assert_eq!(configured(&fields), vec![Field::N]);
    }

    #[test]
    fn json_accepts_every_expression_field() {
        for f in Field::ALL {
            for a in f.expression_algorithms() {
                assert!(f.json_algorithms().contains(a), "{f:?} on {a}");
            }
        }
        assert!(!Field::Seed
            .json_algorithms()
            .contains(&Algorithm::RoundRobin));
        assert!(!Field::Seed.json_algorithms().contains(&Algorithm::Random));
    }
}
