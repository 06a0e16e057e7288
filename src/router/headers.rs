//! The request headers a stargate front end reads (docs/stargate.md 1.1),
//! parsed into a [`RouteRequest`] or a 400 [`Rejection`].
//!
//! The parser borrows every value from the caller's header map and
//! allocates nothing on success, so it can run on the request path.

use super::rejection::{Rejection, RejectionCode};
use super::request::{header_text, RouteRequest};
use crate::balancer::{Request, SessionState};

/// Header names, as stargate spells them (lower case, as HTTP/2 and most
/// header maps store them).
/// Required, non-blank: the request id (not used by balancers).
pub const REQUEST_ID: &str = "x-request-id";
/// Required, non-blank: the model id of the target.
pub const MODEL: &str = "x-model";
/// Optional (blank = absent): scopes all per-target state and every hash.
pub const ROUTING_KEY: &str = "x-routing-key";
/// Required, u64: the prompt's input tokens.
pub const INPUT_TOKENS: &str = "x-input-tokens";
/// Optional u32, default 0: the priority whose queue estimate applies.
pub const PRIORITY: &str = "x-priority";
/// Optional u64, in ms: the request SLO (0 behaves as no SLO).
pub const REQUEST_SLO_MS: &str = "x-request-slo-ms";
/// Optional u64, in ms: the routing wait limit (capped at 60 000) and
/// the generic-retry budget (docs/stargate.md 2.2).
pub const MAX_WAIT_MS: &str = "x-max-wait-ms";
/// Optional, or required by `require_cache_affinity_key` (blank =
/// absent): the opaque cache-affinity key.
pub const CACHE_AFFINITY_KEY: &str = "x-cache-affinity-key";
/// Optional: a method name or routing expression selecting the algorithm
/// (docs/stargate.md 4.4, 5).
pub const ROUTING_METHOD: &str = "x-routing-method";
/// The session's last cluster, as the gateway remembers it
/// (docs/stargate.md 3.10).
pub const LAST_CLUSTER_ID: &str = "x-stargate-last-cluster-id";
/// The cluster that served a response; stargate adds it to every proxied
/// response, and the gateway learns sessions' last clusters from it.
pub const CLUSTER_ID: &str = "x-stargate-cluster-id";

/// The longest `x-stargate-last-cluster-id` value the parser keeps; a
/// longer one classifies the request as stale (the gateway never sends
/// an id over 256 bytes, docs/stargate.md 3.10).
pub const MAX_LAST_CLUSTER_ID_BYTES: usize = 256;

/// `x-stargate-last-cluster-id` as read: never a reason to reject.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LastClusterHint<'a> {
    /// Absent or blank: a new session.
    #[default]
    Absent,
    /// A cluster id (trimmed, visible ASCII, at most
    /// [`MAX_LAST_CLUSTER_ID_BYTES`]).
    Id(&'a str),
    /// A value the parser does not keep (not visible ASCII text, or
    /// longer than the bound): a stale session.
    Unreadable,
}

/// The routing inputs of one request, borrowed from its headers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RequestHeaders<'a> {
    /// `x-request-id`: required, non-blank; not used by the balancers.
    pub request_id: &'a str,
    /// `x-model`: required, non-blank.
    pub model: &'a str,
    /// `x-routing-key`: blank or not text = absent.
    pub routing_key: Option<&'a str>,
    /// `x-cache-affinity-key`: blank or not text = absent.
    pub cache_affinity_key: Option<&'a str>,
    /// `x-input-tokens`: required.
    pub input_tokens: u64,
    /// `x-priority`: 0 when absent.
    pub priority: u32,
    /// `x-request-slo-ms`; 0 is kept and behaves as no SLO.
    pub request_slo_ms: Option<u64>,
    /// `x-max-wait-ms`: the routing wait limit and retry budget
    /// (`WaitLoop::new`).
    pub max_wait_ms: Option<u64>,
    /// `x-routing-method`, raw: the router checks it (docs/stargate.md 5.5).
    pub routing_method: Option<&'a [u8]>,
    /// `x-stargate-last-cluster-id` (docs/stargate.md 3.10).
    pub last_cluster_id: LastClusterHint<'a>,
}

