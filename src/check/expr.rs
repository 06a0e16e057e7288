//! Checking one parsed expression against a base configuration, in
//! stargate's precedence (docs/stargate.md 5.3-5.5), reporting every
//! problem in that order so the first error is the one stargate returns.

use super::lower::{build_policy, field_of_builder_error};
use super::schema::{algorithm_list, is_set, set, Field, Typed};
use super::suggest::{algorithm_suggestion, did_you_mean};
use super::value::{check_expression_range, type_value};
use crate::diag::{Code, Diagnostic, Span};
use crate::ir::{Algorithm, AlgorithmConfig, NameMatch, Policy, Target};
use crate::syntax::ast::{Arg, Expr};

/// Where an expression comes from: the parameter table differs slightly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Context {
    /// `x-routing-method`, `routex check`: stargate's table exactly.
    Request,
    /// A route-file entry: also `rendezvous_weight`, which lb-config.json
    /// carries (see docs/configuration.md).
    RouteFile,
}

impl Context {
    fn algorithms(self, field: Field) -> &'static [Algorithm] {
        match self {
            Context::Request => field.expression_algorithms(),
            Context::RouteFile => field.route_file_algorithms(),
        }
    }
}

/// The outcome of checking one expression.
#[derive(Clone, Debug)]
pub struct Checked {
    /// The base configuration the expression applied to.
    pub base: AlgorithmConfig,
    /// The base with the expression's parameters applied.
    pub config: AlgorithmConfig,
    /// The fields the expression set, in source order.
    pub set_by_expression: Vec<Field>,
    /// The built policy; `None` when any error was found.
    pub policy: Option<Policy>,
}

/// Recognises a method name (case-insensitive, `_` as `-`, aliases with a
/// warning), or reports `unknown_method`.
pub fn check_method(expr: &Expr, diags: &mut Vec<Diagnostic>) -> Option<Algorithm> {
    let raw = &expr.method.node;
    let span = expr.method.span;
    match Algorithm::from_header_name(raw) {
        Some((alg, NameMatch::Canonical)) => Some(alg),
        Some((alg, NameMatch::Alias)) => {
            diags.push(
                Diagnostic::new(
                    Code::DeprecatedAlias,
                    span,
                    format!("'{}' is a deprecated alias of {alg}", raw.trim()),
                )
                .with_help(format!("write `{alg}`"))
                .with_suggestion(alg.name()),
            );
            Some(alg)
        }
        None => {
            let mut d = Diagnostic::new(
                Code::UnknownMethod,
                span,
                format!("unknown routing method '{raw}'"),
            );
            d = match algorithm_suggestion(raw.trim()) {
                Some(name) => d
                    .with_help(format!("did you mean `{name}`?"))
                    .with_suggestion(canonical(name)),
                None => d.with_help(format!(
                    "routing methods: {}",
                    algorithm_list(&Algorithm::ALL)
                )),
            };
            diags.push(d);
            None
        }
    }
}

/// The canonical spelling of a suggested algorithm name or alias: a quick
/// fix must not trade one warning for another.
fn canonical(name: &str) -> &'static str {
    Algorithm::from_json_name(name).map_or("", |(alg, _)| alg.name())
}

