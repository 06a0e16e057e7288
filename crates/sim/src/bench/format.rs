//! The stargate-bench scenario format (docs/simulator.md, "stargate-bench
//! files"): its types, and the check of every key against the format, so
//! that an unknown key is a diagnostic with a did-you-mean, like every other
//! input of routex.

use routex::check::did_you_mean;
use routex::diag::{Code, Diagnostic, Span};
use serde::Deserialize;
use yaml_serde::Value;

/// A stargate-bench file.
#[derive(Clone, Debug, Deserialize)]
pub struct BenchFile {
    pub name: String,
    #[serde(default)]
    pub metadata: Metadata,
    pub model: String,
    pub seed: u64,
    pub request_count: u32,
    pub max_concurrency: u32,
    /// Read and ignored (the transport of stargate's real-time runs).
    #[serde(default)]
    pub tunnel_protocol: Option<Value>,
    #[serde(default)]
    pub stargates: Stargates,
    pub backends: Backends,
    pub traffic_pattern: Traffic,
    pub algorithms: Vec<AlgorithmSpec>,
    #[serde(default)]
    pub degradation: Degradation,
}

#[derive(Clone, Debug, Default, Deserialize)]
pub struct Metadata {
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub tags: Vec<String>,
    #[serde(default)]
    pub expected_runtime: String,
    #[serde(default)]
    pub expected_signal: String,
}

#[derive(Clone, Debug, Deserialize)]
pub struct Stargates {
    pub count: u32,
}

impl Default for Stargates {
    fn default() -> Self {
        Stargates { count: 1 }
    }
}

#[derive(Clone, Debug, Deserialize)]
pub struct Backends {
    pub count: u32,
    #[serde(default = "one")]
    pub pylons_per_cluster: u32,
    #[serde(default)]
    pub cluster_id_template: Option<String>,
    pub profile: Profile,
    #[serde(default)]
    pub profiles: Vec<ProfileCount>,
}

fn one() -> u32 {
    1
}

