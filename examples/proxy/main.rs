//! A stargate-style proxy built on routex: an axum front end that routes
//! `POST /v1/completions` with the configuration of `examples/lb-config.json`,
//! and three fake backends on 127.0.0.1 that push heartbeats.
//!
//! ```text
//! cargo run -p routex --example proxy --features tokio,http,metrics -- [--listen ADDR] [--config PATH] [--demo]
//! ```
//!
//! Without `--demo` it serves until Ctrl-C, reloading `--config` on SIGHUP
//! (a configuration with errors is refused and the old one stays); try
//! `curl -si -XPOST localhost:8080/v1/completions -H 'x-request-id: 1'
//! -H 'x-model: llama-3-70b' -H 'x-input-tokens: 100' -H 'x-cache-affinity-key: k'`.
//! With `--demo` it sends a few requests itself, prints where they went,
//! and exits. `tests/proxy/routing.rs` runs the same modules end to end.

// The fake backend's test controls (hold, fail, counters) serve tests/proxy/routing.rs.
#[allow(dead_code)]
mod backend;
mod client;
mod front;
// `len` serves tests/proxy/routing.rs.
#[allow(dead_code)]
mod gateway;
mod heartbeat;

use backend::{Backend, BackendConfig};
use front::Proxy;
use std::net::SocketAddr;
use std::time::Duration;

const MODEL: &str = "llama-3-70b";

struct Args {
    listen: SocketAddr,
    config: String,
    demo: bool,
}

fn args() -> Result<Args, String> {
    let mut args = Args {
        listen: SocketAddr::from(([127, 0, 0, 1], 8080)),
        config: concat!(env!("CARGO_MANIFEST_DIR"), "/examples/lb-config.json").to_owned(),
        demo: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--listen" => {
                let value = it.next().ok_or("--listen needs an address")?;
                args.listen = value
                    .parse()
                    .map_err(|e| format!("--listen {value}: {e}"))?;
            }
            "--config" => args.config = it.next().ok_or("--config needs a path")?,
            "--demo" => args.demo = true,
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(args)
}

#[tokio::main]
async fn main() -> Result<(), String> {
    let args = args()?;
    let (table, warnings) =
        routex::config::load_table_path(&args.config).map_err(|e| e.to_string())?;
    for line in warnings.to_string().lines() {
        eprintln!("warning: {line}");
    }
    // Reports expire after 3 missed heartbeats (250 ms each, below). The
    // fake engines answer in 50 ms, well within one heartbeat: a request
    // frees its slot when its answer is delivered, not at the next report.
    let options = front::ProxyOptions {
        health: routex::router::HealthOptions::for_heartbeat(Duration::from_millis(250)),
        completion: front::Completion::Complete,
        sessions: None,
        router: routex::router::RouterOptions::default(),
    };
    let (proxy, addr) = Proxy::spawn(table, args.listen, options).await?;
    // `kill -HUP <pid>` reloads the configuration file.
    proxy
        .reload_on_sighup(args.config.clone())
        .map_err(|e| e.to_string())?;
    let proxy_url = format!("http://{addr}");
    let mut backends = Vec::new();
    for cluster in ["us-east-a", "us-east-b", "us-west-a"] {
        let config = BackendConfig {
            cluster: cluster.to_owned(),
            backend: format!("{cluster}-0"),
            models: vec![MODEL.to_owned()],
            slots: 8,
            input_tps: 8000.0,
            kv_capacity_tokens: 1_000_000,
            service_time: Duration::from_millis(50),
            heartbeat_every: Some(Duration::from_millis(250)),
            register_rates: true,
            cold_start: true,
        };
        backends.push(Backend::spawn(config, &proxy_url).await?);
    }
    println!("proxy on {proxy_url}, {} backends", backends.len());
    if args.demo {
        demo(&proxy_url).await
    } else {
        tokio::signal::ctrl_c().await.map_err(|e| e.to_string())
    }
}

/// A few requests through the proxy: three affinity keys twice each, a
/// malformed `x-routing-method`, a missing `x-input-tokens`. Fails (so CI
/// notices) when an answer is not the expected one or a key moves.
async fn demo(proxy_url: &str) -> Result<(), String> {
    let client = client::new();
    let url = format!("{proxy_url}/v1/completions");
    let mut cases: Vec<(Vec<(&str, &str)>, u16)> = Vec::new();
    for key in ["conversation-1", "conversation-2", "conversation-3"] {
        for _ in 0..2 {
            cases.push((
                vec![("x-input-tokens", "800"), ("x-cache-affinity-key", key)],
                200,
            ));
        }
    }
    cases.push((
        vec![
            ("x-input-tokens", "800"),
            ("x-routing-method", "pulsar;seed=a,b"),
        ],
        400,
    ));
    cases.push((vec![], 400));
    let mut homes: std::collections::HashMap<String, String> = Default::default();
    for (i, (extra, expected)) in cases.iter().enumerate() {
        let mut request = http::Request::post(&url)
            .header("x-request-id", format!("demo-{i}"))
            .header("x-model", MODEL);
        for (name, value) in extra {
            request = request.header(*name, *value);
        }
        let request = request
            .body(axum::body::Body::empty())
            .map_err(|e| e.to_string())?;
        let response = client.request(request).await.map_err(|e| e.to_string())?;
        let status = response.status();
        let shown = |name: &str| {
            response
                .headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("-")
                .to_owned()
        };
        let (cluster, depth) = (
            shown(front::CLUSTER_HEADER),
            shown(front::RANK_DEPTH_HEADER),
        );
        let code = shown(routex::router::ERROR_CODE_HEADER);
        let body = axum::body::to_bytes(axum::body::Body::new(response.into_body()), 1 << 20)
            .await
            .map_err(|e| e.to_string())?;
        println!(
            "{extra:?} -> {status} cluster={cluster} rank_depth={depth} code={code} {}",
            String::from_utf8_lossy(&body)
        );
        if status.as_u16() != *expected {
            return Err(format!("expected {expected}, got {status}"));
        }
        if let Some((_, key)) = extra.iter().find(|(n, _)| *n == "x-cache-affinity-key") {
            let home = homes
                .entry((*key).to_owned())
                .or_insert_with(|| cluster.clone());
            if *home != cluster {
                return Err(format!("{key} moved from {home} to {cluster}"));
            }
        }
    }
    Ok(())
}
