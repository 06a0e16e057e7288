//! Typed checking of expressions and route tables against the field schema;
//! lowering to the policy IR. Reports every problem; the first error of an
//! expression is the one stargate would return.

mod explain;
pub(crate) mod expr;
pub(crate) mod lower;
mod routes;
#[doc(hidden)]
pub mod schema;
pub(crate) mod suggest;
mod suppress;
pub(crate) mod value;

use crate::diag::{Code, Diagnostic, Report, Span};
use crate::ir::{Algorithm, AlgorithmConfig, Definition, Policy, RouteTable, Target};
pub use expr::Checked;
use expr::{check_expr, Context};
use std::sync::{Arc, LazyLock};

pub use explain::{default_follows, implications, provenance, Implication, Place};
pub(crate) use routes::shadowed_allow;
pub use routes::{check_route_ast, check_route_ast_for, check_route_file, check_route_file_for};
pub use suggest::did_you_mean;
pub use suppress::{
    apply_route_file_suppressions, route_file_suppressions, FORM as SUPPRESSION_FORM,
};

/// The start-up builder: resolves defaults and normalisations of a
/// configured algorithm (docs/stargate.md 4.3) for the newest stargate.
///
/// `Err` holds every refusal (`invalid_value`), in the order the builder
/// checks them: the first is the message stargate's start-up stops at.
/// Each names the offending field; its span is empty (at 0), since a
/// configuration built in code has no text to point into (the checkers
/// point at the field in the source).
pub fn build_policy(config: &AlgorithmConfig) -> Result<Policy, Vec<Diagnostic>> {
    build_policy_for(config, Target::NEWEST)
}

/// [`build_policy`] for the stargate `target`: a field the target does
/// not accept is as unsupported as any other.
pub fn build_policy_for(
    config: &AlgorithmConfig,
    target: Target,
) -> Result<Policy, Vec<Diagnostic>> {
    let refusal = |message| Diagnostic::new(Code::InvalidValue, Span::new(0, 0), message);
    lower::build_policy(config, target).map_err(|first| {
        let all: Vec<Diagnostic> = lower::builder_errors(config, target)
            .into_iter()
            .map(|(_, message)| refusal(message))
            .collect();
        // builder_errors starts with the builder's own refusal (a unit
        // test in lower.rs holds it to that); never return none.
        if all.is_empty() {
            vec![refusal(first)]
        } else {
            all
        }
    })
}

/// The permissive default route table (no configuration file) for the
/// newest stargate. A fresh table each call: routers built from it must
/// not share definitions.
pub fn permissive_table() -> RouteTable {
    permissive_table_for(Target::NEWEST)
}

/// The permissive default route table for the stargate `target`.
pub fn permissive_table_for(target: Target) -> RouteTable {
    RouteTable::permissive(|c| build_policy_for(c, target).expect("default settings always build"))
}

/// The stargate target a table was built for: its definitions' (the
/// default definition always exists).
pub fn table_target(table: &RouteTable) -> Target {
    table.default.policy.stargate
}

/// The permissive tables for checking only: built once, since checking an
/// expression without a table must not pay for building every default
/// policy. Definitions compiled against them are copies, never shared.
static PERMISSIVE: LazyLock<[RouteTable; 2]> =
    LazyLock::new(|| Target::ALL.map(permissive_table_for));

/// The shared permissive table of `target`.
fn shared_permissive(target: Target) -> &'static RouteTable {
    &PERMISSIVE[target as usize]
}

/// The definition a method resolves to for `model` (4.4); `model: None` is
/// a model without an entry.
pub fn resolve_base<'a>(
    table: &'a RouteTable,
    model: Option<&str>,
    algorithm: Algorithm,
) -> Option<&'a Arc<Definition>> {
    match model {
        Some(m) => table.resolve(m, algorithm).map(|r| r.definition),
        None if table.default.config.algorithm == algorithm => Some(&table.default),
        None => table.request_algorithms.get(&algorithm),
    }
}

/// Parses and checks an expression against a table: either form, or with
/// `header_only` the header form alone (a raw `x-routing-method` value).
fn check_text(
    text: &str,
    table: &RouteTable,
    model: Option<&str>,
    header_only: bool,
    diags: &mut Vec<Diagnostic>,
) -> Option<(Checked, Option<Arc<Definition>>)> {
    if text.trim().is_empty() {
        diags.push(Diagnostic::new(
            Code::UnknownMethod,
            Span::new(0, text.len()),
            format!("unknown routing method '{text}'"),
        ));
        return None;
    }
    let parsed = if header_only {
        crate::syntax::parse_header(text)
    } else {
        crate::syntax::parse_expression(text)
    };
    let expr = match parsed {
        Ok(expr) => expr,
        Err(errors) => {
            diags.extend(errors);
            return None;
        }
    };
    let base_of = |a: Algorithm| resolve_base(table, model, a).map(|d| d.config.clone());
    let target = table_target(table);
    let before = diags.len();
    let checked = check_expr(&expr, Context::Request, target, &base_of, diags);
    name_the_model(&mut diags[before..], table, model);
    let checked = checked?;
    // A method-only value is the configured definition itself (shared state).
    let same = expr
        .args
        .is_empty()
        .then(|| resolve_base(table, model, checked.config.algorithm).cloned())
        .flatten();
    Some((checked, same))
}

