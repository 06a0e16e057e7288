//! `routex sim tune` (docs/simulator.md, "Tuning"): searches the
//! pulsar-wait-and-widen parameters of one scenario policy for the highest
//! goodput at a target load whose TTFT p99 stays within a bound.
//!
//! Method: a seeded Latin hypercube of settings (plus the template's own
//! values, the reference), then successive halving: every trial runs on a
//! cheap budget (one seed, a third of the window), the best third moves on
//! to the full window, the best third of those to every seed of the
//! scenario. Each rung is one ordinary sweep over `--jobs` threads, so the
//! result does not depend on the thread count.

pub mod report;
pub mod space;

use crate::kernel::rng::{derive, splitmix64};
use crate::routers::policy::PolicyKind;
use crate::scenario::{NamedPolicy, Prepared};
use crate::sweep;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use routex::diag::{Code, Diagnostic, Report, Span};
use routex::ir::Settings;
use space::{rewrite, template_setting, Setting, Space};
use std::cmp::Ordering;

/// What to search for.
#[derive(Clone, Debug)]
pub struct TuneSpec {
    /// Index of the template policy in `Prepared::policies`.
    pub template: usize,
    pub rate_rps: f64,
    pub ttft_p99_bound_ms: f64,
    /// Settings sampled, the reference included.
    pub trials: usize,
    /// Seeds the sampling only; runs use the scenario's seeds.
    pub seed: u64,
    /// Successive-halving rate: each rung keeps 1 / eta of its trials.
    pub eta: usize,
    pub space: Space,
}

/// One budget level of successive halving.
#[derive(Clone, Debug, PartialEq)]
pub struct Rung {
    pub seeds: Vec<u64>,
    /// Share of the scenario's warmup and measured window.
    pub fraction: f64,
}

/// A trial's result at one rung: the mean goodput across the rung's seeds
/// and the worst (largest) TTFT p99 among them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Evaluation {
    pub goodput_rps: f64,
    pub ttft_p99_ms: f64,
    pub token_reuse: f64,
    /// Within the TTFT bound on every seed, and every seed's window
    /// steady (a transient window's goodput is no capacity).
    pub feasible: bool,
    /// The seeds' lowest and highest goodput (the seed spread).
    pub goodput_min: f64,
    pub goodput_max: f64,
    /// Every seed's window was steady.
    pub steady: bool,
}

#[derive(Clone, Debug)]
pub struct Trial {
    pub id: usize,
    pub setting: Setting,
    /// The template rewritten with the setting (canonical call form).
    pub expression: String,
    /// The template's own values: kept through every rung for comparison.
    pub reference: bool,
    /// One per rung reached, in rung order.
    pub evaluations: Vec<Evaluation>,
}

impl Trial {
    pub fn last(&self) -> Option<&Evaluation> {
        self.evaluations.last()
    }
}

#[derive(Clone, Debug)]
pub struct TuneResult {
    pub rungs: Vec<Rung>,
    /// Best first: the highest rung reached, then [`rank`].
    pub trials: Vec<Trial>,
    pub runs: usize,
    pub simulated_requests: u64,
}

impl TuneResult {
    /// The winner: the best trial of the last rung.
    pub fn best(&self) -> &Trial {
        &self.trials[0]
    }

    pub fn reference(&self) -> Option<&Trial> {
        self.trials.iter().find(|t| t.reference)
    }
}

/// The policy `sim tune` tunes: the one named `name`, or without a name
/// the scenario's first pulsar-wait-and-widen policy; `None` when there is
/// no such policy.
pub fn template(prepared: &Prepared, name: Option<&str>) -> Option<usize> {
    let is_pww = |k: &PolicyKind| matches!(k, PolicyKind::Core(p) if matches!(p.settings, Settings::PulsarWaitAndWiden(_)));
    match name {
        Some(name) => prepared.policies.iter().position(|p| p.name == name),
        None => prepared.policies.iter().position(|p| is_pww(&p.kind)),
    }
}

/// The order of two evaluations: feasible before infeasible; feasible ones
/// by goodput (higher first), infeasible ones by TTFT p99 (lower first);
/// ties by the other metric.
pub fn rank(a: &Evaluation, b: &Evaluation) -> Ordering {
    b.feasible.cmp(&a.feasible).then_with(|| {
        if a.feasible {
            b.goodput_rps
                .total_cmp(&a.goodput_rps)
                .then(a.ttft_p99_ms.total_cmp(&b.ttft_p99_ms))
        } else {
            a.ttft_p99_ms
                .total_cmp(&b.ttft_p99_ms)
                .then(b.goodput_rps.total_cmp(&a.goodput_rps))
        }
    })
}

