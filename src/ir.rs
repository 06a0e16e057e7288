//! The policy IR: what lowering produces and the balancer core reads.
//!
//! Two levels live here, both free of source text and spans:
//! - [`AlgorithmConfig`]: the fields a configuration *set* (lb-config.json
//!   entry, route-file expression, request expression) before defaults; it is
//!   what a request expression merges onto (omitted fields keep their
//!   configured values, static values such as `n = 0` included);
//! - [`Policy`]: every field resolved, defaults and normalisations applied
//!   (docs/contract.md section 4). Serialises to the IR JSON.
//!
//! [`RouteTable`] holds both per definition, and resolves a model and method
//! exactly as stargate does (docs/stargate.md 4.4).

use indexmap::IndexMap;
use serde::Serialize;
use std::sync::Arc;

pub mod fields;
mod target;

pub use fields::{Field, FieldSet, FieldSpec, Kind, KindMismatch, Typed, FIELDS};
pub use target::Target;

/// IR format version, printed as `"version"` in every IR JSON.
pub const IR_VERSION: u32 = 1;

/// The six stargate algorithms.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum Algorithm {
    #[serde(rename = "power-of-n")]
    PowerOfN,
    #[serde(rename = "wait-and-widen")]
    WaitAndWiden,
    #[serde(rename = "round-robin")]
    RoundRobin,
    #[serde(rename = "random")]
    Random,
    #[serde(rename = "pulsar")]
    Pulsar,
    #[serde(rename = "pulsar-wait-and-widen")]
    PulsarWaitAndWiden,
}

/// The stargate aliases (docs/stargate.md 4.2), exact JSON spelling.
pub const ALIASES: &[(&str, Algorithm)] = &[
    ("power-of-two", Algorithm::PowerOfN),
    ("powerOf2", Algorithm::PowerOfN),
    ("powerOfN", Algorithm::PowerOfN),
    ("powerof2", Algorithm::PowerOfN),
    ("powerofn", Algorithm::PowerOfN),
    ("groq-multiregion", Algorithm::WaitAndWiden),
    ("pulsar-multiregion", Algorithm::PulsarWaitAndWiden),
];

/// How a name was recognised.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NameMatch {
    Canonical,
    /// An alias: valid, with a `deprecated_alias` warning.
    Alias,
}

impl Algorithm {
    pub const ALL: [Algorithm; 6] = [
        Algorithm::PowerOfN,
        Algorithm::WaitAndWiden,
        Algorithm::RoundRobin,
        Algorithm::Random,
        Algorithm::Pulsar,
        Algorithm::PulsarWaitAndWiden,
    ];

    pub const fn name(self) -> &'static str {
        match self {
            Algorithm::PowerOfN => "power-of-n",
            Algorithm::WaitAndWiden => "wait-and-widen",
            Algorithm::RoundRobin => "round-robin",
            Algorithm::Random => "random",
            Algorithm::Pulsar => "pulsar",
            Algorithm::PulsarWaitAndWiden => "pulsar-wait-and-widen",
        }
    }

    /// JSON lookup: exact, case-sensitive, aliases allowed.
    pub fn from_json_name(name: &str) -> Option<(Algorithm, NameMatch)> {
        if let Some(a) = Algorithm::ALL.iter().find(|a| a.name() == name) {
            return Some((*a, NameMatch::Canonical));
        }
        ALIASES
            .iter()
            .find(|(alias, _)| *alias == name)
            .map(|(_, a)| (*a, NameMatch::Alias))
    }

    /// Header lookup: trimmed, lower-cased, `_` as `-`, then aliases
    /// (lower-cased too, so `powerOf2` and `POWEROF2` both match).
    /// Does not allocate.
    pub fn from_header_name(raw: &str) -> Option<(Algorithm, NameMatch)> {
        let raw = raw.trim();
        let eq = |candidate: &str| {
            candidate.len() == raw.len()
                && raw.bytes().zip(candidate.bytes()).all(|(r, c)| {
                    let r = if r == b'_' {
                        b'-'
                    } else {
                        r.to_ascii_lowercase()
                    };
                    r == c.to_ascii_lowercase()
                })
        };
        if let Some(a) = Algorithm::ALL.iter().find(|a| eq(a.name())) {
            return Some((*a, NameMatch::Canonical));
        }
        ALIASES
            .iter()
            .find(|(alias, _)| eq(alias))
            .map(|(_, a)| (*a, NameMatch::Alias))
    }

    /// Whether the algorithm ranks clusters with Pulsar (pulsar, PWW).
    pub const fn is_pulsar_family(self) -> bool {
        matches!(self, Algorithm::Pulsar | Algorithm::PulsarWaitAndWiden)
    }
}

