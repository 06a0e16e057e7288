//! The proxy's front end: `POST /v1/completions` routed to a backend by
//! routex's async driver (`router::Driver`: the routing loop with its
//! waits, retries and exclusions), `POST /v1/heartbeat` feeding the
//! candidate views, `GET /metrics` with the router's metrics in the
//! Prometheus text format (routex's `RouterCollector` in a
//! prometheus-client registry).
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
use prometheus_client::registry::Registry;
use routex::ir::RouteTable;
use routex::router::{
    headers, Driver, HealthOptions, LastClusterHint, ModelViews, Reloaded, RequestHeaders, Routed,
    Router, RouterCollector, RouterOptions, SharedView,
};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, PoisonError, RwLock};
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
}

/// How the proxy judges backend health, whether it plays the gateway, and
/// the router's bounds.
#[derive(Clone, Debug, Default)]
pub struct ProxyOptions {
    pub health: HealthOptions,
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
        registry.register_collector(Box::new(RouterCollector::new(
            router.clone(),
            views.clone(),
        )));
        let proxy = Proxy {
            shared: Arc::new(Shared {
                driver: Driver::new(router),
                views,
                urls: RwLock::default(),
                client: client::new(),
                registry,
                refused: AtomicU64::new(0),
                sessions: options.sessions.map(SessionStore::new),
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
        views.set_draining(&beat.cluster, &beat.backend, beat.draining);
        let reported = views.report(&beat.cluster, &beat.backend, &beat.stats);
        let errors: Vec<String> = [registered.err(), reported.err()]
            .into_iter()
            .flatten()
            .map(|e| e.to_string())
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
            eprintln!("proxy: {message}");
            plain(StatusCode::BAD_REQUEST, message)
        }
    }
}

/// `GET /metrics`: the Prometheus text exposition format (0.0.4).
async fn metrics(State(proxy): State<Proxy>) -> Response<Body> {
    let mut text = String::new();
    if let Err(e) =
        prometheus_client::encoding::prometheus_text::encode(&mut text, &proxy.shared.registry)
    {
        return plain(StatusCode::INTERNAL_SERVER_ERROR, e.to_string());
    }
    let mut response = plain(StatusCode::OK, text);
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        HeaderValue::from_static(prometheus_client::encoding::prometheus_text::CONTENT_TYPE),
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
                reservation.keep();
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
