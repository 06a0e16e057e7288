//! One detailed lb-config.json object: its fields typed as serde would,
//! the unsupported-field rule, the builder, and the warnings for values
//! stargate normalises or ignores.

use super::json::{is_integer, Json, JsonNumber, Member, Node};
use super::read::{Entry, Place, Reader};
use crate::check::expr::{floor_above_ceil, no_queue_slo, not_in_target};
use crate::check::lower::builder_errors;
use crate::check::schema::{algorithm_list, set, Field, Kind, Typed};
use crate::check::suggest::did_you_mean;
use crate::diag::{Code, Diagnostic, Span};
use crate::ir::{Algorithm, AlgorithmConfig, Comparator, RendezvousWeight};

/// What an unsigned field takes, in messages.
const UNSIGNED: &str = "an integer from 0 to 2^64-1";

impl Reader<'_> {
    /// A map value: a name (default settings) or a detailed object.
    pub(super) fn entry(&mut self, node: &Node, place: Place) -> Entry {
        match &node.value {
            Json::String(name) => self
                .algorithm_name(name, node.span)
                .map(AlgorithmConfig::named),
            Json::Object(members) => self.detailed(node, members, place),
            other => {
                self.push(Diagnostic::new(
                    Code::InvalidType,
                    node.span,
                    // stargate's words (docs/stargate.md 4.1).
                    format!(
                        "invalid type: {}, expected algorithm name or detailed config object",
                        other.type_name()
                    ),
                ));
                None
            }
        }
    }

    /// Reports every problem of the object, not only the first: the
    /// errors come in stargate's order (parse-time typing and unsupported
    /// fields, then the builder's refusals), and warnings about the fields
    /// that did type are kept.
    fn detailed(&mut self, node: &Node, members: &[Member], place: Place) -> Entry {
        let errors_before = self.errors;
        let members = self.unique_members(members);
        let Some(alg_member) = members.iter().find(|m| m.key == "algorithm") else {
            let d = Diagnostic::new(
                Code::MissingField,
                Span::new(node.span.start, node.span.start + 1),
                "missing field `algorithm`",
            );
            // A mistyped `algorithm` key (`algoritm`): name it.
            let misspelt = members.iter().find(|m| {
                m.key.len() <= 64
                    && Field::from_name(&m.key).is_none()
                    && did_you_mean(&m.key, ["algorithm"]).is_some()
            });
            self.push(match misspelt {
                Some(m) => Diagnostic {
                    span: m.key_span,
                    ..d
                }
                .with_help(format!(
                    "`{}` is not a field: did you mean `algorithm`?",
                    m.key
                ))
                .with_suggestion("\"algorithm\""),
                None => d,
            });
            return None;
        };
        let alg = match &alg_member.value.value {
            Json::String(name) => self.algorithm_name(name, alg_member.value.span)?,
            other => {
                self.push(Diagnostic::new(
                    Code::InvalidType,
                    alg_member.value.span,
                    format!(
                        "invalid type: {}, expected an algorithm name",
                        other.type_name()
                    ),
                ));
                return None;
            }
        };
        let mut config = AlgorithmConfig::named(alg);
        let mut rejected: Vec<(&Member, Option<Field>)> = Vec::new();
        let mut key_spans: Vec<(Field, Span)> = Vec::new();
        for m in &members {
            match m.key.as_str() {
                "algorithm" => {}
                "request_algorithms" => {
                    if place == Place::RequestAlgorithm {
                        self.push(
                            Diagnostic::new(
                                Code::IgnoredRequestAlgorithms,
                                m.key_span,
                                "request_algorithms inside a request_algorithms entry is parsed and discarded",
                            )
                            .with_help("move it into a `models` entry"),
                        );
                    }
                    if place != Place::Model {
                        // Parsed, so its type errors still fail start-up;
                        // never built, so nothing else is checked.
                        let _ = self.request_algorithms(&m.value, None, Place::Discarded);
                    }
                }
                key => match Field::from_name(key) {
                    Some(field)
                        if field.json_algorithms().contains(&alg)
                            && field.accepted_by(self.target) =>
                    {
                        if let Some(value) = self.json_value(field, &m.value) {
                            match set(&mut config.fields, field, value) {
                                Ok(()) => key_spans.push((field, m.key_span)),
                                Err(refused) => self.push(Diagnostic::new(
                                    Code::InvalidType,
                                    m.value.span,
                                    refused.to_string(),
                                )),
                            }
                        }
                    }
                    field => rejected.push((m, field)),
                },
            }
        }
        self.report_unsupported(alg, &rejected);
        if place != Place::Discarded {
            let span_of = |f: Option<Field>| {
                f.and_then(|f| key_spans.iter().find(|(k, _)| *k == f))
                    .map_or(alg_member.value.span, |(_, s)| *s)
            };
            for (field, message) in builder_errors(&config, self.target) {
                self.push(builder_diagnostic(alg, field, span_of(field), message));
            }
            self.warn(alg, &config, &key_spans);
        }
        (self.errors == errors_before).then_some(config)
    }

    /// One diagnostic per rejected key. The first carries stargate's
    /// message, every rejected key sorted (docs/stargate.md 4.3); the others
    /// name only their own key, "<alg> config does not support field(s):
    /// <key>": repeating the list in each made output quadratic in the
    /// number of keys.
    fn report_unsupported(&mut self, alg: Algorithm, rejected: &[(&Member, Option<Field>)]) {
        if rejected.is_empty() {
            return;
        }
        let mut names: Vec<&str> = rejected.iter().map(|(m, _)| m.key.as_str()).collect();
        names.sort_unstable();
        let mut stargate = Some(names.join(", "));
        let candidates: Vec<&str> = Field::ALL
            .into_iter()
            .filter(|f| f.json_algorithms().contains(&alg) && f.accepted_by(self.target))
            .map(Field::name)
            .chain(["algorithm", "request_algorithms"])
            .collect();
        for (m, field) in rejected {
            let keys = stargate.take().unwrap_or_else(|| m.key.clone());
            let message = format!("{alg} config does not support field(s): {keys}");
            let d = match field {
                // Known to another stargate target: its own code, the
                // message stargate at this target prints.
                Some(f) if !f.accepted_by(self.target) => {
                    let d = not_in_target(*f, self.target, m.key_span);
                    Diagnostic { message, ..d }
                }
                Some(f) => {
                    Diagnostic::new(Code::UnsupportedField, m.key_span, message).with_help(format!(
                        "{} applies to: {}",
                        f.name(),
                        algorithm_list(f.json_algorithms())
                    ))
                }
                None => {
                    let d = Diagnostic::new(Code::UnknownField, m.key_span, message);
                    match did_you_mean(&m.key, candidates.iter().copied()) {
                        Some(best) => d
                            .with_help(format!("did you mean `{best}`?"))
                            .with_suggestion(format!("\"{best}\"")),
                        None => d,
                    }
                }
            };
            self.push(d);
        }
    }

    /// Types a JSON value for a field as serde would (the same values fail
    /// with the same codes), in words a user reads: "an integer from 0 to
    /// 2^64-1", not serde's "u64".
    fn json_value(&mut self, field: Field, node: &Node) -> Option<Typed> {
        let expected = match field.kind() {
            Kind::Boolean => "a boolean",
            Kind::Text | Kind::Comparator | Kind::Weight => "a string",
            Kind::Unsigned => UNSIGNED,
            Kind::Decimal => "a number",
        };
        let takes = || format!("{} takes {}", field.name(), field.kind().describe());
        let type_error = |v: &Json| {
            Diagnostic::new(
                Code::InvalidType,
                node.span,
                format!("invalid type: {}, expected {expected}", v.type_name()),
            )
            .with_help(takes())
        };
        let nullable = field.spec().nullable;
        let typed = match (&node.value, field.kind()) {
            // serde reads `null` as "unset" for optional fields.
            (Json::Null, _) if nullable => return None,
            (Json::Bool(b), Kind::Boolean) => Ok(Typed::Bool(*b)),
            (Json::String(s), Kind::Text) => Ok(Typed::Text(s.clone())),
            (Json::String(s), Kind::Comparator) => Comparator::from_name(s)
                .map(Typed::Comparator)
                .ok_or_else(|| self.unknown_variant(field, node, s)),
            (Json::String(s), Kind::Weight) => RendezvousWeight::from_name(s)
                .map(Typed::Weight)
                .ok_or_else(|| self.unknown_variant(field, node, s)),
            (Json::Number(n), _) if !n.parse::<f64>().is_ok_and(f64::is_finite) => {
                // serde_json refuses a number that overflows f64 (`1e400`)
                // while parsing, whatever the field.
                Err(Diagnostic::new(
                    Code::InvalidJson,
                    node.span,
                    format!("number out of range: `{n}`"),
                ))
            }
            (Json::Number(n), Kind::Unsigned) => match JsonNumber::read(n) {
                JsonNumber::Unsigned(v) => Ok(Typed::Unsigned(v)),
                JsonNumber::Signed(v) => Err(Diagnostic::new(
                    Code::InvalidValue,
                    node.span,
                    format!("invalid value: integer `{v}` is negative, expected {UNSIGNED}"),
                )
                .with_help(takes())),
                // serde_json reads these as floats, so serde says
                // invalid_type; the message says what they are.
                JsonNumber::Float(_) if n == "-0" => Err(Diagnostic::new(
                    Code::InvalidType,
                    node.span,
                    format!(
                        "invalid type: `-0` reads as a floating-point number, expected {UNSIGNED}"
                    ),
                )
                .with_help("write 0")),
                JsonNumber::Float(_) if is_integer(n) => {
                    let what = if n.starts_with('-') {
                        "negative"
                    } else {
                        "too large"
                    };
                    Err(Diagnostic::new(
                        Code::InvalidType,
                        node.span,
                        format!("invalid type: integer `{n}` is {what}, expected {UNSIGNED}"),
                    )
                    .with_help(takes()))
                }
                JsonNumber::Float(_) => Err(type_error(&node.value)),
            },
            (Json::Number(n), Kind::Decimal) => match n.parse::<f64>() {
                Ok(v) => Ok(Typed::Decimal(v)),
                Err(_) => Err(type_error(&node.value)),
            },
            (v, _) => Err(type_error(v)),
        };
        typed.map_err(|d| self.push(d)).ok()
    }

    fn unknown_variant(&self, field: Field, node: &Node, s: &str) -> Diagnostic {
        let d = Diagnostic::new(
            Code::InvalidValue,
            node.span,
            format!("invalid value: unknown {} `{s}`", field.name()),
        );
        match field.expression_range() {
            Some(range) => d.with_help(range),
            None => d,
        }
    }

    /// Values stargate accepts but normalises, and settings that do nothing.
    fn warn(&mut self, alg: Algorithm, config: &AlgorithmConfig, keys: &[(Field, Span)]) {
        let span_of = |f: Field| keys.iter().find(|(k, _)| *k == f).map(|(_, s)| *s);
        let f = &config.fields;
        let mut normalised = |field: Field, value: Option<u64>, meaning: &str| {
            if let (Some(0), Some(span)) = (value, span_of(field)) {
                self.push(
                    Diagnostic::new(
                        Code::NormalisedValue,
                        span,
                        format!("{} 0 {meaning}", field.name()),
                    )
                    .with_help("write the value it means"),
                );
            }
        };
        if matches!(alg, Algorithm::WaitAndWiden | Algorithm::PulsarWaitAndWiden) {
            normalised(Field::N, f.n, "is treated as 1");
        }
        if alg == Algorithm::WaitAndWiden {
            normalised(
                Field::CacheAffinityVirtualNodes,
                f.cache_affinity_virtual_nodes,
                "is treated as 1",
            );
            normalised(
                Field::CacheAffinityBackendSelectionCount,
                f.cache_affinity_backend_selection_count,
                "turns cache affinity off",
            );
        }
        if alg == Algorithm::PulsarWaitAndWiden {
            normalised(
                Field::CacheAffinityBackendSelectionCount,
                f.cache_affinity_backend_selection_count,
                "is treated as 1",
            );
            // Accepted for compatibility with wait-and-widen entries, read
            // by nothing: PWW ranks with Pulsar, not a hash ring (3.8.1).
            if let Some(span) = span_of(Field::CacheAffinityVirtualNodes) {
                self.push(
                    Diagnostic::new(
                        Code::IgnoredField,
                        span,
                        "cache_affinity_virtual_nodes is accepted and ignored by \
                         pulsar-wait-and-widen, which ranks with Pulsar instead of a hash ring",
                    )
                    .with_help("remove the field"),
                );
            }
        }
        let floor = span_of(Field::MaxQueueTimeFloorMs);
        let ceil = span_of(Field::MaxQueueTimeCeilMs);
        if let (Some(span), None) | (None, Some(span)) = (floor, ceil) {
            self.push(
                Diagnostic::new(
                    Code::IncompleteQueueSlo,
                    span,
                    "only one queue-time bound is set, so the queue SLO is off",
                )
                .with_help("set both max_queue_time_floor_ms and max_queue_time_ceil_ms"),
            );
        }
        if let Some(d) = floor_above_ceil(f, || floor.or(ceil).unwrap_or_default()) {
            self.push(d);
        }
        let wait_key = [
            Field::CacheAffinityWaitMs,
            Field::BandWidenIntervalMs,
            Field::FallbackMaxQueued,
        ]
        .into_iter()
        .find_map(span_of);
        if let Some(d) = wait_key.and_then(|span| no_queue_slo(alg, self.target, f, span)) {
            self.push(d);
        }
    }
}

/// A refusal of stargate's config builder as a diagnostic. A field the
/// algorithm does not use (`comparator` on pulsar-wait-and-widen,
/// `band_widen_interval_ms` on wait-and-widen) is the same mistake as in an
/// expression: `not_applicable` with the same help, stargate's message.
fn builder_diagnostic(
    alg: Algorithm,
    field: Option<Field>,
    span: Span,
    message: String,
) -> Diagnostic {
    match field {
        Some(f) if !f.expression_algorithms().contains(&alg) => {
            Diagnostic::new(Code::NotApplicable, span, message).with_help(format!(
                "{} applies to: {}",
                f.name(),
                algorithm_list(f.expression_algorithms())
            ))
        }
        _ => Diagnostic::new(Code::InvalidValue, span, message),
    }
}