#[derive(Clone, Debug, Deserialize)]
pub struct ProfileCount {
    pub count: u32,
    pub profile: Profile,
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct Profile {
    #[serde(default)]
    pub name: String,
    #[serde(default = "unit")]
    pub weight: f64,
    pub max_concurrent_requests: u32,
    #[serde(default)]
    pub kv_cache_capacity_tokens: u64,
    pub service_time_ms: ServiceTime,
    #[serde(default)]
    pub registration: Registration,
}

fn unit() -> f64 {
    1.0
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct ServiceTime {
    pub ttft_mean: f64,
    #[serde(default)]
    pub ttft_jitter_ms: u64,
    pub decode_tokens_per_s: f64,
    #[serde(default)]
    pub decode_jitter_ms: u64,
    pub prefill_tokens_per_s: f64,
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
pub struct Registration {
    /// The input rate a backend registers with; 0 = the prefill rate.
    #[serde(default)]
    pub last_mean_input_tps: f64,
}

/// A size distribution: the scenario's size laws share it
/// (docs/simulator.md, "Size laws").
pub use crate::workload::sizes::Dist;

/// An arrival law of the kinds that have one.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(tag = "distribution", rename_all = "snake_case")]
pub enum Arrival {
    Poisson { target_rps: f64 },
    Constant { interval_ms: f64 },
}

/// Sizes of one request class.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct SizeClass {
    pub input_tokens: Dist,
    pub output_tokens: Dist,
}

/// `traffic_pattern`: the kind's own fields are optional here and checked
/// by kind.
#[derive(Clone, Debug, Deserialize)]
pub struct Traffic {
    pub kind: String,
    #[serde(default)]
    pub routing_keys: u32,
    #[serde(default)]
    pub cache_affinity_keys: u32,
    #[serde(default)]
    pub input_tokens: Option<Dist>,
    #[serde(default)]
    pub output_tokens: Option<Dist>,
    #[serde(default)]
    pub arrival: Option<Arrival>,
    #[serde(default)]
    pub quiet_rps: Option<f64>,
    #[serde(default)]
    pub burst_rps: Option<f64>,
    #[serde(default)]
    pub burst_period_requests: Option<u32>,
    #[serde(default)]
    pub start_rps: Option<f64>,
    #[serde(default)]
    pub step_rps: Option<f64>,
    #[serde(default)]
    pub step_requests: Option<u32>,
    #[serde(default)]
    pub hotset_fraction: Option<f64>,
    #[serde(default)]
    pub hotset_share: Option<f64>,
    #[serde(default)]
    pub initial_input_tokens: Option<Dist>,
    #[serde(default)]
    pub incremental_input_tokens: Option<Dist>,
    #[serde(default)]
    pub small_share: Option<f64>,
    #[serde(default)]
    pub small: Option<SizeClass>,
    #[serde(default)]
    pub large: Option<SizeClass>,
}

#[derive(Clone, Debug, Deserialize)]
pub struct AlgorithmSpec {
    pub name: String,
    /// An lb-config.json object, compiled by routex.
    pub config: Value,
    #[serde(default)]
    pub pylon_queue_admission: Option<QueueAdmission>,
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct QueueAdmission {
    #[serde(default = "yes")]
    pub enabled: bool,
    #[serde(default = "default_delta")]
    pub min_delta_ms: u64,
    #[serde(default = "default_tolerance")]
    pub tolerance_factor: f64,
    /// Read; the router retries a 429 at once (docs/simulator.md).
    #[serde(default)]
    pub retry_after_ms: u64,
}

fn yes() -> bool {
    true
}
fn default_delta() -> u64 {
    25
}
fn default_tolerance() -> f64 {
    1.25
}

#[derive(Clone, Debug, Default, Deserialize)]
pub struct Degradation {
    #[serde(default)]
    pub actions: Vec<DegradationAction>,
}

#[derive(Clone, Debug, Deserialize)]
pub struct DegradationAction {
    pub at_request: u32,
    pub backend_index: u32,
    pub action: String,
}

/// The kinds of `traffic_pattern.kind`.
pub const KINDS: &[&str] = &[
    "uniform",
    "bursty",
    "stair_step",
    "zipf_hotset",
    "mixed_size",
    "prefix_reuse",
];

/// The actions of `degradation.actions`.
pub const ACTIONS: &[&str] = &["delete_backend_pod"];

/// The format's keys, for the unknown-key check.
enum Shape {
    /// A value the format does not look into here.
    Leaf,
    Map(&'static [(&'static str, Shape)]),
    List(&'static Shape),
}

use Shape::{Leaf, List, Map};

/// A size distribution's keys (a `const`: statics cannot name statics).
const DIST_REF: Shape = Map(&[
    ("distribution", Leaf),
    ("value", Leaf),
    ("min", Leaf),
    ("max", Leaf),
    ("mean", Leaf),
    ("sigma", Leaf),
    ("p99_cap", Leaf),
]);

const PROFILE: Shape = Map(&[
    ("name", Leaf),
    ("weight", Leaf),
    ("max_concurrent_requests", Leaf),
    ("kv_cache_capacity_tokens", Leaf),
    (
        "service_time_ms",
        Map(&[
            ("ttft_mean", Leaf),
            ("ttft_jitter_ms", Leaf),
            ("decode_tokens_per_s", Leaf),
            ("decode_jitter_ms", Leaf),
            ("prefill_tokens_per_s", Leaf),
        ]),
    ),
    ("registration", Map(&[("last_mean_input_tps", Leaf)])),
]);

static FILE: Shape = Map(&[
    ("name", Leaf),
    (
        "metadata",
        Map(&[
            ("description", Leaf),
            ("tags", Leaf),
            ("expected_runtime", Leaf),
            ("expected_signal", Leaf),
        ]),
    ),
    ("model", Leaf),
    ("seed", Leaf),
    ("request_count", Leaf),
    ("max_concurrency", Leaf),
    ("tunnel_protocol", Leaf),
    ("stargates", Map(&[("count", Leaf)])),
    (
        "backends",
        Map(&[
            ("count", Leaf),
            ("pylons_per_cluster", Leaf),
            ("cluster_id_template", Leaf),
            ("profile", PROFILE),
            (
                "profiles",
                List(&Map(&[("count", Leaf), ("profile", PROFILE)])),
            ),
        ]),
    ),
    (
        "traffic_pattern",
        Map(&[
            ("kind", Leaf),
            ("routing_keys", Leaf),
            ("cache_affinity_keys", Leaf),
            ("input_tokens", DIST_REF),
            ("output_tokens", DIST_REF),
            (
                "arrival",
                Map(&[
                    ("distribution", Leaf),
                    ("target_rps", Leaf),
                    ("interval_ms", Leaf),
                ]),
            ),
            ("quiet_rps", Leaf),
            ("burst_rps", Leaf),
            ("burst_period_requests", Leaf),
            ("start_rps", Leaf),
            ("step_rps", Leaf),
            ("step_requests", Leaf),
            ("hotset_fraction", Leaf),
            ("hotset_share", Leaf),
            ("initial_input_tokens", DIST_REF),
            ("incremental_input_tokens", DIST_REF),
            ("small_share", Leaf),
            (
                "small",
                Map(&[("input_tokens", DIST_REF), ("output_tokens", DIST_REF)]),
            ),
            (
                "large",
                Map(&[("input_tokens", DIST_REF), ("output_tokens", DIST_REF)]),
            ),
        ]),
    ),
    (
        "algorithms",
        List(&Map(&[
            ("name", Leaf),
            // Checked by routex as an lb-config.json object.
            ("config", Leaf),
            (
                "pylon_queue_admission",
                Map(&[
                    ("enabled", Leaf),
                    ("min_delta_ms", Leaf),
                    ("tolerance_factor", Leaf),
                    ("retry_after_ms", Leaf),
                ]),
            ),
        ])),
    ),
    (
        "degradation",
        Map(&[(
            "actions",
            List(&Map(&[
                ("at_request", Leaf),
                ("backend_index", Leaf),
                ("action", Leaf),
            ])),
        )]),
    ),
]);

/// Finds where keys are in the text: each lookup starts after its parent.
pub struct Locator<'t> {
    text: &'t str,
}

impl<'t> Locator<'t> {
    pub fn new(text: &'t str) -> Self {
        Locator { text }
    }

