//! A12 policy tests through the core as the simulator drives it: a router
//! view (stats reports plus reservations) handed to a compiled policy.

use routex::balancer::{Balancer, Decision, Request, Scratch};
use routex::check::{compile_request_expression, permissive_table};
use routex::router::CandidateView;
use routex_sim::kernel::rng::{stream, Stream};
use routex_sim::world::pylon::{router_view, StatsReport};
use std::rc::Rc;
use std::time::Duration;

fn balancer(expr: &str) -> Balancer {
    let def = compile_request_expression(&permissive_table(), "m", expr).expect("compiles");
    Balancer::new(&def.policy)
}

fn free(weight: f64) -> Rc<StatsReport> {
    Rc::new(StatsReport {
        last_mean_tps: 175_000.0,
        max_input_tps: Some(weight),
        slots: 25,
        ..StatsReport::default()
    })
}

/// 25 running requests, all decoding: no free slot, queue estimate 0.
fn full() -> Rc<StatsReport> {
    Rc::new(StatsReport {
        output_phase: 25,
        ..(*free(175_000.0)).clone()
    })
}

fn ids(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("b{i}")).collect()
}

fn decide(
    b: &Balancer,
    view: &CandidateView,
    key: &str,
    elapsed_ms: f64,
    excluded: &[&str],
) -> Decision {
    let request = Request {
        model: "m",
        routing_key: Some("rk"),
        cache_affinity_key: Some(key),
        input_tokens: Some(6_661),
        priority: 0,
        request_slo_ms: Some(10_000),
        elapsed: Duration::from_secs_f64(elapsed_ms / 1_000.0),
        excluded,
        ..Request::default()
    };
    b.decide(
        &request,
        view.snapshots(),
        &mut stream(1, Stream::Lb(0)),
        &mut Scratch::default(),
    )
}

