//! The proxy's front end: `POST /v1/completions` routed to a backend by
//! routex's async driver (`router::Driver`: the routing loop with its
//! waits, retries and exclusions), `POST /v1/heartbeat` feeding the
//! candidate views, `GET /metrics` with the router's metrics (routex's
//! `RouterCollector` in a prometheus-client registry) in OpenMetrics to a
//! scraper that asks for it, else in the Prometheus text format.
//!
//! A request's reservation ends when its response has been delivered
//! whole (`Completion::Complete`: the slot frees at once) or is kept for
//! the backend's next heartbeat (`Completion::Keep`, stargate's
//! semantics). Client text in log lines and bodies is cut to
//! `routex::router::MAX_MESSAGE_BYTES`.
//!
//! One candidate view per model (`router::ModelViews`): a backend's
//! heartbeat registers it, with its rates, for the models it serves, and
//! its report is applied to each of those views. Views and URLs are keyed
//! by what backends say, never by client input; the router bounds its own
//! per-target state.
//!
//! Like stargate, every proxied response names its cluster in
//! `x-stargate-cluster-id`. With `ProxyOptions::sessions` the proxy also
//! plays the gateway in front of stargate (docs/stargate.md 3.10): it
//! remembers each session's last cluster from successful responses and
//! sends it as `x-stargate-last-cluster-id` when the client did not.

use crate::client::{self, HttpClient};
use crate::gateway::{SessionStore, StoreOptions};
use crate::heartbeat::{self, Heartbeat};
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::routing::{get, post};
use http::{HeaderMap, HeaderValue, Method, Request, Response, StatusCode};
use http_body::{Frame, SizeHint};
use prometheus_client::registry::Registry;
use routex::ir::RouteTable;
use routex::router::{
    bounded_echo, headers, Driver, HealthOptions, LastClusterHint, ModelViews, Reloaded,
    RequestHeaders, Reservation, Routed, Router, RouterCollector, RouterOptions, SharedView,
    MAX_MESSAGE_BYTES,
};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, PoisonError, RwLock};
use std::task::{Context, Poll};
use std::time::Instant;
use tokio::net::TcpListener;

/// Response headers that say where a request went.
pub const CLUSTER_HEADER: &str = "x-routex-cluster";
pub const BACKEND_HEADER: &str = "x-routex-backend";
pub const RANK_DEPTH_HEADER: &str = "x-routex-rank-depth";
pub const TRIES_HEADER: &str = "x-routex-tries";
/// Milliseconds from arrival to the reservation (`Routed::waited`).
pub const WAITED_HEADER: &str = "x-routex-waited-ms";

/// The request headers forwarded to the backend.
const FORWARDED: [&str; 5] = [
    "content-type",
    headers::REQUEST_ID,
    headers::MODEL,
    headers::INPUT_TOKENS,
    headers::PRIORITY,
];

/// A running proxy; cheap to clone.
#[derive(Clone)]
pub struct Proxy {
    shared: Arc<Shared>,
}

struct Shared {
    driver: Driver,
    views: ModelViews,
    /// (cluster, backend) -> base URL.
    urls: RwLock<HashMap<(String, String), String>>,
    client: HttpClient,
    /// What `/metrics` serves: the router's collector.
    registry: Registry,
    /// Reloads refused (a configuration with errors: the old one stays).
    refused: AtomicU64,
    /// The gateway's last-cluster store, when the proxy plays the gateway.
    sessions: Option<SessionStore>,
    completion: Completion,
}

/// When a delivered request stops counting on its backend.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Completion {
    /// `Reservation::keep` once the backend answered: the slot is held
    /// until the backend's next heartbeat (stargate's semantics; the tests
    /// that pin reservations between heartbeats use it).
    #[default]
    Keep,
    /// `Reservation::complete` once the response body has been delivered
    /// whole (or the client went away): the slot frees at once. For
    /// requests shorter than the heartbeat period.
    Complete,
}

/// How the proxy judges backend health, whether it plays the gateway, and
/// the router's bounds.
#[derive(Clone, Debug, Default)]
pub struct ProxyOptions {
    pub health: HealthOptions,
    /// When a delivered request's reservation ends.
    pub completion: Completion,
    /// The router's target bound and idle window (`RouterOptions`).
    pub router: RouterOptions,
    /// Act as the gateway's last-cluster store; `None`: pass the client's
    /// `x-stargate-last-cluster-id` through only.
    pub sessions: Option<StoreOptions>,
}

