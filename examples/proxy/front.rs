//! The proxy's front end: `POST /v1/completions` routed to a backend by
//! routex's async driver (`router::Driver`: the routing loop with its
//! waits, retries and exclusions), `POST /v1/heartbeat` feeding the
//! candidate views, `GET /metrics` with the router's expression-cache
//! metrics.
//!
//! One candidate view per model: a backend's heartbeat registers it for
//! the models it serves. Views and URLs are keyed by what backends say,
//! never by client input; the router bounds its own per-target state.

use crate::client::{self, HttpClient};
use crate::heartbeat::{self, Heartbeat};
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::routing::{get, post};
use http::{HeaderMap, HeaderValue, Method, Request, Response, StatusCode};
use routex::ir::RouteTable;
use routex::router::{headers, Driver, RequestHeaders, Routed, Router, SharedView};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, PoisonError, RwLock};
use tokio::net::TcpListener;

/// Response headers that say where a request went.
pub const CLUSTER_HEADER: &str = "x-routex-cluster";
pub const BACKEND_HEADER: &str = "x-routex-backend";
pub const RANK_DEPTH_HEADER: &str = "x-routex-rank-depth";
pub const TRIES_HEADER: &str = "x-routex-tries";

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
    views: RwLock<HashMap<String, SharedView>>,
    /// (cluster, backend) -> base URL.
    urls: RwLock<HashMap<(String, String), String>>,
    client: HttpClient,
}

impl Proxy {
    /// Serves `table` on `addr` (port 0: any free port).
    pub async fn spawn(table: RouteTable, addr: SocketAddr) -> Result<(Proxy, SocketAddr), String> {
        let listener = TcpListener::bind(addr).await.map_err(|e| e.to_string())?;
        let addr = listener.local_addr().map_err(|e| e.to_string())?;
        let proxy = Proxy {
            shared: Arc::new(Shared {
                driver: Driver::new(Arc::new(Router::new(table))),
                views: RwLock::default(),
                urls: RwLock::default(),
                client: client::new(),
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

    /// The candidate view of `model`, if a backend serves it.
    pub fn view(&self, model: &str) -> Option<SharedView> {
        let views = self
            .shared
            .views
            .read()
            .unwrap_or_else(PoisonError::into_inner);
        views.get(model).cloned()
    }

    fn url(&self, cluster: &str, backend: &str) -> Option<String> {
        let urls = self
            .shared
            .urls
            .read()
            .unwrap_or_else(PoisonError::into_inner);
        urls.get(&(cluster.to_owned(), backend.to_owned())).cloned()
    }

    /// Registers the backend for its models (first time) and applies its
    /// statistics to each model's view.
    fn apply(&self, beat: &Heartbeat) -> Result<(), String> {
        let key = (beat.cluster.clone(), beat.backend.clone());
        self.shared
            .urls
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key, beat.url.clone());
        let mut errors = Vec::new();
        for model in &beat.models {
            // The write lock only for a model's first backend.
            let view = match self.view(model) {
                Some(view) => view,
                None => {
                    let mut views = self
                        .shared
                        .views
                        .write()
                        .unwrap_or_else(PoisonError::into_inner);
                    views.entry(model.clone()).or_default().clone()
                }
            };
            let known = {
                let v = view.read();
                v.position(&beat.cluster)
                    .is_some_and(|c| v.backend_position(c, &beat.backend).is_some())
            };
            if !known {
                view.update(|v| v.add_backend(&beat.cluster, &beat.backend));
            }
            if let Err(e) = view.report(&beat.cluster, &beat.backend, &beat.stats) {
                errors.push(format!("{model}: {e}"));
            }
        }
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

async fn metrics(State(proxy): State<Proxy>) -> Response<Body> {
    plain(
        StatusCode::OK,
        proxy.shared.driver.router().metrics().to_prometheus(),
    )
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
        Err(rejection) => return rejection.to_response(),
    };
    // An unknown model routes over an empty view: 404 no_eligible_candidates.
    let view = proxy.view(parsed.model).unwrap_or_default();
    let mut routing = proxy
        .shared
        .driver
        .routing(parsed.route_request(), parsed.max_wait_ms);
    // Backends tried, for the response header.
    let mut tries = 0u32;
    loop {
        let routed = match routing.next(&view).await {
            Ok(routed) => routed,
            Err(rejection) => return rejection.to_response(),
        };
        tries += 1;
        match forward(&proxy, &routed, &headers, body.clone()).await {
            Ok(response) => {
                // Delivered: the backend's next heartbeat counts it.
                let Routed {
                    cluster,
                    backend,
                    choice,
                    reservation,
                    ..
                } = routed;
                reservation.keep();
                return annotate(response, &cluster, &backend, choice.rank_depth, tries);
            }
            Err(e) => {
                eprintln!("proxy: {}/{} failed: {e}", routed.cluster, routed.backend);
                // Releases its reservation; that backend is not tried again.
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
    cluster: &str,
    backend: &str,
    rank_depth: u32,
    tries: u32,
) -> Response<Body> {
    let headers = response.headers_mut();
    for (name, value) in [
        (CLUSTER_HEADER, cluster.to_owned()),
        (BACKEND_HEADER, backend.to_owned()),
        (RANK_DEPTH_HEADER, rank_depth.to_string()),
        (TRIES_HEADER, tries.to_string()),
    ] {
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
