//! Growing conversations (docs/simulator.md, "Growing conversations"): the
//! scenario's `conversations` object and the plan it draws.
//!
//! A conversation is a run of turns on one affinity key (`c<n>`) from one
//! entry router. Turn 1's prompt is the first message; turn k's is turn
//! k-1's prompt + turn k-1's output + a new message, so the turns of a
//! conversation share their growing prefix. Past `max_context_tokens`
//! the oldest exchanges (a reply and the message after it) are dropped,
//! the first message (the system prompt and the opening) always kept.
//!
//! Everything about a conversation is drawn up front from the `WORKLOAD`
//! stream (starts, turn counts, sizes, think times, engine draws), so every
//! policy sees the same conversations; only when a later turn is sent
//! depends on the run: [`super::conversation_client`] decides it.

use super::sizes::Sizes;
use super::{BlockSpan, Plan, PlanShape, PlannedRequest, WorkloadSource};
use crate::kernel::time::{from_secs, Micros};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// The most turns one conversation may have (a bound on a geometric draw).
pub const MAX_TURNS: u32 = 10_000;

fn default_attempts() -> u32 {
    3
}

fn default_backoff() -> f64 {
    1.0
}

/// The scenario's `conversations` object.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConversationSpec {
    /// Mean turns per conversation: the count is geometric on 1, 2, ...
    /// (each turn is followed by another with probability 1 - 1/mean).
    pub mean_turns: f64,
    /// Mean think time between a turn's last token at the client and the
    /// next turn's send: exponential.
    pub think_time_s: f64,
    /// The first message (system prompt and opening), each later message,
    /// each reply: `[min, max]` uniform, or a size law ([`Sizes`]).
    pub first_message_tokens: Sizes,
    pub message_tokens: Sizes,
    pub output_tokens: Sizes,
    /// The longest prompt; older exchanges are dropped past it.
    pub max_context_tokens: u64,
    /// Tokens per prefix block (engine v2's cache, block-aware routers).
    pub block_tokens: u64,
    /// Attempts of one turn before the conversation is abandoned.
    #[serde(default = "default_attempts")]
    pub max_turn_attempts: u32,
    /// Attempt a of a turn failed: the next goes a x this later.
    #[serde(default = "default_backoff")]
    pub retry_backoff_s: f64,
}

/// One turn of the plan: the request it sends (its `arrival` unused: the
/// run decides the send) and the think time before it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Turn {
    pub request: PlannedRequest,
    /// Client-side completion of the previous turn to this send (0 for a
    /// first turn).
    pub think: Micros,
}

/// A conversation: its turns are `turns[first..first + len]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Conversation {
    pub first: u32,
    pub len: u32,
}

/// What the client needs beyond the plan's first turns.
#[derive(Clone, Debug, PartialEq)]
pub struct ConversationPlan {
    /// In start order: conversation c's first turn is the plan's request c.
    pub conversations: Vec<Conversation>,
    pub turns: Vec<Turn>,
    pub max_turn_attempts: u32,
    pub retry_backoff: Micros,
}

/// A turn's prompt: its size, and how much of it is the previous turn's
/// prompt unchanged (the prefix the two share).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Prompt {
    pub input: u64,
    pub shared: u64,
    /// The oldest exchange kept (2 = none dropped): exchange j is turn
    /// j-1's reply and turn j's message.
    pub kept_from: u32,
}

