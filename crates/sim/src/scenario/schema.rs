//! The scenario's shape, checked on the span-keeping JSON tree before serde
//! reads it, so that every structural problem is reported at once (serde
//! stops at the first) and each points at its key or value: unknown keys
//! with a did-you-mean, missing keys with the default scenario's value,
//! wrong types and unknown enum values with the accepted ones.
//!
//! The table below mirrors the serde structs of the scenario; the
//! `shape_matches_the_structs` test serialises a scenario with every
//! optional field set and checks both directions, so a field added to a
//! struct but not here (or the reverse) fails a test, not a user.
//!
//! A key spelt exactly `//` is a comment, in any object of the scenario
//! but `base_config` (an lb-config.json, read as stargate reads it): its
//! value is ignored. `routex sim init` writes one per section.

use routex::check::did_you_mean;
use routex::config::json::{Json, JsonNumber, Member, Node};
use routex::diag::{Code, Diagnostic, Span};

/// The comment key.
pub const COMMENT: &str = "//";

/// What a value must be.
#[derive(Clone, Copy, Debug)]
pub(super) enum Shape {
    Object(&'static [Field]),
    /// An object whose keys are names the user chooses.
    Map(&'static Shape),
    List(&'static Shape),
    /// An array of exactly two.
    Pair(&'static Shape),
    /// An integer in `0..=max`.
    Integer(u64),
    Number,
    Bool,
    Str,
    /// One of these strings.
    Enum(&'static [&'static str]),
    Nullable(&'static Shape),
    /// A token size: `[min, max]` (integers) or a size law, an object
    /// whose `distribution` names which keys it takes
    /// (`workload::sizes`).
    Sizes,
    /// Checked elsewhere (`base_config`: an object, a path or `null`).
    Any,
}

/// One key of an object.
#[derive(Clone, Copy, Debug)]
pub(super) struct Field {
    pub name: &'static str,
    pub shape: Shape,
    pub required: bool,
}

const fn req(name: &'static str, shape: Shape) -> Field {
    Field {
        name,
        shape,
        required: true,
    }
}

const fn opt(name: &'static str, shape: Shape) -> Field {
    Field {
        name,
        shape,
        required: false,
    }
}

const U32: Shape = Shape::Integer(u32::MAX as u64);
const U64: Shape = Shape::Integer(u64::MAX);
const NUMBER: Shape = Shape::Number;

const REGION: &[Field] = &[
    req("name", Shape::Str),
    req("routers", U32),
    req("backends", U32),
    req("traffic_weight", NUMBER),
    opt("backends_per_cluster", U32),
];
const TOPOLOGY: &[Field] = &[
    req("regions", Shape::List(&Shape::Object(REGION))),
    req("rtt_ms", Shape::List(&Shape::List(&NUMBER))),
    req("intra_region_rtt_ms", NUMBER),
    req("stats_relay_ms", NUMBER),
];
// Every key has a default (the preset).
const BATCHED: &[Field] = &[
    opt("num_gpu_workers", U32),
    opt("max_num_seqs", U32),
    opt("max_batched_tokens", U64),
    opt("step_fixed_ms", NUMBER),
    opt("step_decode_ms_per_seq", NUMBER),
    opt("step_prefill_ms_per_token", NUMBER),
];
// A region's or backend's engine: every field optional (engine/overrides.rs).
const BATCHED_OVERRIDE: &[Field] = BATCHED;
const ENGINE_OVERRIDE: &[Field] = &[
    opt("model", Shape::Str),
    opt("slots", U32),
    opt("prefill_tps", NUMBER),
    opt("ttft_base_ms", NUMBER),
    opt("ttft_jitter_ms", NUMBER),
    opt("decode_tps", Shape::Pair(&NUMBER)),
    opt("kv_capacity_tokens", U64),
    opt("backend_speed", NUMBER),
    opt("batched", Shape::Object(BATCHED_OVERRIDE)),
    opt("initial_input_tps", NUMBER),
];
const ENGINE: &[Field] = &[
    // Checked with the supported names in validate.rs, which knows them.
    opt("model", Shape::Str),
    req("slots", U32),
    req("prefill_tps", NUMBER),
    req("ttft_base_ms", NUMBER),
    req("ttft_jitter_ms", NUMBER),
    req("decode_tps", Shape::Pair(&NUMBER)),
    req("kv_capacity_tokens", U64),
    opt("backend_speed", NUMBER),
    opt("batched", Shape::Nullable(&Shape::Object(BATCHED))),
    opt("regions", Shape::Map(&Shape::Object(ENGINE_OVERRIDE))),
    opt("backends", Shape::Map(&Shape::Object(ENGINE_OVERRIDE))),
];
const INPUT_TPS: &[Field] = &[
    req("mode", Shape::Enum(&["window", "constant"])),
    req("initial", NUMBER),
    req("window", U64),
    req("floor_ms", NUMBER),
    opt("per_gpu_worker", Shape::Bool),
];
const MISMATCH: &[Field] = &[
    req("enabled", Shape::Bool),
    req("min_delta_ms", U64),
    req("tolerance", NUMBER),
];
// A policy's entry of `pylon.mismatch_by_policy`: every key optional.
const MISMATCH_OVERRIDE: &[Field] = &[
    opt("enabled", Shape::Bool),
    opt("min_delta_ms", U64),
    opt("tolerance", NUMBER),
];
const PYLON: &[Field] = &[
    req("heartbeat_ms", U64),
    opt("coalesce_ms", Shape::Nullable(&U64)),
    req("input_tps", Shape::Object(INPUT_TPS)),
    req("max_input_tps", Shape::Enum(&["constant", "running-max"])),
    req("mismatch", Shape::Object(MISMATCH)),
    opt(
        "mismatch_by_policy",
        Shape::Map(&Shape::Object(MISMATCH_OVERRIDE)),
    ),
];
const ROUTER: &[Field] = &[
    req("max_retries", U32),
    req("recheck_ms", U64),
    req("retry_sleep_ms", Shape::Pair(&U64)),
    req("routing_key", Shape::Str),
    req("model", Shape::Str),
];
const LAST_CLUSTER_STORE: &[Field] = &[req("ttl_ms", U64), opt("max_sessions", U32)];
const CLIENT: &[Field] = &[
    req("request_slo_ms", U64),
    req("max_wait_ms", U64),
    req("timeout_ms", U64),
    req("ttft_slo_ms", U64),
    opt(
        "last_cluster_store",
        Shape::Nullable(&Shape::Object(LAST_CLUSTER_STORE)),
    ),
    opt("max_in_flight", U32),
];
// The size laws' objects (workload/sizes.rs), by `distribution`.
const LAW: Shape = Shape::Enum(&crate::workload::sizes::LAWS);
const CONSTANT: &[Field] = &[req("distribution", LAW), req("value", NUMBER)];
const UNIFORM: &[Field] = &[
    req("distribution", LAW),
    req("min", NUMBER),
    req("max", NUMBER),
];
const LOGNORMAL: &[Field] = &[
    req("distribution", LAW),
    req("mean", NUMBER),
    req("sigma", NUMBER),
    opt("min", NUMBER),
    req("p99_cap", NUMBER),
];
// Without a known `distribution`: every law's keys, for the did-you-mean.
const ANY_LAW: &[Field] = &[
    req("distribution", LAW),
    opt("value", NUMBER),
    opt("min", NUMBER),
    opt("max", NUMBER),
    opt("mean", NUMBER),
    opt("sigma", NUMBER),
    opt("p99_cap", NUMBER),
];

const WORKLOAD: &[Field] = &[
    req("keys", U32),
    req("zipf_s", NUMBER),
    req("input_tokens", Shape::Sizes),
    req("output_tokens", Shape::Sizes),
    opt("block_tokens", Shape::Nullable(&U64)),
    opt("arrival", Shape::Object(ARRIVAL)),
    opt("hot_set", Shape::Object(HOT_SET)),
    opt("classes", Shape::List(&Shape::Object(CLASS))),
];
const CLASS: &[Field] = &[
    req("share", NUMBER),
    opt("input_tokens", Shape::Sizes),
    opt("output_tokens", Shape::Sizes),
];
/// Each law's own parameters are checked in validate.rs.
const ARRIVAL: &[Field] = &[
    req("law", Shape::Enum(&crate::workload::arrival::LAWS)),
    opt("burst_factor", NUMBER),
    opt("period_requests", U32),
    opt("steps", U32),
    opt("start_fraction", NUMBER),
];
const HOT_SET: &[Field] = &[req("fraction", NUMBER), req("share", NUMBER)];
const AFFINITY: &[Field] = &[req("first_blocks", U32)];
const TRACE: &[Field] = &[
    req("path", Shape::Str),
    // Checked with the supported formats in validate.rs.
    opt("format", Shape::Str),
    opt("block_tokens", U64),
    opt("speedups", Shape::List(&NUMBER)),
    opt("affinity_key", Shape::Nullable(&Shape::Object(AFFINITY))),
    opt("max_requests", Shape::Nullable(&U64)),
    opt("repeat", Shape::Enum(&["fresh", "same"])),
];
const FAULT: &[Field] = &[
    opt("at_s", NUMBER),
    opt("at_request", U32),
    req("backend", Shape::Str),
    req("action", Shape::Enum(&super::faults::ACTIONS)),
    opt("duration_s", NUMBER),
    opt("factor", NUMBER),
];

const CONVERSATIONS: &[Field] = &[
    req("mean_turns", NUMBER),
    req("think_time_s", NUMBER),
    req("first_message_tokens", Shape::Sizes),
    req("message_tokens", Shape::Sizes),
    req("output_tokens", Shape::Sizes),
    req("max_context_tokens", U64),
    req("block_tokens", U64),
    opt("max_turn_attempts", U32),
    opt("retry_backoff_s", NUMBER),
];

/// The whole scenario file.
pub(super) const SCENARIO: Shape = Shape::Object(&[
    req("name", Shape::Str),
    req("seeds", Shape::List(&U64)),
    req("warmup_s", NUMBER),
    req("measure_s", NUMBER),
    opt("rates_rps", Shape::List(&NUMBER)),
    req("topology", Shape::Object(TOPOLOGY)),
    req("engine", Shape::Object(ENGINE)),
    req("pylon", Shape::Object(PYLON)),
    req("router", Shape::Object(ROUTER)),
    req("client", Shape::Object(CLIENT)),
    opt("workload", Shape::Nullable(&Shape::Object(WORKLOAD))),
    opt("trace", Shape::Nullable(&Shape::Object(TRACE))),
    opt(
        "conversations",
        Shape::Nullable(&Shape::Object(CONVERSATIONS)),
    ),
    opt("base_config", Shape::Any),
    req("policies", Shape::Map(&Shape::Str)),
    opt("faults", Shape::List(&Shape::Object(FAULT))),
    opt("stargate", Shape::Enum(&TARGETS)),
    opt("warm_start", Shape::Bool),
]);

/// The names of `routex::ir::Target::ALL` (a test checks they agree).
const TARGETS: [&str; 2] = ["widening", "sessions"];

/// Checks `node` against `shape`; `path` is its dotted path (`""` for the
/// root). `default` is the built-in scenario's tree, whose values a
/// missing-key diagnostic offers.
pub(super) fn check(
    node: &Node,
    shape: Shape,
    path: &str,
    default: Option<&serde_json::Value>,
    out: &mut Vec<Diagnostic>,
) {
    let child = |name: &str| {
        if path.is_empty() {
            name.to_string()
        } else {
            format!("{path}.{name}")
        }
    };
    match (shape, &node.value) {
        (Shape::Any, _) => {}
        (Shape::Nullable(_), Json::Null) => {}
        (Shape::Nullable(inner), _) => check(node, *inner, path, default, out),
        (Shape::Object(fields), Json::Object(members)) => {
            object(node, members, fields, path, default, out);
        }
        (Shape::Map(inner), Json::Object(members)) => {
            for m in members.iter().filter(|m| m.key != COMMENT) {
                duplicate(members, m, path, out);
                check(&m.value, *inner, &child(&m.key), None, out);
            }
        }
        (Shape::Sizes, Json::Number(_)) => check(node, U64, path, default, out),
        (Shape::Sizes, Json::Array(_)) => check(node, Shape::Pair(&U64), path, default, out),
        (Shape::Sizes, Json::Object(members)) => {
            let law = members
                .iter()
                .find(|m| m.key == "distribution")
                .and_then(|m| match &m.value.value {
                    Json::String(s) => Some(s.as_str()),
                    _ => None,
                });
            let fields = match law {
                Some("constant") => CONSTANT,
                Some("uniform") => UNIFORM,
                Some("lognormal") => LOGNORMAL,
                _ => ANY_LAW,
            };
            object(node, members, fields, path, None, out);
        }
        (Shape::List(inner), Json::Array(items)) => {
            for (i, item) in items.iter().enumerate() {
                check(item, *inner, &child(&i.to_string()), None, out);
            }
        }
        (Shape::Pair(inner), Json::Array(items)) => {
            if items.len() != 2 {
                out.push(Diagnostic::new(
                    Code::InvalidValue,
                    node.span,
                    format!(
                        "`{path}` must be [min, max] (two values), got {} value{}",
                        items.len(),
                        if items.len() == 1 { "" } else { "s" }
                    ),
                ));
            }
            for (i, item) in items.iter().enumerate().take(2) {
                check(item, *inner, &child(&i.to_string()), None, out);
            }
        }
        (Shape::Integer(max), Json::Number(n)) => match JsonNumber::read(n) {
            JsonNumber::Unsigned(v) if v <= max => {}
            JsonNumber::Unsigned(_) | JsonNumber::Signed(_) => out.push(Diagnostic::new(
                Code::InvalidValue,
                node.span,
                format!("`{path}` must be {}, got {n}", expected(shape)),
            )),
            JsonNumber::Float(_) => out.push(wrong_type(node, path, &expected(shape))),
        },
        (Shape::Number, Json::Number(_))
        | (Shape::Bool, Json::Bool(_))
        | (Shape::Str, Json::String(_)) => {}
        (Shape::Enum(values), Json::String(s)) => {
            if !values.contains(&s.as_str()) {
                let mut d = Diagnostic::new(
                    Code::InvalidValue,
                    node.span,
                    format!(
                        "unknown value \"{s}\" for `{path}`, expected one of {}",
                        quoted(values, "\"")
                    ),
                );
                if let Some(best) = suggestion(s, values.iter().copied()) {
                    d = d
                        .with_help(format!("did you mean \"{best}\"?"))
                        .with_suggestion(format!("\"{best}\""));
                }
                out.push(d);
            }
        }
        _ => out.push(wrong_type(node, path, &expected(shape))),
    }
}

fn object(
    node: &Node,
    members: &[Member],
    fields: &[Field],
    path: &str,
    default: Option<&serde_json::Value>,
    out: &mut Vec<Diagnostic>,
) {
    let child = |name: &str| {
        if path.is_empty() {
            name.to_string()
        } else {
            format!("{path}.{name}")
        }
    };
    let names: Vec<&str> = fields.iter().map(|f| f.name).collect();
    for m in members.iter().filter(|m| m.key != COMMENT) {
        match fields.iter().find(|f| f.name == m.key) {
            Some(field) => {
                duplicate(members, m, path, out);
                let default = default.and_then(|d| d.get(field.name));
                check(&m.value, field.shape, &child(field.name), default, out);
            }
            None => {
                let place = if path.is_empty() {
                    "the scenario".to_string()
                } else {
                    format!("`{path}`")
                };
                let mut d = Diagnostic::new(
                    Code::UnknownField,
                    m.key_span,
                    format!("unknown field `{}` in {place}", m.key),
                );
                d = match suggestion(&m.key, names.iter().copied()) {
                    Some(best) => d
                        .with_help(format!("did you mean `{best}`?"))
                        .with_suggestion(format!("\"{best}\"")),
                    None => d.with_help(format!("expected one of {}", quoted(&names, "`"))),
                };
                out.push(d);
            }
        }
    }
    for field in fields.iter().filter(|f| f.required) {
        if members.iter().any(|m| m.key == field.name) {
            continue;
        }
        let mut d = Diagnostic::new(
            Code::MissingField,
            Span::new(node.span.start, node.span.start + 1),
            format!("missing field `{}`", child(field.name)),
        );
        if let Some(value) = default.and_then(|d| d.get(field.name)) {
            let text = serde_json::to_string(value).unwrap_or_default();
            if text.len() <= 120 {
                d = d.with_help(format!(
                    "the built-in default scenario has \"{}\": {text}",
                    field.name
                ));
            }
        }
        out.push(d);
    }
}

/// A key given twice: serde refuses the second.
fn duplicate(members: &[Member], m: &Member, path: &str, out: &mut Vec<Diagnostic>) {
    let first = members.iter().find(|o| o.key == m.key);
    if first.is_some_and(|f| f.key_span != m.key_span) {
        let place = if path.is_empty() {
            "the scenario"
        } else {
            path
        };
        out.push(
            Diagnostic::new(
                Code::InvalidValue,
                m.key_span,
                format!("duplicate field `{}` in {place}", m.key),
            )
            .with_help("give each key once"),
        );
    }
}

/// A did-you-mean, bounded: the edit distance is quadratic in the length.
fn suggestion<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    (word.len() <= 256)
        .then(|| did_you_mean(word, candidates))
        .flatten()
}

fn wrong_type(node: &Node, path: &str, expected: &str) -> Diagnostic {
    let name = if path.is_empty() {
        "the scenario".to_string()
    } else {
        format!("`{path}`")
    };
    Diagnostic::new(
        Code::InvalidType,
        node.span,
        format!(
            "invalid type: {}, expected {expected} for {name}",
            node.value.type_name()
        ),
    )
}

/// What a shape is called in messages, in the words of docs/diagnostics.md.
fn expected(shape: Shape) -> String {
    match shape {
        Shape::Object(_) => "an object".into(),
        Shape::Map(inner) => format!("an object of names to {}", plural(*inner)),
        Shape::List(inner) => format!("an array of {}", plural(*inner)),
        Shape::Pair(inner) => format!("an array of two {}", plural(*inner)),
        Shape::Integer(max) if max == u64::MAX => "an integer from 0 to 2^64-1".into(),
        Shape::Integer(max) if max == u64::from(u32::MAX) => "an integer from 0 to 2^32-1".into(),
        Shape::Integer(max) => format!("an integer from 0 to {max}"),
        Shape::Number => "a number".into(),
        Shape::Bool => "true or false".into(),
        Shape::Str => "a string".into(),
        Shape::Enum(values) => format!("one of {}", quoted(values, "\"")),
        Shape::Nullable(inner) => format!("{} or null", expected(*inner)),
        Shape::Sizes => {
            "an integer, [min, max] (two integers) or a size law (an object with `distribution`)"
                .into()
        }
        Shape::Any => "any value".into(),
    }
}

fn plural(shape: Shape) -> &'static str {
    match shape {
        Shape::Object(_) | Shape::Map(_) => "objects",
        Shape::List(_) | Shape::Pair(_) => "arrays",
        Shape::Integer(_) => "integers",
        Shape::Number => "numbers",
        Shape::Bool => "booleans",
        Shape::Str | Shape::Enum(_) => "strings",
        Shape::Nullable(_) | Shape::Sizes | Shape::Any => "values",
    }
}

fn quoted(values: &[&str], quote: &str) -> String {
    values
        .iter()
        .map(|v| format!("{quote}{v}{quote}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `text` with every comment member blanked out (with its comma), at
/// every depth but inside `base_config`, for serde's
/// `deny_unknown_fields`. Bytes become spaces, so offsets do not move, and
/// the text is never re-serialised, so the order of `policies` stays the
/// file's.
pub(super) fn strip_comments(text: &str, root: &Node) -> String {
    let mut ranges = Vec::new();
    comment_ranges(root, true, &mut ranges);
    if ranges.is_empty() {
        return text.to_string();
    }
    let mut bytes = text.as_bytes().to_vec();
    for (start, end) in ranges {
        for b in &mut bytes[start..end] {
            if !matches!(*b, b'\n' | b'\r') {
                *b = b' ';
            }
        }
    }
    // Whole tokens and commas were replaced: still UTF-8.
    String::from_utf8(bytes).unwrap_or_default()
}

fn comment_ranges(node: &Node, top: bool, out: &mut Vec<(usize, usize)>) {
    match &node.value {
        Json::Object(members) => {
            for (i, m) in members.iter().enumerate() {
                if m.key == COMMENT {
                    let range = match (members.get(i + 1), i.checked_sub(1).map(|p| &members[p])) {
                        // Up to the next key: the value and the comma after it.
                        (Some(next), _) => (m.key_span.start, next.key_span.start),
                        // The last member: from the end of the one before it.
                        (None, Some(prev)) => (prev.value.span.end, m.value.span.end),
                        (None, None) => (m.key_span.start, m.value.span.end),
                    };
                    out.push(range);
                } else if !(top && m.key == "base_config") {
                    comment_ranges(&m.value, false, out);
                }
            }
        }
        Json::Array(items) => {
            for item in items {
                comment_ranges(item, false, out);
            }
        }
        _ => {}
    }
}

/// Every key path of `shape` (`engine.slots`, `trace.affinity_key.first_blocks`),
/// for the test that the table matches the structs.
#[cfg(test)]
pub(super) fn paths(shape: Shape, prefix: &str, out: &mut Vec<String>) {
    match shape {
        Shape::Object(fields) => {
            for f in fields {
                let p = if prefix.is_empty() {
                    f.name.to_string()
                } else {
                    format!("{prefix}.{}", f.name)
                };
                out.push(p.clone());
                paths(f.shape, &p, out);
            }
        }
        Shape::Nullable(inner) => paths(*inner, prefix, out),
        // The test writes every size as a lognormal with its `min`.
        Shape::Sizes => paths(Shape::Object(LOGNORMAL), prefix, out),
        Shape::List(inner) => paths(*inner, &format!("{prefix}.0"), out),
        // The test names each map's one entry `*`.
        Shape::Map(inner @ Shape::Object(_)) => {
            out.push(format!("{prefix}.*"));
            paths(*inner, &format!("{prefix}.*"), out);
        }
        _ => {}
    }
}

#[cfg(test)]
mod target_names {
    #[test]
    fn the_scenario_shape_names_every_stargate_target() {
        assert_eq!(
            super::TARGETS,
            routex::ir::Target::ALL.map(routex::ir::Target::name)
        );
    }
}