/// The budgets: a third of the window on the first seed, the whole window
/// on the first seed, the whole window on every seed (rungs that would
/// repeat the previous one are left out).
pub fn rungs(seeds: &[u64], eta: usize) -> Vec<Rung> {
    let first = seeds.iter().take(1).copied().collect::<Vec<_>>();
    let mut out = Vec::new();
    if eta > 1 {
        out.push(Rung {
            seeds: first.clone(),
            fraction: 1.0 / eta as f64,
        });
    }
    out.push(Rung {
        seeds: first,
        fraction: 1.0,
    });
    if seeds.len() > 1 {
        out.push(Rung {
            seeds: seeds.to_vec(),
            fraction: 1.0,
        });
    }
    out
}

/// A rung's warmup and measured window: `fraction` of the scenario's. A
/// trace shorter than the horizon at the rate is repeated to fill it
/// (docs/simulator.md, "Steady-state measurement"), so the rate does not
/// change the window.
pub fn window(p: &Prepared, _rate_rps: f64, fraction: f64) -> (f64, f64) {
    (p.file.warmup_s * fraction, p.file.measure_s * fraction)
}

/// How many of `n` ranked trials move on: ceil(n / eta), at least one.
pub fn survivors(n: usize, eta: usize) -> usize {
    n.div_ceil(eta.max(1)).max(1).min(n)
}

/// Progress of a search, for the command line.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    pub rung: usize,
    pub rungs: usize,
    pub trials: usize,
    pub done: usize,
    pub total: usize,
}

fn error(message: String) -> Report {
    let mut r = Report::new("tune", "");
    r.diagnostics.push(Diagnostic::new(
        Code::InvalidValue,
        Span::new(0, 0),
        message,
    ));
    r
}

/// The settings tried: the reference, then the Latin hypercube (points
/// equal to the reference dropped).
pub fn settings(spec: &TuneSpec, reference: Setting) -> Vec<Setting> {
    // The sampling stream: its own tag, so it shares nothing with a run.
    let mut rng = ChaCha8Rng::seed_from_u64(derive(spec.seed, splitmix64(0x54554E45), 0));
    let mut out = vec![reference];
    let n = spec.trials.saturating_sub(1);
    out.extend(
        spec.space
            .latin_hypercube(n, &mut rng)
            .into_iter()
            .filter(|s| *s != reference),
    );
    out
}

/// Runs the search. `Err` when the template is not a pulsar-wait-and-widen
/// expression or a rewritten setting does not compile.
pub fn tune(
    p: &Prepared,
    spec: &TuneSpec,
    jobs: usize,
    progress: &mut dyn FnMut(Progress),
) -> Result<TuneResult, Report> {
    let template = p
        .policies
        .get(spec.template)
        .ok_or_else(|| error("no such policy".into()))?;
    let reference = match &template.kind {
        PolicyKind::Core(policy) => match &policy.settings {
            Settings::PulsarWaitAndWiden(s) => template_setting(s),
            _ => return Err(not_pww(template)),
        },
        PolicyKind::Legacy { .. } | PolicyKind::Baseline(_) => return Err(not_pww(template)),
    };
    let expr = routex::syntax::parse_expression(&template.text).map_err(|ds| {
        let mut r = Report::new(&template.name, template.text.as_str());
        r.diagnostics = ds;
        r
    })?;
    let table = p
        .route_table()
        .ok_or_else(|| error("the base configuration does not load".into()))?;
    let mut trials = Vec::new();
    let mut compiled = Vec::new();
    for (id, setting) in settings(spec, reference).into_iter().enumerate() {
        let expression = routex::syntax::print_call(&rewrite(&expr, &setting));
        let (kind, _warnings) =
            crate::routers::policy::compile(&table, &p.file.router.model, &expression).map_err(
                |ds| {
                    let mut r = Report::new(format!("trial {id}"), expression.as_str());
                    r.diagnostics = ds;
                    r
                },
            )?;
        compiled.push(NamedPolicy {
            name: format!("t{id}"),
            text: expression.clone(),
            kind,
            admission: template.admission,
        });
        trials.push(Trial {
            id,
            setting,
            expression,
            reference: id == 0,
            evaluations: Vec::new(),
        });
    }
    let rungs = rungs(&p.file.seeds, spec.eta);
    let (mut runs, mut simulated_requests) = (0, 0);
    let mut alive: Vec<usize> = (0..trials.len()).collect();
    for (r, rung) in rungs.iter().enumerate() {
        let mut q = p.clone();
        q.policies = alive.iter().map(|&i| compiled[i].clone()).collect();
        q.file.rates_rps = vec![spec.rate_rps];
        q.file.seeds = rung.seeds.clone();
        q.set_window(
            p.file.warmup_s * rung.fraction,
            p.file.measure_s * rung.fraction,
        );
        let mut tick = |done, total| {
            progress(Progress {
                rung: r,
                rungs: rungs.len(),
                trials: alive.len(),
                done,
                total,
            })
        };
        let outputs = sweep::sweep(&q, jobs, &mut tick);
        runs += outputs.len();
        simulated_requests += outputs.iter().map(|o| o.result.stats.requests).sum::<u64>();
        for (slot, &i) in alive.iter().enumerate() {
            let mine: Vec<_> = outputs.iter().filter(|o| o.key.policy == slot).collect();
            let n = mine.len().max(1) as f64;
            let goodput = mine
                .iter()
                .map(|o| o.result.metrics.goodput_rps)
                .sum::<f64>()
                / n;
            let reuse = mine
                .iter()
                .map(|o| o.result.metrics.token_reuse)
                .sum::<f64>()
                / n;
            let p99 = mine
                .iter()
                .map(|o| o.result.metrics.ttft_p99_ms)
                .fold(0.0, f64::max);
            let goodputs = mine.iter().map(|o| o.result.metrics.goodput_rps);
            let steady = mine.iter().all(|o| o.result.metrics.steady);
            trials[i].evaluations.push(Evaluation {
                goodput_rps: goodput,
                ttft_p99_ms: p99,
                token_reuse: reuse,
                feasible: p99 <= spec.ttft_p99_bound_ms && steady,
                goodput_min: goodputs.clone().fold(f64::INFINITY, f64::min),
                goodput_max: goodputs.fold(f64::NEG_INFINITY, f64::max),
                steady,
            });
        }
        alive.sort_by(|&a, &b| by_last(&trials[a], &trials[b]));
        if r + 1 < rungs.len() {
            let keep = survivors(alive.len(), spec.eta);
            let reference_dropped = alive[keep..].contains(&0);
            alive.truncate(keep);
            if reference_dropped {
                alive.push(0);
            }
        }
    }
    trials.sort_by(by_last);
    Ok(TuneResult {
        rungs,
        trials,
        runs,
        simulated_requests,
    })
}

