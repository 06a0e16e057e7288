//! lb-config.json -> route table with stargate's start-up rules
//! (docs/stargate.md 4.1-4.3). Every diagnostic points at the
//! offending key or value in the JSON text.

use super::json::{parse, Json, Member, Node};
use crate::check::lower::build_policy;
use crate::check::schema::algorithm_list;
use crate::check::suggest::{algorithm_suggestion, did_you_mean};
use crate::diag::{Code, Diagnostic, Report, Span};
use crate::ir::{
    Algorithm, AlgorithmConfig, Definition, ModelEntry, NameMatch, RouteTable, Target, IR_VERSION,
};
use indexmap::IndexMap;
use std::collections::HashSet;
use std::sync::Arc;

const TOP_LEVEL: [&str; 3] = ["default", "request_algorithms", "models"];

/// Checks and lowers an lb-config.json text for the newest stargate.
pub fn check_lb_config(source_name: &str, text: &str) -> (Option<RouteTable>, Report) {
    check_lb_config_for(source_name, text, Target::NEWEST)
}

/// Checks and lowers an lb-config.json text for the stargate `target`.
pub fn check_lb_config_for(
    source_name: &str,
    text: &str,
    target: Target,
) -> (Option<RouteTable>, Report) {
    let mut report = Report::new(source_name, text);
    let mut reader = Reader {
        diags: &mut report.diagnostics,
        errors: 0,
        target,
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

pub(super) struct Reader<'a> {
    pub(super) diags: &'a mut Vec<Diagnostic>,
    /// Errors pushed so far: an entry compares counts before and after
    /// instead of rescanning every diagnostic.
    pub(super) errors: usize,
    /// The stargate state the file is checked for.
    pub(super) target: Target,
}

/// Where a detailed object sits: only a model entry owns request_algorithms.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Place {
    Model,
    RequestAlgorithm,
    /// Inside a `request_algorithms` nested in a `request_algorithms`
    /// entry: stargate parses it (type errors fail start-up) and discards
    /// it, so nothing is built or checked beyond parsing (docs/stargate.md 4.1).
    Discarded,
}

/// An entry read from the file: its configuration, or `None` after errors.
pub(super) type Entry = Option<AlgorithmConfig>;

