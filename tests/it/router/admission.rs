//! Admission (docs/stargate.md 3.9) and the candidate check of the
//! routing loop (2.2, step 2).

use super::support::*;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use routex::balancer::{ClusterSnapshot, Request, Scratch};
use routex::ir::{Algorithm, Policy, RendezvousWeight, Settings};
use routex::router::{check_input_work, input_work, RejectionCode, RouteRequest};

fn loaded(id: &str, queued: u64, tps: f64) -> ClusterSnapshot {
    ClusterSnapshot {
        queued_input_size: queued,
        last_mean_input_tps: tps,
        max_input_tps: Some(tps),
        ..cluster(id)
    }
}

fn with_limit(algorithm: Algorithm, limit: f64) -> Policy {
    let mut policy = default_policy(algorithm);
    policy.admission.max_input_work_seconds = Some(limit);
    policy
}

fn tokens(n: u64) -> Request<'static> {
    Request {
        model: "m",
        input_tokens: Some(n),
        ..Request::default()
    }
}

fn code(
    policy: &Policy,
    request: &Request<'_>,
    clusters: &[ClusterSnapshot],
) -> Option<RejectionCode> {
    check_input_work(policy, request, clusters).err().map(|r| {
        assert_eq!(r.status, 503);
        r.code
    })
}

#[test]
fn input_work_example_is_three_seconds() {
    let clusters = [loaded("a", 300, 100.0), loaded("b", 120, 50.0)];
    for algorithm in Algorithm::ALL {
        let work = input_work(&default_policy(algorithm), &tokens(30), &clusters);
        assert_eq!(work.tokens, 450, "{algorithm}");
        assert_eq!(work.rate, 150.0);
        assert_eq!(work.seconds(), Some(3.0));
        assert_eq!(
            code(&with_limit(algorithm, 2.9), &tokens(30), &clusters),
            Some(RejectionCode::InputWorkLimitExceeded)
        );
        assert_eq!(
            code(&with_limit(algorithm, 3.1), &tokens(30), &clusters),
            None
        );
        // Exactly at the limit is admitted (only "over" rejects).
        assert_eq!(
            code(&with_limit(algorithm, 3.0), &tokens(30), &clusters),
            None
        );
    }
}

#[test]
fn no_limit_admits_everything() {
    let clusters = [loaded("a", u64::MAX, 0.0)];
    let policy = default_policy(Algorithm::Random);
    assert_eq!(code(&policy, &tokens(u64::MAX), &clusters), None);
}

#[test]
fn invalid_tps_adds_work_but_no_rate_for_non_pulsar() {
    let clusters = [loaded("a", 300, 100.0), loaded("b", 120, f64::NAN)];
    let work = input_work(&default_policy(Algorithm::PowerOfN), &tokens(30), &clusters);
    assert_eq!((work.tokens, work.rate), (450, 100.0));
    assert_eq!(work.seconds(), Some(4.5));
    // Excluded clusters add neither.
    let excluded = ["a"];
    let request = Request {
        excluded: &excluded,
        ..tokens(30)
    };
    let work = input_work(
        &default_policy(Algorithm::WaitAndWiden),
        &request,
        &clusters,
    );
    assert_eq!((work.tokens, work.rate), (150, 0.0));
    assert_eq!(
        code(
            &with_limit(Algorithm::WaitAndWiden, 100.0),
            &request,
            &clusters
        ),
        Some(RejectionCode::InputWorkCapacityUnavailable)
    );
}

#[test]
fn pulsar_admission_needs_valid_mean_and_valid_selected_weight() {
    let no_max = ClusterSnapshot {
        max_input_tps: None,
        ..loaded("b", 120, 50.0)
    };
    let bad_mean = ClusterSnapshot {
        last_mean_input_tps: f64::INFINITY,
        ..loaded("c", 1000, 10.0)
    };
    let clusters = [loaded("a", 300, 100.0), no_max, bad_mean];
    for algorithm in [Algorithm::Pulsar, Algorithm::PulsarWaitAndWiden] {
        let work = input_work(&default_policy(algorithm), &tokens(30), &clusters);
        assert_eq!((work.tokens, work.rate), (330, 100.0), "{algorithm}");
    }
    // With the mean as weight, the cluster without a maximum counts.
    let mut policy = default_policy(Algorithm::Pulsar);
    if let Settings::Pulsar(s) = &mut policy.settings {
        s.rendezvous_weight = RendezvousWeight::LastMeanInputTps;
    }
    let work = input_work(&policy, &tokens(30), &clusters);
    assert_eq!((work.tokens, work.rate), (450, 150.0));
}