impl Proxy {
    /// Serves `table` on `addr` (port 0: any free port).
    pub async fn spawn(
        table: RouteTable,
        addr: SocketAddr,
        options: ProxyOptions,
    ) -> Result<(Proxy, SocketAddr), String> {
        let listener = TcpListener::bind(addr).await.map_err(|e| e.to_string())?;
        let addr = listener.local_addr().map_err(|e| e.to_string())?;
        let router = Arc::new(Router::with_options(table, options.router));
        let views = ModelViews::new().with_health(options.health);
        let mut registry = Registry::default();
        registry.register_collector(Box::new(
            RouterCollector::new(router.clone()).with_model_views(views.clone()),
        ));
        // The router's own maintenance (idle targets), on its own schedule:
        // a scrape only reads.
        let maintained = Arc::downgrade(&router);
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(std::time::Duration::from_secs(60));
            loop {
                tick.tick().await;
                let Some(router) = maintained.upgrade() else {
                    break;
                };
                router.maintenance();
            }
        });
        let proxy = Proxy {
            shared: Arc::new(Shared {
                driver: Driver::new(router),
                views,
                urls: RwLock::default(),
                client: client::new(),
                registry,
                refused: AtomicU64::new(0),
                sessions: options.sessions.map(SessionStore::new),
                completion: options.completion,
            }),
        };
        let app = axum::Router::new()
            .route("/v1/completions", post(completions))
            .route(heartbeat::PATH, post(heartbeat))
            .route("/metrics", get(metrics))
            .with_state(proxy.clone());
        tokio::spawn(async move { axum::serve(listener, app).await });
        Ok((proxy, addr))
    }

    /// Loads `path` and replaces the route table while requests run
    /// (`Router::reload`: unchanged targets keep their state). A
    /// configuration with errors is refused with its diagnostics and the
    /// old one stays.
    pub fn reload(&self, path: &str) -> Result<Reloaded, String> {
        match routex::config::load_table_path(path) {
            Ok((table, warnings)) => {
                for line in warnings.to_string().lines() {
                    eprintln!("warning: {line}");
                }
                Ok(self.shared.driver.router().reload(table))
            }
            Err(error) => {
                self.shared.refused.fetch_add(1, Ordering::Relaxed);
                Err(error.to_string())
            }
        }
    }

    /// Reloads refused so far (tests/proxy_reload.rs waits on it).
    #[allow(dead_code)]
    pub fn reloads_refused(&self) -> u64 {
        self.shared.refused.load(Ordering::Relaxed)
    }

    /// Reloads `path` on every SIGHUP, as servers do.
    pub fn reload_on_sighup(&self, path: String) -> std::io::Result<()> {
        use tokio::signal::unix::{signal, SignalKind};
        let mut hangups = signal(SignalKind::hangup())?;
        let proxy = self.clone();
        tokio::spawn(async move {
            while hangups.recv().await.is_some() {
                match proxy.reload(&path) {
                    Ok(done) => eprintln!(
                        "proxy: reloaded {path}; models changed: {:?}",
                        done.changed_models
                    ),
                    Err(e) => {
                        eprintln!("proxy: reload refused, the configuration in force stays:\n{e}")
                    }
                }
            }
        });
        Ok(())
    }

    /// Health settings for every view, live ones included (on reload, or
    /// from an operator).
    #[allow(dead_code)]
    pub fn set_health(&self, options: HealthOptions) {
        self.shared.views.set_health(options);
    }

    /// The views of every model (tests read their health rows).
    #[allow(dead_code)]
    pub fn views(&self) -> &ModelViews {
        &self.shared.views
    }

    /// The candidate view of `model`, if a backend serves it.
    pub fn view(&self, model: &str) -> Option<SharedView> {
        self.shared.views.get(model)
    }

    fn url(&self, cluster: &str, backend: &str) -> Option<String> {
        let urls = self
            .shared
            .urls
            .read()
            .unwrap_or_else(PoisonError::into_inner);
        urls.get(&(cluster.to_owned(), backend.to_owned())).cloned()
    }

    /// Registers the backend for its models with its rates (a change only
    /// the first time, or when they change), sets its draining state, and
    /// applies its statistics once to each of its models' views.
    fn apply(&self, beat: &Heartbeat) -> Result<(), String> {
        let key = (beat.cluster.clone(), beat.backend.clone());
        self.shared
            .urls
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key, beat.url.clone());
        let views = &self.shared.views;
        let models = beat.models.iter().map(String::as_str);
        let registered = views.ensure_backend(
            models,
            &beat.cluster,
            &beat.backend,
            beat.registration.into(),
        );
        let drained = views.set_draining(&beat.cluster, &beat.backend, beat.draining);
        let reported = views.report(&beat.cluster, &beat.backend, &beat.stats);
        let ignored = reported
            .as_ref()
            .ok()
            .and_then(|a| a.ignored)
            .or(registered.ignored);
        let errors: Vec<String> = [drained.err(), reported.err()]
            .into_iter()
            .flatten()
            .map(|e| e.to_string())
            .chain(ignored.map(|i| i.to_string()))
            .collect();
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors.join("; "))
        }
    }
}