/// Checks an expression: method, base (`base_of` is `None` for an
/// unavailable algorithm), parameters, bound pairing, builder; appends every
/// diagnostic. `None` only when the method is unknown. `target` is the
/// stargate state the expression is checked and built for.
pub fn check_expr(
    expr: &Expr,
    context: Context,
    target: Target,
    base_of: &dyn Fn(Algorithm) -> Option<AlgorithmConfig>,
    diags: &mut Vec<Diagnostic>,
) -> Option<Checked> {
    let errors_before = diags.iter().filter(|d| d.is_error()).count();
    let alg = check_method(expr, diags)?;
    let base = match base_of(alg) {
        Some(base) => base,
        None => {
            let configured: Vec<Algorithm> = Algorithm::ALL
                .into_iter()
                .filter(|a| base_of(*a).is_some())
                .collect();
            let help = if configured.is_empty() {
                "no routing method is configured for this model".to_string()
            } else {
                format!(
                    "the methods configured for this model: {}",
                    algorithm_list(&configured)
                )
            };
            diags.push(
                Diagnostic::new(
                    Code::Unavailable,
                    expr.method.span,
                    format!("routing method {alg} is not configured for this model"),
                )
                .with_help(help),
            );
            AlgorithmConfig::named(alg)
        }
    };
    let mut config = base.clone();
    let mut set_by_expression = Vec::with_capacity(expr.args.len());
    let mut set_args: Vec<(Field, &Arg)> = Vec::with_capacity(expr.args.len());
    for arg in &expr.args {
        if let Some((field, value)) = check_arg(arg, alg, context, target, diags) {
            if let Err(refused) = set(&mut config.fields, field, value) {
                // check_arg types the value by the field's kind.
                diags.push(Diagnostic::new(
                    Code::InvalidValue,
                    arg.value.span,
                    refused.to_string(),
                ));
                continue;
            }
            set_by_expression.push(field);
            set_args.push((field, arg));
        }
    }
    let arg_span = |wanted: &[Field]| {
        set_args
            .iter()
            .find(|(f, _)| wanted.contains(f))
            .map(|(_, a)| a.span)
    };
    let bounds = [Field::MaxQueueTimeFloorMs, Field::MaxQueueTimeCeilMs];
    let both_bounds = config.fields.max_queue_time_floor_ms.is_some()
        && config.fields.max_queue_time_ceil_ms.is_some();
    if let Some(span) = arg_span(&bounds).filter(|_| !both_bounds) {
        diags.push(
            Diagnostic::new(
                Code::InertCombination,
                span,
                "max_queue_time_floor_ms and max_queue_time_ceil_ms must both be configured",
            )
            .with_help("set the other bound too; a bound in the base configuration also counts"),
        );
    }
    let errors_now = diags.iter().filter(|d| d.is_error()).count();
    let policy = if errors_now == errors_before {
        match build_policy(&config, target) {
            Ok(policy) => Some(policy),
            Err(message) => {
                let span = field_of_builder_error(&config, &message)
                    .and_then(|f| arg_span(&[f]))
                    .unwrap_or(expr.span);
                diags.push(Diagnostic::new(Code::InvalidValue, span, message));
                None
            }
        }
    } else {
        None
    };
    warn_semantics(alg, target, &config, &set_args, expr.span, diags);
    Some(Checked {
        base,
        config,
        set_by_expression,
        policy,
    })
}

/// One `name=value`: applicability, then kind, then range.
fn check_arg(
    arg: &Arg,
    alg: Algorithm,
    context: Context,
    target: Target,
    diags: &mut Vec<Diagnostic>,
) -> Option<(Field, Typed)> {
    let name = arg.name.node.as_str();
    let field = Field::from_name(name).filter(|f| !context.algorithms(*f).is_empty());
    let Some(field) = field else {
        let applicable = Field::ALL
            .into_iter()
            .filter(|f| context.algorithms(*f).contains(&alg))
            .map(Field::name);
        let mut d = Diagnostic::new(
            Code::UnknownParameter,
            arg.name.span,
            format!("unknown parameter '{name}' for algorithm {alg}"),
        );
        if let Some(best) = did_you_mean(name, applicable) {
            d = d
                .with_help(format!("did you mean `{best}`?"))
                .with_suggestion(best);
        }
        diags.push(d);
        return None;
    };
    // A field of another stargate target: its own diagnostic, whatever
    // the algorithm (the target's stargate does not know the field).
    if !field.accepted_by(target) {
        diags.push(not_in_target(field, target, arg.name.span));
        return None;
    }
    let algorithms = context.algorithms(field);
    if !algorithms.contains(&alg) {
        diags.push(
            Diagnostic::new(
                Code::NotApplicable,
                arg.name.span,
                format!("{name} is not applicable to {alg}"),
            )
            .with_help(format!("{name} applies to: {}", algorithm_list(algorithms))),
        );
        return None;
    }
    let with_range = |d: Diagnostic| match field.expression_range() {
        Some(range) => d.with_help(range),
        None => d.with_help(format!("accepted: {}", field.kind().describe())),
    };
    let value = match type_value(field, &arg.value.node) {
        Ok(v) => v,
        Err(message) => {
            diags.push(with_range(Diagnostic::new(
                Code::InvalidValue,
                arg.value.span,
                message,
            )));
            return None;
        }
    };
    if let Err((code, message)) = check_expression_range(field, &value) {
        diags.push(with_range(Diagnostic::new(code, arg.value.span, message)));
        return None;
    }
    Some((field, value))
}