/// The Pulsar ranking of `key` over `n` equal backends, best first.
fn ranking(n: usize, key: &str) -> Vec<usize> {
    let ids = ids(n);
    let view = router_view(&ids, &vec![1.0; n], &vec![free(175_000.0); n]);
    let b = balancer(r#"pulsar(seed="routesim-v1")"#);
    let mut order: Vec<usize> = Vec::new();
    for depth in 1..=n {
        let excluded: Vec<&str> = order.iter().map(|&i| ids[i].as_str()).collect();
        match decide(&b, &view, key, 0.0, &excluded) {
            Decision::Selected(c) => {
                assert_eq!(c.rank_depth as usize, depth);
                order.push(c.index);
            }
            other => panic!("{other:?}"),
        }
    }
    order
}

/// Every backend full except the one at `rank` (1-based).
fn view_with_free_rank(order: &[usize], rank: usize) -> CandidateView {
    let n = order.len();
    let mut reports = vec![full(); n];
    reports[order[rank - 1]] = free(175_000.0);
    router_view(&ids(n), &vec![1.0; n], &reports)
}

fn selected_depth(d: Decision) -> Option<u32> {
    match d {
        Decision::Selected(c) => Some(c.rank_depth),
        _ => None,
    }
}

#[test]
fn band_schedule_opens_k_plus_2_6_14_at_x_x_plus_s_x_plus_2s() {
    let order = ranking(20, "k1");
    let pww = balancer(
        r#"pulsar-wait-and-widen(cache_affinity_wait_ms=100, band_widen_interval_ms=200, fallback_max_queued=0, max_queue_time_floor_ms=4000, max_queue_time_ceil_ms=4000, seed="routesim-v1")"#,
    );
    // (free rank, first elapsed ms at which it opens): X, X+S, X+2S, X+3S.
    for (rank, opens) in [(3, 100.0), (7, 300.0), (15, 500.0), (16, 700.0)] {
        let view = view_with_free_rank(&order, rank);
        let before = decide(&pww, &view, "k1", opens - 0.001, &[]);
        assert!(
            matches!(before, Decision::Wait(_)),
            "rank {rank}: {before:?}"
        );
        let at = decide(&pww, &view, "k1", opens, &[]);
        assert_eq!(selected_depth(at), Some(rank as u32), "rank {rank}");
    }
    // S = 0 opens every rank at X.
    let all = balancer(
        r#"pulsar-wait-and-widen(cache_affinity_wait_ms=100, band_widen_interval_ms=0, fallback_max_queued=0, max_queue_time_floor_ms=4000, max_queue_time_ceil_ms=4000, seed="routesim-v1")"#,
    );
    let view = view_with_free_rank(&order, 20);
    assert!(matches!(
        decide(&all, &view, "k1", 99.0, &[]),
        Decision::Wait(_)
    ));
    assert_eq!(
        selected_depth(decide(&all, &view, "k1", 100.0, &[])),
        Some(20)
    );
}

#[test]
fn bucket_unlock_time_is_gap_times_factor() {
    // Backend a: full but queue estimate 0, TTFT 1 + 38.06 ms. Backend b:
    // free, 100 ms further away: its bucket unlocks after 100 x 0.25 = 25 ms.
    let ids = ids(2);
    let view = router_view(&ids, &[1.0, 101.0], &[full(), free(175_000.0)]);
    let ww = balancer(
        "wait-and-widen(max_queued=0, max_queue_time_floor_ms=4000, max_queue_time_ceil_ms=4000)",
    );
    match decide(&ww, &view, "k1", 0.0, &[]) {
        Decision::Wait(d) => assert_eq!(d, Duration::from_millis(25)),
        other => panic!("{other:?}"),
    }
    match decide(&ww, &view, "k1", 10.0, &[]) {
        Decision::Wait(d) => assert_eq!(d, Duration::from_millis(15)),
        other => panic!("{other:?}"),
    }
    assert!(matches!(decide(&ww, &view, "k1", 25.0, &[]), Decision::Selected(c) if c.index == 1));
}

#[test]
fn pulsar_rank_one_frequency_tracks_weights() {
    let weights = [100_000.0, 200_000.0, 300_000.0, 400_000.0];
    let reports: Vec<_> = weights.iter().map(|&w| free(w)).collect();
    let view = router_view(&ids(4), &[1.0; 4], &reports);
    let b = balancer(r#"pulsar(seed="routesim-v1")"#);
    let mut counts = [0f64; 4];
    for k in 0..10_000 {
        if let Decision::Selected(c) = decide(&b, &view, &format!("k{k}"), 0.0, &[]) {
            counts[c.index] += 1.0;
        }
    }
    let total: f64 = weights.iter().sum();
    let chi2: f64 = counts
        .iter()
        .zip(&weights)
        .map(|(&o, &w)| {
            let e = 10_000.0 * w / total;
            (o - e).powi(2) / e
        })
        .sum();
    // 3 degrees of freedom: P(chi2 > 16.27) = 0.001.
    assert!(chi2 < 16.27, "{counts:?} chi2 {chi2}");
}

#[test]
fn constant_published_weights_keep_rankings_fixed() {
    let mut view = router_view(&ids(20), &[1.0; 20], &vec![free(175_000.0); 20]);
    let b = balancer(r#"pulsar(seed="routesim-v1")"#);
    let before: Vec<_> = (0..200)
        .map(|k| decide(&b, &view, &format!("k{k}"), 0.0, &[]))
        .collect();
    // A heartbeat changes the measured rate but not the published maximum.
    for i in 0..20 {
        let mut r = (*free(175_000.0)).clone();
        r.last_mean_tps = 1_000.0 * (i + 1) as f64;
        view.report_at(i, 0, &r.backend_stats()).unwrap();
    }
    let after: Vec<_> = (0..200)
        .map(|k| decide(&b, &view, &format!("k{k}"), 0.0, &[]))
        .collect();
    assert_eq!(before, after);
}

#[test]
fn ring_is_deterministic_and_removal_moves_only_the_removed_keys() {
    let ww = r#"wait-and-widen(cache_affinity_backend_selection_count=1, cache_affinity_virtual_nodes=150, max_queued=4, seed="routesim-v1")"#;
    let (b20, b19) = (balancer(ww), balancer(ww));
    let views = [20, 19].map(|n| router_view(&ids(n), &vec![1.0; n], &vec![free(175_000.0); n]));
    let primary = |b: &Balancer, view: &CandidateView, k: usize| match decide(
        b,
        view,
        &format!("k{k}"),
        0.0,
        &[],
    ) {
        Decision::Selected(c) => view.snapshots()[c.index].id.clone(),
        other => panic!("{other:?}"),
    };
    let mut moved = 0;
    for k in 0..200 {
        let with = primary(&b20, &views[0], k);
        assert_eq!(with, primary(&balancer(ww), &views[0], k), "deterministic");
        let without = primary(&b19, &views[1], k); // b19 removed
        if with == "b19" {
            moved += 1;
        } else {
            assert_eq!(with, without, "key k{k} moved");
        }
    }
    assert!(moved > 0 && moved < 30, "{moved}");
}