/// `POST /v1/heartbeat`: 204, or 400 naming what was refused or ignored.
async fn heartbeat(State(proxy): State<Proxy>, body: Bytes) -> Response<Body> {
    let outcome = serde_json::from_slice::<Heartbeat>(&body)
        .map_err(|e| format!("invalid heartbeat: {e}"))
        .and_then(|beat| proxy.apply(&beat));
    match outcome {
        Ok(()) => plain(StatusCode::NO_CONTENT, String::new()),
        Err(message) => {
            // serde's message quotes what it refused (an unknown field's
            // name): cut like every echo of client text.
            let message = bounded_echo(&message, MAX_MESSAGE_BYTES).into_owned();
            eprintln!("proxy: {message}");
            plain(StatusCode::BAD_REQUEST, message)
        }
    }
}

/// OpenMetrics' media type, as a scraper names it in `Accept`.
const OPENMETRICS: &str = "application/openmetrics-text";

/// `GET /metrics`: OpenMetrics 1.0.0 when the scraper's `Accept` names
/// `application/openmetrics-text` (as Prometheus negotiates), else the
/// Prometheus text exposition format 0.0.4.
async fn metrics(State(proxy): State<Proxy>, headers: HeaderMap) -> Response<Body> {
    let openmetrics = headers
        .get_all(http::header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|media| {
            let mut parts = media.split(';').map(str::trim);
            let named = parts
                .next()
                .is_some_and(|m| m.eq_ignore_ascii_case(OPENMETRICS));
            // `q=0` means "not acceptable".
            let refused = parts.any(|p| {
                p.strip_prefix("q=")
                    .and_then(|q| q.trim().parse::<f32>().ok())
                    == Some(0.0)
            });
            named && !refused
        });
    let mut text = String::new();
    let (encoded, content_type) = if openmetrics {
        (
            prometheus_client::encoding::text::encode(&mut text, &proxy.shared.registry),
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )
    } else {
        (
            prometheus_client::encoding::prometheus_text::encode(&mut text, &proxy.shared.registry),
            prometheus_client::encoding::prometheus_text::CONTENT_TYPE,
        )
    };
    if let Err(e) = encoded {
        return plain(StatusCode::INTERNAL_SERVER_ERROR, e.to_string());
    }
    let mut response = plain(StatusCode::OK, text);
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        HeaderValue::from_static(content_type),
    );
    response
}