impl std::fmt::Display for Algorithm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The five comparators (docs/stargate.md 3.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Comparator {
    #[default]
    Ttft,
    QueueTime,
    InputWorkSeconds,
    Utilization,
    NumRequestsQueued,
}

impl Comparator {
    pub const ALL: [Comparator; 5] = [
        Comparator::Ttft,
        Comparator::QueueTime,
        Comparator::InputWorkSeconds,
        Comparator::Utilization,
        Comparator::NumRequestsQueued,
    ];

    pub const fn name(self) -> &'static str {
        match self {
            Comparator::Ttft => "ttft",
            Comparator::QueueTime => "queue-time",
            Comparator::InputWorkSeconds => "input-work-seconds",
            Comparator::Utilization => "utilization",
            Comparator::NumRequestsQueued => "num-requests-queued",
        }
    }

    pub fn from_name(name: &str) -> Option<Comparator> {
        Comparator::ALL.into_iter().find(|c| c.name() == name)
    }
}

/// Which statistic weights the Pulsar ranking (docs/stargate.md 3.7).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RendezvousWeight {
    #[default]
    MaxInputTps,
    LastMeanInputTps,
}

impl RendezvousWeight {
    pub const fn name(self) -> &'static str {
        match self {
            RendezvousWeight::MaxInputTps => "max-input-tps",
            RendezvousWeight::LastMeanInputTps => "last-mean-input-tps",
        }
    }

    pub fn from_name(name: &str) -> Option<RendezvousWeight> {
        [
            RendezvousWeight::MaxInputTps,
            RendezvousWeight::LastMeanInputTps,
        ]
        .into_iter()
        .find(|w| w.name() == name)
    }
}

/// One configured algorithm: what a name-only entry, a detailed object or an
/// expression says, before the builder resolves it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AlgorithmConfig {
    pub algorithm: Algorithm,
    pub fields: FieldSet,
}

impl AlgorithmConfig {
    /// A name-only entry: default settings.
    pub fn named(algorithm: Algorithm) -> Self {
        AlgorithmConfig {
            algorithm,
            fields: FieldSet::default(),
        }
    }
}

/// Admission settings shared by every algorithm (docs/stargate.md 3.9).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Admission {
    pub require_cache_affinity_key: bool,
    /// Declares a need only; `consider_kv_free_tokens` implies it.
    pub require_input_tokens: bool,
    /// Unchecked in JSON: a non-positive value rejects every request with work.
    pub max_input_work_seconds: Option<f64>,
}

/// power-of-n, resolved.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PowerOfNSettings {
    pub sample_count: u64,
    pub comparator: Comparator,
}

/// The queue SLO is on only when both bounds are set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct QueueSlo {
    pub floor_ms: u64,
    pub ceil_ms: u64,
}

/// Settings shared by wait-and-widen's and PWW's bucketed selection.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BucketSettings {
    pub n: u64,
    pub max_queued: u64,
    pub ttft_bucket_size_ms: u64,
    pub next_bucket_unlock_factor: f64,
    pub max_queue_time_floor_ms: Option<u64>,
    pub max_queue_time_ceil_ms: Option<u64>,
    pub ignore_queue_time: bool,
    pub ignore_input_processing_time: bool,
}

impl BucketSettings {
    pub fn queue_slo(&self) -> Option<QueueSlo> {
        match (self.max_queue_time_floor_ms, self.max_queue_time_ceil_ms) {
            (Some(floor_ms), Some(ceil_ms)) => Some(QueueSlo { floor_ms, ceil_ms }),
            _ => None,
        }
    }
}

