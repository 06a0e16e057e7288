//! The proxy example's fleet over loopback, shared by tests/proxy/routing.rs and
//! tests/proxy/ops.rs: a front end, fake backends and an HTTP client on
//! 127.0.0.1, with the configuration of examples/lb-config.json. The test
//! crate declares the example's modules (`backend`, `client`, `front`,
//! `heartbeat`) at its root.
#![allow(dead_code)]

use crate::backend::{Backend, BackendConfig};
use crate::client;
use crate::front::{self, Proxy, ProxyOptions};
use axum::body::Body;
use http::{HeaderMap, StatusCode};
use routex::balancer::{ClusterSnapshot, Decision, Request, Scratch};
use routex::router::{RouteRequest, Router};
use std::collections::BTreeMap;
use std::future::Future;
use std::net::SocketAddr;
use std::time::Duration;

pub const MODEL: &str = "llama-3-70b";
pub const CLUSTERS: [&str; 3] = ["c1", "c2", "c3"];
pub const SLOTS: u64 = 24;
pub const TPS: f64 = 1000.0;
pub const TOKENS: &str = "100";
/// No test comes near this; it only bounds a broken run.
pub const LIMIT: Duration = Duration::from_secs(60);

pub fn table() -> routex::ir::RouteTable {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/lb-config.json");
    routex::config::load_table_path(path)
        .expect("lb-config.json")
        .0
}

pub struct Fleet {
    pub proxy: Proxy,
    pub url: String,
    pub backends: Vec<Backend>,
    pub client: client::HttpClient,
}

pub struct Reply {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: String,
}

impl Reply {
    pub fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    }

    pub fn cluster(&self) -> &str {
        self.header(front::CLUSTER_HEADER)
    }
}

impl Fleet {
    /// The test fleet: one backend per cluster of `CLUSTERS`, registered
    /// with its rate, heartbeats only when the test sends them.
    pub async fn start() -> Fleet {
        let configs = CLUSTERS
            .iter()
            .map(|c| BackendConfig::new(c, &[MODEL], SLOTS, TPS))
            .collect();
        Fleet::start_with(configs, ProxyOptions::default()).await
    }

    /// A proxy with `options` and these backends, registered in order (the
    /// view's candidate order).
    pub async fn start_with(configs: Vec<BackendConfig>, options: ProxyOptions) -> Fleet {
        Fleet::start_table(table(), configs, options).await
    }

    /// [`Fleet::start_with`] over another route table.
    pub async fn start_table(
        table: routex::ir::RouteTable,
        configs: Vec<BackendConfig>,
        options: ProxyOptions,
    ) -> Fleet {
        let addr = SocketAddr::from(([127, 0, 0, 1], 0));
        let (proxy, addr) = Proxy::spawn(table, addr, options).await.unwrap();
        let url = format!("http://{addr}");
        let mut backends = Vec::new();
        for config in configs {
            backends.push(Backend::spawn(config, &url).await.unwrap());
        }
        Fleet {
            proxy,
            url,
            backends,
            client: client::new(),
        }
    }

    /// `GET /metrics`, parsed by a Prometheus text-format parser.
    pub async fn scrape(&self) -> prometheus_parse::Scrape {
        let request = http::Request::get(format!("{}/metrics", self.url))
            .body(Body::empty())
            .unwrap();
        let response = self.client.request(request).await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        let content_type = response.headers()["content-type"]
            .to_str()
            .unwrap()
            .to_owned();
        assert!(
            content_type.starts_with("text/plain; version=0.0.4"),
            "{content_type}"
        );
        let body = axum::body::to_bytes(Body::new(response.into_body()), 1 << 24)
            .await
            .unwrap();
        let text = String::from_utf8(body.to_vec()).unwrap();
        let lines = text.lines().map(|l| Ok(l.to_owned()));
        prometheus_parse::Scrape::parse(lines).unwrap()
    }

    pub fn backend(&self, cluster: &str) -> &Backend {
        self.backends
            .iter()
            .find(|b| b.cluster() == cluster)
            .unwrap()
    }

