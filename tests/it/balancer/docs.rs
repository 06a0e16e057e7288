//! The worked examples of docs/algorithms.md, one test each.

use super::{
    check, clusters, decide, decide_seeded, depth, make_full, ms, policy, power_of_n, pww,
    ranked_clusters, request, selected, ww,
};
use routex::balancer::estimate::{queue_limit_ms, queue_ms, ttft, IgnoreFlags};
use routex::balancer::{hash, pulsar_score, Balancer, ClusterSnapshot, Decision, Request};
use routex::ir::{
    Comparator, PulsarWaitAndWidenSettings, QueueSlo, Settings, WaitAndWidenSettings,
};

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn doc_shared_estimates() {
    let c = ClusterSnapshot {
        rtt_ms: 7.0,
        last_mean_input_tps: 100.0,
        queued_input_size: 999,
        queue_time_estimate_ms_by_priority: vec![(4, 25)],
        ..ClusterSnapshot::new("w")
    };
    let none = IgnoreFlags::default();
    let iq = IgnoreFlags {
        queue_time: true,
        ..none
    };
    let ip = IgnoreFlags {
        input_processing_time: true,
        ..none
    };
    assert_eq!(queue_ms(&c, 4), 25.0);
    assert!(close(ttft(&c, 200, 4, 1.0, none).comparator_ms, 2032.0));
    assert!(close(ttft(&c, 200, 4, 0.1, none).comparator_ms, 232.0));
    assert!(close(ttft(&c, 200, 4, 1.0, iq).bucket_ms, 2007.0));
    assert!(close(ttft(&c, 200, 4, 1.0, ip).bucket_ms, 32.0));
    let engine = |running| ClusterSnapshot {
        rtt_ms: 5.0,
        last_mean_input_tps: 8000.0,
        queued_input_size: 80_000,
        num_running_queries: running,
        max_engine_concurrency: 25,
        ..ClusterSnapshot::new("e")
    };
    assert_eq!(queue_ms(&engine(24), 0), 0.0);
    assert!(close(
        ttft(&engine(24), 8000, 0, 1.0, none).bucket_ms,
        1005.0
    ));
    assert_eq!(queue_ms(&engine(25), 0), 10_000.0);
    let slo = QueueSlo {
        floor_ms: 100,
        ceil_ms: 300,
    };
    assert!(close(queue_limit_ms(slo, Some(1000), ms(500)), 200.0));
}

#[test]
fn doc_round_robin() {
    let b = Balancer::new(&policy(Settings::RoundRobin {}));
    let three = clusters(3);
    let picks: Vec<usize> = (0..4)
        .map(|_| selected(decide(&b, &request("m"), &three)))
        .collect();
    assert_eq!(picks, vec![0, 1, 2, 0]);
    let b = Balancer::new(&policy(Settings::RoundRobin {}));
    let four = clusters(4);
    let ex = ["c1"];
    let r = Request {
        excluded: &ex,
        ..request("m")
    };
    let picks: Vec<usize> = (0..4).map(|_| selected(decide(&b, &r, &four))).collect();
    assert_eq!(picks, vec![0, 2, 3, 0]);
}

#[test]
fn doc_random() {
    let b = Balancer::new(&policy(Settings::Random {}));
    let cs = clusters(4);
    let ex = ["c2"];
    let r = Request {
        excluded: &ex,
        ..request("m")
    };
    let mut counts = [0u32; 4];
    for seed in 0..1500 {
        counts[selected(decide_seeded(&b, &r, &cs, seed))] += 1;
    }
    assert_eq!(counts[2], 0);
    assert!(counts
        .iter()
        .enumerate()
        .all(|(i, &n)| i == 2 || (400..600).contains(&n)));
}

#[test]
fn doc_power_of_n() {
    let mut cs = clusters(3);
    cs[1].rtt_ms = 50.0; // TTFT 150
    cs[2].rtt_ms = 1000.0; // TTFT 1100
    let all = Balancer::new(&policy(Settings::PowerOfN(power_of_n(3, Comparator::Ttft))));
    let two = Balancer::new(&policy(Settings::PowerOfN(power_of_n(2, Comparator::Ttft))));
    for seed in 0..100 {
        assert_eq!(selected(decide_seeded(&all, &request("m"), &cs, seed)), 0);
        assert_ne!(selected(decide_seeded(&two, &request("m"), &cs, seed)), 2);
    }
}

#[test]
fn doc_wait_and_widen_bucket() {
    let mut cs = clusters(2);
    make_full(&mut cs[0]);
    cs[0].rtt_ms = 105.0;
    cs[1].rtt_ms = 705.0;
    let p = policy(Settings::WaitAndWiden(ww()));
    assert_eq!(check(&p, &request("m"), &cs), Decision::Wait(ms(150)));
    let later = Request {
        elapsed: ms(150),
        ..request("m")
    };
    assert_eq!(selected(check(&p, &later, &cs)), 1);
}

