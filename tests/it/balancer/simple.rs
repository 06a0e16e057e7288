//! round-robin (3.3), random (3.4) and power-of-n (3.5).

use super::{check, clusters, decide, decide_seeded, depth, policy, power_of_n, request, selected};
use routex::balancer::{Balancer, Decision, Request};
use routex::ir::{Comparator, Settings};

fn rr() -> Balancer {
    Balancer::new(&policy(Settings::RoundRobin {}))
}

fn sequence(b: &Balancer, r: &Request<'_>, n: usize, times: usize) -> Vec<usize> {
    let cs = clusters(n);
    (0..times).map(|_| selected(decide(b, r, &cs))).collect()
}

#[test]
fn round_robin_cycles_in_candidate_order() {
    let b = rr();
    assert_eq!(sequence(&b, &request("m"), 3, 7), vec![0, 1, 2, 0, 1, 2, 0]);
    assert_eq!(depth(decide(&b, &request("m"), &clusters(3))), 1);
}

#[test]
fn matching_round_robin_override_reuses_configured_target_sequence() {
    // One instance, one counter: a second caller continues the sequence.
    let b = rr();
    assert_eq!(sequence(&b, &request("m"), 4, 2), vec![0, 1]);
    assert_eq!(sequence(&b, &request("m"), 4, 2), vec![2, 3]);
    // A fresh instance (new definition or generation) starts at 0.
    assert_eq!(sequence(&rr(), &request("m"), 4, 1), vec![0]);
}

#[test]
fn round_robin_steps_over_one_or_two_exclusions() {
    let b = rr();
    let ex = ["c1"];
    let r = Request {
        excluded: &ex,
        ..request("m")
    };
    // counter mod (4 - 1) over positions 0, 2, 3.
    assert_eq!(sequence(&b, &r, 4, 4), vec![0, 2, 3, 0]);
    let ex2 = ["c0", "c3"];
    let r2 = Request {
        excluded: &ex2,
        ..request("m")
    };
    // Counter continues at 4: 4 mod 2 = 0 -> c1, then c2.
    assert_eq!(sequence(&b, &r2, 4, 2), vec![1, 2]);
}

#[test]
fn round_robin_counts_eligible_candidates_otherwise() {
    let b = rr();
    // Three exclusions, one of them absent: 2 eligible (c1, c4).
    let ex = ["c0", "c2", "zz", "c3"];
    let r = Request {
        excluded: &ex,
        ..request("m")
    };
    assert_eq!(sequence(&b, &r, 5, 3), vec![1, 4, 1]);
    let all = ["c0", "c1"];
    let none = Request {
        excluded: &all,
        ..request("m")
    };
    assert_eq!(decide(&b, &none, &clusters(2)), Decision::Unavailable);
    assert_eq!(decide(&b, &request("m"), &[]), Decision::Unavailable);
}

#[test]
fn random_is_uniform_over_non_excluded_candidates() {
    let b = Balancer::new(&policy(Settings::Random {}));
    let cs = clusters(4);
    let ex = ["c2"];
    let r = Request {
        excluded: &ex,
        ..request("m")
    };
    let mut counts = [0usize; 4];
    for seed in 0..3000 {
        let d = decide_seeded(&b, &r, &cs, seed);
        assert_eq!(depth(d), 1);
        counts[selected(d)] += 1;
    }
    assert_eq!(counts[2], 0);
    for i in [0, 1, 3] {
        assert!(
            (counts[i] as f64 / 3000.0 - 1.0 / 3.0).abs() < 0.04,
            "{counts:?}"
        );
    }
    // Many exclusions (> N/4): the reservoir path.
    let ex = ["c0", "c1", "c3"];
    let r = Request {
        excluded: &ex,
        ..request("m")
    };
    assert_eq!(selected(decide(&b, &r, &cs)), 2);
    let all = ["c0", "c1", "c2", "c3"];
    let r = Request {
        excluded: &all,
        ..request("m")
    };
    assert_eq!(decide(&b, &r, &cs), Decision::Unavailable);
    assert_eq!(decide(&b, &request("m"), &[]), Decision::Unavailable);
}

