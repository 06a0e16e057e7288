//! What a router is asked and what it answers: the request with its raw
//! `x-routing-method`, the resolved definition and instance, and one
//! decision with its admission checks (docs/stargate.md 2.2, 3.9).

use super::admission;
use super::arena::Handle;
use super::metrics::expression_cache::CacheOutcome;
use super::metrics::sessions::SessionTally;
use super::rejection::{Rejection, RejectionCode};
use super::state::Instance;
use crate::balancer::{Balancer, ClusterSnapshot, Decision, Request, Scratch};
use crate::ir::Definition;
use rand::RngCore;
use std::sync::Arc;

/// A request as the router sees it: the balancer request plus the raw
/// `x-routing-method` value.
#[derive(Clone, Debug, Default)]
pub struct RouteRequest<'a> {
    /// What the balancer sees of the request (headers already parsed).
    pub request: Request<'a>,
    /// Raw header bytes; `None` when the header is absent.
    pub routing_method: Option<&'a [u8]>,
}

impl<'a> RouteRequest<'a> {
    /// `request` without `x-routing-method`: the model's configured
    /// definition decides.
    pub fn new(request: Request<'a>) -> Self {
        RouteRequest {
            request,
            routing_method: None,
        }
    }

    /// This request with `value` as its raw `x-routing-method` header.
    pub fn with_method(mut self, value: &'a str) -> Self {
        self.routing_method = Some(value.as_bytes());
        self
    }
}

/// Where a resolved definition came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// No `x-routing-method`: the model's configured definition.
    Configured,
    /// A method-only value, resolved in the route table (4.4).
    Method,
    /// A value with parameters, through the expression cache.
    Expression(CacheOutcome),
}

/// A resolved definition whose balancer instance is not fetched yet.
pub struct PendingResolution {
    pub(super) target: Handle,
    /// The definition the request resolved to.
    pub definition: Arc<Definition>,
    /// How it was resolved (configured, method, or expression cache).
    pub source: Source,
}

impl std::fmt::Debug for PendingResolution {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PendingResolution")
            .field("algorithm", &self.definition.policy.algorithm)
            .field("source", &self.source)
            .finish_non_exhaustive()
    }
}

/// A resolved definition and the balancer instance that decides for it.
/// Both are shared with the router's target (one `Arc` for the pair).
pub struct Resolved {
    pub(super) pair: Arc<Instance<Balancer>>,
    /// How the definition was resolved (configured, method, or expression
    /// cache).
    pub source: Source,
}

impl std::fmt::Debug for Resolved {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Resolved")
            .field("algorithm", &self.definition().policy.algorithm)
            .field("source", &self.source)
            .finish_non_exhaustive()
    }
}

impl Resolved {
    pub(super) fn new(
        definition: Arc<Definition>,
        balancer: Arc<Balancer>,
        sessions: Arc<SessionTally>,
        source: Source,
    ) -> Self {
        Resolved {
            pair: Arc::new(Instance {
                definition,
                balancer,
                sessions,
            }),
            source,
        }
    }

    /// The resolved definition.
    pub fn definition(&self) -> &Arc<Definition> {
        &self.pair.definition
    }

    /// The balancer instance that decides for it (the target's, shared by
    /// every request of the target that resolves the same definition).
    pub fn instance(&self) -> &Arc<Balancer> {
        &self.pair.balancer
    }

    /// One decision (docs/stargate.md 2.2, steps 2-4): candidates,
    /// admission, then the balancer. Blank routing and affinity keys count
    /// as absent.
    pub fn decide(
        &self,
        request: &Request<'_>,
        clusters: &[ClusterSnapshot],
        rng: &mut dyn RngCore,
        scratch: &mut Scratch,
    ) -> Result<Decision, Rejection> {
        decide(&self.pair, request, clusters, rng, scratch)
    }
}

/// [`Resolved::decide`] on a borrowed instance: blank keys count as
/// absent, then admission, candidates and the balancer; the decision is
/// counted in the router's session counts.
pub(super) fn decide(
    pair: &Instance<Balancer>,
    request: &Request<'_>,
    clusters: &[ClusterSnapshot],
    rng: &mut dyn RngCore,
    scratch: &mut Scratch,
) -> Result<Decision, Rejection> {
    let request = Request {
        routing_key: non_blank(request.routing_key),
        cache_affinity_key: non_blank(request.cache_affinity_key),
        ..request.clone()
    };
    let policy = &pair.definition.policy;
    admission::check_affinity_key(policy, &request)?;
    check_candidates(&request, clusters)?;
    admission::check_input_work(policy, &request, clusters)?;
    let (decision, counted) = pair
        .balancer
        .decide_counted(&request, clusters, rng, scratch);
    pair.sessions.count(counted);
    Ok(decision)
}

pub(super) fn non_blank(value: Option<&str>) -> Option<&str> {
    // A visible ASCII first byte is never whitespace: skip the trim.
    value.filter(|v| v.as_bytes().first().is_some_and(u8::is_ascii_graphic) || !v.trim().is_empty())
}

/// Whether some candidate is not excluded.
pub(super) fn has_candidates(request: &Request<'_>, clusters: &[ClusterSnapshot]) -> bool {
    clusters
        .iter()
        .any(|c| !request.excluded.contains(&c.id.as_str()))
}

/// What [`decide`] answers when [`has_candidates`] is false: the affinity
/// key check comes first.
pub(super) fn reject_without_candidates(
    policy: &crate::ir::Policy,
    request: &Request<'_>,
    clusters: &[ClusterSnapshot],
) -> Rejection {
    let request = Request {
        cache_affinity_key: non_blank(request.cache_affinity_key),
        ..request.clone()
    };
    match admission::check_affinity_key(policy, &request) {
        Err(rejection) => rejection,
        Ok(()) => check_candidates(&request, clusters)
            .err()
            .unwrap_or_else(|| no_candidates(&request)),
    }
}

/// 404 when there is no candidate and nothing failed yet, else 503 when
/// every candidate is excluded.
fn check_candidates(request: &Request<'_>, clusters: &[ClusterSnapshot]) -> Result<(), Rejection> {
    if has_candidates(request, clusters) {
        return Ok(());
    }
    Err(no_candidates(request))
}

fn no_candidates(request: &Request<'_>) -> Rejection {
    if request.excluded.is_empty() {
        Rejection::new(
            RejectionCode::NoEligibleCandidates,
            format!("no eligible candidates for model {}", request.model),
        )
    } else {
        Rejection::new(
            RejectionCode::CandidatesExhausted,
            format!(
                "every candidate for model {} failed for this request",
                request.model
            ),
        )
    }
}

/// Whether a header value carries parameters and so goes through the
/// expression cache: a `;` (header form), or with `call_form` also a `(`
/// (a compiler that reads the call form). stargate reads a value without
/// `;` as a method name (docs/stargate.md 5).
pub fn is_expression(value: &[u8], call_form: bool) -> bool {
    // `contains` on bytes is a memchr, faster than one pass testing both.
    value.contains(&b';') || (call_form && value.contains(&b'('))
}

/// The header value as text: visible ASCII and tab only, as HTTP header
/// values convert to text (docs/stargate.md 1.1). Anything else,
/// invalid UTF-8 included, is an unknown method (5.5).
pub fn header_text(value: &[u8]) -> Option<&str> {
    let visible = value
        .iter()
        .all(|&b| b == b'\t' || (0x20..0x7f).contains(&b));
    std::str::from_utf8(value).ok().filter(|_| visible)
}
