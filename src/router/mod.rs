//! The router runtime: route tables at run time,
//! per-request expressions and their cache, admission, rejections and the
//! routing loop's timing.
//!
//! ```text
//! x-routing-method ──► Router::resolve ──► Resolved { definition(), instance() }
//!                        │ absent: configured definition
//!                        │ method-only: route table (4.4)
//!                        │ with parameters: expression cache (5.6)
//!                        ▼
//!        Resolved::decide ── admission (3.9) ──► Balancer::decide
//!                        ▼
//!              WaitLoop::step ──► select / sleep / give up (2.2)
//! ```
//!
//! Invariants: the request path never parses outside a cache miss and does
//! not allocate per decision; a cache hit never waits for a build.

mod admission;
mod arena;
mod cache;
mod clock;
#[cfg(feature = "tokio")]
mod driver;
mod exclusions;
pub mod headers;
#[cfg(feature = "http")]
mod http_response;
mod metrics;
mod options;
mod rejection;
mod reload;
mod request;
mod runtime;
mod state;
mod targets;
mod view;
mod wait;

pub use admission::{check_affinity_key, check_input_work, input_work, InputWork};
pub use clock::{Clock, ManualClock, SystemClock};
#[cfg(feature = "tokio")]
pub use driver::{Driver, Routed, Routing};
pub use exclusions::Exclusions;
pub use headers::{
    LastClusterHint, RequestHeaders, CLUSTER_ID, LAST_CLUSTER_ID, MAX_LAST_CLUSTER_ID_BYTES,
};
pub use metrics::counters::{CounterSnapshot, Event, WaitHistogram, WAIT_BUCKETS};
pub use metrics::expression_cache::{CacheOutcome, Metrics, CACHE_ENTRIES, EXPRESSIONS_TOTAL};
#[cfg(feature = "metrics")]
pub use metrics::prometheus::{names as metric_names, RouterCollector};
pub use metrics::sessions::{SessionSelections, SESSION_SELECTIONS_TOTAL};
pub use options::{Compiler, RouterOptions, DEFAULT_CACHE_CAPACITY, DEFAULT_IDLE_TIMEOUT};
pub use rejection::{
    bounded_echo, Rejection, RejectionCode, ECHO_MARKER, ERROR_CODE_HEADER, MAX_MESSAGE_BYTES,
};
pub use reload::Reloaded;
pub use request::{is_expression, PendingResolution, Resolved, RouteRequest, Source};
pub use runtime::Router;
pub use view::candidate::{
    Applied, BackendRates, CandidateView, Ignored, ReportError, ReservationId,
};
pub use view::health::{
    BackendHealthRow, BackendState, FailureOutcome, HealthOptions, STALE_HEARTBEATS,
};
pub use view::models::ModelViews;
pub use view::shared::{Reservation, SharedView, ViewRead};
pub use view::stats::BackendStats;
pub use wait::{SleepKind, Step, WaitLoop, RECHECK_PERIOD, RETRY_SLEEP_MS, WAIT_CAP};

#[cfg(doctest)]
#[doc = include_str!("../../docs/embedding.md")]
struct EmbeddingDocs;