/// wait-and-widen, resolved (docs/stargate.md 3.6.1).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WaitAndWidenSettings {
    pub seed: String,
    pub comparator: Comparator,
    /// 0 normalised to 1.
    pub cache_affinity_virtual_nodes: u64,
    /// `None` = affinity off (unset or 0).
    pub cache_affinity_backend_selection_count: Option<u64>,
    pub cache_affinity_input_tokens_scale: f64,
    pub cache_affinity_wait_ms: u64,
    /// Sessions (docs/stargate.md 3.10): classify each keyed request by
    /// its last cluster. Always false for the `widening` target.
    pub last_cluster_affinity: bool,
    #[serde(flatten)]
    pub bucket: BucketSettings,
}

/// pulsar, resolved.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PulsarSettings {
    pub seed: String,
    pub consider_kv_free_tokens: bool,
    pub rendezvous_weight: RendezvousWeight,
}

/// pulsar-wait-and-widen, resolved (docs/stargate.md 3.8.2).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PulsarWaitAndWidenSettings {
    pub seed: String,
    pub consider_kv_free_tokens: bool,
    pub rendezvous_weight: RendezvousWeight,
    /// k: unset or 0 normalised to 1.
    pub cache_affinity_backend_selection_count: u64,
    pub cache_affinity_input_tokens_scale: f64,
    /// X.
    pub cache_affinity_wait_ms: u64,
    /// S: defaults to X; 0 opens every band at X.
    pub band_widen_interval_ms: u64,
    /// Whether S is the default (unset): a new or stale session's S then
    /// follows its effective wait, 0 (docs/stargate.md 3.10).
    pub band_widen_interval_is_default: bool,
    /// f.
    pub fallback_max_queued: u64,
    /// Sessions (docs/stargate.md 3.10). Always false for `widening`.
    pub last_cluster_affinity: bool,
    /// Whether a feasible rank 1 is selected at once without both queue
    /// bounds (3.8.3 step 2): the `widening` target's rule.
    pub no_queue_slo_shortcut: bool,
    #[serde(flatten)]
    pub bucket: BucketSettings,
}

/// The algorithm-specific part of a policy.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Settings {
    PowerOfN(PowerOfNSettings),
    WaitAndWiden(WaitAndWidenSettings),
    RoundRobin {},
    Random {},
    Pulsar(PulsarSettings),
    PulsarWaitAndWiden(PulsarWaitAndWidenSettings),
}

/// A fully resolved policy: the IR of docs/contract.md section 4.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Policy {
    pub version: u32,
    /// The stargate target the policy was built for.
    pub stargate: Target,
    pub algorithm: Algorithm,
    pub admission: Admission,
    pub settings: Settings,
}

/// One definition: the configured fields (for merging request expressions)
/// and the policy they build. Identity (the `Arc` pointer) keys balancer
/// instances, so a method-only override naming the configured algorithm
/// shares the configured definition's state.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Definition {
    pub config: AlgorithmConfig,
    pub policy: Policy,
}

/// A model's entry: its algorithm and its model-level request algorithms.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ModelEntry {
    pub definition: Arc<Definition>,
    pub request_algorithms: IndexMap<Algorithm, Arc<Definition>>,
}

/// A router's whole configuration, lowered (from a route file or lb-config.json).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RouteTable {
    pub version: u32,
    /// For models absent from `models`; a name-only entry (default settings)
    /// when it comes from lb-config.json.
    pub default: Arc<Definition>,
    pub request_algorithms: IndexMap<Algorithm, Arc<Definition>>,
    pub models: IndexMap<String, ModelEntry>,
}

/// Which configuration set a model uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetKind {
    /// The model has an entry under `models`.
    Model,
    /// The default set (`default` + top-level `request_algorithms`).
    Default,
}