impl<'a> RequestHeaders<'a> {
    /// Reads the headers through `get`, which returns a header's raw value
    /// (the first one when repeated). Values are trimmed; 400
    /// `invalid_header` when `x-request-id`, `x-model` or `x-input-tokens`
    /// is missing or blank, or when a numeric header is present but not
    /// text, empty, not a number (a leading `+` is allowed) or out of range
    /// for its width.
    pub fn parse(get: impl Fn(&'static str) -> Option<&'a [u8]>) -> Result<Self, Rejection> {
        Ok(RequestHeaders {
            request_id: required_text(REQUEST_ID, get(REQUEST_ID))?,
            model: required_text(MODEL, get(MODEL))?,
            routing_key: optional_text(get(ROUTING_KEY)),
            cache_affinity_key: optional_text(get(CACHE_AFFINITY_KEY)),
            input_tokens: match get(INPUT_TOKENS) {
                Some(value) => number(INPUT_TOKENS, value, U64)?,
                None => return Err(missing(INPUT_TOKENS)),
            },
            priority: optional_number(PRIORITY, get(PRIORITY), U32)?.unwrap_or(0),
            request_slo_ms: optional_number(REQUEST_SLO_MS, get(REQUEST_SLO_MS), U64)?,
            max_wait_ms: optional_number(MAX_WAIT_MS, get(MAX_WAIT_MS), U64)?,
            routing_method: get(ROUTING_METHOD),
            last_cluster_id: last_cluster_hint(get(LAST_CLUSTER_ID)),
        })
    }

    /// [`RequestHeaders::parse`] over an `http::HeaderMap`.
    #[cfg(feature = "http")]
    pub fn from_header_map(headers: &'a http::HeaderMap) -> Result<Self, Rejection> {
        RequestHeaders::parse(|name| headers.get(name).map(http::HeaderValue::as_bytes))
    }

    /// The first attempt's request: elapsed zero, nothing excluded. Later
    /// attempts update `request.elapsed` and `request.excluded`.
    pub fn route_request(&self) -> RouteRequest<'a> {
        RouteRequest {
            request: Request {
                model: self.model,
                routing_key: self.routing_key,
                cache_affinity_key: self.cache_affinity_key,
                input_tokens: Some(self.input_tokens),
                priority: self.priority,
                request_slo_ms: self.request_slo_ms,
                last_cluster_id: match self.last_cluster_id {
                    LastClusterHint::Id(id) => Some(id),
                    _ => None,
                },
                // A hint the parser did not keep names no candidate.
                session: (self.last_cluster_id == LastClusterHint::Unreadable)
                    .then_some(SessionState::Stale),
                ..Request::default()
            },
            routing_method: self.routing_method,
        }
    }
}

/// The ranges of the numeric headers, in the words of every other message.
const U64: &str = "an integer from 0 to 2^64-1";
const U32: &str = "an integer from 0 to 2^32-1";

fn missing(name: &str) -> Rejection {
    Rejection::new(
        RejectionCode::InvalidHeader,
        format!("missing required header {name}"),
    )
}

fn invalid(name: &str, what: &str) -> Rejection {
    Rejection::new(RejectionCode::InvalidHeader, format!("{name} {what}"))
}

fn required_text<'a>(name: &str, value: Option<&'a [u8]>) -> Result<&'a str, Rejection> {
    let value = value.ok_or_else(|| missing(name))?;
    let text = header_text(value).ok_or_else(|| invalid(name, "is not visible ASCII text"))?;
    match text.trim() {
        "" => Err(invalid(name, "is blank")),
        trimmed => Ok(trimmed),
    }
}

/// The hint: blank is no hint; what is not kept is unreadable, never an
/// error.
fn last_cluster_hint(value: Option<&[u8]>) -> LastClusterHint<'_> {
    let Some(value) = value else {
        return LastClusterHint::Absent;
    };
    match header_text(value).map(str::trim) {
        Some("") => LastClusterHint::Absent,
        Some(id) if id.len() <= MAX_LAST_CLUSTER_ID_BYTES => LastClusterHint::Id(id),
        _ => LastClusterHint::Unreadable,
    }
}

fn optional_text(value: Option<&[u8]>) -> Option<&str> {
    value
        .and_then(header_text)
        .map(str::trim)
        .filter(|v| !v.is_empty())
}

fn optional_number<T: std::str::FromStr>(
    name: &str,
    value: Option<&[u8]>,
    range: &str,
) -> Result<Option<T>, Rejection> {
    value.map(|v| number(name, v, range)).transpose()
}

/// An unsigned decimal of type `T`. `str::parse` on unsigned integers
/// accepts exactly one optional leading `+` and rejects signs, spaces,
/// empty text and overflow.
fn number<T: std::str::FromStr>(name: &str, value: &[u8], range: &str) -> Result<T, Rejection> {
    let text = header_text(value).ok_or_else(|| invalid(name, "is not visible ASCII text"))?;
    match text.trim() {
        "" => Err(invalid(name, "is empty")),
        trimmed => trimmed
            .parse()
            .map_err(|_| invalid(name, &format!("is not {range}"))),
    }
}
