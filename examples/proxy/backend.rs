//! A fake inference backend on 127.0.0.1: serves `POST /v1/completions`
//! and pushes heartbeats (its engine statistics) to the proxy.
//!
//! The engine model is deliberately small: every accepted request is in
//! the engine until it is answered; the first `max_engine_concurrency` of
//! them run, the rest queue. Tests can hold answers (to build up load),
//! make the backend fail, and send heartbeats exactly when they want one.

use crate::client::{self, HttpClient};
use crate::heartbeat::{self, Heartbeat, Registration};
use axum::body::Body;
use axum::extract::State;
use axum::routing::post;
use http::{HeaderMap, Response, StatusCode};
use routex::router::BackendStats;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::watch;

/// What a backend is and how its engine behaves.
#[derive(Clone, Debug)]
pub struct BackendConfig {
    pub cluster: String,
    pub backend: String,
    pub models: Vec<String>,
    /// Engine slots (`max_engine_concurrency`).
    pub slots: u64,
    /// Prefill throughput, prompt tokens per second (mean and peak).
    pub input_tps: f64,
    /// KV cache size in tokens; in-flight prompts use it.
    pub kv_capacity_tokens: u64,
    /// How long a request takes once accepted (before any hold).
    pub service_time: Duration,
    /// Heartbeat period; `None`: only when [`Backend::heartbeat`] is called
    /// (and once at start).
    pub heartbeat_every: Option<Duration>,
    /// Registers with `input_tps` as its mean and peak rate (a benchmarked
    /// prefill rate) in every heartbeat.
    pub register_rates: bool,
    /// Reports measured rates only: 0 and no peak until it has answered a
    /// request (an engine's prompt-token counter has not moved yet).
    pub cold_start: bool,
}

impl BackendConfig {
    /// One backend `{cluster}-0` of `cluster` serving `models`, registered
    /// with its rate, heartbeats only when asked.
    pub fn new(cluster: &str, models: &[&str], slots: u64, input_tps: f64) -> Self {
        BackendConfig {
            cluster: cluster.to_owned(),
            backend: format!("{cluster}-0"),
            models: models.iter().map(|m| (*m).to_owned()).collect(),
            slots,
            input_tps,
            kv_capacity_tokens: 1_000_000,
            service_time: Duration::ZERO,
            heartbeat_every: None,
            register_rates: true,
            cold_start: false,
        }
    }
}

/// A running backend; cheap to clone.
#[derive(Clone)]
pub struct Backend {
    shared: Arc<Shared>,
}

struct Shared {
    config: BackendConfig,
    url: String,
    heartbeat_url: String,
    client: HttpClient,
    state: Mutex<EngineState>,
    /// `true` while answers are held back.
    hold: watch::Sender<bool>,
}

#[derive(Default)]
struct EngineState {
    /// Prompt tokens of the requests in the engine, oldest first.
    in_flight: Vec<u64>,
    received: u64,
    answered: u64,
    failing: bool,
    draining: bool,
}

impl Backend {
    /// Binds an ephemeral port on 127.0.0.1, serves, registers with the
    /// proxy at `proxy_url` by a first heartbeat, and starts the periodic
    /// heartbeat if configured.
    pub async fn spawn(config: BackendConfig, proxy_url: &str) -> Result<Backend, String> {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(|e| e.to_string())?;
        let addr: SocketAddr = listener.local_addr().map_err(|e| e.to_string())?;
        let backend = Backend {
            shared: Arc::new(Shared {
                config,
                url: format!("http://{addr}"),
                heartbeat_url: format!("{proxy_url}{}", heartbeat::PATH),
                client: client::new(),
                state: Mutex::new(EngineState::default()),
                hold: watch::Sender::new(false),
            }),
        };
        let app = axum::Router::new()
            .route("/v1/completions", post(complete))
            .with_state(backend.clone());
        tokio::spawn(async move { axum::serve(listener, app).await });
        backend.heartbeat().await?;
        if let Some(every) = backend.shared.config.heartbeat_every {
            let periodic = backend.clone();
            tokio::spawn(async move {
                let mut tick = tokio::time::interval(every);
                loop {
                    tick.tick().await;
                    if let Err(e) = periodic.heartbeat().await {
                        eprintln!("backend {}: heartbeat: {e}", periodic.id());
                    }
                }
            });
        }
        Ok(backend)
    }

    pub fn id(&self) -> &str {
        &self.shared.config.backend
    }

    pub fn cluster(&self) -> &str {
        &self.shared.config.cluster
    }

