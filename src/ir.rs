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
    /// `power-of-n`: samples `sample_count` candidates and keeps the best by
    /// the comparator (docs/stargate.md 3.5). The default algorithm.
    #[serde(rename = "power-of-n")]
    PowerOfN,
    /// `wait-and-widen` (WW): TTFT buckets that unlock over time, queue SLO,
    /// optional cache-affinity ring (docs/stargate.md 3.6).
    #[serde(rename = "wait-and-widen")]
    WaitAndWiden,
    /// `round-robin`: a per-instance counter over the non-excluded
    /// candidates (docs/stargate.md 3.3).
    #[serde(rename = "round-robin")]
    RoundRobin,
    /// `random`: uniform over the non-excluded candidates
    /// (docs/stargate.md 3.4).
    #[serde(rename = "random")]
    Random,
    /// `pulsar`: weighted rendezvous ranking, first feasible rank wins
    /// (docs/stargate.md 3.7).
    #[serde(rename = "pulsar")]
    Pulsar,
    /// `pulsar-wait-and-widen` (PWW): the Pulsar ranking opened in bands
    /// over time around an affinity group (docs/stargate.md 3.8).
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
    /// The canonical kebab-case name ([`Algorithm::name`]): no warning.
    Canonical,
    /// An alias: valid, with a `deprecated_alias` warning.
    Alias,
}

impl Algorithm {
    /// Every algorithm, in declaration order (the order of the permissive
    /// table's `request_algorithms`).
    pub const ALL: [Algorithm; 6] = [
        Algorithm::PowerOfN,
        Algorithm::WaitAndWiden,
        Algorithm::RoundRobin,
        Algorithm::Random,
        Algorithm::Pulsar,
        Algorithm::PulsarWaitAndWiden,
    ];

    /// The canonical name, as written in lb-config.json, route files,
    /// `x-routing-method` and the IR JSON (`"power-of-n"` ...).
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
    /// `ttft` (default): rtt + queue estimate + prefill of the request's
    /// tokens, in ms.
    #[default]
    Ttft,
    /// `queue-time`: the queue estimate alone, in ms.
    QueueTime,
    /// `input-work-seconds`: queued input plus the request's tokens over the
    /// cluster's input rate, in seconds.
    InputWorkSeconds,
    /// `utilization`: running requests over `max(max_engine_concurrency, 1)`.
    Utilization,
    /// `num-requests-queued`: the cluster's `queue_size`, compared as an
    /// integer.
    NumRequestsQueued,
}

impl Comparator {
    /// Every comparator, in the order of the docs/stargate.md 3.2 table.
    pub const ALL: [Comparator; 5] = [
        Comparator::Ttft,
        Comparator::QueueTime,
        Comparator::InputWorkSeconds,
        Comparator::Utilization,
        Comparator::NumRequestsQueued,
    ];

    /// The kebab-case name used in configurations and the IR JSON.
    pub const fn name(self) -> &'static str {
        match self {
            Comparator::Ttft => "ttft",
            Comparator::QueueTime => "queue-time",
            Comparator::InputWorkSeconds => "input-work-seconds",
            Comparator::Utilization => "utilization",
            Comparator::NumRequestsQueued => "num-requests-queued",
        }
    }

    /// The comparator spelled exactly `name` (case-sensitive, no aliases);
    /// `None` for any other text.
    pub fn from_name(name: &str) -> Option<Comparator> {
        Comparator::ALL.into_iter().find(|c| c.name() == name)
    }
}

/// Which statistic weights the Pulsar ranking (docs/stargate.md 3.7).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RendezvousWeight {
    /// `max-input-tps` (default): the cluster's maximum input tokens per
    /// second.
    #[default]
    MaxInputTps,
    /// `last-mean-input-tps`: the cluster's last mean input tokens per
    /// second. A cluster whose selected statistic is missing, not finite or
    /// not > 0 is not ranked (no fallback to the other statistic).
    LastMeanInputTps,
}

impl RendezvousWeight {
    /// The kebab-case name used in lb-config.json and the IR JSON.
    pub const fn name(self) -> &'static str {
        match self {
            RendezvousWeight::MaxInputTps => "max-input-tps",
            RendezvousWeight::LastMeanInputTps => "last-mean-input-tps",
        }
    }

    /// The weight spelled exactly `name` (case-sensitive); `None` for any
    /// other text.
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
    /// The configured algorithm (an alias already resolved to it).
    pub algorithm: Algorithm,
    /// The fields the source set explicitly, unvalidated against the
    /// algorithm; unset fields take their defaults when the policy is built.
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
    /// Reject (400) a request without a non-blank `x-cache-affinity-key`.
    /// Default false.
    pub require_cache_affinity_key: bool,
    /// Declares a need only; `consider_kv_free_tokens` implies it.
    pub require_input_tokens: bool,
    /// L, in seconds: reject (503) when the request's tokens plus the
    /// queued input over the fleet's input rate exceed it. `None` (default)
    /// = no limit. Unchecked in JSON: a non-positive value rejects every
    /// request with work.
    pub max_input_work_seconds: Option<f64>,
}

