//! lb-config.json -> route table with stargate's start-up rules
//! (reference-behaviour.md 4.1-4.3). Every diagnostic points at the
//! offending key or value in the JSON text.

use super::json::{is_integer, parse, Json, Member, Node};
use crate::check::expr::{floor_above_ceil, no_queue_slo};
use crate::check::lower::{build_policy, field_of_builder_error};
use crate::check::schema::{algorithm_list, set, Field, Kind, Typed};
use crate::check::suggest::did_you_mean;
use crate::diag::{Code, Diagnostic, Report, Span};
use crate::ir::{
    Algorithm, AlgorithmConfig, Comparator, Definition, ModelEntry, NameMatch, RendezvousWeight,
    RouteTable, ALIASES, IR_VERSION,
};
use indexmap::IndexMap;
use std::sync::Arc;

const TOP_LEVEL: [&str; 3] = ["default", "request_algorithms", "models"];

/// Checks and lowers an lb-config.json text.
pub fn check_lb_config(source_name: &str, text: &str) -> (Option<RouteTable>, Report) {
    let mut report = Report::new(source_name, text);
    let mut reader = Reader {
        diags: &mut report.diagnostics,
    };
    let table = match parse(text) {
        Ok(root) => reader.top_level(&root),
        Err(e) => {
            let at = e.at.min(text.len());
            let end = text
                .get(at..)
                .and_then(|rest| rest.chars().next())
                .map_or(at, |c| at + c.len_utf8());
            reader.diags.push(Diagnostic::new(
                Code::InvalidJson,
                Span::new(at, end),
                format!("invalid JSON: {}", e.message),
            ));
            None
        }
    };
    let table = table.filter(|_| !report.has_errors());
    (table, report)
}

struct Reader<'a> {
    diags: &'a mut Vec<Diagnostic>,
}

/// Where a detailed object sits: only a model entry owns request_algorithms.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    Model,
    RequestAlgorithm,
}

/// An entry read from the file: its configuration, or `None` after errors.
type Entry = Option<AlgorithmConfig>;