#[test]
fn doc_wait_and_widen_affinity() {
    let s = WaitAndWidenSettings {
        cache_affinity_backend_selection_count: Some(1),
        cache_affinity_wait_ms: 200,
        ..ww()
    };
    let p = policy(Settings::WaitAndWiden(s));
    let at = |t| Request {
        elapsed: ms(t),
        cache_affinity_key: Some("prefix-1"),
        ..request("m")
    };
    // The primary is whoever the group phase picks while everyone is idle.
    let mut cs = clusters(3);
    let primary = selected(check(&p, &at(0), &cs));
    let rest: Vec<usize> = (0..3).filter(|&i| i != primary).collect();
    make_full(&mut cs[primary]);
    cs[rest[0]].rtt_ms = 210.0;
    cs[rest[1]].rtt_ms = 410.0;
    assert_eq!(check(&p, &at(0), &cs), Decision::Wait(ms(200)));
    assert_eq!(check(&p, &at(199), &cs), Decision::Wait(ms(1)));
    assert_eq!(check(&p, &at(200), &cs), Decision::Wait(ms(50)));
    let d = check(&p, &at(250), &cs);
    assert_eq!((selected(d), depth(d)), (rest[0], 2));
    make_full(&mut cs[rest[0]]);
    assert_eq!(check(&p, &at(250), &cs), Decision::Wait(ms(50)));
    assert_eq!(selected(check(&p, &at(300), &cs)), rest[1]);
}

#[test]
fn doc_pulsar_hash() {
    let mut buf = Vec::new();
    let h = hash::pulsar_hash(
        &mut buf,
        "seed-1",
        Some("rk-1"),
        "model-a",
        Some("prefix-123"),
        "inst-a",
    );
    assert_eq!(buf.len(), 130 - "inst-a".len() - "cluster_id".len() - 9);
    assert_eq!(h, 0x19443c44ec9f8abf);
    assert!((hash::exponential(h) - 2.315696).abs() < 1e-6);
    assert!(((-hash::exponential(h)).exp() - 0.0986974).abs() < 1e-7);
    assert!((pulsar_score(1000.0, h).unwrap_or(0.0) - 431.84).abs() < 0.01);
}

fn pww_slo(x: u64, interval: u64) -> PulsarWaitAndWidenSettings {
    let mut s = PulsarWaitAndWidenSettings {
        cache_affinity_wait_ms: x,
        band_widen_interval_ms: interval,
        ..pww()
    };
    s.bucket.max_queue_time_floor_ms = Some(10_000);
    s.bucket.max_queue_time_ceil_ms = Some(10_000);
    s
}

/// Eight ranked clusters, all full except the given rank.
fn only_rank_free(rank: usize) -> Vec<ClusterSnapshot> {
    let mut cs = ranked_clusters(8, &request("m"));
    for (i, c) in cs.iter_mut().enumerate() {
        if i + 1 != rank {
            make_full(c);
        }
    }
    cs
}

#[test]
fn doc_pww_timeline() {
    let p = policy(Settings::PulsarWaitAndWiden(pww_slo(100, 200)));
    let cs = only_rank_free(8);
    let at = |t| Request {
        elapsed: ms(t),
        ..request("m")
    };
    assert_eq!(check(&p, &at(0), &cs), Decision::Wait(ms(100)));
    assert_eq!(check(&p, &at(100), &cs), Decision::Wait(ms(200)));
    assert_eq!(check(&p, &at(350), &cs), Decision::Wait(ms(150)));
    assert_eq!(depth(check(&p, &at(500), &cs)), 8);
    let all_at_x = policy(Settings::PulsarWaitAndWiden(pww_slo(100, 0)));
    assert_eq!(depth(check(&all_at_x, &at(100), &cs)), 8);
}

#[test]
fn doc_legacy_band_walk() {
    let mut cs = only_rank_free(4);
    for c in &mut cs[3..] {
        c.rtt_ms = 505.0;
    }
    let at = |t| Request {
        elapsed: ms(t),
        ..request("m")
    };
    let walk = Balancer::legacy_band_walk(&pww_slo(0, 0), 0);
    assert_eq!(depth(decide(&walk, &at(0), &cs)), 4);
    let p = policy(Settings::PulsarWaitAndWiden(pww_slo(0, 0)));
    assert_eq!(
        check(&p, &at(0), &cs),
        Decision::Wait(std::time::Duration::from_nanos(123_750_000))
    );
    let waiting = Balancer::legacy_band_walk(&pww_slo(0, 0), 300);
    assert_eq!(decide(&waiting, &at(100), &cs), Decision::Wait(ms(200)));
    assert_eq!(depth(decide(&waiting, &at(300), &cs)), 4);
}

/// Keeps docs/algorithms.md and this file in step: every bracketed test
/// name in the document is one of the tests above, and each is cited.
#[test]
fn every_worked_example_names_its_test() {
    const TESTS: [&str; 9] = [
        "doc_shared_estimates",
        "doc_round_robin",
        "doc_random",
        "doc_power_of_n",
        "doc_wait_and_widen_bucket",
        "doc_wait_and_widen_affinity",
        "doc_pulsar_hash",
        "doc_pww_timeline",
        "doc_legacy_band_walk",
    ];
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/algorithms.md"))
        .expect("docs/algorithms.md is readable");
    let cited: Vec<&str> = text
        .split("[`")
        .skip(1)
        .filter_map(|rest| rest.split_once("`]").map(|(name, _)| name))
        .collect();
    let mut sorted_cited = cited.clone();
    sorted_cited.sort_unstable();
    let mut sorted_tests = TESTS.to_vec();
    sorted_tests.sort_unstable();
    assert_eq!(sorted_cited, sorted_tests);
}