/// power-of-n, resolved.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PowerOfNSettings {
    /// How many candidates are sampled before comparing them; default 2,
    /// range 1..=64 (docs/stargate.md 3.5).
    pub sample_count: u64,
    /// How the sampled candidates are compared, lower is better; default
    /// `ttft`.
    pub comparator: Comparator,
}

/// The queue SLO is on only when both bounds are set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct QueueSlo {
    /// Queue-time limit at arrival, in ms (`max_queue_time_floor_ms`).
    pub floor_ms: u64,
    /// Queue-time limit once the request SLO has elapsed (or always, for a
    /// request without an SLO), in ms (`max_queue_time_ceil_ms`). May be
    /// below the floor: the limit then shrinks over time
    /// (docs/stargate.md 3.6.2).
    pub ceil_ms: u64,
}

/// Settings shared by wait-and-widen's and PWW's bucketed selection.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BucketSettings {
    /// How many unlocked candidates are sampled before comparing them;
    /// default 2, a configured 0 normalised to 1.
    pub n: u64,
    /// q: requests a cluster may queue beyond its engine concurrency and
    /// still be selected; default 0 (free slots only).
    pub max_queued: u64,
    /// Width of a TTFT bucket in ms: candidates this close to the fastest
    /// unlock together; default 20 (0 allowed in JSON).
    pub ttft_bucket_size_ms: u64,
    /// A slower bucket unlocks after its TTFT gap times this factor;
    /// default 0.25, unchecked in JSON (docs/stargate.md 3.6.3).
    pub next_bucket_unlock_factor: f64,
    /// Queue-time limit at arrival, in ms; unset by default. The queue SLO
    /// is on only with the ceiling too ([`BucketSettings::queue_slo`]).
    pub max_queue_time_floor_ms: Option<u64>,
    /// Queue-time limit at the request SLO, in ms; unset by default, and
    /// inert without the floor.
    pub max_queue_time_ceil_ms: Option<u64>,
    /// Leave the queue estimate out of bucketing (never out of the
    /// comparator, nor out of the queue-SLO check); default false.
    pub ignore_queue_time: bool,
    /// Leave the prefill estimate out of bucketing (never out of the
    /// comparator); default false.
    pub ignore_input_processing_time: bool,
}

impl BucketSettings {
    /// The queue SLO, `Some` only when both `max_queue_time_floor_ms` and
    /// `max_queue_time_ceil_ms` are set (docs/stargate.md 3.6.1).
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
    /// Text mixed into the affinity ring's hashes (docs/stargate.md 3.6.6):
    /// another seed, another placement. Default `""`.
    pub seed: String,
    /// How the sampled unlocked candidates are compared; default `ttft`.
    pub comparator: Comparator,
    /// 0 normalised to 1.
    pub cache_affinity_virtual_nodes: u64,
    /// `None` = affinity off (unset or 0).
    pub cache_affinity_backend_selection_count: Option<u64>,
    /// s: the prefill scale inside the affinity group (cached prefix),
    /// 0.0..=1.0; default 1.0 (no discount).
    pub cache_affinity_input_tokens_scale: f64,
    /// X, in ms: how long a keyed request waits for its affinity group
    /// before widening to every candidate; default 0.
    pub cache_affinity_wait_ms: u64,
    /// Sessions (docs/stargate.md 3.10): classify each keyed request by
    /// its last cluster. Always false for the `widening` target.
    pub last_cluster_affinity: bool,
    /// The bucketed selection's settings, flattened into the IR JSON.
    #[serde(flatten)]
    pub bucket: BucketSettings,
}

/// pulsar, resolved (docs/stargate.md 3.7).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PulsarSettings {
    /// Text mixed into every ranking hash (docs/stargate.md 3.7.2): another
    /// seed, another ranking. Default `""`.
    pub seed: String,
    /// Skip ranked clusters whose free KV-cache tokens cannot hold the
    /// request (implies `require_input_tokens`); default false.
    pub consider_kv_free_tokens: bool,
    /// Which statistic weights the ranking; default `max-input-tps`.
    pub rendezvous_weight: RendezvousWeight,
}