/// The compiled definition; moves the policy out of `checked` (callers
/// keep `checked` only for provenance, which reads the configurations).
fn definition_of(checked: &mut Checked, same: Option<Arc<Definition>>) -> Option<Definition> {
    if let Some(d) = same {
        return Some((*d).clone());
    }
    checked.policy.take().map(|policy| Definition {
        config: checked.config.clone(),
        policy,
    })
}

/// Compiles an `x-routing-method` value (method name or expression, either
/// form) for `model` against `table`, as a stargate router does per request.
/// `Err` holds every error, never none; the first is stargate's code and
/// message (what a router answers). Warnings are not part of a compile:
/// [`check_expression`] reports them.
pub fn compile_request_expression(
    table: &RouteTable,
    model: &str,
    value: &str,
) -> Result<Definition, Vec<Diagnostic>> {
    compile_value(table, model, value, false)
}

/// Like [`compile_request_expression`], but reads `value` exactly as
/// stargate reads `x-routing-method`: header form only, so a call-form
/// value is an unknown method (no `;`) or malformed (with `;`), never
/// accepted. This is the compiler a stargate-compatible router needs.
pub fn compile_header_value(
    table: &RouteTable,
    model: &str,
    value: &str,
) -> Result<Definition, Vec<Diagnostic>> {
    compile_value(table, model, value, true)
}

fn compile_value(
    table: &RouteTable,
    model: &str,
    value: &str,
    header_only: bool,
) -> Result<Definition, Vec<Diagnostic>> {
    let mut diags = Vec::new();
    let result = check_text(value, table, Some(model), header_only, &mut diags);
    if diags.iter().any(Diagnostic::is_error) {
        diags.retain(Diagnostic::is_error);
        return Err(diags);
    }
    result
        .and_then(|(mut checked, same)| definition_of(&mut checked, same))
        .ok_or_else(|| {
            vec![Diagnostic::new(
                Code::MalformedExpression,
                Span::new(0, value.len()),
                format!("could not compile '{value}'"),
            )]
        })
}

/// Checks an already parsed expression as a per-request expression
/// (`x-routing-method`, stargate's field table) for `model` against
/// `table`: every diagnostic, in the order stargate would report the
/// first, and what the checker built ([`Checked::policy`] is `None` when
/// any error was found). For callers that rewrite the tree before checking
/// it (the simulator's legacy baseline renames the method); text goes
/// through [`check_expression`].
pub fn check_request_ast(
    table: &RouteTable,
    model: Option<&str>,
    expr: &crate::syntax::ast::Expr,
) -> (Option<Checked>, Vec<Diagnostic>) {
    let base_of = |a: Algorithm| resolve_base(table, model, a).map(|d| d.config.clone());
    let mut diags = Vec::new();
    let target = table_target(table);
    let checked = check_expr(expr, Context::Request, target, &base_of, &mut diags);
    name_the_model(&mut diags, table, model);
    (checked, diags)
}

/// `unavailable`'s help names the model it is about: `model 'ID'` when
/// the table lists it, else the models the table does not list (which use
/// `default` and `request_algorithms`). The message stays stargate's
/// (docs/stargate.md 5.3).
fn name_the_model(diags: &mut [Diagnostic], table: &RouteTable, model: Option<&str>) {
    let who = match model {
        Some(m) if table.models.contains_key(m) => format!("model '{m}'"),
        _ => "the models the configuration does not list".to_string(),
    };
    for d in diags.iter_mut().filter(|d| d.code == Code::Unavailable) {
        if let Some(help) = &mut d.help {
            *help = help.replace("this model", &who);
        }
    }
}

/// Compiles an expression (either form) with every diagnostic, against
/// `table` and `model` when given (for the table's stargate target), else
/// the newest stargate's permissive default.
pub fn check_expression(
    source_name: &str,
    text: &str,
    table: Option<&RouteTable>,
    model: Option<&str>,
) -> (Option<Definition>, Report) {
    check_expression_for(source_name, text, table, model, Target::NEWEST)
}

