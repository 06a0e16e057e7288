//! Health per backend through the proxy: a dead backend serving four
//! models is ejected for all of them after its failures from any model
//! (5, the default threshold, not 5 per model) and comes back through its
//! half-open probe; `/metrics` names it in both exposition formats, each
//! read by a real parser (prometheus-parse for the text format, Python's
//! `prometheus_client` OpenMetrics parser for OpenMetrics).

use crate::backend::BackendConfig;
use crate::fleet::{run, Fleet, CLUSTERS, TPS};
use crate::front::{self, ProxyOptions};
use axum::body::Body;
use http::StatusCode;
use prometheus_parse::{Scrape, Value};
use routex::router::{HealthOptions, ManualClock};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

const MODELS: [&str; 4] = ["m1", "m2", "m3", "m4"];

/// Every model round-robin over the three clusters, so each model's
/// requests reach the dead backend in turn.
fn table() -> routex::ir::RouteTable {
    routex::config::load_table("lb-config.json", r#"{"default": "round-robin"}"#)
        .0
        .expect("valid")
}

async fn fleet(models: &[&str], clock: &Arc<ManualClock>) -> Fleet {
    let configs = CLUSTERS
        .iter()
        .map(|c| BackendConfig::new(c, models, 24, TPS))
        .collect();
    let options = ProxyOptions {
        health: HealthOptions::default().with_clock(clock.clone()),
        ..ProxyOptions::default()
    };
    Fleet::start_table(table(), configs, options).await
}

/// Sends `n` requests cycling over `models`; every one must succeed (a
/// failed send is retried on another cluster). Returns the failed sends.
async fn send(fleet: &Fleet, models: &[&str], n: usize) -> usize {
    let mut failed = 0;
    for i in 0..n {
        let model = models[i % models.len()];
        let reply = fleet.send(&[("x-model", Some(model))]).await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
        failed += reply.header(front::TRIES_HEADER).parse::<usize>().unwrap() - 1;
    }
    failed
}

/// Failed sends to a dead backend before it is out for every model.
async fn lost_to_a_dead_backend(models: &[&str]) -> (usize, u64) {
    let clock = Arc::new(ManualClock::new());
    let fleet = fleet(models, &clock).await;
    let dead = fleet.backend("c1");
    dead.set_failing(true);
    let failed = send(&fleet, models, 120).await;
    (failed, dead.received())
}

#[test]
fn a_dead_backend_is_ejected_for_every_model_after_five_failures_from_any() {
    run(async {
        for models in [&MODELS[..1], &MODELS[..]] {
            let (failed, received) = lost_to_a_dead_backend(models).await;
            eprintln!(
                "dead backend, {} model(s): {failed} failed sends of 120 requests",
                models.len()
            );
            assert_eq!(failed, 5, "{} model(s)", models.len());
            assert_eq!(received, 5);
        }
    });
}

fn sample(scrape: &Scrape, metric: &str, labels: &[(&str, &str)]) -> f64 {
    let found: Vec<f64> = scrape
        .samples
        .iter()
        .filter(|s| s.metric == metric && labels.iter().all(|(k, v)| s.labels.get(k) == Some(v)))
        .map(|s| match s.value {
            Value::Counter(v) | Value::Gauge(v) | Value::Untyped(v) => v,
            _ => f64::NAN,
        })
        .collect();
    assert_eq!(found.len(), 1, "{metric} {labels:?}");
    found[0]
}

/// `GET /metrics` with `accept`; the content type and the text.
async fn scrape_as(fleet: &Fleet, accept: Option<&str>) -> (String, String) {
    let mut request = http::Request::get(format!("{}/metrics", fleet.url));
    if let Some(accept) = accept {
        request = request.header(http::header::ACCEPT, accept);
    }
    let response = fleet
        .client
        .request(request.body(Body::empty()).unwrap())
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let content_type = response.headers()["content-type"]
        .to_str()
        .unwrap()
        .to_owned();
    let body = axum::body::to_bytes(Body::new(response.into_body()), 1 << 24)
        .await
        .unwrap();
    (content_type, String::from_utf8(body.to_vec()).unwrap())
}

/// Python's OpenMetrics parser over `text`: `Ok(summary)` with one line
/// per family (`name type samples`), `Err` when it refuses the text;
/// `None` when no Python with `prometheus_client` is installed.
fn python_openmetrics(text: &str) -> Option<Result<String, String>> {
    const SCRIPT: &str = r#"
import sys
from prometheus_client.openmetrics.parser import text_string_to_metric_families
for family in text_string_to_metric_families(sys.stdin.read()):
    print(family.name, family.type, len(family.samples))
    for s in family.samples:
        if s.name.endswith("_bucket") and s.labels.get("le") == "+Inf":
            print("inf", s.labels.get("outcome"), int(s.value))
        if s.name.endswith("_count"):
            print("count", s.labels.get("outcome"), int(s.value))
"#;
    for python in ["python3", "/usr/bin/python3"] {
        let ok = Command::new(python)
            .args(["-c", "import prometheus_client.openmetrics.parser"])
            .output()
            .is_ok_and(|o| o.status.success());
        if !ok {
            continue;
        }
        let mut child = Command::new(python)
            .args(["-c", SCRIPT])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        return Some(if out.status.success() {
            Ok(stdout)
        } else {
            Err(stderr)
        });
    }
    assert!(
        std::env::var_os("ROUTEX_REQUIRE_PROMETHEUS_CLIENT").is_none(),
        "ROUTEX_REQUIRE_PROMETHEUS_CLIENT is set but no python3 imports prometheus_client"
    );
    eprintln!("skipped: no python3 with prometheus_client (the OpenMetrics parser)");
    None
}

#[test]
fn an_ejected_backend_returns_on_its_probe_and_metrics_name_it_in_both_formats() {
    run(async {
        let clock = Arc::new(ManualClock::new());
        let fleet = fleet(&MODELS, &clock).await;
        let dead = fleet.backend("c1");
        dead.set_failing(true);
        assert_eq!(send(&fleet, &MODELS, 40).await, 5);
        // Classic text: prometheus-parse, the state per backend id.
        let (content_type, text) = scrape_as(&fleet, None).await;
        assert!(
            content_type.starts_with("text/plain; version=0.0.4"),
            "{content_type}"
        );
        let lines = text.lines().map(|l| Ok(l.to_owned()));
        let scrape = Scrape::parse(lines).unwrap();
        let c1 = [("cluster", "c1"), ("backend", "c1-0")];
        let state = |scrape: &Scrape, state: &str| {
            let mut labels = c1.to_vec();
            labels.push(("state", state));
            sample(scrape, "routex_backend_state", &labels)
        };
        assert_eq!(state(&scrape, "ejected"), 1.0);
        assert_eq!(state(&scrape, "eligible"), 0.0);
        assert_eq!(sample(&scrape, "routex_backend_ejected_total", &c1), 1.0);
        assert_eq!(
            sample(
                &scrape,
                "routex_backend_state",
                &[
                    ("cluster", "c2"),
                    ("backend", "c2-0"),
                    ("state", "eligible")
                ]
            ),
            1.0
        );
        // Every model counts c1 as ejected: one record, four views.
        for model in MODELS {
            let labels = [("model", model), ("state", "ejected")];
            assert_eq!(sample(&scrape, "routex_backends", &labels), 1.0, "{model}");
        }
        // The wait histogram's +Inf bucket holds every routing.
        let routed = sample(
            &scrape,
            "routex_routing_wait_seconds_count",
            &[("outcome", "routed")],
        );
        assert_eq!(routed, 45.0, "40 requests, 5 of them routed twice");
        let inf = scrape
            .samples
            .iter()
            .find(|s| {
                s.metric == "routex_routing_wait_seconds"
                    && s.labels.get("outcome") == Some("routed")
            })
            .map(|s| match &s.value {
                Value::Histogram(buckets) => buckets.last().map(|b| (b.less_than, b.count)),
                _ => None,
            });
        assert_eq!(inf, Some(Some((f64::INFINITY, 45.0))));
        // OpenMetrics, as a Prometheus scraper asks for it.
        let accept = "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5";
        let (content_type, open) = scrape_as(&fleet, Some(accept)).await;
        assert!(
            content_type.starts_with("application/openmetrics-text; version=1.0.0"),
            "{content_type}"
        );
        assert!(open.ends_with("# EOF\n"));
        assert!(open
            .contains("routex_backend_state{cluster=\"c1\",backend=\"c1-0\",state=\"ejected\"} 1"));
        if let Some(parsed) = python_openmetrics(&open) {
            let summary = parsed.unwrap_or_else(|e| panic!("OpenMetrics parser refused:\n{e}"));
            assert!(
                summary.contains("routex_routing_wait_seconds histogram"),
                "{summary}"
            );
            assert!(
                summary.contains("routex_backend_state gauge 15"),
                "{summary}"
            );
            assert!(summary.contains("inf routed 45"), "{summary}");
            assert!(summary.contains("count routed 45"), "{summary}");
        }
        // q=0 refuses OpenMetrics: the classic text.
        let (content_type, _) = scrape_as(&fleet, Some("application/openmetrics-text;q=0")).await;
        assert!(content_type.starts_with("text/plain"), "{content_type}");
        // Fixed, and 5 s into the ejection its probe is due: one request
        // goes to it, succeeds, and c1 is back for every model.
        dead.set_failing(false);
        clock.advance(Duration::from_secs(5));
        let before = dead.received();
        assert_eq!(send(&fleet, &MODELS, 12).await, 0);
        assert!(
            dead.received() - before >= 2,
            "probe, then back in rotation"
        );
        let (_, text) = scrape_as(&fleet, None).await;
        let scrape = Scrape::parse(text.lines().map(|l| Ok(l.to_owned()))).unwrap();
        assert_eq!(state(&scrape, "eligible"), 1.0);
        for model in MODELS {
            let labels = [("model", model), ("state", "ejected")];
            assert_eq!(sample(&scrape, "routex_backends", &labels), 0.0, "{model}");
        }
    });
}

#[test]
fn client_text_is_echoed_within_its_bound() {
    run(async {
        let clock = Arc::new(ManualClock::new());
        let fleet = fleet(&MODELS[..1], &clock).await;
        // 256 KiB: within hyper's header buffer, so the proxy answers.
        let big = "x".repeat(256 * 1024);
        let cases = [
            ("x-routing-method", format!("pulsar;seed={big}")),
            ("x-routing-method", big.clone()),
            ("x-input-tokens", big.clone()),
            ("x-max-wait-ms", big.clone()),
            ("x-priority", big.clone()),
            ("x-model", big.clone()),
            ("x-request-slo-ms", big.clone()),
        ];
        for (name, value) in &cases {
            let reply = fleet.send(&[(name, Some(value.as_str()))]).await;
            assert!(
                reply.body.len() <= routex::router::MAX_MESSAGE_BYTES + 64,
                "{name}: {} bytes",
                reply.body.len()
            );
        }
        // A heartbeat with a 256 KiB unknown field name: 400, bounded.
        let beat = format!("{{\"{big}\": 1}}");
        let request = http::Request::post(format!("{}/v1/heartbeat", fleet.url))
            .body(Body::from(beat))
            .unwrap();
        let response = fleet.client.request(request).await.unwrap();
        assert_eq!(response.status(), StatusCode::BAD_REQUEST);
        let body = axum::body::to_bytes(Body::new(response.into_body()), 1 << 24)
            .await
            .unwrap();
        assert!(
            body.len() <= routex::router::MAX_MESSAGE_BYTES,
            "{}",
            body.len()
        );
    });
}
