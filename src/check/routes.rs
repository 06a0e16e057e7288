//! Route files (`*.routes`) -> route tables: every expression checked
//! strictly against default settings, plus the file-level duplicate rules.

use super::expr::{check_expr, Checked, Context};
use crate::diag::{Code, Diagnostic, Report, Span};
use crate::ir::{
    Algorithm, AlgorithmConfig, Definition, ModelEntry, RouteTable, Target, IR_VERSION,
};
use crate::syntax::ast::{Allow, Expr, Item, RouteFile};
use indexmap::IndexMap;
use std::sync::Arc;

/// Checks and lowers a route file (`*.routes`) for the newest stargate.
pub fn check_route_file(source_name: &str, text: &str) -> (Option<RouteTable>, Report) {
    check_route_file_for(source_name, text, Target::NEWEST)
}

/// Checks and lowers a route file for the stargate `target`.
pub fn check_route_file_for(
    source_name: &str,
    text: &str,
    target: Target,
) -> (Option<RouteTable>, Report) {
    let mut report = Report::new(source_name, text);
    let (file, syntax_errors) = crate::syntax::parse_route_file(text);
    report.diagnostics.extend(syntax_errors);
    let (table, diagnostics) = check_route_ast_for(&file, target);
    report.diagnostics.extend(diagnostics);
    // Suppression comments (`# routex: allow(CODE) -- reason`) are part of
    // the route-file language: every reader of the file honours them.
    super::suppress::apply_route_file_suppressions(&mut report, &file);
    let table = table.filter(|_| !report.has_errors());
    (table, report)
}

/// Where an expression's text ends; a bare method's span from the parser
/// may run over the trailing whitespace, the method name does not.
fn expr_end(expr: &Expr) -> usize {
    if expr.args.is_empty() {
        expr.method.span.end.max(expr.span.start)
    } else {
        expr.span.end
    }
}

fn check_one(expr: &Expr, target: Target, diags: &mut Vec<Diagnostic>) -> Option<Checked> {
    let base_of = |a: Algorithm| Some(AlgorithmConfig::named(a));
    check_expr(expr, Context::RouteFile, target, &base_of, diags)
}

fn definition(checked: &Checked) -> Option<Arc<Definition>> {
    checked.policy.clone().map(|policy| {
        Arc::new(Definition {
            config: checked.config.clone(),
            policy,
        })
    })
}

type Allowed = IndexMap<Algorithm, Option<Arc<Definition>>>;

/// Adds one `allow` to its scope; `duplicate_allow` for a second entry of
/// one algorithm, `shadowed_allow` for the algorithm of the model itself
/// (`own`), which resolution picks first (docs/stargate.md 4.4).
/// `None` inside the map: the entry had errors.
fn add_allow(
    out: &mut Allowed,
    allow: &Allow,
    scope: &str,
    own: Option<Algorithm>,
    target: Target,
    diags: &mut Vec<Diagnostic>,
) {
    let Some(checked) = check_one(&allow.expr, target, diags) else {
        return;
    };
    let alg = checked.config.algorithm;
    if own == Some(alg) {
        diags.push(shadowed_allow(
            Span::new(allow.span.start, expr_end(&allow.expr)),
            alg,
            scope,
        ));
    }
    if out.contains_key(&alg) {
        diags.push(
            Diagnostic::new(
                Code::DuplicateAllow,
                Span::new(allow.span.start, expr_end(&allow.expr)),
                format!("{alg} is allowed twice in {scope}"),
            )
            .with_help("keep one `allow` per algorithm in a scope"),
        );
        return;
    }
    out.insert(alg, definition(&checked));
}

/// The warning for an allowed algorithm that is also the model's own: a
/// request naming it resolves to the model's configuration, never here.
pub(crate) fn shadowed_allow(span: Span, alg: Algorithm, scope: &str) -> Diagnostic {
    Diagnostic::new(
        Code::ShadowedAllow,
        span,
        format!(
            "{scope} already uses {alg}: a request naming {alg} gets the model's own \
             configuration, so this entry is never used"
        ),
    )
    .with_help("remove this entry, or change the model's own configuration instead")
}

fn complete(map: Allowed) -> Option<IndexMap<Algorithm, Arc<Definition>>> {
    map.into_iter().map(|(a, d)| d.map(|d| (a, d))).collect()
}

/// Lowers a parsed route file for the newest stargate: the table, `None`
/// when any entry has an error, and every diagnostic of its entries (the
/// parser's own are the caller's, who holds them with the text).
pub fn check_route_ast(file: &RouteFile) -> (Option<RouteTable>, Vec<Diagnostic>) {
    check_route_ast_for(file, Target::NEWEST)
}

/// Lowers a parsed route file for the stargate `target`.
pub fn check_route_ast_for(
    file: &RouteFile,
    target: Target,
) -> (Option<RouteTable>, Vec<Diagnostic>) {
    let mut diagnostics = Vec::new();
    let table = lower_route_ast(file, target, &mut diagnostics);
    (table, diagnostics)
}

fn lower_route_ast(
    file: &RouteFile,
    target: Target,
    diags: &mut Vec<Diagnostic>,
) -> Option<RouteTable> {
    let errors_before = diags.iter().filter(|d| d.is_error()).count();
    let mut default: Option<Option<Arc<Definition>>> = None;
    let mut top = Allowed::new();
    let mut models: IndexMap<String, (Option<Arc<Definition>>, Allowed)> = IndexMap::new();
    for item in file.items.iter() {
        match item {
            Item::Default { expr, span } => {
                let checked = check_one(expr, target, diags);
                if default.is_some() {
                    diags.push(
                        Diagnostic::new(
                            Code::DuplicateDefault,
                            Span::new(span.start, expr_end(expr)),
                            "`default` is set twice",
                        )
                        .with_help("keep one `default` line"),
                    );
                    continue;
                }
                default = Some(checked.as_ref().and_then(definition));
            }
            Item::Allow(allow) => add_allow(&mut top, allow, "the top level", None, target, diags),
            Item::Model {
                id,
                expr,
                allows: model_allows,
                ..
            } => {
                let checked = check_one(expr, target, diags);
                let scope = format!("model \"{}\"", id.node);
                let mut scoped = Allowed::new();
                let own = checked.as_ref().map(|c| c.config.algorithm);
                for allow in model_allows {
                    add_allow(&mut scoped, allow, &scope, own, target, diags);
                }
                if models.contains_key(&id.node) {
                    diags.push(
                        Diagnostic::new(
                            Code::DuplicateModel,
                            id.span,
                            format!("model \"{}\" is listed twice", id.node),
                        )
                        .with_help("merge the two entries into one"),
                    );
                    continue;
                }
                models.insert(
                    id.node.clone(),
                    (checked.as_ref().and_then(definition), scoped),
                );
            }
        }
    }
    if diags.iter().filter(|d| d.is_error()).count() > errors_before {
        return None;
    }
    let default = match default {
        Some(d) => d?,
        None => {
            let config = AlgorithmConfig::named(Algorithm::PowerOfN);
            let policy = super::lower::build_policy(&config, target).ok()?;
            Arc::new(Definition { config, policy })
        }
    };
    let mut model_entries = IndexMap::new();
    for (id, (definition, request_algorithms)) in models {
        model_entries.insert(
            id,
            ModelEntry {
                definition: definition?,
                request_algorithms: complete(request_algorithms)?,
            },
        );
    }
    Some(RouteTable {
        version: IR_VERSION,
        default,
        request_algorithms: complete(top)?,
        models: model_entries,
    })
}