/// [`check_expression`] for the stargate `target` when no table is given
/// (a table carries its own target).
pub fn check_expression_for(
    source_name: &str,
    text: &str,
    table: Option<&RouteTable>,
    model: Option<&str>,
    target: Target,
) -> (Option<Definition>, Report) {
    let table = table.unwrap_or_else(|| shared_permissive(target));
    let (compiled, report) = compile_with_report(source_name, text, table, model);
    (compiled.map(|(definition, _)| definition), report)
}

/// Where a resolved field's value came from (`routex explain`, `routex
/// diff`): one vocabulary for both commands and their JSON documents
/// (docs/cli.md "Provenance").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Provenance {
    /// Set nowhere: the field's default (for a default defined as another
    /// field's value, [`default_follows`] names that field).
    Default,
    /// Set by the configured definition (lb-config.json entry or route-file
    /// expression) the request expression merged onto, written at this
    /// place.
    Config(Place),
    /// Set by the request expression itself.
    Expression,
    /// Forced by another field's value over what the field was given
    /// ([`Explanation::implied`] says by what).
    Implied,
}

impl Provenance {
    /// The JSON spelling, the words of the `explain --format json`
    /// contract (docs/contract.md 5.2): `default`, `config`, `expression`
    /// or `implied`. The place of a `config` value is a member of its own
    /// (`config_from` in explain's document, `from` per side in diff's).
    pub const fn name(self) -> &'static str {
        match self {
            Provenance::Default => "default",
            Provenance::Config(_) => "config",
            Provenance::Expression => "expression",
            Provenance::Implied => "implied",
        }
    }

    /// The human spelling: the JSON word, a configured value's with the
    /// place that writes it ([`Place::config_label`], such as `config
    /// (model entry)`).
    pub const fn label(self) -> &'static str {
        match self {
            Provenance::Config(place) => place.config_label(),
            other => other.name(),
        }
    }

    /// The place of a configured value, else `None`.
    pub const fn place(self) -> Option<Place> {
        match self {
            Provenance::Config(place) => Some(place),
            _ => None,
        }
    }
}

impl serde::Serialize for Provenance {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

/// A resolved policy with the provenance of each field (by IR field name).
#[derive(Clone, Debug)]
pub struct Explanation {
    /// The resolved definition: the merged fields and the policy built
    /// from them.
    pub definition: Definition,
    /// Where each admission and settings field's value came from, by IR
    /// field name, in IR order.
    pub provenance: indexmap::IndexMap<String, Provenance>,
    /// For each field whose provenance is [`Provenance::Implied`]: the
    /// implying field and what the field itself was given.
    pub implied: indexmap::IndexMap<String, Implication>,
}

/// Like [`check_expression`], with provenance for `routex explain`.
pub fn explain_expression(
    source_name: &str,
    text: &str,
    table: Option<&RouteTable>,
    model: Option<&str>,
) -> (Option<Explanation>, Report) {
    explain_expression_for(source_name, text, table, model, Target::NEWEST)
}

/// [`explain_expression`] for the stargate `target` when no table is given.
pub fn explain_expression_for(
    source_name: &str,
    text: &str,
    table: Option<&RouteTable>,
    model: Option<&str>,
    target: Target,
) -> (Option<Explanation>, Report) {
    let table = table.unwrap_or_else(|| shared_permissive(target));
    let (compiled, report) = compile_with_report(source_name, text, table, model);
    let explanation = compiled.map(|(definition, checked)| {
        let place = base_place(table, model, checked.config.algorithm);
        Explanation {
            provenance: provenance(&definition.policy, &checked, place),
            implied: implications(&checked, place),
            definition,
        }
    });
    (explanation, report)
}

/// Where the definition [`resolve_base`] finds is written. An algorithm
/// that does not resolve has no base to credit: its place is never named.
fn base_place(table: &RouteTable, model: Option<&str>, algorithm: Algorithm) -> Place {
    let resolution = match model {
        Some(m) => table.resolve(m, algorithm),
        None => table.resolve_unlisted(algorithm),
    };
    resolution.map_or(Place::DefaultEntry, |r| Place::of(&r))
}

/// The definition and what the checker saw (for provenance), when `text`
/// compiles without error, and every diagnostic.
fn compile_with_report(
    source_name: &str,
    text: &str,
    table: &RouteTable,
    model: Option<&str>,
) -> (Option<(Definition, Checked)>, Report) {
    let mut report = Report::new(source_name, text);
    let result = check_text(text, table, model, false, &mut report.diagnostics);
    let compiled = result.and_then(|(mut checked, same)| {
        if report.diagnostics.iter().any(|d| d.is_error()) {
            return None;
        }
        let definition = definition_of(&mut checked, same)?;
        Some((definition, checked))
    });
    (compiled, report)
}