/// Deeper rungs first, then [`rank`] at the deepest rung, then trial id.
/// The reference rides along to the last rung, but never outranks a trial
/// that earned its place there.
fn by_last(a: &Trial, b: &Trial) -> Ordering {
    b.evaluations
        .len()
        .cmp(&a.evaluations.len())
        .then_with(|| match (a.last(), b.last()) {
            (Some(x), Some(y)) => rank(x, y),
            _ => Ordering::Equal,
        })
        .then(a.id.cmp(&b.id))
}

fn not_pww(p: &NamedPolicy) -> Report {
    error(format!(
        "policy `{}` is not a pulsar-wait-and-widen expression; `sim tune` tunes that algorithm's parameters",
        p.name
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(goodput_rps: f64, ttft_p99_ms: f64, feasible: bool) -> Evaluation {
        Evaluation {
            goodput_rps,
            ttft_p99_ms,
            token_reuse: 0.0,
            feasible,
            goodput_min: goodput_rps,
            goodput_max: goodput_rps,
            steady: true,
        }
    }

    #[test]
    fn feasible_trials_rank_by_goodput_infeasible_by_p99() {
        let mut v = [
            ev(250.0, 3_000.0, false),
            ev(240.0, 900.0, true),
            ev(245.0, 1_900.0, true),
            ev(260.0, 2_500.0, false),
            ev(245.0, 1_000.0, true),
        ];
        v.sort_by(rank);
        let order: Vec<(f64, f64)> = v.iter().map(|e| (e.goodput_rps, e.ttft_p99_ms)).collect();
        assert_eq!(
            order,
            vec![
                (245.0, 1_000.0),
                (245.0, 1_900.0),
                (240.0, 900.0),
                (260.0, 2_500.0),
                (250.0, 3_000.0)
            ]
        );
    }

    #[test]
    fn rungs_and_survivors() {
        let r = rungs(&[1, 2, 3], 3);
        assert_eq!(r.len(), 3);
        assert_eq!((r[0].seeds.clone(), r[0].fraction), (vec![1], 1.0 / 3.0));
        assert_eq!((r[1].seeds.clone(), r[1].fraction), (vec![1], 1.0));
        assert_eq!(r[2].seeds, vec![1, 2, 3]);
        assert_eq!(rungs(&[7], 3).len(), 2);
        assert_eq!(rungs(&[7], 1).len(), 1);
        assert_eq!(survivors(100, 3), 34);
        assert_eq!(survivors(34, 3), 12);
        assert_eq!(survivors(2, 3), 1);
        assert_eq!(survivors(0, 3), 0);
    }
}
