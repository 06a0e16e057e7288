//! The client of growing conversations during a run (docs/simulator.md,
//! "Growing conversations"): when a request of a conversation resolves,
//! it decides what the client sends next, and when.
//!
//! - A turn that succeeded: the next turn, its think time after the last
//!   token reached the client.
//! - Attempt a of a turn that failed (any outcome but success): attempt
//!   a + 1 of the same turn, a x `retry_backoff_s` after the failure; after
//!   `max_turn_attempts` failed attempts the conversation is abandoned and
//!   its remaining turns are never sent.
//! - Nothing is sent at or after the plan's end (the horizon): a
//!   conversation cut there is not abandoned.
//!
//! Each attempt is a request of its own (its own record, TTFT from its own
//! send). The run appends every follow-up to its requests in the order
//! this client returns them, so request ids are the client's too.

use super::conversations::ConversationPlan;
use super::PlannedRequest;
use crate::kernel::time::Micros;
use std::sync::Arc;

/// A request the client sends later.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FollowUp {
    pub at: Micros,
    /// Its `arrival` is `at`.
    pub request: PlannedRequest,
}

/// Which turn and attempt a request is.
#[derive(Clone, Copy, Debug)]
struct Origin {
    conversation: u32,
    /// Index into the plan's turns.
    turn: u32,
    attempt: u32,
}

/// The conversations' counts over a window.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ConversationCounts {
    /// Conversations whose first turn was sent in the window.
    pub started: u64,
    /// Of those, the abandoned (by the horizon).
    pub abandoned: u64,
    /// Retry attempts sent in the window.
    pub retries: u64,
}

/// The conversations' client state of one run.
#[derive(Debug)]
pub struct ConversationClient {
    plan: Arc<ConversationPlan>,
    /// Per request id.
    origin: Vec<Origin>,
    /// Per conversation: its first send, and whether it was abandoned.
    started: Vec<Micros>,
    abandoned: Vec<bool>,
    end: Micros,
}

impl ConversationClient {
    /// `firsts` are the plan's requests (conversation c's first turn is
    /// request c); nothing is sent at or after `end`.
    pub fn new(plan: Arc<ConversationPlan>, firsts: &[PlannedRequest], end: Micros) -> Self {
        let origin = plan
            .conversations
            .iter()
            .enumerate()
            .map(|(c, conv)| Origin {
                conversation: c as u32,
                turn: conv.first,
                attempt: 1,
            })
            .collect();
        let n = plan.conversations.len();
        ConversationClient {
            started: firsts.iter().map(|r| r.arrival).collect(),
            abandoned: vec![false; n],
            origin,
            plan,
            end,
        }
    }

    /// Request `req` resolved at `at` (for a success, when its last token
    /// reached the client): the follow-up to send, if any. The caller
    /// gives it the next request id.
    pub fn resolved(&mut self, req: u32, succeeded: bool, at: Micros) -> Option<FollowUp> {
        let o = *self.origin.get(req as usize)?;
        let conv = *self.plan.conversations.get(o.conversation as usize)?;
        let (turn, attempt, send) = if succeeded {
            let next = o.turn + 1;
            if next >= conv.first + conv.len {
                return None; // the conversation is over
            }
            let think = self.plan.turns[next as usize].think;
            (next, 1, at.saturating_add(think))
        } else if o.attempt >= self.plan.max_turn_attempts {
            self.abandoned[o.conversation as usize] = true;
            return None;
        } else {
            let backoff = self.plan.retry_backoff.saturating_mul(u64::from(o.attempt));
            (o.turn, o.attempt + 1, at.saturating_add(backoff))
        };
        if send >= self.end {
            return None;
        }
        self.origin.push(Origin {
            conversation: o.conversation,
            turn,
            attempt,
        });
        let mut request = self.plan.turns[turn as usize].request;
        request.arrival = send;
        Some(FollowUp { at: send, request })
    }

    /// Counts over the window [from, to): `sent[i]` is request i's send.
    pub fn counts(&self, sent: &[Micros], from: Micros, to: Micros) -> ConversationCounts {
        let inside = |t: Micros| t >= from && t < to;
        let mut c = ConversationCounts::default();
        for (i, &start) in self.started.iter().enumerate() {
            if inside(start) {
                c.started += 1;
                c.abandoned += u64::from(self.abandoned[i]);
            }
        }
        c.retries = self
            .origin
            .iter()
            .zip(sent)
            .filter(|(o, &t)| o.attempt > 1 && inside(t))
            .count() as u64;
        c
    }
}
