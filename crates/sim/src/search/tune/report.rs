//! What `routex sim tune` prints: the trials table, the winner as a routing
//! expression and as an `lb-config.json` model entry. Nothing here holds
//! wall-clock time, so the text is the same for any `--jobs`.

use super::{TuneResult, TuneSpec};
use routex::ir::RouteTable;
use std::fmt::Write as _;

fn seconds(ms: f64) -> String {
    format!("{:.2} s", ms / 1_000.0)
}

/// One row per trial, best first.
pub fn table(result: &TuneResult, spec: &TuneSpec) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:>4} {:>5} {:>7} {:>11} {:>10} {:>8} {:>5} {:>4} {:>9} {:>9} {:>6} {:>5}",
        "rank",
        "trial",
        "wait_ms",
        "interval_ms",
        "max_queued",
        "fallback",
        "group",
        "rung",
        "goodput",
        "ttft99",
        "reuse%",
        "ok"
    );
    for (i, t) in result.trials.iter().enumerate() {
        let Some(e) = t.last() else { continue };
        let s = &t.setting;
        let _ = writeln!(
            out,
            "{:>4} {:>5} {:>7} {:>11} {:>10} {:>8} {:>5} {:>4} {:>9.1} {:>9} {:>6.1} {:>5}",
            i + 1,
            if t.reference {
                format!("{}*", t.id)
            } else {
                t.id.to_string()
            },
            s.wait_ms,
            s.interval_ms,
            s.max_queued,
            s.fallback_max_queued,
            s.group,
            t.evaluations.len(),
            e.goodput_rps,
            seconds(e.ttft_p99_ms),
            e.token_reuse * 100.0,
            if e.feasible { "yes" } else { "no" },
        );
    }
    let _ = writeln!(
        out,
        "* the template's own values (kept to the last rung). Rungs: {}. \
         Goodput is the mean over the rung's seeds, ttft99 the worst; bound {} at {} RPS.",
        result
            .rungs
            .iter()
            .enumerate()
            .map(|(i, r)| format!(
                "{} = {} seed(s) x {:.0} % of the window",
                i + 1,
                r.seeds.len(),
                r.fraction * 100.0
            ))
            .collect::<Vec<_>>()
            .join(", "),
        seconds(spec.ttft_p99_bound_ms),
        spec.rate_rps
    );
    out
}

/// The winner, ready to paste: the routing expression and the model entry
/// of `lb-config.json` (`"model": {...}`), both compiled by routex from
/// the same text. `None` if the expression does not compile (it always
/// does: every trial was compiled before it ran).
pub fn paste(result: &TuneResult, table: &RouteTable, model: &str) -> Option<(String, String)> {
    let best = result.best();
    let definition =
        routex::check::compile_request_expression(table, model, &best.expression).ok()?;
    let entry = routex::config::entry_json(&definition.config);
    let mut object = serde_json::Map::new();
    object.insert(model.to_string(), entry);
    let pretty = serde_json::to_string_pretty(&serde_json::Value::Object(object)).ok()?;
    // The inside of the braces: a member to paste into `models`.
    let member = pretty
        .strip_prefix("{\n")
        .and_then(|s| s.strip_suffix("\n}"))
        .map(|s| {
            s.lines()
                .map(|l| l.strip_prefix("  ").unwrap_or(l))
                .collect::<Vec<_>>()
                .join("\n")
        })?;
    Some((best.expression.clone(), member))
}

/// The base configuration with the winner applied (docs/simulator.md,
/// "Tuning"): the scenario model's entry keeps every field the winner's
/// expression does not set, its `request_algorithms` included; the fields
/// the expression sets (the tuned ones and the template's other
/// arguments, which are what the runs simulated) take the winner's values.
/// Without a base configuration (or when it does not list the model) the
/// entry is the winner's alone. Returns the patched configuration and the
/// model's entry in it.
pub fn patched_config(
    base: Option<&serde_json::Value>,
    table: &RouteTable,
    model: &str,
    expression: &str,
) -> Option<(serde_json::Value, serde_json::Value)> {
    use serde_json::Value;
    let definition = routex::check::compile_request_expression(table, model, expression).ok()?;
    let Value::Object(winner) = routex::config::entry_json(&definition.config) else {
        return None;
    };
    let mut config = match base {
        Some(Value::Object(map)) => Value::Object(map.clone()),
        _ => serde_json::json!({ "models": {} }),
    };
    let models = config
        .as_object_mut()?
        .entry("models")
        .or_insert_with(|| Value::Object(serde_json::Map::new()));
    let entry = models
        .as_object_mut()?
        .entry(model.to_string())
        .or_insert_with(|| Value::Object(serde_json::Map::new()));
    // A model given as a bare algorithm name becomes an object.
    if !entry.is_object() {
        *entry = Value::Object(serde_json::Map::new());
    }
    let fields = entry.as_object_mut()?;
    // Another algorithm's tuning fields would not apply to the winner's.
    if fields.get("algorithm") != winner.get("algorithm") {
        fields.retain(|k, _| k == "request_algorithms");
    }
    for (k, v) in winner {
        fields.insert(k, v);
    }
    let entry = Value::Object(fields.clone());
    Some((config, entry))
}