#[test]
fn pulsar_admission_applies_kv_feasibility_when_enabled() {
    let kv = |id: &str, free: u64| ClusterSnapshot {
        kv_cache_capacity_tokens: 1000,
        kv_cache_free_tokens: free,
        total_query_input_size: 0,
        ..loaded(id, 100, 100.0)
    };
    let clusters = [kv("a", 500), kv("b", 10), loaded("no-metrics", 100, 100.0)];
    let mut policy = default_policy(Algorithm::PulsarWaitAndWiden);
    if let Settings::PulsarWaitAndWiden(s) = &mut policy.settings {
        s.consider_kv_free_tokens = true;
    }
    let work = input_work(&policy, &tokens(30), &clusters);
    assert_eq!((work.tokens, work.rate), (130, 100.0));
    // Without input tokens nothing is KV-feasible.
    let none = Request {
        input_tokens: None,
        ..tokens(0)
    };
    assert_eq!(input_work(&policy, &none, &clusters).rate, 0.0);
    // Off: KV is ignored.
    let work = input_work(
        &default_policy(Algorithm::PulsarWaitAndWiden),
        &tokens(30),
        &clusters,
    );
    assert_eq!((work.tokens, work.rate), (330, 300.0));
}

#[test]
fn non_positive_limit_rejects_only_requests_with_work() {
    let clusters = [loaded("a", 0, 100.0)];
    let policy = with_limit(Algorithm::Random, 0.0);
    assert_eq!(code(&policy, &tokens(0), &clusters), None);
    assert_eq!(
        code(&policy, &tokens(1), &clusters),
        Some(RejectionCode::InputWorkLimitExceeded)
    );
    let policy = with_limit(Algorithm::Random, -1.0);
    assert_eq!(
        code(&policy, &tokens(1), &clusters),
        Some(RejectionCode::InputWorkLimitExceeded)
    );
}

fn route_with(
    policy: Policy,
    request: Request<'_>,
    clusters: &[ClusterSnapshot],
) -> Result<(), RejectionCode> {
    let mut table = permissive_table();
    table.default = std::sync::Arc::new(routex::ir::Definition {
        config: routex::ir::AlgorithmConfig::named(policy.algorithm),
        policy,
    });
    let h = harness_with(table, 16, std::time::Duration::from_secs(60));
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    h.router
        .route(
            &RouteRequest::new(request),
            clusters,
            &mut rng,
            &mut Scratch::default(),
        )
        .map(|_| ())
        .map_err(|r| {
            assert_eq!(r.status, r.code.status());
            r.code
        })
}

#[test]
fn required_affinity_key_rejects_missing_and_blank_keys_with_400() {
    let mut policy = default_policy(Algorithm::WaitAndWiden);
    policy.admission.require_cache_affinity_key = true;
    let clusters = [cluster("a")];
    for key in [None, Some(""), Some("  ")] {
        let request = Request {
            cache_affinity_key: key,
            ..request("m")
        };
        let err = route_with(policy.clone(), request, &clusters).unwrap_err();
        assert_eq!(err, RejectionCode::MissingCacheAffinityKey);
        assert_eq!(err.status(), 400);
    }
    let request = Request {
        cache_affinity_key: Some("k1"),
        ..request("m")
    };
    assert_eq!(route_with(policy, request, &clusters), Ok(()));
}

#[test]
fn no_candidates_is_404_until_something_failed_then_503() {
    let policy = default_policy(Algorithm::Random);
    let err = route_with(policy.clone(), request("m"), &[]).unwrap_err();
    assert_eq!(
        (err, err.status()),
        (RejectionCode::NoEligibleCandidates, 404)
    );
    assert_eq!(err.as_str(), "no_eligible_candidates");
    let excluded = ["a", "b"];
    let all_failed = Request {
        excluded: &excluded,
        ..request("m")
    };
    let err = route_with(
        policy.clone(),
        all_failed.clone(),
        &[cluster("a"), cluster("b")],
    )
    .unwrap_err();
    assert_eq!(
        (err, err.status()),
        (RejectionCode::CandidatesExhausted, 503)
    );
    let err = route_with(policy.clone(), all_failed.clone(), &[]).unwrap_err();
    assert_eq!(err, RejectionCode::CandidatesExhausted);
    assert_eq!(
        route_with(policy, all_failed, &[cluster("a"), cluster("c")]),
        Ok(())
    );
}

#[test]
fn input_work_is_checked_through_the_router_before_deciding() {
    let clusters = [loaded("a", 300, 100.0), loaded("b", 120, 50.0)];
    let err = route_with(with_limit(Algorithm::PowerOfN, 2.9), tokens(30), &clusters).unwrap_err();
    assert_eq!(err, RejectionCode::InputWorkLimitExceeded);
    assert_eq!(
        route_with(with_limit(Algorithm::PowerOfN, 3.1), tokens(30), &clusters),
        Ok(())
    );
    let err = route_with(
        with_limit(Algorithm::PowerOfN, 3.1),
        tokens(30),
        &[loaded("z", 10, 0.0)],
    )
    .unwrap_err();
    assert_eq!(err, RejectionCode::InputWorkCapacityUnavailable);
}