/// pulsar-wait-and-widen, resolved (docs/stargate.md 3.8.2).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PulsarWaitAndWidenSettings {
    /// Text mixed into every ranking hash: another seed, another ranking.
    /// Default `""`.
    pub seed: String,
    /// Skip ranked clusters whose free KV-cache tokens cannot hold the
    /// request (implies `require_input_tokens`); default false.
    pub consider_kv_free_tokens: bool,
    /// Which statistic weights the ranking; default `max-input-tps`.
    pub rendezvous_weight: RendezvousWeight,
    /// k: the size of the affinity group (the first k ranks) a keyed
    /// request prefers; unset or 0 normalised to 1.
    pub cache_affinity_backend_selection_count: u64,
    /// s: the prefill scale inside the affinity group (cached prefix),
    /// 0.0..=1.0; default 1.0.
    pub cache_affinity_input_tokens_scale: f64,
    /// X, in ms: how long a request waits for its affinity group before the
    /// bands widen; default 0.
    pub cache_affinity_wait_ms: u64,
    /// S, in ms: after X, one more band of ranks opens every S ms
    /// (docs/stargate.md 3.8.4). Defaults to X; 0 opens every band at X.
    pub band_widen_interval_ms: u64,
    /// Whether S is the default (unset): a new or stale session's S then
    /// follows its effective wait, 0 (docs/stargate.md 3.10).
    pub band_widen_interval_is_default: bool,
    /// f: the queue limit of clusters outside the affinity group; default
    /// 0 (free slots only).
    pub fallback_max_queued: u64,
    /// Sessions (docs/stargate.md 3.10). Always false for `widening`.
    pub last_cluster_affinity: bool,
    /// Whether a feasible rank 1 is selected at once without both queue
    /// bounds (3.8.3 step 2): the `widening` target's rule.
    pub no_queue_slo_shortcut: bool,
    /// The bucketed selection's settings, flattened into the IR JSON.
    #[serde(flatten)]
    pub bucket: BucketSettings,
}

/// The algorithm-specific part of a policy.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Settings {
    /// power-of-n's settings.
    PowerOfN(PowerOfNSettings),
    /// wait-and-widen's settings.
    WaitAndWiden(WaitAndWidenSettings),
    /// round-robin has no settings (an empty object in the IR JSON).
    RoundRobin {},
    /// random has no settings (an empty object in the IR JSON).
    Random {},
    /// pulsar's settings.
    Pulsar(PulsarSettings),
    /// pulsar-wait-and-widen's settings.
    PulsarWaitAndWiden(PulsarWaitAndWidenSettings),
}

/// A fully resolved policy: the IR of docs/contract.md section 4.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Policy {
    /// The IR format version, [`IR_VERSION`].
    pub version: u32,
    /// The stargate target the policy was built for.
    pub stargate: Target,
    /// The algorithm; always matches the variant of `settings`.
    pub algorithm: Algorithm,
    /// The admission checks run before every decision.
    pub admission: Admission,
    /// The algorithm's resolved settings.
    pub settings: Settings,
}

/// One definition: the configured fields (for merging request expressions)
/// and the policy they build. Identity (the `Arc` pointer) keys balancer
/// instances, so a method-only override naming the configured algorithm
/// shares the configured definition's state.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Definition {
    /// The fields as configured, before defaults: the base a request
    /// expression merges onto.
    pub config: AlgorithmConfig,
    /// The policy built from `config`.
    pub policy: Policy,
}

/// A model's entry: its algorithm and its model-level request algorithms.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ModelEntry {
    /// The model's configured algorithm, used without `x-routing-method`.
    pub definition: Arc<Definition>,
    /// The model-level `request_algorithms`: what `x-routing-method` may
    /// select for this model before the top-level map is consulted.
    pub request_algorithms: IndexMap<Algorithm, Arc<Definition>>,
}

/// A router's whole configuration, lowered (from a route file or lb-config.json).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RouteTable {
    /// The IR format version, [`IR_VERSION`].
    pub version: u32,
    /// For models absent from `models`; a name-only entry (default settings)
    /// when it comes from lb-config.json.
    pub default: Arc<Definition>,
    /// The top-level `request_algorithms`: the default set's methods, and
    /// the fallback for a model entry's (docs/stargate.md 4.4 step 3).
    pub request_algorithms: IndexMap<Algorithm, Arc<Definition>>,
    /// The models with their own entry, by exact model name, in file order.
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
    /// The definition the request uses; its pointer identity selects the
    /// balancer instance.
    pub definition: &'a Arc<Definition>,
    /// Which configuration set the model uses.
    pub set: SetKind,
    /// Where it was found, for provenance and messages.
    pub origin: Origin,
}

/// Where a resolution found its definition (docs/stargate.md 4.4 steps
/// 1 to 3).
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
