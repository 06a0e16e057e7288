//! Scenario policies (docs/simulator-model.md A7.1): a routing expression compiled by
//! routex, or the built-in `legacy-band-walk` baseline. Either way the
//! decision comes from the balancer core; nothing here decides.

use crate::routers::baselines::spec::{self as baseline, Baseline};
use crate::routers::park::{Bands, Prefix, WakeRule};
use crate::routers::{CoreRouter, SimRouter};
use crate::world::engine::EngineParams;
use routex::balancer::Balancer;
use routex::check;
use routex::diag::{Code, Diagnostic, Span};
use routex::ir::{Algorithm, Field, Policy, PulsarWaitAndWidenSettings, RouteTable, Settings};
use routex::syntax::ast::Value;

/// The name of the built-in baseline.
pub const LEGACY: &str = "legacy-band-walk";

/// Parameters of the docs/stargate.md 3.8.5 baseline, from the field table.
const LEGACY_FIELDS: [Field; 10] = [
    Field::MaxQueued,
    Field::N,
    Field::TtftBucketSizeMs,
    Field::NextBucketUnlockFactor,
    Field::MaxQueueTimeFloorMs,
    Field::MaxQueueTimeCeilMs,
    Field::IgnoreQueueTime,
    Field::IgnoreInputProcessingTime,
    Field::Seed,
    Field::ConsiderKvFreeTokens,
];
const LEGACY_PARAMS: [&str; 10] = {
    let mut names = [""; 10];
    let mut i = 0;
    while i < LEGACY_FIELDS.len() {
        names[i] = LEGACY_FIELDS[i].name();
        i += 1;
    }
    names
};

/// A policy ready to instantiate, one balancer per router.
#[derive(Clone, Debug)]
pub enum PolicyKind {
    Core(Policy),
    Legacy {
        settings: PulsarWaitAndWidenSettings,
        initial_wait_ms: u64,
    },
    /// One of the peers' routers (docs/simulator.md "Baselines").
    Baseline(Baseline),
}

impl PolicyKind {
    /// One router's decision maker for this policy.
    pub fn instantiate(&self, engine: &EngineParams) -> Box<dyn SimRouter> {
        let balancer = match self {
            PolicyKind::Core(p) => Balancer::new(p),
            PolicyKind::Legacy {
                settings,
                initial_wait_ms,
            } => Balancer::legacy_band_walk(settings, *initial_wait_ms),
            PolicyKind::Baseline(b) => return crate::routers::peers::instantiate(b, engine),
        };
        let admission = match self {
            PolicyKind::Core(p) if p.admission.max_input_work_seconds.is_some() => Some(p.clone()),
            _ => None,
        };
        Box::new(CoreRouter {
            balancer,
            wake: self.wake_rule(),
            admission,
        })
    }

    pub fn wake_rule(&self) -> WakeRule {
        let all = |capacity_limit| WakeRule {
            capacity_limit,
            prefix: Prefix::All,
        };
        match self {
            PolicyKind::Legacy { settings, .. } => all(settings.bucket.max_queued),
            PolicyKind::Baseline(_) => all(u64::MAX),
            PolicyKind::Core(p) => match &p.settings {
                Settings::PulsarWaitAndWiden(w) => WakeRule {
                    capacity_limit: w.bucket.max_queued.max(w.fallback_max_queued),
                    prefix: Prefix::Bands(Bands {
                        k: usize::try_from(w.cache_affinity_backend_selection_count.max(1))
                            .unwrap_or(usize::MAX),
                        wait_ms: w.cache_affinity_wait_ms,
                        interval_ms: w.band_widen_interval_ms,
                        // docs/stargate.md 3.10: an unset interval follows
                        // a new session's wait of 0.
                        fresh_interval_ms: if w.band_widen_interval_is_default {
                            0
                        } else {
                            w.band_widen_interval_ms
                        },
                    }),
                },
                Settings::WaitAndWiden(w) => WakeRule {
                    capacity_limit: w.bucket.max_queued,
                    prefix: Prefix::GroupUntil(w.cache_affinity_wait_ms),
                },
                _ => all(u64::MAX),
            },
        }
    }

    /// Whether the policy reads the KV statistics (`consider_kv_free_tokens`).
    pub fn reads_kv(&self) -> bool {
        match self {
            PolicyKind::Core(p) => match &p.settings {
                Settings::Pulsar(s) => s.consider_kv_free_tokens,
                Settings::PulsarWaitAndWiden(s) => s.consider_kv_free_tokens,
                _ => false,
            },
            PolicyKind::Legacy { settings, .. } => settings.consider_kv_free_tokens,
            PolicyKind::Baseline(_) => false,
        }
    }

