//! Hover: on a field name or value, the field's kind, default, range and
//! the algorithms that take it (the one field schema,
//! `check::schema`), with its effective value for that entry and where it
//! comes from (what `routex explain` shows); on an algorithm name, how it
//! decides; on an alias, its canonical name; on a model id, its resolved
//! policy.

use super::documents::Document;
use super::kind::Kind;
use super::scan::{self, Slot, Tok};
use lsp_types::{Hover, HoverContents, MarkupContent, MarkupKind};
use routex::check::schema::{algorithm_list, Field};
use routex::diag::Span;
use routex::ir::{Algorithm, NameMatch, RouteTable};
use routex::render::explain::{rows, Row};
use routex::syntax::ast::{Expr, Item};

/// Which entry of the table a field belongs to: the model (or `None`,
/// top-level) and the algorithm the entry configures.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub model: Option<String>,
    pub algorithm: Algorithm,
}

/// What the cursor is on.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Target {
    Algorithm(String),
    Field(Field, Option<Entry>),
    Model(String, Algorithm),
}

pub fn hover(document: &Document, offset: usize) -> Option<Hover> {
    let text = &document.text;
    let (target, span, json) = match document.kind {
        Kind::Routes => {
            let (t, s) = route_target(document, offset)?;
            (t, s, false)
        }
        Kind::Config => {
            let (t, s) = json_target(document, offset)?;
            (t, s, true)
        }
        Kind::Scenario => {
            let (t, s) = policy_target(document, offset)?;
            (t, s, false)
        }
        Kind::Other => return None,
    };
    let table = document.analysis().table.as_ref();
    let markdown = match target {
        Target::Algorithm(name) => algorithm_text(&name, json)?,
        Target::Field(field, entry) => field_text(field, entry.as_ref(), table, json),
        Target::Model(id, alg) => model_text(&id, alg, table),
    };
    Some(Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value: markdown,
        }),
        range: Some(document.lines.range(text, span)),
    })
}

/// How each algorithm decides, in one or two sentences (docs/algorithms.md
/// has the full rules).
pub const fn description(algorithm: Algorithm) -> &'static str {
    match algorithm {
        Algorithm::PowerOfN => {
            "Samples `sample_count` distinct eligible clusters and takes the one with the \
             lowest comparator score (TTFT by default). No capacity check."
        }
        Algorithm::WaitAndWiden => {
            "Bucketed selection: clusters whose TTFTs are within a bucket count as equal. \
             With a cache-affinity key it first waits up to `cache_affinity_wait_ms` for the \
             key's group on a consistent-hash ring, then widens to every cluster."
        }
        Algorithm::RoundRobin => "Takes the eligible clusters in turn (one shared counter).",
        Algorithm::Random => "Takes an eligible cluster uniformly at random.",
        Algorithm::Pulsar => {
            "Ranks clusters by rendezvous hashing of the routing key, weighted by input \
             throughput (`rendezvous_weight`); the first feasible cluster of the ranking wins."
        }
        Algorithm::PulsarWaitAndWiden => {
            "Uses the Pulsar ranking as the affinity order: waits for the top ranks up to \
             `cache_affinity_wait_ms`, then opens wider bands every `band_widen_interval_ms`. \
             Without both queue-time bounds it takes the first feasible rank at once."
        }
    }
}

/// Recognises a name as the document's format does: exact in JSON,
/// case-insensitive with `_` as `-` in expressions.
pub fn recognise(name: &str, json: bool) -> Option<(Algorithm, NameMatch)> {
    if json {
        Algorithm::from_json_name(name)
    } else {
        Algorithm::from_header_name(name)
    }
}

fn algorithm_text(name: &str, json: bool) -> Option<String> {
    let (alg, matched) = recognise(name, json)?;
    let mut out = format!("**{alg}**\n\n{}\n", description(alg));
    if matched == NameMatch::Alias {
        out.push_str(&format!(
            "\n`{name}` is a deprecated alias of `{alg}`: write `{alg}`.\n"
        ));
    }
    let takes: Vec<&str> = Field::ALL
        .into_iter()
        .filter(|f| algorithms_of(*f, json).contains(&alg))
        .filter(|f| f.accepted_by(crate::target()))
        .map(Field::name)
        .collect();
    out.push_str(&format!("\nparameters: {}\n", code_list(&takes)));
    Some(out)
}

fn algorithms_of(field: Field, json: bool) -> &'static [Algorithm] {
    if json {
        field.json_algorithms()
    } else {
        field.route_file_algorithms()
    }
}