impl Reader<'_> {
    pub(super) fn push(&mut self, d: Diagnostic) {
        self.errors += usize::from(d.is_error());
        self.diags.push(d);
    }

    /// Object members with duplicate keys reported (serde: "duplicate field").
    pub(super) fn unique_members<'n>(&mut self, members: &'n [Member]) -> Vec<&'n Member> {
        let mut seen: HashSet<&str> = HashSet::with_capacity(members.len());
        let mut out = Vec::with_capacity(members.len());
        for m in members {
            if !seen.insert(&m.key) {
                self.push(Diagnostic::new(
                    Code::InvalidJson,
                    m.key_span,
                    format!("duplicate field `{}`", m.key),
                ));
                continue;
            }
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
                "request_algorithms" => {
                    request_algorithms =
                        self.request_algorithms(&m.value, None, Place::RequestAlgorithm)
                }
                "models" => models = self.models(&m.value),
                "$schema" => self.schema_key(m),
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
                        d = d
                            .with_help(format!("did you mean `{best}`?"))
                            .with_suggestion(format!("\"{best}\""));
                    }
                    self.push(d);
                }
            }
        }
        let default = definition(&AlgorithmConfig::named(default?), self.target)?;
        Some(RouteTable {
            version: IR_VERSION,
            default,
            request_algorithms: request_algorithms?,
            models: models?,
        })
    }

    /// A top-level `$schema`, which editors add for a JSON Schema: still an
    /// unknown field, since stargate refuses to start with one
    /// (docs/stargate.md 4.1), with help saying where the schema goes.
    fn schema_key(&mut self, m: &Member) {
        let routex = matches!(&m.value.value, Json::String(v) if super::names_routex_schema(v));
        let help = if routex {
            "remove it, and map routex's schema onto the file in the editor instead \
             (VS Code `json.schemas`, docs/cli.md \"routex schema\")"
        } else {
            "remove it: stargate reads only `default`, `request_algorithms` and `models`"
        };
        self.push(
            Diagnostic::new(
                Code::UnknownField,
                m.key_span,
                "unknown field `$schema`: stargate refuses to start with any top-level \
                 field but `default`, `request_algorithms` and `models`",
            )
            .with_help(help),
        );
    }

    /// An algorithm name, exact and case-sensitive; aliases warn.
    pub(super) fn algorithm_name(&mut self, name: &str, span: Span) -> Option<Algorithm> {
        match Algorithm::from_json_name(name) {
            Some((alg, NameMatch::Canonical)) => Some(alg),
            Some((alg, NameMatch::Alias)) => {
                self.push(
                    Diagnostic::new(
                        Code::DeprecatedAlias,
                        span,
                        format!("\"{name}\" is a deprecated alias of {alg}"),
                    )
                    .with_help(format!("write \"{alg}\""))
                    .with_suggestion(format!("\"{alg}\"")),
                );
                Some(alg)
            }
            None => {
                let mut d = Diagnostic::new(
                    Code::UnknownMethod,
                    span,
                    format!("unknown algorithm \"{name}\""),
                );
                d = match algorithm_suggestion(name) {
                    Some(best) => d
                        .with_help(format!(
                            "did you mean \"{best}\"? (names are exact and case-sensitive)"
                        ))
                        .with_suggestion(canonical_json(best)),
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
                        "invalid type: {}, expected an object for {what}",
                        other.type_name()
                    ),
                ));
                None
            }
        }
    }

    /// `own` is the model id and algorithm of the entry the map belongs
    /// to: a key naming that algorithm is shadowed (docs/stargate.md
    /// 4.4, step 1).
    /// `place` is where its entries sit: [`Place::Discarded`] parses them
    /// only.
    pub(super) fn request_algorithms(
        &mut self,
        node: &Node,
        own: Option<(&str, Algorithm)>,
        place: Place,
    ) -> Option<IndexMap<Algorithm, Arc<Definition>>> {
        let members = self.map(node, "request_algorithms")?;
        let mut out: Option<IndexMap<Algorithm, Arc<Definition>>> = Some(IndexMap::new());
        let mut seen: IndexMap<Algorithm, Span> = IndexMap::new();
        for m in members {
            let key_alg = self.algorithm_name(&m.key, m.key_span);
            let entry = self.entry(&m.value, place);
            let (Some(key_alg), Some(config)) = (key_alg, entry) else {
                out = None;
                continue;
            };
            if place == Place::Discarded {
                continue;
            }
            if key_alg != config.algorithm {
                self.push(
                    Diagnostic::new(
                        Code::RequestAlgorithmMismatch,
                        m.key_span,
                        format!(
                            "request_algorithms key {} does not match configured algorithm {}",
                            m.key, config.algorithm
                        ),
                    )
                    .with_help(format!(
                        "a request_algorithms entry's key is its algorithm: write `{alg}` as the key, or `{key}` as the algorithm",
                        alg = config.algorithm,
                        key = key_alg
                    )),
                );
                out = None;
                continue;
            }
            if let Some((model, _)) = own.filter(|(_, alg)| *alg == key_alg) {
                let scope = format!("model \"{model}\"");
                self.push(crate::check::shadowed_allow(m.key_span, key_alg, &scope));
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
            match (definition(&config, self.target), out.as_mut()) {
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
        let mut ids: HashSet<&str> = HashSet::with_capacity(members.len());
        for m in members {
            let entry = self.entry(&m.value, Place::Model);
            let own = match &m.value.value {
                Json::Object(fields) => {
                    match fields.iter().rfind(|f| f.key == "request_algorithms") {
                        Some(f) => {
                            let own = entry.as_ref().map(|c| (m.key.as_str(), c.algorithm));
                            self.request_algorithms(&f.value, own, Place::RequestAlgorithm)
                        }
                        None => Some(IndexMap::new()),
                    }
                }
                _ => Some(IndexMap::new()),
            };
            let built = entry
                .as_ref()
                .and_then(|config| definition(config, self.target));
            if !ids.insert(&m.key) {
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
}

/// The quoted canonical spelling of a suggested algorithm name or alias.
fn canonical_json(name: &str) -> String {
    let alg = Algorithm::from_json_name(name).map_or(name, |(alg, _)| alg.name());
    format!("\"{alg}\"")
}

pub(super) fn definition(config: &AlgorithmConfig, target: Target) -> Option<Arc<Definition>> {
    build_policy(config, target).ok().map(|policy| {
        Arc::new(Definition {
            config: config.clone(),
            policy,
        })
    })
}
