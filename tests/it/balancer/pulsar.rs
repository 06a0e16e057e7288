//! pulsar (docs/stargate.md 3.7, behaviours of 7.6).

use super::{check, cluster, clusters, decide, depth, policy, pulsar, pww, request, selected};
use routex::balancer::{Balancer, Choice, ClusterSnapshot, Decision, Request};
use routex::ir::{PulsarSettings, PulsarWaitAndWidenSettings, RendezvousWeight, Settings};

const MODEL: &str = "m";

fn pol(s: PulsarSettings) -> routex::ir::Policy {
    policy(Settings::Pulsar(s))
}

fn kv() -> PulsarSettings {
    PulsarSettings {
        consider_kv_free_tokens: true,
        ..pulsar()
    }
}

fn keyed(key: &str) -> Request<'_> {
    Request {
        cache_affinity_key: Some(key),
        ..request(MODEL)
    }
}

#[test]
fn pulsar_uses_generation_max_input_tps_as_weight_by_default() {
    let mut cs = clusters(2);
    cs[0].max_input_tps = None; // mean stays valid: no fallback
    for key in ["a", "b", "c", "d", "e"] {
        let d = check(&pol(pulsar()), &keyed(key), &cs);
        assert_eq!((selected(d), depth(d)), (1, 1));
    }
    cs[1].max_input_tps = None;
    assert_eq!(
        check(&pol(pulsar()), &keyed("a"), &cs),
        Decision::Unavailable
    );
}

#[test]
fn pulsar_excludes_candidate_with_invalid_max_input_tps() {
    for bad in [0.0, -5.0, f64::NAN, f64::INFINITY] {
        let mut cs = clusters(2);
        cs[1].max_input_tps = Some(bad);
        let d = check(&pol(pulsar()), &keyed("k"), &cs);
        assert_eq!(selected(d), 0, "weight {bad}");
        let ids = [cs[0].id.as_str()];
        let retry = Request {
            excluded: &ids,
            ..keyed("k")
        };
        assert_eq!(check(&pol(pulsar()), &retry, &cs), Decision::Unavailable);
    }
}

#[test]
fn both_pulsar_defaults_ignore_mean_changes_and_reject_missing_maxima() {
    let cs = clusters(6);
    let pww_pol = policy(Settings::PulsarWaitAndWiden(pww()));
    let base_p = selected(check(&pol(pulsar()), &keyed("k"), &cs));
    let base_w = selected(check(&pww_pol, &keyed("k"), &cs));
    assert_eq!(base_p, base_w, "same seed and weight: same rank 1");
    let mut changed = cs.clone();
    for (i, c) in changed.iter_mut().enumerate() {
        c.last_mean_input_tps = 1.0 + i as f64 * 1000.0;
    }
    assert_eq!(
        selected(check(&pol(pulsar()), &keyed("k"), &changed)),
        base_p
    );
    assert_eq!(selected(check(&pww_pol, &keyed("k"), &changed)), base_w);
    for c in &mut changed {
        c.max_input_tps = None;
    }
    assert_eq!(
        check(&pol(pulsar()), &keyed("k"), &changed),
        Decision::Unavailable
    );
    assert_eq!(
        check(&pww_pol, &keyed("k"), &changed),
        Decision::Unavailable
    );
}

#[test]
fn last_mean_weight_ranks_by_the_mean() {
    let s = PulsarSettings {
        rendezvous_weight: RendezvousWeight::LastMeanInputTps,
        ..pulsar()
    };
    let mut cs = clusters(2);
    cs[0].max_input_tps = None;
    cs[1].last_mean_input_tps = 0.0;
    assert_eq!(selected(check(&pol(s), &keyed("k"), &cs)), 0);
}

#[test]
fn pulsar_considering_kv_free_tokens_skips_ranked_primary_and_missing_metrics() {
    let req = keyed("k");
    let cs = super::ranked_clusters(3, &req);
    let mut low = cs.clone();
    low[0].kv_cache_free_tokens = 99; // < 100 input tokens
    assert_eq!(
        check(&pol(kv()), &req, &low),
        Decision::Selected(Choice {
            index: 1,
            rank_depth: 2,
            selected_after_kv_free_tokens_skip: true
        })
    );
    let mut missing = cs.clone();
    missing[0].kv_cache_capacity_tokens = 0;
    missing[0].kv_cache_free_tokens = 0;
    let d = check(&pol(kv()), &req, &missing);
    assert_eq!((selected(d), depth(d)), (1, 2));
    // Exactly enough is enough.
    let mut exact = cs.clone();
    exact[0].kv_cache_free_tokens = 100;
    assert_eq!(depth(check(&pol(kv()), &req, &exact)), 1);
    // No input tokens: every cluster is skipped, not for KV.
    let tokenless = Request {
        input_tokens: None,
        ..req.clone()
    };
    assert_eq!(check(&pol(kv()), &tokenless, &cs), Decision::Unavailable);
    // An exclusion is not a KV skip.
    let ids = [cs[0].id.as_str()];
    let retry = Request {
        excluded: &ids,
        ..req.clone()
    };
    assert_eq!(
        check(&pol(kv()), &retry, &cs),
        Decision::Selected(Choice {
            index: 1,
            rank_depth: 2,
            selected_after_kv_free_tokens_skip: false
        })
    );
}