/// The closing summary: the winner against the reference.
pub fn summary(result: &TuneResult, spec: &TuneSpec) -> String {
    let mut out = String::new();
    let best = result.best();
    let line = |label: &str, t: &super::Trial| {
        let e = t.last().copied().unwrap_or(super::Evaluation {
            goodput_rps: 0.0,
            ttft_p99_ms: 0.0,
            token_reuse: 0.0,
            feasible: false,
            goodput_min: 0.0,
            goodput_max: 0.0,
            steady: false,
        });
        format!(
            "{label} trial {}: goodput {:.1} RPS (seeds {:.1}-{:.1}), TTFT p99 {}, reuse {:.1} % (X {} ms, S {} ms, max_queued {}, fallback {}, group {})",
            t.id,
            e.goodput_rps,
            e.goodput_min,
            e.goodput_max,
            seconds(e.ttft_p99_ms),
            e.token_reuse * 100.0,
            t.setting.wait_ms,
            t.setting.interval_ms,
            t.setting.max_queued,
            t.setting.fallback_max_queued,
            t.setting.group
        )
    };
    let _ = writeln!(out, "{}", line("best:     ", best));
    if let Some(r) = result.reference() {
        let _ = writeln!(out, "{}", line("reference:", r));
    }
    if !best.last().is_some_and(|e| e.feasible) {
        let _ = writeln!(
            out,
            "no trial met the TTFT p99 bound of {} in a steady window: the best is the one closest to it",
            seconds(spec.ttft_p99_bound_ms)
        );
    }
    let _ = writeln!(out, "{}", verdict(result).text);
    out
}

/// Whether the search found settings better than the template's own.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    /// The best trial beats the reference by more than the seed spread.
    pub winner: bool,
    /// Best minus reference goodput at the last rung, RPS.
    pub margin_rps: f64,
    /// The larger seed spread (max - min goodput) of the two, RPS.
    pub spread_rps: f64,
    pub text: String,
}

/// The verdict: a winner only when the best trial is feasible, is not the
/// template's own values (the user's current settings, the search's
/// starting point), and beats their goodput by more than the seed spread
/// of either at the last rung.
pub fn verdict(result: &TuneResult) -> Verdict {
    let best = result.best();
    let (Some(b), Some(r)) = (best.last(), result.reference().and_then(|t| t.last())) else {
        return Verdict {
            winner: false,
            margin_rps: 0.0,
            spread_rps: 0.0,
            text: "no verdict: the template's own values did not reach the last rung".into(),
        };
    };
    let spread = (b.goodput_max - b.goodput_min).max(r.goodput_max - r.goodput_min);
    let margin = b.goodput_rps - r.goodput_rps;
    let winner = !best.reference && b.feasible && margin > spread;
    let text = if best.reference {
        "verdict: keep your settings: the template's own values are the best trial".to_string()
    } else if winner {
        format!(
            "verdict: trial {} wins: it beats your settings by {margin:.1} RPS, more than the seed spread of {spread:.1} RPS",
            best.id
        )
    } else if !b.feasible {
        "verdict: no winner: no trial met the bound in a steady window".to_string()
    } else {
        format!(
            "verdict: no winner: trial {} beats your settings by {margin:.1} RPS, within the seed spread of {spread:.1} RPS; keep your settings or run more seeds",
            best.id
        )
    };
    Verdict {
        winner,
        margin_rps: margin,
        spread_rps: spread,
        text,
    }
}