    pub async fn heartbeats(&self) {
        for b in &self.backends {
            b.heartbeat().await.unwrap();
        }
    }

    /// Pending reservations per cluster, in `CLUSTERS` order.
    pub fn pending(&self) -> Vec<usize> {
        let view = self.proxy.view(MODEL).unwrap();
        let view = view.read();
        CLUSTERS
            .iter()
            .map(|c| view.pending(view.position(c).unwrap()))
            .collect()
    }

    pub fn received(&self) -> Vec<u64> {
        self.backends.iter().map(Backend::received).collect()
    }

    /// A completion request with the mandatory headers (`x-model`,
    /// `x-request-id`, `x-input-tokens`) plus `extra`; an extra header of
    /// the same name replaces a mandatory one, value `None` drops it.
    pub fn send(
        &self,
        extra: &[(&str, Option<&str>)],
    ) -> impl Future<Output = Reply> + Send + 'static {
        let mut headers: BTreeMap<String, String> = [
            ("x-request-id", "test"),
            ("x-model", MODEL),
            ("x-input-tokens", TOKENS),
        ]
        .into_iter()
        .map(|(n, v)| (n.to_owned(), v.to_owned()))
        .collect();
        for (name, value) in extra {
            match value {
                Some(v) => headers.insert((*name).to_owned(), (*v).to_owned()),
                None => headers.remove(*name),
            };
        }
        let client = self.client.clone();
        let url = format!("{}/v1/completions", self.url);
        async move {
            let mut request = http::Request::post(url);
            for (name, value) in &headers {
                request = request.header(name, value);
            }
            let request = request.body(Body::from("{\"prompt\":\"hi\"}")).unwrap();
            let response = client.request(request).await.unwrap();
            let status = response.status();
            let headers = response.headers().clone();
            let body = axum::body::to_bytes(Body::new(response.into_body()), 1 << 20)
                .await
                .unwrap();
            Reply {
                status,
                headers,
                body: String::from_utf8(body.to_vec()).unwrap(),
            }
        }
    }

    pub fn keyed(&self, key: &str) -> impl Future<Output = Reply> + Send + 'static {
        self.send(&[("x-cache-affinity-key", Some(key))])
    }
}

/// The Pulsar ranking of `key` (seed `v1`, equal weights), best first,
/// computed by the library: what the proxy's pulsar-wait-and-widen ranks.
pub fn ranking(key: &str) -> Vec<String> {
    let router = Router::new(table());
    let clusters: Vec<ClusterSnapshot> = CLUSTERS
        .iter()
        .map(|id| ClusterSnapshot {
            id: (*id).to_owned(),
            last_mean_input_tps: TPS,
            max_input_tps: Some(TPS),
            ..ClusterSnapshot::default()
        })
        .collect();
    let mut order: Vec<String> = Vec::new();
    let mut rng = rand::rng();
    while order.len() < CLUSTERS.len() {
        let excluded: Vec<&str> = order.iter().map(String::as_str).collect();
        let request = RouteRequest {
            request: Request {
                model: MODEL,
                cache_affinity_key: Some(key),
                input_tokens: Some(100),
                excluded: &excluded,
                ..Request::default()
            },
            // The model's own `pulsar` entry: seed v1, like its PWW.
            routing_method: Some(b"pulsar"),
        };
        let decision = router.route(&request, &clusters, &mut rng, &mut Scratch::default());
        let Ok(Decision::Selected(choice)) = decision else {
            panic!("pulsar ranks every cluster: {decision:?}");
        };
        order.push(clusters[choice.index].id.clone());
    }
    order
}

/// Polls `done` every 5 ms; fails after 20 s.
pub async fn until(what: &str, done: impl Fn() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while !done() {
        assert!(tokio::time::Instant::now() < deadline, "timed out: {what}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

pub fn run(test: impl Future<Output = ()>) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        tokio::time::timeout(LIMIT, test)
            .await
            .expect("the test finished in time");
    });
}
