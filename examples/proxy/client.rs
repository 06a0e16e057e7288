//! The HTTP client of the proxy and the backends: hyper-util's pooled
//! client over plain HTTP/1.1. axum already builds on hyper and hyper-util,
//! so this adds no other stack (reqwest would bring its own layers for
//! TLS, redirects and decompression that a loopback proxy does not use).

use axum::body::{Body, Bytes};
use http::{header, Method, Request, StatusCode};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;

pub type HttpClient = Client<HttpConnector, Body>;

/// A client with its own connection pool; no limit on connections per
/// host (a burst of N requests opens N connections).
pub fn new() -> HttpClient {
    Client::builder(TokioExecutor::new()).build_http()
}

/// POSTs a JSON body and collects the answer (bodies here are small).
pub async fn post_json(
    client: &HttpClient,
    url: &str,
    json: String,
) -> Result<(StatusCode, Bytes), String> {
    let request = Request::builder()
        .method(Method::POST)
        .uri(url)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(json))
        .map_err(|e| e.to_string())?;
    let response = client.request(request).await.map_err(|e| e.to_string())?;
    let status = response.status();
    let body = axum::body::to_bytes(Body::new(response.into_body()), 1 << 20)
        .await
        .map_err(|e| e.to_string())?;
    Ok((status, body))
}