/// The prompts of one conversation. `first` is the first message,
/// `messages[j]` turn j+2's message, `outputs[j]` turn j+1's reply. The
/// first message and the newest exchange are always kept (validation
/// makes them fit); older exchanges are dropped oldest first until the
/// prompt fits, and a dropped exchange never returns.
pub fn prompts(first: u64, messages: &[u64], outputs: &[u64], max_context: u64) -> Vec<Prompt> {
    let exchange = |j: usize| -> u64 {
        // Exchange j (j >= 2) = reply of turn j-1 + message of turn j.
        outputs
            .get(j - 2)
            .copied()
            .unwrap_or(0)
            .saturating_add(messages.get(j - 2).copied().unwrap_or(0))
    };
    let mut out = Vec::with_capacity(messages.len() + 1);
    out.push(Prompt {
        input: first,
        shared: 0,
        kept_from: 2,
    });
    let mut kept_from = 2usize;
    let mut history = 0u64; // exchanges kept_from..=k
    for k in 2..=messages.len() + 1 {
        history = history.saturating_add(exchange(k));
        let before = kept_from;
        while kept_from < k && first.saturating_add(history) > max_context {
            history -= exchange(kept_from);
            kept_from += 1;
        }
        let previous = out.last().map_or(0, |p| p.input);
        out.push(Prompt {
            input: first.saturating_add(history),
            shared: if kept_from == before { previous } else { first },
            kept_from: kept_from as u32,
        });
    }
    out
}

impl WorkloadSource for ConversationSpec {
    fn plan(&self, shape: &PlanShape<'_>, rng: &mut ChaCha8Rng) -> Plan {
        plan(self, shape, rng)
    }
}

/// The number of turns: geometric on 1, 2, ... with the given mean.
pub fn draw_turns(rng: &mut impl Rng, mean: f64) -> u32 {
    let u = 1.0 - rng.random::<f64>(); // (0, 1]
    turns_at(u, mean)
}

/// The inverse CDF of the turn count at `u` in (0, 1].
fn turns_at(u: f64, mean: f64) -> u32 {
    if mean.is_nan() || mean <= 1.0 {
        return 1;
    }
    let continue_p = 1.0 - 1.0 / mean;
    let extra = (u.ln() / continue_p.ln()).floor();
    (1.0 + extra).min(f64::from(MAX_TURNS)) as u32
}

/// An exponential draw of the given mean, in µs (0 for a mean of 0).
pub fn draw_exponential(rng: &mut impl Rng, mean_s: f64) -> Micros {
    let u = 1.0 - rng.random::<f64>();
    from_secs(-u.ln() * mean_s.max(0.0))
}

/// The conversations' start rate for an offered request rate.
pub fn start_rate(spec: &ConversationSpec, rate_rps: f64) -> f64 {
    rate_rps / spec.mean_turns.max(1.0)
}

/// Draws the whole plan: Poisson starts at [`start_rate`] over the
/// horizon; per conversation its entry router, turn count, sizes, think
/// times and engine draws; the plan's requests are the first turns.
pub fn plan(spec: &ConversationSpec, shape: &PlanShape<'_>, rng: &mut impl Rng) -> Plan {
    let rate = start_rate(spec, shape.rate_rps);
    let router_cdf = super::weighted::cdf(shape.router_weights.iter().copied());
    let mut chains = ChainBuilder::new(spec.block_tokens.max(1));
    let mut firsts = Vec::new();
    let mut conversations = Vec::new();
    let mut turns = Vec::new();
    let mut t = 0.0;
    if rate > 0.0 && !router_cdf.is_empty() {
        loop {
            let u = 1.0 - rng.random::<f64>();
            t += -u.ln() / rate;
            if t >= shape.horizon_s || conversations.len() >= u32::MAX as usize / 2 {
                break;
            }
            let c = conversations.len() as u32;
            let router = super::weighted::pick(&router_cdf, rng.random::<f64>()) as u32;
            let n = draw_turns(rng, spec.mean_turns);
            let first = spec.first_message_tokens.draw(rng);
            let messages: Vec<u64> = (1..n).map(|_| spec.message_tokens.draw(rng)).collect();
            let outputs: Vec<u64> = (0..n).map(|_| spec.output_tokens.draw(rng)).collect();
            let sizes = prompts(first, &messages, &outputs, spec.max_context_tokens);
            conversations.push(Conversation {
                first: turns.len() as u32,
                len: n,
            });
            chains.start_conversation();
            for (k, prompt) in sizes.iter().enumerate() {
                let think = if k == 0 {
                    0
                } else {
                    draw_exponential(rng, spec.think_time_s)
                };
                let request = PlannedRequest {
                    arrival: if k == 0 { from_secs(t) } else { 0 },
                    key: c,
                    input: prompt.input,
                    output: outputs[k],
                    router,
                    jitter_ms: rng.random::<f64>() * shape.ttft_jitter_ms,
                    decode_tps: shape.decode_tps[0]
                        + (shape.decode_tps[1] - shape.decode_tps[0]) * rng.random::<f64>(),
                    blocks: chains.turn(prompt, first),
                };
                if k == 0 {
                    firsts.push(request);
                }
                turns.push(Turn { request, think });
            }
        }
    }
    let key_names: Vec<String> = (1..=conversations.len()).map(|i| format!("c{i}")).collect();
    let blocks = chains.finish();
    Plan {
        requests: firsts,
        key_names: key_names.into(),
        block_ids: blocks.1,
        blocks: blocks.0.into(),
        block_tokens: spec.block_tokens.max(1),
        end: from_secs(shape.horizon_s),
        conversations: Some(Arc::new(ConversationPlan {
            conversations,
            turns,
            max_turn_attempts: spec.max_turn_attempts.max(1),
            retry_backoff: from_secs(spec.retry_backoff_s.max(0.0)),
        })),
    }
}

