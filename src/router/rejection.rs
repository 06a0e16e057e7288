//! Rejections: the typed answer a router gives instead of a decision, with
//! stargate's error code, HTTP status, header value and JSON body.

use crate::diag::{Code, Diagnostic};
use std::borrow::Cow;
use std::fmt;

/// The response header that carries the code (docs/stargate.md 5.5).
pub const ERROR_CODE_HEADER: &str = "x-stargate-error-code";

/// The most bytes of a rejection's message, and so of the `error` of its
/// JSON body and of the log line that carries it: messages that echo
/// client text (a header value, a parameter) are cut here, at a character
/// boundary, ending with [`ECHO_MARKER`] and the number of bytes cut.
pub const MAX_MESSAGE_BYTES: usize = 512;

/// What ends a cut echo of client text, before the count of bytes cut:
/// `...[+1048000 bytes]`.
pub const ECHO_MARKER: &str = "...[+";

/// `text` whole if it has at most `max` bytes; else its longest prefix
/// that, with the marker (`...[+N bytes]`, N the bytes cut), fits in
/// `max`. Borrowed when nothing is cut. The front end's own log lines and
/// bodies that carry client text go through it too.
pub fn bounded_echo(text: &str, max: usize) -> Cow<'_, str> {
    if text.len() <= max {
        return Cow::Borrowed(text);
    }
    // The marker's digits depend on the cut; the cut is at most the
    // whole text, so its digit count bounds them.
    let marker = ECHO_MARKER.len() + text.len().to_string().len() + " bytes]".len();
    let mut end = max.saturating_sub(marker);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    Cow::Owned(format!(
        "{}{ECHO_MARKER}{} bytes]",
        &text[..end],
        text.len() - end
    ))
}

/// Why a request was rejected.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RejectionCode {
    /// A mandatory request header missing or blank, or a numeric header
    /// that is not a number of its width (docs/stargate.md 1.1; 400).
    InvalidHeader,
    /// An `x-routing-method` value that does not compile (one of the eight
    /// stargate expression codes; 400).
    Expression(Code),
    /// `require_cache_affinity_key` and no non-blank affinity key (400).
    MissingCacheAffinityKey,
    /// No candidate and nothing failed yet (404).
    NoEligibleCandidates,
    /// Every candidate already failed for this request (503).
    CandidatesExhausted,
    /// Input-work admission: queued work over the limit (503).
    InputWorkLimitExceeded,
    /// Input-work admission: no usable prefill rate (503).
    InputWorkCapacityUnavailable,
    /// The routing loop ran out of time or retries (503).
    RoutingUnavailable,
}

impl RejectionCode {
    /// The stable snake_case code: the header value and the body's `code`.
    pub const fn as_str(self) -> &'static str {
        match self {
            RejectionCode::InvalidHeader => "invalid_header",
            RejectionCode::Expression(code) => code.as_str(),
            RejectionCode::MissingCacheAffinityKey => "missing_cache_affinity_key",
            RejectionCode::NoEligibleCandidates => "no_eligible_candidates",
            RejectionCode::CandidatesExhausted => "candidates_exhausted",
            RejectionCode::InputWorkLimitExceeded => "input_work_limit_exceeded",
            RejectionCode::InputWorkCapacityUnavailable => "input_work_capacity_unavailable",
            RejectionCode::RoutingUnavailable => "routing_unavailable",
        }
    }

    /// The HTTP status stargate answers with.
    pub const fn status(self) -> u16 {
        match self {
            RejectionCode::InvalidHeader
            | RejectionCode::Expression(_)
            | RejectionCode::MissingCacheAffinityKey => 400,
            RejectionCode::NoEligibleCandidates => 404,
            RejectionCode::CandidatesExhausted
            | RejectionCode::InputWorkLimitExceeded
            | RejectionCode::InputWorkCapacityUnavailable
            | RejectionCode::RoutingUnavailable => 503,
        }
    }
}

impl fmt::Display for RejectionCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A request the router refuses, ready to become an HTTP response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rejection {
    /// Why: stargate's error code, sent in `x-stargate-error-code`.
    pub code: RejectionCode,
    /// HTTP status (400, 404 or 503); always `code.status()`.
    pub status: u16,
    /// Names the offending input; for expression codes, stargate's message.
    pub message: String,
}

impl Rejection {
    /// A rejection with `code`'s HTTP status; a message over
    /// [`MAX_MESSAGE_BYTES`] is cut ([`bounded_echo`]).
    pub fn new(code: RejectionCode, message: impl Into<String>) -> Self {
        let mut message = message.into();
        if message.len() > MAX_MESSAGE_BYTES {
            message = bounded_echo(&message, MAX_MESSAGE_BYTES).into_owned();
        }
        Rejection {
            code,
            status: code.status(),
            message,
        }
    }

    /// The first error of a request expression, as stargate answers it.
    pub fn from_diagnostic(diagnostic: &Diagnostic) -> Self {
        Rejection::new(
            RejectionCode::Expression(diagnostic.code),
            diagnostic.message.clone(),
        )
    }

    /// The rejection of a request expression that did not compile: its
    /// first error ([`super::Compiler`]'s `Err`); a compiler that gave no
    /// error at all is `malformed_expression`.
    pub(crate) fn from_compile_errors(errors: &[Diagnostic], value: &str) -> Self {
        errors.first().map_or_else(
            || {
                Rejection::new(
                    RejectionCode::Expression(Code::MalformedExpression),
                    format!(
                        "could not compile '{}'",
                        bounded_echo(value, MAX_MESSAGE_BYTES / 2)
                    ),
                )
            },
            Rejection::from_diagnostic,
        )
    }

    /// The value of the `x-stargate-error-code` header.
    pub fn header_value(&self) -> &'static str {
        self.code.as_str()
    }

    /// The response body: `{"error":"<message>","code":"<code>"}`.
    pub fn body_json(&self) -> String {
        serde_json::json!({"error": self.message, "code": self.code.as_str()}).to_string()
    }
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}: {}", self.status, self.code, self.message)
    }
}

impl std::error::Error for Rejection {}
