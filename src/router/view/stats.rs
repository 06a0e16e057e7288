//! One backend's stats report, the input of the candidate view
//! (docs/stargate.md 1.3), and its JSON form.
//!
//! The JSON form is what a router reads off the wire (a heartbeat, a
//! metrics scrape turned into a report): the field names below, every
//! field optional (0, absent or empty when missing, as a backend that does
//! not report a value), a field routex does not know refused, so that a
//! misspelt name is an error rather than a silent 0 that makes a busy
//! backend look idle. `queue_time_estimate_ms_by_priority` is an object
//! whose keys are priorities written as text (JSON keys are strings):
//! `{"0": 40, "2": 120}`.

use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// One backend's stats report, in the units engines publish. Fields a
/// backend does not report stay at their defaults (0, `None`, empty).
///
/// Serde reads and writes it as a JSON object with these field names (the
/// module documentation above gives the rules):
///
/// ```
/// use routex::router::BackendStats;
///
/// let stats: BackendStats = serde_json::from_str(
///     r#"{"last_mean_input_tps": 8000, "queue_size": 2,
///         "queue_time_estimate_ms_by_priority": {"0": 40, "2": 120}}"#,
/// ).unwrap();
/// assert_eq!(stats.queue_size, 2);
/// assert_eq!(stats.max_input_tps, None);
/// assert_eq!(stats.queue_time_estimate_ms_by_priority, vec![(0, 40), (2, 120)]);
/// assert!(serde_json::from_str::<BackendStats>(r#"{"queue_sise": 2}"#).is_err());
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BackendStats {
    /// Mean prefill throughput, input tokens per second. Not a valid rate
    /// (0, negative, NaN, infinite) keeps the backend's last valid value.
    pub last_mean_input_tps: f64,
    /// Peak input tokens per second of the engine's generation, if known.
    pub max_input_tps: Option<f64>,
    /// Requests not yet producing output.
    pub queue_size: u64,
    /// Prompt tokens of those requests.
    pub queued_input_size: u64,
    /// Prompt tokens of every request the backend holds (carried, unused
    /// by the algorithms).
    pub total_query_input_size: u64,
    /// Requests in the engine (cluster-scoped).
    pub num_running_queries: u64,
    /// Engine slots; 0 = unknown (cluster-scoped).
    pub max_engine_concurrency: u64,
    /// (priority, ms) published queue estimates (cluster-scoped); any order,
    /// duplicates allowed (the last one of a priority wins). In JSON an
    /// object keyed by the priority as text, read in document order.
    #[serde(with = "priority_map")]
    pub queue_time_estimate_ms_by_priority: Vec<(u32, u64)>,
    /// KV cache capacity, in tokens (cluster-scoped).
    pub kv_cache_capacity_tokens: u64,
    /// KV cache tokens in use (cluster-scoped).
    pub kv_cache_used_tokens: u64,
    /// Free KV cache tokens (cluster-scoped): Pulsar's KV check compares
    /// them with the request's input tokens.
    pub kv_cache_free_tokens: u64,
}

/// `Vec<(u32, u64)>` as a map, pairs kept in order (a repeated key stays
/// repeated, and the view keeps the last one).
mod priority_map {
    use super::*;

    pub fn serialize<S: Serializer>(pairs: &[(u32, u64)], s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(pairs.len()))?;
        for (priority, ms) in pairs {
            map.serialize_entry(priority, ms)?;
        }
        map.end()
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<(u32, u64)>, D::Error> {
        d.deserialize_map(Pairs)
    }

    struct Pairs;

    impl<'de> Visitor<'de> for Pairs {
        type Value = Vec<(u32, u64)>;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(
                "an object of priority keys (quoted integers from 0 to 2^32-1) to milliseconds (whole numbers)",
            )
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            // The hint is client-sized: cap the up-front reservation.
            let mut pairs = Vec::with_capacity(map.size_hint().unwrap_or(0).min(16));
            while let Some(pair) = map.next_entry::<u32, u64>()? {
                pairs.push(pair);
            }
            Ok(pairs)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_round_trips_with_text_priority_keys() {
        let stats = BackendStats {
            last_mean_input_tps: 6000.5,
            max_input_tps: Some(8000.0),
            queue_size: 3,
            queue_time_estimate_ms_by_priority: vec![(2, 120), (0, 40), (2, 130)],
            kv_cache_free_tokens: 7,
            ..BackendStats::default()
        };
        let json = serde_json::to_string(&stats).unwrap();
        assert!(
            json.contains(r#""queue_time_estimate_ms_by_priority":{"2":120,"0":40,"2":130}"#),
            "{json}"
        );
        assert_eq!(serde_json::from_str::<BackendStats>(&json).unwrap(), stats);
    }

    #[test]
    fn absent_fields_default_and_wrong_ones_are_refused() {
        let empty: BackendStats = serde_json::from_str("{}").unwrap();
        assert_eq!(empty, BackendStats::default());
        let null_peak: BackendStats = serde_json::from_str(r#"{"max_input_tps": null}"#).unwrap();
        assert_eq!(null_peak.max_input_tps, None);
        for (bad, why) in [
            (r#"{"queue_sise": 1}"#, "unknown field `queue_sise`"),
            (r#"{"queue_size": -1}"#, "invalid value: integer `-1`"),
            (
                r#"{"queue_time_estimate_ms_by_priority": {"high": 5}}"#,
                "expected key to be a number in quotes",
            ),
            (
                r#"{"queue_time_estimate_ms_by_priority": [[0, 5]]}"#,
                "an object of priority",
            ),
        ] {
            let error = serde_json::from_str::<BackendStats>(bad).unwrap_err();
            assert!(error.to_string().contains(why), "{bad}: {error}");
        }
    }
}