    /// The span of `key:` as a line's first word (after `- ` of a list
    /// item), at or after byte `from`; the whole text's first byte if none.
    pub fn key(&self, key: &str, from: usize) -> Span {
        let mut at = from.min(self.text.len());
        // Back to the start of the line, so that `from` may be mid-line.
        at = self.text[..at].rfind('\n').map_or(0, |i| i + 1);
        for line in self.text[at..].split_inclusive('\n') {
            let trimmed = line.trim_start().trim_start_matches("- ").trim_start();
            let offset = at + (line.len() - trimmed.len());
            if let Some(rest) = trimmed.strip_prefix(key) {
                if rest.trim_start().starts_with(':') {
                    return Span::new(offset, offset + key.len());
                }
            }
            at += line.len();
        }
        Span::new(0, 0)
    }

    /// The span of a dotted path (list indexes skipped): each key searched
    /// after the previous one.
    pub fn path(&self, path: &str) -> Span {
        let mut span = Span::new(0, 0);
        for part in path.split('.').filter(|p| p.parse::<usize>().is_err()) {
            span = self.key(part, span.end);
        }
        span
    }
}

/// Every key of `value` that the format does not know: an `UnknownField`
/// diagnostic with a did-you-mean among the keys allowed there.
pub fn unknown_keys(value: &Value, locate: &Locator<'_>) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    walk(value, &FILE, "", 0, locate, &mut out);
    out
}

fn walk(
    value: &Value,
    shape: &Shape,
    path: &str,
    from: usize,
    locate: &Locator<'_>,
    out: &mut Vec<Diagnostic>,
) {
    match (shape, value) {
        (Map(keys), Value::Mapping(map)) => {
            for (k, v) in map {
                let Some(name) = k.as_str() else {
                    continue;
                };
                let at = locate.key(name, from);
                match keys.iter().find(|(n, _)| *n == name) {
                    Some((_, inner)) => {
                        let child = if path.is_empty() {
                            name.to_string()
                        } else {
                            format!("{path}.{name}")
                        };
                        walk(v, inner, &child, at.end, locate, out);
                    }
                    None => {
                        let allowed = keys.iter().map(|(n, _)| *n);
                        let mut d = Diagnostic::new(
                            Code::UnknownField,
                            at,
                            match path {
                                "" => format!("unknown key `{name}` in a stargate-bench file"),
                                p => format!("unknown key `{name}` in `{p}`"),
                            },
                        );
                        d = match did_you_mean(name, allowed) {
                            Some(best) => d.with_help(format!("did you mean `{best}`?")),
                            None => d.with_help(format!(
                                "keys here: {}",
                                keys.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
                            )),
                        };
                        out.push(d);
                    }
                }
            }
        }
        (List(item), Value::Sequence(items)) => {
            let mut at = from;
            for (i, v) in items.iter().enumerate() {
                walk(v, item, &format!("{path}.{i}"), at, locate, out);
                // The next item starts after this one's first key.
                if let Some((k, _)) = v.as_mapping().and_then(|m| m.iter().next()) {
                    if let Some(name) = k.as_str() {
                        at = locate.key(name, at).end;
                    }
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_keys_get_a_did_you_mean_at_their_line() {
        let text = "name: x\nbackends:\n  count: 2\n  profil:\n    name: y\ntraffic_pattern:\n  kind: uniform\n  arival: {}\n";
        let v: Value = yaml_serde::from_str(text).expect("yaml");
        let d = unknown_keys(&v, &Locator::new(text));
        assert_eq!(d.len(), 2);
        assert_eq!(&text[d[0].span.start..d[0].span.end], "profil");
        assert_eq!(d[0].help.as_deref(), Some("did you mean `profile`?"));
        assert_eq!(&text[d[1].span.start..d[1].span.end], "arival");
        assert_eq!(d[1].help.as_deref(), Some("did you mean `arrival`?"));
    }
}