#[test]
fn power_of_n_takes_the_best_of_the_sample() {
    let mut cs = clusters(5);
    cs[3].rtt_ms = 1.0;
    // Sampling all: always the best TTFT.
    let all = policy(Settings::PowerOfN(power_of_n(64, Comparator::Ttft)));
    for seed in 0..20 {
        let d = decide_seeded(&Balancer::new(&all), &request("m"), &cs, seed);
        assert_eq!((selected(d), depth(d)), (3, 1));
    }
    // One sample: uniform, every cluster shows up.
    let one = Balancer::new(&policy(Settings::PowerOfN(power_of_n(1, Comparator::Ttft))));
    let mut seen = [false; 5];
    for seed in 0..200 {
        seen[selected(decide_seeded(&one, &request("m"), &cs, seed))] = true;
    }
    assert_eq!(seen, [true; 5]);
    // Two samples: the worst cluster can never win.
    cs[0].rtt_ms = 1000.0;
    let two = Balancer::new(&policy(Settings::PowerOfN(power_of_n(2, Comparator::Ttft))));
    for seed in 0..200 {
        assert_ne!(selected(decide_seeded(&two, &request("m"), &cs, seed)), 0);
    }
}

#[test]
fn power_of_n_ignores_capacity_and_respects_exclusions() {
    let mut cs = clusters(3);
    for c in &mut cs {
        c.num_running_queries = 100; // full everywhere
    }
    cs[1].queue_size = 0;
    cs[0].queue_size = 4;
    cs[2].queue_size = 9;
    let p = policy(Settings::PowerOfN(power_of_n(
        3,
        Comparator::NumRequestsQueued,
    )));
    assert_eq!(selected(check(&p, &request("m"), &cs)), 1);
    let ex = ["c1"];
    let r = Request {
        excluded: &ex,
        ..request("m")
    };
    assert_eq!(selected(check(&p, &r, &cs)), 0);
    let all = ["c0", "c1", "c2"];
    let r = Request {
        excluded: &all,
        ..request("m")
    };
    assert_eq!(check(&p, &r, &cs), Decision::Unavailable);
}

#[test]
fn power_of_n_breaks_ties_randomly() {
    let cs = clusters(2);
    let p = Balancer::new(&policy(Settings::PowerOfN(power_of_n(2, Comparator::Ttft))));
    let mut counts = [0usize; 2];
    for seed in 0..400 {
        counts[selected(decide_seeded(&p, &request("m"), &cs, seed))] += 1;
    }
    assert!(counts[0] > 140 && counts[1] > 140, "{counts:?}");
}

#[test]
fn power_of_n_uses_every_comparator() {
    let mut cs = clusters(2);
    cs[0].num_running_queries = 3; // utilisation 0.75
    cs[1].queued_input_size = 5000; // queue 0 (free slot) but 5 s of work
    let pick = |c, cs: &[routex::balancer::ClusterSnapshot]| {
        selected(check(
            &policy(Settings::PowerOfN(power_of_n(2, c))),
            &request("m"),
            cs,
        ))
    };
    assert_eq!(pick(Comparator::Utilization, &cs), 1);
    assert_eq!(pick(Comparator::InputWorkSeconds, &cs), 0);
    cs[1].queue_size = 1;
    assert_eq!(pick(Comparator::NumRequestsQueued, &cs), 0);
    cs[0].rtt_ms = 50.0;
    assert_eq!(pick(Comparator::Ttft, &cs), 1);
    cs[1].num_running_queries = 4; // no free slot: 5000 tokens at 1000/s
    assert_eq!(pick(Comparator::QueueTime, &cs), 0);
}

#[test]
fn balancer_is_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Balancer>();
}