    /// Requests that reached this backend (answered, failed or in flight).
    pub fn received(&self) -> u64 {
        self.state().received
    }

    /// Requests answered with 200.
    pub fn answered(&self) -> u64 {
        self.state().answered
    }

    /// While failing, every request is answered 500 at once.
    pub fn set_failing(&self, failing: bool) {
        self.state().failing = failing;
    }

    /// Announces draining (or its end) in the following heartbeats.
    pub fn set_draining(&self, draining: bool) {
        self.state().draining = draining;
    }

    /// Holds answers (requests stay in the engine) until [`Backend::release`].
    pub fn hold(&self) {
        self.shared.hold.send_replace(true);
    }

    pub fn release(&self) {
        self.shared.hold.send_replace(false);
    }

    /// The engine's statistics now.
    pub fn stats(&self) -> BackendStats {
        let config = &self.shared.config;
        let state = self.state();
        let running = state.in_flight.len() as u64;
        let queued = state
            .in_flight
            .get(usize::try_from(config.slots).unwrap_or(usize::MAX)..)
            .unwrap_or_default();
        let used: u64 = state.in_flight.iter().sum();
        let measured = !config.cold_start || state.answered > 0;
        BackendStats {
            last_mean_input_tps: if measured { config.input_tps } else { 0.0 },
            max_input_tps: measured.then_some(config.input_tps),
            queue_size: queued.len() as u64,
            queued_input_size: queued.iter().sum(),
            total_query_input_size: used,
            num_running_queries: running.min(config.slots),
            max_engine_concurrency: config.slots,
            kv_cache_capacity_tokens: config.kv_capacity_tokens,
            kv_cache_used_tokens: used.min(config.kv_capacity_tokens),
            kv_cache_free_tokens: config.kv_capacity_tokens.saturating_sub(used),
            ..BackendStats::default()
        }
    }

    /// Pushes one heartbeat with the current statistics.
    pub async fn heartbeat(&self) -> Result<(), String> {
        let config = &self.shared.config;
        let draining = self.state().draining;
        let beat = Heartbeat {
            cluster: config.cluster.clone(),
            backend: config.backend.clone(),
            url: self.shared.url.clone(),
            models: config.models.clone(),
            registration: if config.register_rates {
                Registration {
                    input_tps: Some(config.input_tps),
                    max_input_tps: Some(config.input_tps),
                }
            } else {
                Registration::default()
            },
            draining,
            stats: self.stats(),
        };
        let json = serde_json::to_string(&beat).map_err(|e| e.to_string())?;
        let (status, body) =
            client::post_json(&self.shared.client, &self.shared.heartbeat_url, json).await?;
        if status.is_success() {
            Ok(())
        } else {
            Err(format!("{status}: {}", String::from_utf8_lossy(&body)))
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, EngineState> {
        self.shared
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

/// `POST /v1/completions`: accept, run for the service time (and any
/// hold), answer with who served it.
async fn complete(State(backend): State<Backend>, headers: HeaderMap) -> Response<Body> {
    let tokens = headers
        .get("x-input-tokens")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .unwrap_or(0);
    {
        let mut state = backend.state();
        state.received += 1;
        if state.failing {
            return json(
                StatusCode::INTERNAL_SERVER_ERROR,
                r#"{"error":"engine failure"}"#,
            );
        }
        state.in_flight.push(tokens);
    }
    // Leaves the engine even if the proxy gives up on this request.
    let _done = Done(&backend, tokens);
    tokio::time::sleep(backend.shared.config.service_time).await;
    let mut held = backend.shared.hold.subscribe();
    let _ = held.wait_for(|hold| !*hold).await;
    backend.state().answered += 1;
    let config = &backend.shared.config;
    json(
        StatusCode::OK,
        &serde_json::json!({
            "cluster": config.cluster,
            "backend": config.backend,
            "choices": [{"text": "ok", "index": 0}],
            "usage": {"prompt_tokens": tokens, "completion_tokens": 1},
        })
        .to_string(),
    )
}

/// Removes a request's prompt from the engine when its handler ends.
struct Done<'a>(&'a Backend, u64);

impl Drop for Done<'_> {
    fn drop(&mut self) {
        let mut state = self.0.state();
        if let Some(i) = state.in_flight.iter().position(|&t| t == self.1) {
            state.in_flight.remove(i);
        }
    }
}

fn json(status: StatusCode, body: &str) -> Response<Body> {
    Response::builder()
        .status(status)
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(Body::from(body.to_owned()))
        .unwrap_or_default()
}