/// `POST /v1/completions`: parse the routing headers (400), route (400,
/// 404, 503 with stargate's code and body), forward; a backend that fails
/// (connection error or 5xx) is excluded and the request routed again.
async fn completions(
    State(proxy): State<Proxy>,
    headers: HeaderMap,
    body: Bytes,
) -> Response<Body> {
    let parsed = match RequestHeaders::from_header_map(&headers) {
        Ok(parsed) => parsed,
        Err(rejection) => {
            proxy.shared.driver.router().record_rejection(&rejection);
            return rejection.to_response();
        }
    };
    // An unknown model routes over an empty view: 404 no_eligible_candidates.
    let view = proxy.view(parsed.model).unwrap_or_default();
    // As the gateway: the session's remembered cluster, unless the client
    // sent one.
    let session = match (&proxy.shared.sessions, parsed.cache_affinity_key) {
        (Some(store), Some(key)) => Some((store, key)),
        _ => None,
    };
    let remembered = session
        .filter(|_| parsed.last_cluster_id == LastClusterHint::Absent)
        .and_then(|(store, key)| {
            store.last_cluster(parsed.routing_key, parsed.model, key, Instant::now())
        });
    let mut request = parsed.route_request();
    if let Some(cluster) = &remembered {
        request.request.last_cluster_id = Some(cluster);
    }
    let mut routing = proxy.shared.driver.routing(request, parsed.max_wait_ms);
    loop {
        let routed = match routing.next(&view).await {
            Ok(routed) => routed,
            Err(rejection) => return rejection.to_response(),
        };
        match forward(&proxy, &routed, &headers, body.clone()).await {
            Ok(response) => {
                // Delivered: the backend's next heartbeat counts it.
                let Routed {
                    cluster,
                    backend,
                    choice,
                    reservation,
                    attempts,
                    waited,
                    ..
                } = routed;
                let response = match proxy.shared.completion {
                    Completion::Keep => {
                        reservation.keep();
                        response
                    }
                    // The slot frees when the body has gone out whole.
                    Completion::Complete => response.map(|body| {
                        Body::new(Completing {
                            body,
                            reservation: Some(reservation),
                        })
                    }),
                };
                if let Some((store, key)) = session.filter(|_| response.status().is_success()) {
                    store.record(
                        parsed.routing_key,
                        parsed.model,
                        key,
                        &cluster,
                        Instant::now(),
                    );
                }
                let annotations = [
                    (headers::CLUSTER_ID, cluster.to_string()),
                    (CLUSTER_HEADER, cluster.to_string()),
                    (BACKEND_HEADER, backend.to_string()),
                    (RANK_DEPTH_HEADER, choice.rank_depth.to_string()),
                    (TRIES_HEADER, attempts.to_string()),
                    (WAITED_HEADER, waited.as_millis().to_string()),
                ];
                return annotate(response, annotations);
            }
            Err(e) => {
                let e = bounded_echo(&e, MAX_MESSAGE_BYTES);
                eprintln!("proxy: {}/{} failed: {e}", routed.cluster, routed.backend);
                // Releases its reservation and counts a failure of the
                // backend (consecutive ones eject it); that backend is not
                // tried again for this request.
                routing.failed(routed);
            }
        }
    }
}

async fn forward(
    proxy: &Proxy,
    routed: &Routed,
    headers: &HeaderMap,
    body: Bytes,
) -> Result<Response<Body>, String> {
    let url = proxy
        .url(&routed.cluster, &routed.backend)
        .ok_or("no URL registered")?;
    let mut request = Request::builder()
        .method(Method::POST)
        .uri(format!("{url}/v1/completions"));
    for name in FORWARDED {
        if let Some(value) = headers.get(name) {
            request = request.header(name, value);
        }
    }
    let request = request.body(Body::from(body)).map_err(|e| e.to_string())?;
    let response = proxy
        .shared
        .client
        .request(request)
        .await
        .map_err(|e| e.to_string())?;
    if response.status().is_server_error() {
        return Err(format!("status {}", response.status()));
    }
    // The body streams through.
    Ok(response.map(Body::new))
}

fn annotate(
    mut response: Response<Body>,
    annotations: [(&'static str, String); 6],
) -> Response<Body> {
    let headers = response.headers_mut();
    for (name, value) in annotations {
        if let Ok(value) = HeaderValue::try_from(value) {
            headers.insert(name, value);
        }
    }
    response
}

fn plain(status: StatusCode, text: String) -> Response<Body> {
    let mut response = Response::new(Body::from(text));
    *response.status_mut() = status;
    response
}

/// A response body that completes its request's reservation when it ends
/// (or is dropped: the client went away, the backend has had it).
struct Completing {
    body: Body,
    reservation: Option<Reservation>,
}

impl Completing {
    fn complete(&mut self) {
        if let Some(reservation) = self.reservation.take() {
            reservation.complete();
        }
    }
}

impl http_body::Body for Completing {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let polled = Pin::new(&mut self.body).poll_frame(cx);
        if matches!(polled, Poll::Ready(None)) || self.body.is_end_stream() {
            self.complete();
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

impl Drop for Completing {
    fn drop(&mut self) {
        self.complete();
    }
}
