//! Tests for the balancer layer: policies are built directly from the IR
//! types, so these tests do not depend on the compiler.

#[cfg(feature = "testing")]
mod docs;
#[cfg(feature = "testing")]
mod estimate;
#[cfg(feature = "testing")]
mod hash;
mod lasting;
mod legacy;
mod named;
#[cfg(feature = "testing")]
mod props;
mod pulsar;
mod pww;
mod review;
mod review_model;
mod sessions;
mod simple;
mod time;
mod ww;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use routex::balancer::{Balancer, ClusterSnapshot, Decision, Request, Scratch};
use routex::ir::{Policy, PulsarSettings, Settings};
use std::time::Duration;

/// One decision of a fresh instance with a fixed random seed.
pub fn check(policy: &Policy, request: &Request<'_>, clusters: &[ClusterSnapshot]) -> Decision {
    decide(&Balancer::new(policy), request, clusters)
}

/// One decision of an existing instance (its state carries over).
pub fn decide(b: &Balancer, request: &Request<'_>, clusters: &[ClusterSnapshot]) -> Decision {
    decide_seeded(b, request, clusters, 7)
}

pub fn decide_seeded(
    b: &Balancer,
    request: &Request<'_>,
    clusters: &[ClusterSnapshot],
    seed: u64,
) -> Decision {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    b.decide(request, clusters, &mut rng, &mut Scratch::default())
}

pub use crate::support::{bucket, policy, power_of_n, pulsar, pww, ww};

/// A healthy idle cluster: rtt 10 ms, 1000 tokens/s, 4 engine slots all
/// free, KV room for 100 000 tokens. With 100 input tokens its TTFT is 110.
pub fn cluster(id: &str) -> ClusterSnapshot {
    ClusterSnapshot {
        rtt_ms: 10.0,
        last_mean_input_tps: 1000.0,
        max_input_tps: Some(1000.0),
        max_engine_concurrency: 4,
        kv_cache_capacity_tokens: 100_000,
        kv_cache_free_tokens: 100_000,
        total_query_input_size: 0,
        ..ClusterSnapshot::new(id)
    }
}

/// `n` idle clusters c0..c(n-1).
pub fn clusters(n: usize) -> Vec<ClusterSnapshot> {
    (0..n).map(|i| cluster(&format!("c{i}"))).collect()
}

/// Every engine slot busy; queue estimate 0 (nothing queued, no map).
pub fn make_full(c: &mut ClusterSnapshot) {
    c.num_running_queries = c.max_engine_concurrency;
}

pub fn request(model: &str) -> Request<'_> {
    Request {
        model,
        input_tokens: Some(100),
        ..Request::default()
    }
}

pub fn ms(ms: u64) -> Duration {
    Duration::from_millis(ms)
}

/// The selected position, or a panic naming the actual decision.
pub fn selected(d: Decision) -> usize {
    match d {
        Decision::Selected(c) => c.index,
        other => panic!("expected a selection, got {other:?}"),
    }
}

pub fn depth(d: Decision) -> u32 {
    match d {
        Decision::Selected(c) => c.rank_depth,
        other => panic!("expected a selection, got {other:?}"),
    }
}

/// The Pulsar ranking of `clusters` for `request` as positions, read
/// black-box: each pulsar decision excludes the previous winners.
pub fn ranking(seed: &str, request: &Request<'_>, clusters: &[ClusterSnapshot]) -> Vec<usize> {
    let b = Balancer::new(&policy(Settings::Pulsar(PulsarSettings {
        seed: seed.to_owned(),
        ..pulsar()
    })));
    let mut order: Vec<usize> = Vec::new();
    loop {
        let ids: Vec<&str> = order.iter().map(|&i| clusters[i].id.as_str()).collect();
        let r = Request {
            excluded: &ids,
            ..request.clone()
        };
        match decide(&b, &r, clusters) {
            Decision::Selected(c) => {
                assert_eq!(c.rank_depth as usize, order.len() + 1);
                order.push(c.index);
            }
            _ => return order,
        }
    }
}

/// `n` idle clusters reordered so that position i holds rank i + 1 for
/// `request` (equal weights, seed "").
pub fn ranked_clusters(n: usize, request: &Request<'_>) -> Vec<ClusterSnapshot> {
    let all = clusters(n);
    ranking("", request, &all)
        .into_iter()
        .map(|i| all[i].clone())
        .collect()
}

/// The PWW timeline of docs/algorithms.md as a decision trace, every 50 ms:
/// k = 1, X = 100, S = 200, eight ranked clusters, only rank 8 free.
#[test]
fn pww_timeline_trace() {
    let mut s = pww();
    s.cache_affinity_wait_ms = 100;
    s.band_widen_interval_ms = 200;
    s.bucket.max_queue_time_floor_ms = Some(10_000);
    s.bucket.max_queue_time_ceil_ms = Some(10_000);
    let b = Balancer::new(&policy(Settings::PulsarWaitAndWiden(s)));
    let mut cs = ranked_clusters(8, &request("m"));
    for c in &mut cs[..7] {
        make_full(c);
    }
    let mut trace = String::new();
    for t in (0..=600).step_by(50) {
        let r = Request {
            elapsed: ms(t),
            ..request("m")
        };
        let line = match decide(&b, &r, &cs) {
            Decision::Selected(c) => format!("selected rank {}", c.rank_depth),
            Decision::Wait(d) => format!("wait {} ms", d.as_millis()),
            Decision::Unavailable => "unavailable".to_owned(),
        };
        trace.push_str(&format!("t = {t:>3} ms: {line}\n"));
    }
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("../../snapshots/balancer");
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| insta::assert_snapshot!("pww_timeline", trace));
}