/// `not_in_target`: `field` exists, but not in the stargate `target` the
/// input is checked for; the help names the targets that accept it and
/// both ways to choose one: the flag and the project file's key.
pub fn not_in_target(field: Field, target: Target, span: Span) -> Diagnostic {
    let accepted: Vec<&str> = field.targets().iter().map(|t| t.name()).collect();
    Diagnostic::new(
        Code::NotInTarget,
        span,
        format!(
            "{} is not accepted by stargate target {target}",
            field.name()
        ),
    )
    .with_help(format!(
        "accepted by stargate target {} (choose it with `--stargate {chosen}`, or `stargate = \"{chosen}\"` in routex.toml)",
        accepted.join(", "),
        chosen = accepted.last().copied().unwrap_or_default()
    ))
}

/// Legal but surprising settings (docs/contract.md 3).
fn warn_semantics(
    alg: Algorithm,
    target: Target,
    config: &AlgorithmConfig,
    set_args: &[(Field, &Arg)],
    whole: Span,
    diags: &mut Vec<Diagnostic>,
) {
    let span_of = |wanted: &[Field]| {
        set_args
            .iter()
            .find(|(f, _)| wanted.contains(f))
            .map(|(_, a)| a.span)
    };
    if let Some(d) = floor_above_ceil(&config.fields, || {
        span_of(&[Field::MaxQueueTimeFloorMs, Field::MaxQueueTimeCeilMs]).unwrap_or(whole)
    }) {
        diags.push(d);
    }
    let waits = [
        Field::CacheAffinityWaitMs,
        Field::BandWidenIntervalMs,
        Field::FallbackMaxQueued,
    ];
    if let Some(span) = span_of(&waits) {
        if let Some(d) = no_queue_slo(alg, target, &config.fields, span) {
            diags.push(d);
        }
    }
}

/// `floor_above_ceil` when both bounds are set and the floor is higher.
pub fn floor_above_ceil(
    fields: &crate::ir::FieldSet,
    span: impl FnOnce() -> Span,
) -> Option<Diagnostic> {
    match (
        fields.max_queue_time_floor_ms,
        fields.max_queue_time_ceil_ms,
    ) {
        (Some(floor), Some(ceil)) if floor > ceil => Some(
            Diagnostic::new(
                Code::FloorAboveCeil,
                span(),
                format!(
                    "max_queue_time_floor_ms {floor} is above max_queue_time_ceil_ms {ceil}: \
                     the queue-time limit shrinks as the request ages"
                ),
            )
            .with_help("swap the two values unless a shrinking limit is intended"),
        ),
        _ => None,
    }
}

/// `no_queue_slo` for PWW wait/overflow fields without both bounds, where
/// the premise holds: only the `widening` target has the shortcut that
/// makes those fields act only when the primary is ineligible.
pub fn no_queue_slo(
    alg: Algorithm,
    target: Target,
    fields: &crate::ir::FieldSet,
    span: Span,
) -> Option<Diagnostic> {
    let has_slo =
        fields.max_queue_time_floor_ms.is_some() && fields.max_queue_time_ceil_ms.is_some();
    let sets_waits = [
        Field::CacheAffinityWaitMs,
        Field::BandWidenIntervalMs,
        Field::FallbackMaxQueued,
    ]
    .into_iter()
    .any(|f| is_set(fields, f));
    let shortcut = target.has_no_queue_slo_shortcut();
    (alg == Algorithm::PulsarWaitAndWiden && shortcut && sets_waits && !has_slo).then(|| {
        Diagnostic::new(
            Code::NoQueueSlo,
            span,
            "pulsar-wait-and-widen without a queue SLO selects a feasible primary at once: \
             cache_affinity_wait_ms, band_widen_interval_ms and fallback_max_queued act only \
             when the primary is ineligible",
        )
        .with_help("set both max_queue_time_floor_ms and max_queue_time_ceil_ms")
    })
}