impl Reader<'_> {
    fn push(&mut self, d: Diagnostic) {
        self.diags.push(d);
    }

    /// Object members with duplicate keys reported (serde: "duplicate field").
    fn unique_members<'n>(&mut self, members: &'n [Member]) -> Vec<&'n Member> {
        let mut seen: Vec<&str> = Vec::new();
        let mut out = Vec::new();
        for m in members {
            if seen.contains(&m.key.as_str()) {
                self.push(Diagnostic::new(
                    Code::InvalidJson,
                    m.key_span,
                    format!("duplicate field `{}`", m.key),
                ));
                continue;
            }
            seen.push(&m.key);
            out.push(m);
        }
        out
    }

    fn top_level(&mut self, root: &Node) -> Option<RouteTable> {
        let Json::Object(members) = &root.value else {
            self.push(Diagnostic::new(
                Code::InvalidType,
                root.span,
                format!(
                    "invalid type: {}, expected an lb-config.json object",
                    root.value.type_name()
                ),
            ));
            return None;
        };
        let mut default = Some(Algorithm::PowerOfN);
        let mut request_algorithms = Some(IndexMap::new());
        let mut models = Some(IndexMap::new());
        for m in self.unique_members(members) {
            match m.key.as_str() {
                "default" => default = self.default(&m.value),
                "request_algorithms" => request_algorithms = self.request_algorithms(&m.value),
                "models" => models = self.models(&m.value),
                other => {
                    let mut d = Diagnostic::new(
                        Code::UnknownField,
                        m.key_span,
                        format!(
                            "unknown field `{other}`, expected one of `default`, \
                             `request_algorithms`, `models`"
                        ),
                    );
                    if let Some(best) = did_you_mean(other, TOP_LEVEL) {
                        d = d.with_help(format!("did you mean `{best}`?"));
                    }
                    self.push(d);
                }
            }
        }
        let default = definition(&AlgorithmConfig::named(default?))?;
        Some(RouteTable {
            version: IR_VERSION,
            default,
            request_algorithms: request_algorithms?,
            models: models?,
        })
    }

    /// An algorithm name, exact and case-sensitive; aliases warn.
    fn algorithm_name(&mut self, name: &str, span: Span) -> Option<Algorithm> {
        match Algorithm::from_json_name(name) {
            Some((alg, NameMatch::Canonical)) => Some(alg),
            Some((alg, NameMatch::Alias)) => {
                self.push(
                    Diagnostic::new(
                        Code::DeprecatedAlias,
                        span,
                        format!("\"{name}\" is a deprecated alias of {alg}"),
                    )
                    .with_help(format!("write \"{alg}\"")),
                );
                Some(alg)
            }
            None => {
                let names = Algorithm::ALL
                    .iter()
                    .map(|a| a.name())
                    .chain(ALIASES.iter().map(|(n, _)| *n));
                let mut d = Diagnostic::new(
                    Code::UnknownMethod,
                    span,
                    format!("unknown algorithm \"{name}\""),
                );
                d = match did_you_mean(name, names) {
                    Some(best) => d.with_help(format!(
                        "did you mean \"{best}\"? (names are exact and case-sensitive)"
                    )),
                    None => d.with_help(format!("algorithms: {}", algorithm_list(&Algorithm::ALL))),
                };
                self.push(d);
                None
            }
        }
    }

    fn default(&mut self, node: &Node) -> Option<Algorithm> {
        match &node.value {
            Json::String(name) => self.algorithm_name(name, node.span),
            other => {
                self.push(
                    Diagnostic::new(
                        Code::InvalidType,
                        node.span,
                        format!(
                            "invalid type: {}, expected an algorithm name: `default` is a name only",
                            other.type_name()
                        ),
                    )
                    .with_help("configure settings under `models` or `request_algorithms`"),
                );
                None
            }
        }
    }

    fn map<'n>(&mut self, node: &'n Node, what: &str) -> Option<&'n [Member]> {
        match &node.value {
            Json::Object(members) => Some(members),
            other => {
                self.push(Diagnostic::new(
                    Code::InvalidType,
                    node.span,
                    format!(
                        "invalid type: {}, expected a map for {what}",
                        other.type_name()
                    ),
                ));
                None
            }
        }
    }

    fn request_algorithms(&mut self, node: &Node) -> Option<IndexMap<Algorithm, Arc<Definition>>> {
        let members = self.map(node, "request_algorithms")?;
        let mut out: Option<IndexMap<Algorithm, Arc<Definition>>> = Some(IndexMap::new());
        let mut seen: IndexMap<Algorithm, Span> = IndexMap::new();
        for m in members {
            let key_alg = self.algorithm_name(&m.key, m.key_span);
            let entry = self.entry(&m.value, Place::RequestAlgorithm);
            let (Some(key_alg), Some(config)) = (key_alg, entry) else {
                out = None;
                continue;
            };
            if key_alg != config.algorithm {
                self.push(Diagnostic::new(
                    Code::RequestAlgorithmMismatch,
                    m.key_span,
                    format!(
                        "request_algorithms key {} does not match configured algorithm {}",
                        m.key, config.algorithm
                    ),
                ));
                out = None;
                continue;
            }
            if seen.insert(key_alg, m.key_span).is_some() {
                self.push(
                    Diagnostic::new(
                        Code::DuplicateRequestAlgorithm,
                        m.key_span,
                        format!(
                            "request_algorithms key {} names {key_alg} again; this entry replaces the earlier one",
                            m.key
                        ),
                    )
                    .with_help("keep one key per algorithm"),
                );
            }
            match (definition(&config), out.as_mut()) {
                (Some(d), Some(map)) => {
                    map.insert(key_alg, d);
                }
                _ => out = None,
            }
        }
        out
    }

    fn models(&mut self, node: &Node) -> Option<IndexMap<String, ModelEntry>> {
        let members = self.map(node, "models")?;
        let mut out = Some(IndexMap::new());
        for m in members {
            let entry = self.entry(&m.value, Place::Model);
            let own = match &m.value.value {
                Json::Object(fields) => {
                    match fields.iter().rfind(|f| f.key == "request_algorithms") {
                        Some(f) => self.request_algorithms(&f.value),
                        None => Some(IndexMap::new()),
                    }
                }
                _ => Some(IndexMap::new()),
            };
            let built = entry.as_ref().and_then(definition);
            if out
                .as_ref()
                .is_some_and(|o: &IndexMap<String, ModelEntry>| o.contains_key(&m.key))
            {
                self.push(
                    Diagnostic::new(
                        Code::DuplicateModel,
                        m.key_span,
                        format!("model \"{}\" is listed twice; the last entry wins", m.key),
                    )
                    .with_severity(crate::diag::Severity::Warning),
                );
            }
            match (built, own, out.as_mut()) {
                (Some(definition), Some(request_algorithms), Some(map)) => {
                    map.insert(
                        m.key.clone(),
                        ModelEntry {
                            definition,
                            request_algorithms,
                        },
                    );
                }
                _ => out = None,
            }
        }
        out
    }

    /// A map value: a name (default settings) or a detailed object.
    fn entry(&mut self, node: &Node, place: Place) -> Entry {
        match &node.value {
            Json::String(name) => self
                .algorithm_name(name, node.span)
                .map(AlgorithmConfig::named),
            Json::Object(members) => self.detailed(node, members, place),
            other => {
                self.push(Diagnostic::new(
                    Code::InvalidType,
                    node.span,
                    format!(
                        "invalid type: {}, expected an algorithm name or a detailed object",
                        other.type_name()
                    ),
                ));
                None
            }
        }
    }

    fn detailed(&mut self, node: &Node, members: &[Member], place: Place) -> Entry {
        let errors_before = self.error_count();
        let members = self.unique_members(members);
        let Some(alg_member) = members.iter().find(|m| m.key == "algorithm") else {
            self.push(Diagnostic::new(
                Code::MissingField,
                Span::new(node.span.start, node.span.start + 1),
                "missing field `algorithm`",
            ));
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
                        // Parsed, so its errors still fail start-up.
                        let _ = self.request_algorithms(&m.value);
                    }
                }
                key => match Field::from_name(key) {
                    Some(field) if field.json_algorithms().contains(&alg) => {
                        if let Some(value) = self.json_value(field, &m.value) {
                            set(&mut config.fields, field, value);
                            key_spans.push((field, m.key_span));
                        }
                    }
                    field => rejected.push((m, field)),
                },
            }
        }
        self.report_unsupported(alg, &rejected);
        if self.error_count() > errors_before {
            return None;
        }
        if let Err(message) = build_policy(&config) {
            let span = field_of_builder_error(&config, &message)
                .and_then(|f| key_spans.iter().find(|(k, _)| *k == f))
                .map_or(alg_member.value.span, |(_, s)| *s);
            self.push(Diagnostic::new(Code::InvalidValue, span, message));
            return None;
        }
        self.warn(alg, &config, &key_spans);
        Some(config)
    }

    fn error_count(&self) -> usize {
        self.diags.iter().filter(|d| d.is_error()).count()
    }

    /// "<alg> config does not support field(s): a, b", once per key.
    fn report_unsupported(&mut self, alg: Algorithm, rejected: &[(&Member, Option<Field>)]) {
        if rejected.is_empty() {
            return;
        }
        let mut names: Vec<&str> = rejected.iter().map(|(m, _)| m.key.as_str()).collect();
        names.sort_unstable();
        let message = format!(
            "{alg} config does not support field(s): {}",
            names.join(", ")
        );
        for (m, field) in rejected {
            let d = match field {
                Some(f) => Diagnostic::new(Code::UnsupportedField, m.key_span, message.clone())
                    .with_help(format!(
                        "{} applies to: {}",
                        f.name(),
                        algorithm_list(f.json_algorithms())
                    )),
                None => {
                    let candidates = Field::ALL
                        .into_iter()
                        .filter(|f| f.json_algorithms().contains(&alg))
                        .map(Field::name)
                        .chain(["algorithm", "request_algorithms"]);
                    let d = Diagnostic::new(Code::UnknownField, m.key_span, message.clone());
                    match did_you_mean(&m.key, candidates) {
                        Some(best) => d.with_help(format!("did you mean `{best}`?")),
                        None => d,
                    }
                }
            };
            self.push(d);
        }
    }

    /// Types a JSON value for a field as serde would.
    fn json_value(&mut self, field: Field, node: &Node) -> Option<Typed> {
        let expected = match field.kind() {
            Kind::Boolean => "a boolean",
            Kind::Text | Kind::Comparator | Kind::Weight => "a string",
            Kind::Unsigned => "u64",
            Kind::Decimal => "f64",
        };
        let type_error = |v: &Json| {
            Diagnostic::new(
                Code::InvalidType,
                node.span,
                format!("invalid type: {}, expected {expected}", v.type_name()),
            )
            .with_help(format!(
                "{} takes {}",
                field.name(),
                field.kind().describe()
            ))
        };
        let nullable = matches!(
            field,
            Field::MaxInputWorkSeconds
                | Field::MaxQueueTimeFloorMs
                | Field::MaxQueueTimeCeilMs
                | Field::CacheAffinityBackendSelectionCount
                | Field::BandWidenIntervalMs
        );
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
            (Json::Number(n), Kind::Unsigned) if is_integer(n) => match n.parse::<u64>() {
                Ok(v) => Ok(Typed::Unsigned(v)),
                Err(_) => Err(Diagnostic::new(
                    Code::InvalidValue,
                    node.span,
                    format!("invalid value: integer `{n}`, expected u64"),
                )
                .with_help(format!(
                    "{} takes an integer from 0 to {}",
                    field.name(),
                    u64::MAX
                ))),
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
            format!("unknown variant `{s}` for {}", field.name()),
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
                self.diags.push(
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
        if let Some(d) = wait_key.and_then(|span| no_queue_slo(alg, f, span)) {
            self.push(d);
        }
    }
}

fn definition(config: &AlgorithmConfig) -> Option<Arc<Definition>> {
    build_policy(config).ok().map(|policy| {
        Arc::new(Definition {
            config: config.clone(),
            policy,
        })
    })
}
