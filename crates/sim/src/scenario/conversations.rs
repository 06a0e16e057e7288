//! Validation of the scenario's `conversations` object (growing
//! conversations, docs/simulator.md): each rule reports at its key.

use super::limits::{Err, MAX_HORIZON_S};
use super::ScenarioFile;
use crate::workload::conversations::{ConversationSpec, MAX_TURNS};
use crate::workload::sizes::Sizes;
use crate::workload::MAX_BLOCK_IDS;

/// The largest message or first message, and the longest context, in
/// tokens; the longest reply.
const MAX_INPUT: u64 = 1_000_000_000;
const MAX_OUTPUT: u64 = 1_000_000;
/// The most attempts of one turn.
const MAX_ATTEMPTS: u32 = 100;

/// A number as a message shows it (exponent form past 10^9).
fn shown(v: f64) -> String {
    if v.abs() < 1e9 {
        format!("{v}")
    } else {
        format!("{v:e}")
    }
}

/// A size's rules: a law's parameters, then `[min, max]` ordered and the
/// largest draw at most `max`. Returns the least and the most a draw gives.
fn size(err: &mut Err<'_>, key: &str, sizes: &Sizes, max: u64) -> [u64; 2] {
    let name = key.rsplit('.').next().unwrap_or(key);
    if let Some((inner, message)) = sizes.problem() {
        err(&format!("{key}.{inner}"), message);
        return sizes.bounds();
    }
    let [lo, hi] = sizes.bounds();
    match sizes {
        Sizes::Range(_) if lo > hi => err(
            key,
            format!("`{name}` is [min, max] with min <= max, got [{lo}, {hi}]"),
        ),
        Sizes::Range(_) if hi > max => err(
            key,
            format!("`{name}` must be at most {max} tokens, got {hi}"),
        ),
        Sizes::Law(_) if hi > max => err(
            key,
            format!(
                "`{name}` can draw up to {hi} tokens (its largest value or cap), the most is {max}"
            ),
        ),
        _ => {}
    }
    [lo, hi]
}

/// Every rule of `conversations`.
pub(super) fn check(f: &ScenarioFile, c: &ConversationSpec, err: &mut Err<'_>) {
    if !(c.mean_turns.is_finite() && c.mean_turns >= 1.0 && c.mean_turns <= f64::from(MAX_TURNS)) {
        err(
            "conversations.mean_turns",
            format!(
                "`mean_turns` must be a number in [1, {MAX_TURNS}], got {}",
                shown(c.mean_turns)
            ),
        );
    }
    if !(c.think_time_s.is_finite() && (0.0..=MAX_HORIZON_S).contains(&c.think_time_s)) {
        err(
            "conversations.think_time_s",
            format!(
                "`think_time_s` must be in [0, {MAX_HORIZON_S}] s, got {}",
                shown(c.think_time_s)
            ),
        );
    }
    if !(c.retry_backoff_s.is_finite() && (0.0..=MAX_HORIZON_S).contains(&c.retry_backoff_s)) {
        err(
            "conversations.retry_backoff_s",
            format!(
                "`retry_backoff_s` must be in [0, {MAX_HORIZON_S}] s, got {}",
                shown(c.retry_backoff_s)
            ),
        );
    }
    if !(1..=MAX_ATTEMPTS).contains(&c.max_turn_attempts) {
        err(
            "conversations.max_turn_attempts",
            format!(
                "`max_turn_attempts` must be in [1, {MAX_ATTEMPTS}], got {}",
                c.max_turn_attempts
            ),
        );
    }
    let first = size(
        err,
        "conversations.first_message_tokens",
        &c.first_message_tokens,
        MAX_INPUT,
    );
    let message = size(
        err,
        "conversations.message_tokens",
        &c.message_tokens,
        MAX_INPUT,
    );
    let output = size(
        err,
        "conversations.output_tokens",
        &c.output_tokens,
        MAX_OUTPUT,
    );
    if output[0] == 0 {
        err(
            "conversations.output_tokens",
            "`output_tokens` must be at least 1: every turn gets a reply".into(),
        );
    }
    if first[0] == 0 {
        err(
            "conversations.first_message_tokens",
            "`first_message_tokens` must be at least 1".into(),
        );
    }
    // The first message and the newest exchange are never dropped: the
    // longest of them must fit.
    let least = first[1]
        .saturating_add(output[1])
        .saturating_add(message[1]);
    if c.max_context_tokens < least || c.max_context_tokens > MAX_INPUT {
        err(
            "conversations.max_context_tokens",
            format!(
                "`max_context_tokens` must hold the first message, a reply and a message at their largest ({least} tokens) and be at most {MAX_INPUT}, got {}",
                c.max_context_tokens
            ),
        );
    }
    if c.block_tokens == 0 {
        return err(
            "conversations.block_tokens",
            "`block_tokens` must be > 0".into(),
        );
    }
    // Each turn adds at most max_context / block_tokens + 1 block ids; the
    // turns sent are about rate x horizon (with a margin).
    let horizon = (f.warmup_s + f.measure_s).max(0.0);
    let rate = f.rates_rps.iter().copied().fold(0.0, f64::max);
    let turns = 1.25 * rate * horizon + 1_000.0;
    let per_turn = (c.max_context_tokens / c.block_tokens + 1) as f64;
    if turns * per_turn > MAX_BLOCK_IDS as f64 {
        err(
            "conversations.block_tokens",
            format!(
                "up to {:.0} prefix blocks at {rate} RPS over {horizon} s (the most is {MAX_BLOCK_IDS}): use larger blocks, a shorter context or a shorter run",
                turns * per_turn
            ),
        );
    }
}