    /// Whether the policy walks Pulsar bands (PWW or the legacy baseline).
    pub fn is_band_walk(&self) -> bool {
        match self {
            PolicyKind::Core(p) => matches!(p.settings, Settings::PulsarWaitAndWiden(_)),
            PolicyKind::Legacy { .. } => true,
            PolicyKind::Baseline(_) => false,
        }
    }

    /// The queue-time floor and ceiling of a bucketed policy.
    pub fn queue_bounds(&self) -> (Option<u64>, Option<u64>) {
        let b = match self {
            PolicyKind::Core(p) => match &p.settings {
                Settings::WaitAndWiden(w) => &w.bucket,
                Settings::PulsarWaitAndWiden(w) => &w.bucket,
                _ => return (None, None),
            },
            PolicyKind::Legacy { settings, .. } => &settings.bucket,
            PolicyKind::Baseline(_) => return (None, None),
        };
        (b.max_queue_time_floor_ms, b.max_queue_time_ceil_ms)
    }
}

/// Compiles one policy string; diagnostics have spans into `text`.
pub fn compile(
    table: &RouteTable,
    model: &str,
    text: &str,
) -> Result<(PolicyKind, Vec<Diagnostic>), Vec<Diagnostic>> {
    let trimmed = text.trim_start();
    if baseline::is_baseline(text) {
        return baseline::parse(text).map(|b| (PolicyKind::Baseline(b), Vec::new()));
    }
    if trimmed.starts_with(LEGACY) {
        return compile_legacy(table, model, text).map(|k| (k, Vec::new()));
    }
    // The first error only, the one a router answers with, as scenario
    // checking has always reported a policy.
    let definition =
        check::compile_request_expression(table, model, text).map_err(|mut errors| {
            errors.truncate(1);
            errors
        })?;
    let mut warnings = Vec::new();
    let (_, report) = check::check_expression("policy", text, Some(table), Some(model));
    warnings.extend(report.diagnostics.into_iter().filter(|d| !d.is_error()));
    Ok((PolicyKind::Core(definition.policy), warnings))
}

/// `legacy-band-walk(args)`: parsed as an expression, its arguments checked
/// by name on the tree, then checked as a pulsar-wait-and-widen expression
/// (the same tree with the method renamed) so that values, ranges and
/// defaults are routex's own and every span points into `text`.
fn compile_legacy(
    table: &RouteTable,
    model: &str,
    text: &str,
) -> Result<PolicyKind, Vec<Diagnostic>> {
    let whole = Span::new(0, text.len());
    let mut expr = routex::syntax::parse_expression(text)?;
    if expr.method.node.trim() != LEGACY {
        return Err(vec![Diagnostic::new(
            Code::MalformedExpression,
            whole,
            "expected `legacy-band-walk(name=value, ...)`",
        )]);
    }
    let mut initial_wait_ms = 0;
    let mut errors = Vec::new();
    let mut kept = Vec::with_capacity(expr.args.len());
    for arg in expr.args.drain(..) {
        let name = arg.name.node.trim();
        if name == "initial_wait_ms" {
            let parsed = match &arg.value.node {
                Value::Integer(v) | Value::String(v) => v.trim().parse::<u64>().ok(),
                _ => None,
            };
            match parsed {
                Some(v) => initial_wait_ms = v,
                None => errors.push(Diagnostic::new(
                    Code::InvalidValue,
                    arg.value.span,
                    format!(
                        "`initial_wait_ms` must be a whole number of milliseconds, got `{}`",
                        &text[arg.value.span.start..arg.value.span.end]
                    ),
                )),
            }
        } else if LEGACY_PARAMS.contains(&name) {
            kept.push(arg);
        } else {
            errors.push(
                Diagnostic::new(
                    Code::UnknownParameter,
                    arg.name.span,
                    format!("`{name}` is not a parameter of the `legacy-band-walk` baseline"),
                )
                .with_help(format!(
                    "parameters: {}, initial_wait_ms",
                    LEGACY_PARAMS.join(", ")
                )),
            );
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    expr.args = kept;
    expr.method.node = Algorithm::PulsarWaitAndWiden.to_string();
    let (checked, diags) = check::check_request_ast(table, Some(model), &expr);
    let errors: Vec<Diagnostic> = diags.into_iter().filter(Diagnostic::is_error).collect();
    if !errors.is_empty() {
        return Err(errors);
    }
    match checked.and_then(|c| c.policy).map(|p| p.settings) {
        Some(Settings::PulsarWaitAndWiden(settings)) => Ok(PolicyKind::Legacy {
            settings,
            initial_wait_ms,
        }),
        _ => Err(vec![Diagnostic::new(
            Code::InvalidValue,
            whole,
            "the base configuration turns `legacy-band-walk` into another algorithm",
        )]),
    }
}