/// Lays out the turns' prefix blocks. Only full blocks are listed (a
/// prompt's last partial block changes when the prompt grows, so no other
/// turn can reuse it). While no exchange is dropped, a conversation's
/// prompts are prefixes of each other: they share one list (an epoch) and
/// each turn's span is its first ⌊input / block_tokens⌋ entries. A turn
/// that drops an exchange starts a new epoch: the first message's full
/// blocks (the same ids) and fresh ids after them.
struct ChainBuilder {
    block_tokens: u64,
    list: Vec<u32>,
    next_id: u32,
    /// Where the current epoch starts in `list`.
    epoch: usize,
    /// The first message's full blocks of the current conversation.
    first_ids: Vec<u32>,
    kept_from: u32,
}

impl ChainBuilder {
    fn new(block_tokens: u64) -> Self {
        ChainBuilder {
            block_tokens,
            list: Vec::new(),
            next_id: 0,
            epoch: 0,
            first_ids: Vec::new(),
            kept_from: 2,
        }
    }

    fn start_conversation(&mut self) {
        self.epoch = self.list.len();
        self.first_ids.clear();
        self.kept_from = 2;
    }

    fn fresh(&mut self) -> Option<u32> {
        (u64::from(self.next_id) < crate::workload::MAX_BLOCK_IDS).then(|| {
            self.next_id += 1;
            self.next_id - 1
        })
    }

    fn turn(&mut self, prompt: &Prompt, first: u64) -> BlockSpan {
        let full = (prompt.input / self.block_tokens) as usize;
        if prompt.kept_from != self.kept_from {
            self.kept_from = prompt.kept_from;
            self.epoch = self.list.len();
            self.list.extend_from_slice(&self.first_ids);
        } else if self.first_ids.is_empty() && self.list.len() == self.epoch {
            // The conversation's first turn: its first message's blocks.
            let n = (first / self.block_tokens) as usize;
            for _ in 0..n {
                match self.fresh() {
                    Some(id) => {
                        self.first_ids.push(id);
                        self.list.push(id);
                    }
                    None => break,
                }
            }
        }
        while self.list.len() - self.epoch < full {
            match self.fresh() {
                Some(id) => self.list.push(id),
                None => break,
            }
        }
        let len = full.min(self.list.len() - self.epoch);
        BlockSpan {
            start: self.epoch as u32,
            len: len as u32,
        }
    }

    fn finish(self) -> (Vec<u32>, u32) {
        (self.list, self.next_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_turn_count_inverse_cdf() {
        // Mean 4: P(N > n) = 0.75^n; u = 0.75^2 sits on the edge of N = 3.
        assert_eq!(turns_at(1.0, 4.0), 1);
        assert_eq!(turns_at(0.76, 4.0), 1);
        assert_eq!(turns_at(0.74, 4.0), 2);
        assert_eq!(turns_at(0.5, 4.0), 3);
        assert_eq!(turns_at(0.3, 1.0), 1);
        assert_eq!(turns_at(f64::MIN_POSITIVE, 1e9), MAX_TURNS);
    }
}
