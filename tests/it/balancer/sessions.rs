//! The `sessions` target in the balancer (docs/stargate.md 3.10):
//! pulsar-wait-and-widen without the no-queue-SLO shortcut, and
//! `last_cluster_affinity` on wait-and-widen and pulsar-wait-and-widen.
//! Clusters are built in rank order for the key "k": position i holds
//! rank i + 1.

use super::{check, clusters, decide, depth, make_full, ms, policy, pww, ranked_clusters};
use super::{request, selected, ww};
use routex::balancer::{
    classify_session, Balancer, ClusterSnapshot, Decision, Request, SessionState,
};
use routex::ir::{Policy, PulsarWaitAndWidenSettings, Settings, WaitAndWidenSettings};

const KEY: &str = "k";

/// PWW as the `sessions` target builds it (no shortcut), defaults.
fn sessions_pww() -> PulsarWaitAndWidenSettings {
    PulsarWaitAndWidenSettings {
        no_queue_slo_shortcut: false,
        ..pww()
    }
}

fn pol(s: PulsarWaitAndWidenSettings) -> Policy {
    policy(Settings::PulsarWaitAndWiden(s))
}

fn keyed(elapsed: u64) -> Request<'static> {
    Request {
        cache_affinity_key: Some(KEY),
        elapsed: ms(elapsed),
        ..request("m")
    }
}