fn code_list(names: &[&str]) -> String {
    if names.is_empty() {
        return "none".into();
    }
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The schema facts of a field (from the field table), then its effective
/// value for the entry.
pub fn field_summary(field: Field, json: bool) -> String {
    let mut out = format!(
        "**{}**: {}\n\n{}\n\ndefault: `{}`\n",
        field.name(),
        field.kind().describe(),
        field.spec().doc,
        field.default_text()
    );
    if let Some(range) = field.expression_range() {
        out.push_str(&format!("\n{range}\n"));
    }
    let algorithms = algorithms_of(field, json);
    out.push_str(&format!(
        "\napplies to: {}\n",
        if algorithms.is_empty() {
            "no algorithm".into()
        } else {
            algorithm_list(algorithms)
        }
    ));
    if field.targets() != routex::ir::Target::ALL {
        let targets: Vec<&str> = field.targets().iter().map(|t| t.name()).collect();
        out.push_str(&format!("\nstargate targets: {}\n", targets.join(", ")));
    }
    out
}

fn field_text(
    field: Field,
    entry: Option<&Entry>,
    table: Option<&RouteTable>,
    json: bool,
) -> String {
    let mut out = field_summary(field, json);
    let Some(entry) = entry else {
        return out;
    };
    let scope = match &entry.model {
        Some(m) => format!("model \"{m}\""),
        None => "models without an entry".into(),
    };
    match table.and_then(|t| explained(t, entry)) {
        Some(rows) => match rows.iter().find(|r| r.field == field.name()) {
            Some(row) => out.push_str(&format!(
                "\neffective for {scope} ({}): `{}` from {}\n",
                entry.algorithm, row.value, row.from
            )),
            None => out.push_str(&format!(
                "\n{} does not use {} for {scope}\n",
                entry.algorithm,
                field.name()
            )),
        },
        None => out.push_str("\neffective value: shown once the file has no errors\n"),
    }
    out
}

/// `routex explain` of the entry's algorithm for the entry's model.
fn explained(table: &RouteTable, entry: &Entry) -> Option<Vec<Row>> {
    let (explanation, _) = routex::check::explain_expression(
        "hover",
        entry.algorithm.name(),
        Some(table),
        entry.model.as_deref(),
    );
    explanation.map(|e| rows(&e))
}

fn model_text(id: &str, alg: Algorithm, table: Option<&RouteTable>) -> String {
    let mut out = format!("**model \"{id}\"**: {alg}\n");
    let entry = Entry {
        model: Some(id.to_string()),
        algorithm: alg,
    };
    match table.and_then(|t| explained(t, &entry)) {
        Some(rows) => {
            out.push_str("\n| field | value | from |\n| --- | --- | --- |\n");
            for row in rows {
                out.push_str(&format!(
                    "| {} | `{}` | {} |\n",
                    row.field, row.value, row.from
                ));
            }
        }
        None => out.push_str("\nresolved policy: shown once the file has no errors\n"),
    }
    out
}

/// The target under the cursor in a route file, from its syntax tree.
/// The method, or the argument name or value, of `expr` at `offset`.
fn expr_target(expr: &Expr, offset: usize, model: Option<&str>) -> Option<(Target, Span)> {
    let inside = |s: Span| s.start <= offset && offset <= s.end;
    if inside(expr.method.span) {
        return Some((
            Target::Algorithm(expr.method.node.clone()),
            expr.method.span,
        ));
    }
    let alg = recognise(&expr.method.node, false).map(|(a, _)| a);
    let arg = expr
        .args
        .iter()
        .find(|a| inside(a.name.span) || inside(a.value.span))?;
    let field = Field::from_name(&arg.name.node)?;
    let entry = alg.map(|algorithm| Entry {
        model: model.map(String::from),
        algorithm,
    });
    let span = if inside(arg.name.span) {
        arg.name.span
    } else {
        arg.value.span
    };
    Some((Target::Field(field, entry), span))
}

/// A scenario's policy expression under the cursor (no effective value:
/// it depends on the scenario's base configuration and router model).
fn policy_target(document: &Document, offset: usize) -> Option<(Target, Span)> {
    let text = &document.text;
    let cursor = document.json_cursor(offset + 1);
    let token = cursor.token?;
    let is_policy = matches!(cursor.path.as_slice(), [p] if p == "policies")
        && matches!(cursor.slot, Slot::Value(_))
        && matches!(token.tok, Tok::Str { .. });
    if !is_policy {
        return None;
    }
    let decoded = scan::Decoded::of(text, token);
    let expr = routex::syntax::parse_expression(&decoded.text).ok()?;
    let (target, span) = expr_target(&expr, decoded.decoded_offset(offset), None)?;
    let target = match target {
        Target::Field(field, _) => Target::Field(field, None),
        other => other,
    };
    Some((target, decoded.document_span(span)))
}

fn route_target(document: &Document, offset: usize) -> Option<(Target, Span)> {
    let file = document.analysis().routes(&document.text)?;
    let inside = |s: Span| s.start <= offset && offset <= s.end;
    let in_expr = |expr: &Expr, model: Option<&str>| expr_target(expr, offset, model);
    for item in &file.items {
        match item {
            Item::Default { expr, .. } => {
                if let Some(found) = in_expr(expr, None) {
                    return Some(found);
                }
            }
            Item::Allow(allow) => {
                if let Some(found) = in_expr(&allow.expr, None) {
                    return Some(found);
                }
            }
            Item::Model {
                id, expr, allows, ..
            } => {
                if inside(id.span) {
                    let alg = recognise(&expr.method.node, false)?.0;
                    return Some((Target::Model(id.node.clone(), alg), id.span));
                }
                let model = Some(id.node.as_str());
                for e in std::iter::once(expr).chain(allows.iter().map(|a| &a.expr)) {
                    if let Some(found) = in_expr(e, model) {
                        return Some(found);
                    }
                }
            }
        }
    }
    None
}

/// Where a detailed object sits, from the keys leading to it.
pub fn entry_path(path: &[String]) -> Option<(Option<String>, Option<Algorithm>)> {
    match path {
        [m, id] if m == "models" => Some((Some(id.clone()), None)),
        [r, alg] if r == "request_algorithms" => {
            Some((None, Algorithm::from_json_name(alg).map(|a| a.0)))
        }
        [m, id, r, alg] if m == "models" && r == "request_algorithms" => Some((
            Some(id.clone()),
            Algorithm::from_json_name(alg).map(|a| a.0),
        )),
        _ => None,
    }
}

/// Whether the keys lead to a `request_algorithms` map.
pub fn is_request_algorithms(path: &[String]) -> bool {
    matches!(path, [r] if r == "request_algorithms")
        || matches!(path, [m, _, r] if m == "models" && r == "request_algorithms")
}

/// The algorithm a detailed object names with its `algorithm` key.
pub fn object_algorithm(text: &str, open: Option<usize>) -> Option<Algorithm> {
    let open = open?;
    scan::members(text, open)
        .into_iter()
        .find(|m| m.key == "algorithm")
        .and_then(|m| m.string_value)
        .and_then(|name| Algorithm::from_json_name(&name))
        .map(|(a, _)| a)
}

/// The target under the cursor in an lb-config.json.
fn json_target(document: &Document, offset: usize) -> Option<(Target, Span)> {
    let text = &document.text;
    // The character at `offset`: a token starting there counts.
    let cursor = document.json_cursor(offset + 1);
    let token = cursor.token?;
    let word = match token.tok {
        Tok::Str { .. } => scan::string_text(text, token),
        _ => text.get(token.span.start..token.span.end)?,
    };
    let path = &cursor.path;
    let target = match &cursor.slot {
        Slot::Key if is_request_algorithms(path) => Target::Algorithm(word.into()),
        Slot::Key if matches!(path.as_slice(), [m] if m == "models") => {
            Target::Model(word.into(), model_algorithm(text, token.span.end)?)
        }
        Slot::Key => field_target(text, &cursor, word)?,
        Slot::Value(key) if key == "default" && path.is_empty() => Target::Algorithm(word.into()),
        Slot::Value(_) if is_request_algorithms(path) => Target::Algorithm(word.into()),
        Slot::Value(_) if matches!(path.as_slice(), [m] if m == "models") => {
            Target::Algorithm(word.into())
        }
        Slot::Value(key) if key == "algorithm" => Target::Algorithm(word.into()),
        Slot::Value(key) => field_target(text, &cursor, key)?,
        Slot::Other => return None,
    };
    Some((target, token.span))
}

fn field_target(text: &str, cursor: &scan::Cursor, key: &str) -> Option<Target> {
    let field = Field::from_name(key)?;
    let (model, keyed) = entry_path(&cursor.path)?;
    let algorithm = object_algorithm(text, cursor.object).or(keyed);
    let entry = algorithm.map(|algorithm| Entry { model, algorithm });
    Some(Target::Field(field, entry))
}

/// The algorithm of the value after `from` (a model id's key): a name, or
/// the `algorithm` of a detailed object. Reads that value only, not the
/// rest of `models`.
fn model_algorithm(text: &str, from: usize) -> Option<Algorithm> {
    let value = scan::Lexer::new(text, from).find(|t| t.tok != Tok::Colon)?;
    match value.tok {
        Tok::Str { .. } => {
            Algorithm::from_json_name(scan::string_text(text, value)).map(|(a, _)| a)
        }
        Tok::Open(b'{') => object_algorithm(text, Some(value.span.start)),
        _ => None,
    }
}