#[test]
fn pulsar_keeps_ranked_primary_despite_low_free_kv() {
    let req = keyed("k");
    let mut cs = super::ranked_clusters(3, &req);
    cs[0].kv_cache_free_tokens = 0;
    cs[0].num_running_queries = 1000; // load is ignored too
    let d = check(&pol(pulsar()), &req, &cs);
    assert_eq!((selected(d), depth(d)), (0, 1));
}

#[test]
fn pulsar_cached_ranking_rechecks_live_kv_free_tokens() {
    let req = keyed("k");
    let mut cs = super::ranked_clusters(3, &req);
    let b = Balancer::new(&pol(kv()));
    assert_eq!(depth(decide(&b, &req, &cs)), 1);
    cs[0].kv_cache_free_tokens = 1;
    let d = decide(&b, &req, &cs);
    assert_eq!((selected(d), depth(d)), (1, 2));
    cs[0].kv_cache_free_tokens = 100_000;
    assert_eq!(depth(decide(&b, &req, &cs)), 1);
}

#[test]
fn pulsar_ranking_cache_invalidates_when_the_selected_weight_changes() {
    let req = keyed("k");
    let mut cs = super::ranked_clusters(3, &req);
    let b = Balancer::new(&pol(pulsar()));
    assert_eq!(selected(decide(&b, &req, &cs)), 0);
    // A much heavier rank 3 now wins the key; a stale cache would say 0.
    cs[2].max_input_tps = Some(1e12);
    assert_eq!(selected(decide(&b, &req, &cs)), 2);
    assert_eq!(selected(check(&pol(pulsar()), &req, &cs)), 2);
}

#[test]
fn pulsar_ranking_ignores_candidate_order_and_ties_by_id() {
    let req = keyed("order");
    let cs = clusters(8);
    let order = super::ranking("", &req, &cs);
    let mut reversed = cs.clone();
    reversed.reverse();
    let rev: Vec<usize> = super::ranking("", &req, &reversed)
        .into_iter()
        .map(|i| 7 - i)
        .collect();
    assert_eq!(order, rev);
    // Different seeds and keys give different rankings.
    assert_ne!(super::ranking("other", &req, &cs), order);
}

#[test]
fn pulsar_weights_share_keys_proportionally() {
    // w / e with e ~ Exp(1): a cluster of weight 3 wins 3/4 of keys over
    // a cluster of weight 1.
    let mut cs = vec![cluster("heavy"), cluster("light")];
    cs[0].max_input_tps = Some(3000.0);
    let b = Balancer::new(&pol(pulsar()));
    let keys: Vec<String> = (0..4000).map(|i| format!("key-{i}")).collect();
    let heavy = keys
        .iter()
        .filter(|k| selected(decide(&b, &keyed(k), &cs)) == 0)
        .count();
    let share = heavy as f64 / keys.len() as f64;
    assert!((share - 0.75).abs() < 0.03, "share {share}");
}

#[test]
fn keyless_requests_share_one_ranking_and_long_keys_bypass_the_cache() {
    let cs = clusters(10);
    let b = Balancer::new(&pol(pulsar()));
    let keyless = request(MODEL);
    let empty = keyed("");
    assert_eq!(decide(&b, &keyless, &cs), decide(&b, &empty, &cs));
    let long = "x".repeat(300);
    let fresh = check(&pol(pulsar()), &keyed(&long), &cs);
    for _ in 0..3 {
        assert_eq!(decide(&b, &keyed(&long), &cs), fresh);
    }
}

#[test]
fn ranking_cache_admits_new_keys_after_two_misses_once_full() {
    // Fill the cache past 4096 keys; answers never depend on caching.
    let cs: Vec<ClusterSnapshot> = clusters(4);
    let b = Balancer::new(&pol(pulsar()));
    let fresh = Balancer::new(&pol(pulsar()));
    for i in 0..4200 {
        let key = format!("k{i}");
        let d = decide(&b, &keyed(&key), &cs);
        if i % 97 == 0 {
            assert_eq!(d, decide(&fresh, &keyed(&key), &cs));
        }
    }
    for i in (0..4200).step_by(50) {
        let key = format!("k{i}");
        assert_eq!(
            decide(&b, &keyed(&key), &cs),
            decide(&fresh, &keyed(&key), &cs)
        );
    }
}

#[test]
fn pww_and_pulsar_share_the_ranking_with_kv() {
    let req = keyed("k");
    let mut cs = super::ranked_clusters(3, &req);
    cs[0].kv_cache_free_tokens = 0;
    let s = PulsarWaitAndWidenSettings {
        consider_kv_free_tokens: true,
        ..pww()
    };
    let p = check(&pol(kv()), &req, &cs);
    let w = check(&policy(Settings::PulsarWaitAndWiden(s)), &req, &cs);
    assert_eq!(depth(p), 2);
    assert!(matches!(depth(w), 2 | 3));
}
