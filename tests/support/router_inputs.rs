//! The router benchmark's workload (benches/router.rs), shared with the
//! instruction-count loop (examples/router_loop.rs) so both measure the
//! same thing: 20 clusters, pulsar-wait-and-widen, 64 affinity keys.

#![allow(dead_code)] // each user takes what it needs

use routex::balancer::{ClusterSnapshot, Request};
use routex::router::{BackendStats, CandidateView, RouteRequest};
use std::time::Duration;

pub const PWW: &str = "pulsar-wait-and-widen;seed=v1;cache_affinity_wait_ms=300;max_queue_time_floor_ms=500;max_queue_time_ceil_ms=2000";

/// Affinity keys cycled through by the route cases.
pub const AFFINITY_KEYS: usize = 64;

pub fn clusters() -> Vec<ClusterSnapshot> {
    (0..20)
        .map(|i| ClusterSnapshot {
            id: format!("cluster-{i:02}"),
            rtt_ms: 5.0 + i as f64,
            last_mean_input_tps: 6000.0 + 100.0 * i as f64,
            max_input_tps: Some(8000.0 + 50.0 * i as f64),
            queue_size: i % 3,
            queued_input_size: 2000 * (i % 4),
            num_running_queries: 20 + i % 8,
            max_engine_concurrency: 25,
            queue_time_estimate_ms_by_priority: Vec::new(),
            kv_cache_capacity_tokens: 400_000,
            kv_cache_used_tokens: 1000,
            kv_cache_free_tokens: 399_000,
            total_query_input_size: 0,
        })
        .collect()
}

pub fn affinity_keys(prefix: &str) -> Vec<String> {
    (0..AFFINITY_KEYS)
        .map(|i| format!("{prefix}-{i}"))
        .collect()
}

/// A request of routing key `tenant` with affinity key `key`.
pub fn request<'a>(tenant: &'a str, key: &'a str) -> RouteRequest<'a> {
    RouteRequest {
        request: Request {
            model: "llama",
            routing_key: Some(tenant),
            cache_affinity_key: Some(key),
            input_tokens: Some(4000),
            elapsed: Duration::from_millis(50),
            ..Request::default()
        },
        routing_method: Some(PWW.as_bytes()),
    }
}

/// A route table whose pulsar-wait-and-widen (the base of [`PWW`]) turns
/// `last_cluster_affinity` on (docs/stargate.md 3.10).
#[allow(dead_code)]
pub fn sessions_table() -> routex::ir::RouteTable {
    let json = r#"{"default": "power-of-n", "request_algorithms": {
        "pulsar-wait-and-widen": {"algorithm": "pulsar-wait-and-widen", "last_cluster_affinity": true}}}"#;
    let (table, report) = routex::config::check_lb_config("sessions.json", json);
    assert!(!report.has_errors(), "{report:?}");
    table.expect("the sessions table")
}

/// `requests`, each with the session hint `hint(i)` (its index).
fn with_hints<'a>(
    requests: &[RouteRequest<'a>],
    hint: impl Fn(usize) -> Option<&'a str>,
) -> Vec<RouteRequest<'a>> {
    requests
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let mut r = r.clone();
            r.request.last_cluster_id = hint(i);
            r
        })
        .collect()
}

/// `requests` with session hints, every one naming a candidate (to a
/// cluster spread over `clusters`): returning sessions only.
#[allow(dead_code)]
pub fn returning_requests<'a>(
    requests: &[RouteRequest<'a>],
    clusters: &'a [ClusterSnapshot],
) -> Vec<RouteRequest<'a>> {
    with_hints(requests, |i| {
        Some(clusters[(i * 7) % clusters.len()].id.as_str())
    })
}

/// `requests` with session hints: a third returning (to a cluster spread
/// over `clusters`), a third stale, a third new.
#[allow(dead_code)]
pub fn session_requests<'a>(
    requests: &[RouteRequest<'a>],
    clusters: &'a [ClusterSnapshot],
) -> Vec<RouteRequest<'a>> {
    with_hints(requests, |i| match i % 3 {
        0 => Some(clusters[(i * 7) % clusters.len()].id.as_str()),
        1 => Some("gone"),
        _ => None,
    })
}

/// The stats report one backend would send for the cluster `c` describes,
/// with `estimates` as its queue-time estimates by priority.
pub fn report_of(c: &ClusterSnapshot, estimates: Vec<(u32, u64)>) -> BackendStats {
    BackendStats {
        last_mean_input_tps: c.last_mean_input_tps,
        max_input_tps: c.max_input_tps,
        queue_size: c.queue_size,
        queued_input_size: c.queued_input_size,
        num_running_queries: c.num_running_queries,
        max_engine_concurrency: c.max_engine_concurrency,
        queue_time_estimate_ms_by_priority: estimates,
        kv_cache_capacity_tokens: c.kv_cache_capacity_tokens,
        kv_cache_used_tokens: c.kv_cache_used_tokens,
        kv_cache_free_tokens: c.kv_cache_free_tokens,
        ..BackendStats::default()
    }
}

/// The clusters of `clusters()` as a candidate view (one backend each)
/// with `pending` reservations on every fourth cluster, and their reports.
pub fn view(pending: u64) -> (CandidateView, Vec<BackendStats>) {
    let mut view = CandidateView::new();
    let reports: Vec<BackendStats> = clusters()
        .iter()
        .map(|c| report_of(c, vec![(0, 40), (2, 120)]))
        .collect();
    for (i, c) in clusters().iter().enumerate() {
        view.add_backend(&c.id, "backend-0");
        view.set_rtt(&c.id, "backend-0", c.rtt_ms).expect("valid");
        view.report_at(i, 0, &reports[i]).expect("valid");
        if i % 4 == 0 {
            for k in 0..pending {
                view.reserve(i, 0, (k % 3) as u32, 1000 + k);
            }
        }
    }
    (view, reports)
}

/// The requests that `router` (flag off) sends to their primary cluster at
/// once, twice: as they are, and as returning sessions whose last cluster
/// is that primary. Under a table with `last_cluster_affinity` on, the
/// second set takes the same decision path as the first does with the flag
/// off (the promoted cluster is already rank 1), so the difference between
/// the two is the classification and the reorder alone.
#[allow(dead_code)]
pub fn primary_requests<'a>(
    router: &routex::router::Router,
    requests: &[RouteRequest<'a>],
    clusters: &'a [ClusterSnapshot],
) -> (Vec<RouteRequest<'a>>, Vec<RouteRequest<'a>>) {
    use rand::SeedableRng;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    let mut scratch = routex::balancer::Scratch::default();
    let mut plain = Vec::new();
    let mut returning = Vec::new();
    for r in requests {
        if let Ok(routex::balancer::Decision::Selected(choice)) =
            router.route(r, clusters, &mut rng, &mut scratch)
        {
            if choice.rank_depth == 1 {
                plain.push(r.clone());
                let mut back = r.clone();
                back.request.last_cluster_id = Some(clusters[choice.index].id.as_str());
                returning.push(back);
            }
        }
    }
    assert!(
        !plain.is_empty(),
        "some request goes to its primary at once"
    );
    (plain, returning)
}