/// The result of resolving a method for a model (docs/stargate.md 4.4).
#[derive(Clone, Debug)]
pub struct Resolution<'a> {
    pub definition: &'a Arc<Definition>,
    pub set: SetKind,
    /// Where it was found, for provenance and messages.
    pub origin: Origin,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// The set's configured algorithm (model entry or `default`).
    Configured,
    /// The set's own `request_algorithms` (model-level for a model entry).
    SetRequestAlgorithms,
    /// The top-level `request_algorithms`, for a model with an entry.
    TopLevelRequestAlgorithms,
}

impl RouteTable {
    /// A table whose every definition is built from `config` with `build`.
    ///
    /// The permissive default (no `--lb-config-path`): default `power-of-n`,
    /// every built-in algorithm available with default settings.
    pub fn permissive(build: impl Fn(&AlgorithmConfig) -> Policy) -> RouteTable {
        let def = |a: Algorithm| {
            let config = AlgorithmConfig::named(a);
            let policy = build(&config);
            Arc::new(Definition { config, policy })
        };
        RouteTable {
            version: IR_VERSION,
            default: def(Algorithm::PowerOfN),
            request_algorithms: Algorithm::ALL.into_iter().map(|a| (a, def(a))).collect(),
            models: IndexMap::new(),
        }
    }

    /// The set's configured definition for `model`, used without
    /// `x-routing-method`.
    pub fn configured(&self, model: &str) -> &Arc<Definition> {
        match self.models.get(model) {
            Some(entry) => &entry.definition,
            None => &self.default,
        }
    }

    /// Resolves a method naming `algorithm` for `model` (4.4). `None` is
    /// stargate's `unavailable`.
    pub fn resolve(&self, model: &str, algorithm: Algorithm) -> Option<Resolution<'_>> {
        let found = |definition, set, origin| {
            Some(Resolution {
                definition,
                set,
                origin,
            })
        };
        match self.models.get(model) {
            Some(entry) => {
                if entry.definition.config.algorithm == algorithm {
                    return found(&entry.definition, SetKind::Model, Origin::Configured);
                }
                if let Some(d) = entry.request_algorithms.get(&algorithm) {
                    return found(d, SetKind::Model, Origin::SetRequestAlgorithms);
                }
                self.request_algorithms
                    .get(&algorithm)
                    .and_then(|d| found(d, SetKind::Model, Origin::TopLevelRequestAlgorithms))
            }
            None => self.resolve_unlisted(algorithm),
        }
    }

    /// Resolves a method naming `algorithm` for a model without an entry:
    /// the default set (4.4).
    pub fn resolve_unlisted(&self, algorithm: Algorithm) -> Option<Resolution<'_>> {
        let found = |definition, origin| {
            Some(Resolution {
                definition,
                set: SetKind::Default,
                origin,
            })
        };
        if self.default.config.algorithm == algorithm {
            return found(&self.default, Origin::Configured);
        }
        self.request_algorithms
            .get(&algorithm)
            .and_then(|d| found(d, Origin::SetRequestAlgorithms))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_names_normalise_case_underscores_and_aliases() {
        let a = |s| Algorithm::from_header_name(s);
        assert_eq!(
            a("PULSAR_WAIT_AND_WIDEN"),
            Some((Algorithm::PulsarWaitAndWiden, NameMatch::Canonical))
        );
        assert_eq!(
            a(" power_of_two "),
            Some((Algorithm::PowerOfN, NameMatch::Alias))
        );
        assert_eq!(
            a("groq_multiregion"),
            Some((Algorithm::WaitAndWiden, NameMatch::Alias))
        );
        assert_eq!(a("powerOf2"), Some((Algorithm::PowerOfN, NameMatch::Alias)));
        assert_eq!(a("fastest"), None);
        assert_eq!(a(""), None);
    }

    #[test]
    fn json_names_are_exact() {
        assert_eq!(
            Algorithm::from_json_name("powerOf2"),
            Some((Algorithm::PowerOfN, NameMatch::Alias))
        );
        assert_eq!(Algorithm::from_json_name("Pulsar"), None);
        assert_eq!(Algorithm::from_json_name("round_robin"), None);
    }
}
