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
        });
        format!(
            "{label} trial {}: goodput {:.1} RPS, TTFT p99 {}, reuse {:.1} % (X {} ms, S {} ms, max_queued {}, fallback {}, group {})",
            t.id,
            e.goodput_rps,
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
            "no trial met the TTFT p99 bound of {}: the best is the one closest to it",
            seconds(spec.ttft_p99_bound_ms)
        );
    }
    out
}
