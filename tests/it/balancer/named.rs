//! `Balancer::decide_named`: a named candidate list takes the ranking
//! cache's and the wait-and-widen ring's id check off the hit path and
//! changes no decision; a new name (ids changed) and a changed weight under
//! the same name both re-rank.

use super::{clusters, ms, policy, pulsar, pww, request, selected, ww};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use routex::balancer::{Balancer, ClusterSnapshot, Decision, Membership, Request, Scratch};
use routex::ir::{PulsarWaitAndWidenSettings, Settings, WaitAndWidenSettings};

fn slo_pww() -> PulsarWaitAndWidenSettings {
    let mut s = pww();
    s.bucket.max_queue_time_floor_ms = Some(400);
    s.bucket.max_queue_time_ceil_ms = Some(400);
    s.bucket.max_queued = 1;
    s.cache_affinity_wait_ms = 50;
    s.band_widen_interval_ms = 50;
    s
}

/// Affinity on (a ring group of 2), a 50 ms affinity wait.
fn affine_ww() -> WaitAndWidenSettings {
    let mut s = ww();
    s.cache_affinity_backend_selection_count = Some(2);
    s.cache_affinity_wait_ms = 50;
    s.bucket.max_queued = 1;
    s
}

fn balancers() -> Vec<(&'static str, Balancer, Balancer)> {
    let make = |f: &dyn Fn() -> Balancer| (f(), f());
    let mut out = Vec::new();
    let (a, b) = make(&|| Balancer::new(&policy(Settings::Pulsar(pulsar()))));
    out.push(("pulsar", a, b));
    let (a, b) = make(&|| Balancer::new(&policy(Settings::PulsarWaitAndWiden(slo_pww()))));
    out.push(("pulsar-wait-and-widen", a, b));
    let (a, b) = make(&|| Balancer::legacy_band_walk(&slo_pww(), 0));
    out.push(("legacy-band-walk", a, b));
    let (a, b) = make(&|| Balancer::new(&policy(Settings::WaitAndWiden(affine_ww()))));
    out.push(("wait-and-widen", a, b));
    out
}

/// 2000 decisions over a view whose loads change every step and whose
/// membership changes every 250: the named and unnamed instances answer
/// alike, with the same random draws.
#[test]
fn named_and_unnamed_decisions_agree() {
    for (name, plain, named) in balancers() {
        let mut state = ChaCha8Rng::seed_from_u64(3);
        let (mut r1, mut r2) = (ChaCha8Rng::seed_from_u64(9), ChaCha8Rng::seed_from_u64(9));
        let (mut s1, mut s2) = (Scratch::new(), Scratch::new());
        let mut cs = clusters(12);
        let mut ids = Membership::fresh();
        let keys: Vec<String> = (0..16).map(|k| format!("key-{k}")).collect();
        let mut outcomes = [0usize; 3];
        for step in 0..2000 {
            if step % 250 == 249 {
                // New ids and order under a new name.
                cs.rotate_left(1);
                cs[0].id = format!("n{step}");
                ids = Membership::fresh();
            }
            let c = state.random_range(0..cs.len());
            cs[c].num_running_queries = state.random_range(4..=6);
            cs[c].queued_input_size = state.random_range(0..2000);
            if step % 97 == 0 {
                cs[c].max_input_tps = Some(f64::from(state.random_range(500..1500u32)));
            }
            let r = Request {
                cache_affinity_key: Some(&keys[step % keys.len()]),
                elapsed: ms(state.random_range(0..200)),
                ..request("m")
            };
            let a = plain.decide(&r, &cs, &mut r1, &mut s1);
            let b = named.decide_named(&r, &cs, ids, &mut r2, &mut s2);
            assert_eq!(a, b, "{name}, step {step}");
            outcomes[match a {
                Decision::Selected(_) => 0,
                Decision::Wait(_) => 1,
                Decision::Unavailable => 2,
            }] += 1;
        }
        assert!(outcomes[0] > 100, "{name}: {outcomes:?}");
        if name != "pulsar" {
            // Waits and full bands were exercised too.
            assert!(outcomes[1] + outcomes[2] > 100, "{name}: {outcomes:?}");
        }
    }
}

/// Under one name, a weight change still invalidates the cached ranking.
#[test]
fn a_weight_change_under_the_same_name_reranks() {
    let b = Balancer::new(&policy(Settings::Pulsar(pulsar())));
    let mut cs: Vec<ClusterSnapshot> = clusters(2);
    let ids = Membership::fresh();
    let r = request("m");
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let mut scratch = Scratch::new();
    let first = selected(b.decide_named(&r, &cs, ids, &mut rng, &mut scratch));
    // All weight on the other cluster: the ranking must follow.
    let other = 1 - first;
    cs[first].max_input_tps = Some(1e-9);
    cs[other].max_input_tps = Some(1e9);
    let second = selected(b.decide_named(&r, &cs, ids, &mut rng, &mut scratch));
    assert_eq!(second, other);
}

#[test]
fn fresh_names_are_distinct() {
    let a = Membership::fresh();
    assert_ne!(a, Membership::fresh());
}