fn hinted(elapsed: u64, hint: &'static str) -> Request<'static> {
    Request {
        last_cluster_id: Some(hint),
        ..keyed(elapsed)
    }
}

/// `n` clusters ranked for KEY, all full except the given ranks (1-based).
fn ranked_full_but(n: usize, free_ranks: &[usize]) -> Vec<ClusterSnapshot> {
    let mut cs = ranked_clusters(n, &keyed(0));
    for (i, c) in cs.iter_mut().enumerate() {
        if !free_ranks.contains(&(i + 1)) {
            make_full(c);
        }
    }
    cs
}

// --- 1.1: no shortcut (the three upstream tests' situations) ---

#[test]
fn without_queue_slo_overflows_full_primary() {
    let cs = ranked_full_but(4, &[2, 3, 4]);
    let d = check(&pol(sessions_pww()), &keyed(0), &cs);
    // The full primary is not taken; the open set (X = S = 0: everything)
    // takes a free rank, at its ranking position.
    assert_ne!(selected(d), 0);
    assert_eq!(depth(d) as usize, selected(d) + 1);
    // The `widening` target takes the full primary at once.
    let d = check(&pol(pww()), &keyed(0), &cs);
    assert_eq!((selected(d), depth(d)), (0, 1));
}

#[test]
fn without_queue_slo_queues_on_primary_within_max_queued() {
    let mut s = sessions_pww();
    s.bucket.max_queued = 1;
    let cs = ranked_full_but(4, &[]);
    let d = check(&pol(s), &keyed(0), &cs);
    assert_eq!((selected(d), depth(d)), (0, 1));
}

#[test]
fn without_queue_slo_waits_for_affinity_then_widens() {
    let s = PulsarWaitAndWidenSettings {
        cache_affinity_wait_ms: 300,
        band_widen_interval_ms: 300,
        band_widen_interval_is_default: true,
        ..sessions_pww()
    };
    let cs = ranked_full_but(8, &[2, 3]);
    assert_eq!(
        check(&pol(s.clone()), &keyed(0), &cs),
        Decision::Wait(ms(300))
    );
    assert_eq!(
        check(&pol(s.clone()), &keyed(100), &cs),
        Decision::Wait(ms(200))
    );
    let d = check(&pol(s), &keyed(300), &cs);
    assert!(matches!(depth(d), 2 | 3), "{d:?}");
}

// --- 1.2: classification ---

#[test]
fn classification_compares_ids_exactly() {
    let cs = clusters(3);
    assert_eq!(classify_session(None, &cs), SessionState::New);
    assert_eq!(classify_session(Some("c1"), &cs), SessionState::Returning);
    for stale in ["C1", "c1 ", " c1", "c9", ""] {
        assert_eq!(
            classify_session(Some(stale), &cs),
            SessionState::Stale,
            "{stale:?}"
        );
    }
    let long = "c".repeat(10_000);
    assert_eq!(classify_session(Some(&long), &cs), SessionState::Stale);
}

fn sessions_on(mut s: PulsarWaitAndWidenSettings) -> Balancer {
    s.last_cluster_affinity = true;
    Balancer::new(&pol(s))
}

#[test]
fn the_flag_acts_only_with_an_affinity_key() {
    let b = sessions_on(sessions_pww());
    let cs = clusters(3);
    assert_eq!(
        b.classify(&hinted(0, "c1"), &cs),
        Some(SessionState::Returning)
    );
    let keyless = Request {
        cache_affinity_key: None,
        ..hinted(0, "c1")
    };
    assert_eq!(b.classify(&keyless, &cs), None);
    // Off: nothing is classified.
    assert_eq!(
        Balancer::new(&pol(sessions_pww())).classify(&hinted(0, "c1"), &cs),
        None
    );
}

/// X = 300, S unset (= X), k = 1: rank 1 full, ranks 2.. free.
fn waiting() -> PulsarWaitAndWidenSettings {
    PulsarWaitAndWidenSettings {
        cache_affinity_wait_ms: 300,
        band_widen_interval_ms: 300,
        band_widen_interval_is_default: true,
        cache_affinity_input_tokens_scale: 0.5,
        ..sessions_pww()
    }
}

#[test]
fn new_and_stale_sessions_neither_wait_nor_widen_gradually() {
    let b = sessions_on(waiting());
    let cs = ranked_full_but(8, &[8]);
    // New: X = 0 and the unset S follows it: every band open at once.
    let d = decide(&b, &keyed(0), &cs);
    assert_eq!((selected(d), depth(d)), (7, 8));
    // Stale: the same.
    let d = decide(&b, &hinted(0, "gone"), &cs);
    assert_eq!((selected(d), depth(d)), (7, 8));
    // Without the flag the request waits for its primary.
    let off = Balancer::new(&pol(waiting()));
    assert_eq!(decide(&off, &keyed(0), &cs), Decision::Wait(ms(300)));
}

#[test]
fn a_set_band_interval_still_paces_a_new_session() {
    let mut s = waiting();
    s.band_widen_interval_is_default = false;
    s.band_widen_interval_ms = 200;
    let b = sessions_on(s);
    let cs = ranked_full_but(8, &[8]);
    // X = 0 for a new session, S = 200: ranks 1..3 open now, rank 8 at
    // 400 ms (1..3, 1..7, 1..15).
    assert_eq!(decide(&b, &keyed(0), &cs), Decision::Wait(ms(200)));
    let d = decide(&b, &keyed(400), &cs);
    assert_eq!((selected(d), depth(d)), (7, 8));
}

#[test]
fn a_returning_session_leads_with_its_last_cluster_at_rank_1() {
    let b = sessions_on(sessions_pww());
    let cs = ranked_full_but(6, &[1, 2, 3, 4, 5, 6]);
    let last = cs[4].id.clone();
    let r = Request {
        last_cluster_id: Some(&last),
        ..keyed(0)
    };
    let d = decide(&b, &r, &cs);
    assert_eq!((selected(d), depth(d)), (4, 1));
    // The reorder is this request's: a new session still gets rank 1.
    let d = decide(&b, &keyed(0), &cs);
    assert_eq!((selected(d), depth(d)), (0, 1));
}

#[test]
fn a_returning_session_waits_for_its_full_last_cluster() {
    let b = sessions_on(waiting());
    let mut cs = ranked_full_but(6, &[1, 2, 3, 4, 5, 6]);
    make_full(&mut cs[3]);
    let last = cs[3].id.clone();
    let r = |t| Request {
        last_cluster_id: Some(&last),
        ..keyed(t)
    };
    // Still returning: the configured wait applies to its last cluster...
    assert_eq!(decide(&b, &r(0), &cs), Decision::Wait(ms(300)));
    // ...then the bands open from the reordered order: rank 2 is the old
    // rank 1 (free), at ranking position 2.
    let d = decide(&b, &r(300), &cs);
    assert_eq!((selected(d), depth(d)), (0, 2));
}

#[test]
fn a_returning_session_without_a_valid_weight_keeps_the_order_and_the_wait() {
    let b = sessions_on(waiting());
    let mut cs = ranked_full_but(4, &[2, 3, 4]);
    cs[2].max_input_tps = None; // unranked
    let last = cs[2].id.clone();
    let r = Request {
        last_cluster_id: Some(&last),
        ..keyed(0)
    };
    assert_eq!(b.classify(&r, &cs), Some(SessionState::Returning));
    assert_eq!(decide(&b, &r, &cs), Decision::Wait(ms(300)));
}

#[test]
fn classification_is_made_once_and_reused() {
    let b = sessions_on(waiting());
    let cs = ranked_full_but(8, &[8]);
    // Classified returning on c-something that later left: the kept state
    // still waits the configured wait (its last cluster is no candidate
    // now, so there is nothing to promote).
    let r = Request {
        session: Some(SessionState::Returning),
        last_cluster_id: Some("left-the-fleet"),
        ..keyed(0)
    };
    assert_eq!(decide(&b, &r, &cs), Decision::Wait(ms(300)));
    // And a kept "new" ignores a hint that would now be returning.
    let r = Request {
        session: Some(SessionState::New),
        last_cluster_id: Some(&cs[7].id),
        ..keyed(0)
    };
    let d = decide(&b, &r, &cs);
    assert_eq!((selected(d), depth(d)), (7, 8));
}

fn ww_sessions(k: u64) -> WaitAndWidenSettings {
    WaitAndWidenSettings {
        cache_affinity_backend_selection_count: Some(k),
        cache_affinity_wait_ms: 300,
        last_cluster_affinity: true,
        ..ww()
    }
}

#[test]
fn wait_and_widen_inserts_a_returning_outsider_first() {
    let b = Balancer::new(&policy(Settings::WaitAndWiden(ww_sessions(1))));
    let mut cs = clusters(4);
    let mut scratch = routex::balancer::Scratch::default();
    let group = b
        .affinity_order(&keyed(0), &cs, &mut scratch)
        .unwrap()
        .to_vec();
    assert_eq!(group.len(), 1);
    let outsider = (0..4).find(|i| *i != group[0]).unwrap();
    let id = cs[outsider].id.clone();
    let r = Request {
        last_cluster_id: Some(&id),
        ..keyed(0)
    };
    let order = b.affinity_order(&r, &cs, &mut scratch).unwrap().to_vec();
    assert_eq!(order, [outsider]);
    // Everyone but the ring's own member is full: the returning request
    // waits X for its last cluster rather than taking the ring member.
    for (i, c) in cs.iter_mut().enumerate() {
        if i != group[0] {
            make_full(c);
        }
    }
    assert_eq!(decide(&b, &r, &cs), Decision::Wait(ms(300)));
    // A new session takes the ring member at once.
    assert_eq!(selected(decide(&b, &keyed(0), &cs)), group[0]);
}

#[test]
fn wait_and_widen_new_sessions_skip_the_affinity_wait() {
    let b = Balancer::new(&policy(Settings::WaitAndWiden(ww_sessions(1))));
    let mut cs = clusters(3);
    let mut scratch = routex::balancer::Scratch::default();
    let member = b.affinity_order(&keyed(0), &cs, &mut scratch).unwrap()[0];
    make_full(&mut cs[member]);
    let d = decide(&b, &keyed(0), &cs);
    assert_ne!(selected(d), member);
    assert_eq!(depth(d), 2);
    let off = Balancer::new(&policy(Settings::WaitAndWiden(WaitAndWidenSettings {
        last_cluster_affinity: false,
        ..ww_sessions(1)
    })));
    assert_eq!(decide(&off, &keyed(0), &cs), Decision::Wait(ms(300)));
}

#[test]
fn the_selection_counter_has_six_series_from_the_first_classified_request() {
    let b = sessions_on(waiting());
    let cs = ranked_full_but(8, &[1, 2, 3, 4, 5, 6, 7, 8]);
    assert_eq!(b.session_selections(), None);
    // A keyless request is not classified.
    let keyless = Request {
        cache_affinity_key: None,
        ..keyed(0)
    };
    decide(&b, &keyless, &cs);
    assert_eq!(b.session_selections(), None);
    // new -> rank 1 (within k = 1): primary.
    decide(&b, &keyed(0), &cs);
    assert_eq!(b.session_selections(), Some([[1, 0], [0, 0], [0, 0]]));
    // returning to rank 5 -> served there: primary.
    let last = cs[4].id.clone();
    let r = Request {
        last_cluster_id: Some(&last),
        ..keyed(0)
    };
    decide(&b, &r, &cs);
    // stale -> rank 1: primary; with rank 1 full, rank 2: fallback.
    decide(&b, &hinted(0, "gone"), &cs);
    let mut busy = cs.clone();
    make_full(&mut busy[0]);
    decide(&b, &hinted(0, "gone"), &busy);
    // returning to a full rank 5 after X: served elsewhere, fallback.
    let mut busy = cs.clone();
    make_full(&mut busy[4]);
    decide(
        &b,
        &Request {
            elapsed: ms(300),
            ..r.clone()
        },
        &busy,
    );
    assert_eq!(b.session_selections(), Some([[1, 0], [1, 1], [1, 1]]));
    // A policy without the flag has no counter at all.
    let off = Balancer::new(&pol(waiting()));
    decide(&off, &keyed(0), &cs);
    assert_eq!(off.session_selections(), None);
}

#[test]
fn a_classified_request_that_waits_creates_the_series_at_zero() {
    let b = sessions_on(waiting());
    let cs = ranked_full_but(3, &[]);
    let last = cs[0].id.clone();
    let r = Request {
        last_cluster_id: Some(&last),
        ..keyed(0)
    };
    assert_eq!(decide(&b, &r, &cs), Decision::Wait(ms(300)));
    assert_eq!(b.session_selections(), Some([[0, 0], [0, 0], [0, 0]]));
}

/// The hint's cluster is found through the ranking cache's or the ring's
/// id index once the instance is warm, and by a scan on a cold one
/// (src/balancer/id_index.rs): both classify and decide alike, for ids
/// short and long, repeated (the first position counts), differently
/// cased and absent.
#[test]
fn a_warm_instance_finds_the_hint_as_a_cold_one_does() {
    let mut cs = clusters(6);
    cs[2].id = "a-cluster-id-longer-than-16-bytes".to_owned();
    cs[4].id = "c1".to_owned(); // a repeated id: position 1 counts
    cs[5].id = String::new();
    make_full(&mut cs[1]);
    let hints = [
        "c0",
        "c1",
        "C1",
        "a-cluster-id-longer-than-16-bytes",
        "a-cluster-id-longer-than-16-byteS",
        "c3",
        "",
        "gone",
    ];
    let policies = [
        pol(PulsarWaitAndWidenSettings {
            last_cluster_affinity: true,
            ..waiting()
        }),
        policy(Settings::WaitAndWiden(ww_sessions(2))),
    ];
    for policy in &policies {
        let warm = Balancer::new(policy);
        // Warms the cache or ring for these candidates.
        decide(&warm, &keyed(0), &cs);
        let before = warm.session_selections().unwrap();
        for hint in hints {
            for elapsed in [0, 400] {
                // A fresh instance: its first decision scans.
                let cold = Balancer::new(policy);
                let r = hinted(elapsed, hint);
                let counted_before = warm.session_selections().unwrap();
                let cold_before = cold.session_selections().unwrap_or_default();
                assert_eq!(
                    decide(&warm, &r, &cs),
                    decide(&cold, &r, &cs),
                    "{:?} {hint:?} at {elapsed} ms",
                    policy.algorithm
                );
                let delta = |after: [[u64; 2]; 3], before: [[u64; 2]; 3]| {
                    let mut d = [[0u64; 2]; 3];
                    for (s, row) in d.iter_mut().enumerate() {
                        for (x, v) in row.iter_mut().enumerate() {
                            *v = after[s][x] - before[s][x];
                        }
                    }
                    d
                };
                assert_eq!(
                    delta(warm.session_selections().unwrap(), counted_before),
                    delta(cold.session_selections().unwrap(), cold_before),
                    "{:?} {hint:?}: counted alike",
                    policy.algorithm
                );
                let state = warm.classify(&r, &cs);
                let scanned = classify_session(Some(hint), &cs);
                assert_eq!(state, Some(scanned), "{hint:?}");
            }
        }
        assert_ne!(warm.session_selections(), Some(before));
    }
}

/// A warm instance confirms a hint naming its key's primary with one
/// compare (src/balancer/id_index.rs, `IdIndex::position`'s guess), but
/// only while no id repeats: a primary that is the later copy of a
/// repeated id still resolves to the first copy, as a cold instance's
/// scan does, and so leads with that copy.
#[test]
fn a_hint_at_the_primary_resolves_as_a_scan_does() {
    let policies = [
        pol(PulsarWaitAndWidenSettings {
            last_cluster_affinity: true,
            ..waiting()
        }),
        policy(Settings::WaitAndWiden(ww_sessions(2))),
    ];
    for repeated in [false, true] {
        let mut cs = clusters(6);
        // Position 4 leads the Pulsar ranking; with `repeated` it is a
        // second "c1".
        cs[4].max_input_tps = Some(1e12);
        if repeated {
            cs[4].id = cs[1].id.clone();
        }
        let hints: Vec<String> = cs.iter().map(|c| c.id.clone()).collect();
        for policy in &policies {
            let warm = Balancer::new(policy);
            decide(&warm, &keyed(0), &cs);
            let mut scratch = routex::balancer::Scratch::default();
            let primary = warm.affinity_order(&keyed(0), &cs, &mut scratch).unwrap()[0];
            if policy.algorithm == routex::ir::Algorithm::PulsarWaitAndWiden {
                assert_eq!(primary, 4, "the heavy cluster leads");
            }
            for hint in &hints {
                let r = Request {
                    last_cluster_id: Some(hint),
                    ..keyed(0)
                };
                let cold = Balancer::new(policy);
                let before = warm.session_selections().unwrap();
                let d = decide(&warm, &r, &cs);
                assert_eq!(d, decide(&cold, &r, &cs), "{repeated} {hint}");
                let added: Vec<u64> = warm
                    .session_selections()
                    .unwrap()
                    .iter()
                    .flatten()
                    .zip(before.iter().flatten())
                    .map(|(a, b)| a - b)
                    .collect();
                let cold_counts: Vec<u64> = cold
                    .session_selections()
                    .unwrap()
                    .iter()
                    .flatten()
                    .copied()
                    .collect();
                assert_eq!(added, cold_counts, "{repeated} {hint}: counted alike");
            }
            if repeated && policy.algorithm == routex::ir::Algorithm::PulsarWaitAndWiden {
                // Returning to "c1" leads with its first copy, position 1.
                let d = decide(&warm, &hinted(0, "c1"), &cs);
                assert_eq!((selected(d), depth(d)), (1, 1));
            }
        }
    }
}
