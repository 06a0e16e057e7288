//! The proxy example in production over loopback (the fleet of
//! tests/support/proxy_fleet.rs, explained in tests/proxy/routing.rs): a cold
//! start, `/metrics` read by a Prometheus text parser and checked against
//! the requests sent, and backend health (stats expiry, passive outlier
//! ejection, draining) with positions and reservations unchanged.
//! Health time is a `ManualClock` the test advances.

use crate::backend::BackendConfig;
use crate::fleet::{ranking, run, until, Fleet, CLUSTERS, MODEL, SLOTS, TPS};
use crate::front::{self, ProxyOptions};
use http::StatusCode;
use prometheus_parse::{Sample, Scrape, Value};
use routex::router::{HealthOptions, ManualClock, RouterOptions, ERROR_CODE_HEADER};
use std::sync::Arc;
use std::time::Duration;

fn configs(f: impl Fn(&mut BackendConfig)) -> Vec<BackendConfig> {
    CLUSTERS
        .iter()
        .map(|c| {
            let mut config = BackendConfig::new(c, &[MODEL], SLOTS, TPS);
            f(&mut config);
            config
        })
        .collect()
}

fn position(cluster: &str) -> usize {
    CLUSTERS.iter().position(|c| *c == cluster).unwrap()
}

#[test]
fn a_fleet_started_from_nothing_routes_its_first_request() {
    run(async {
        // Cold engines report a rate of 0 and no peak until they have
        // served: without a registered rate nothing is routable
        // (pulsar-wait-and-widen ranks no cluster without a peak).
        let unregistered = configs(|c| {
            c.cold_start = true;
            c.register_rates = false;
        });
        let fleet = Fleet::start_with(unregistered, ProxyOptions::default()).await;
        let reply = fleet.keyed("first").await;
        assert_eq!(
            reply.status,
            StatusCode::SERVICE_UNAVAILABLE,
            "{}",
            reply.body
        );
        assert_eq!(reply.header(ERROR_CODE_HEADER), "routing_unavailable");

        // Registered with their benchmarked rate: the first request goes to
        // its Pulsar primary, and stays there once rates are measured.
        let registered = configs(|c| c.cold_start = true);
        let fleet = Fleet::start_with(registered, ProxyOptions::default()).await;
        let primary = ranking("first")[0].clone();
        let reply = fleet.keyed("first").await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
        assert_eq!(reply.cluster(), primary);
        assert_eq!(reply.header(front::RANK_DEPTH_HEADER), "1");
        fleet.heartbeats().await;
        let reply = fleet.keyed("first").await;
        assert_eq!(reply.cluster(), primary);
    });
}

/// The samples named `metric` whose labels include every pair of `labels`.
fn samples<'s>(scrape: &'s Scrape, metric: &str, labels: &[(&str, &str)]) -> Vec<&'s Sample> {
    scrape
        .samples
        .iter()
        .filter(|s| s.metric == metric)
        .filter(|s| labels.iter().all(|(k, v)| s.labels.get(k) == Some(*v)))
        .collect()
}

/// The value of the one sample named `metric` with these labels; 0 when
/// there is none (a series not exported yet).
fn value(scrape: &Scrape, metric: &str, labels: &[(&str, &str)]) -> f64 {
    let found = samples(scrape, metric, labels);
    assert!(
        found.len() <= 1,
        "{metric} {labels:?}: {} samples",
        found.len()
    );
    found.first().map_or(0.0, |s| match &s.value {
        Value::Counter(v) | Value::Gauge(v) | Value::Untyped(v) => *v,
        other => panic!("{metric}: {other:?}"),
    })
}

#[test]
fn metrics_count_the_requests_sent() {
    run(async {
        let fleet = Fleet::start().await;
        let keys: Vec<String> = (0..12).map(|i| format!("conversation-{i}")).collect();
        let mut routed = [0u64; 3];
        for round in 0..2 {
            for key in &keys {
                let reply = fleet.keyed(key).await;
                assert_eq!(
                    reply.status,
                    StatusCode::OK,
                    "round {round}: {}",
                    reply.body
                );
                assert_eq!(reply.header(front::TRIES_HEADER), "1");
                routed[position(reply.cluster())] += 1;
            }
            if round == 0 {
                fleet.heartbeats().await;
            }
        }
        // Three expressions on the keyless target: one build, two hits.
        for _ in 0..3 {
            let reply = fleet
                .send(&[("x-routing-method", Some("pulsar;seed=v1"))])
                .await;
            assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
            routed[position(reply.cluster())] += 1;
        }
        let malformed = fleet
            .send(&[("x-routing-method", Some("pulsar;seed=a,b"))])
            .await;
        assert_eq!(malformed.status, StatusCode::BAD_REQUEST);
        let unknown = fleet.send(&[("x-model", Some("unknown-model"))]).await;
        assert_eq!(unknown.status, StatusCode::NOT_FOUND);
        let missing = fleet.send(&[("x-input-tokens", None)]).await;
        assert_eq!(missing.status, StatusCode::BAD_REQUEST);
        // A failing primary: one failed attempt, then a fallback.
        let rank = ranking("failing");
        fleet.backend(&rank[0]).set_failing(true);
        let failing = fleet.keyed("failing").await;
        assert_eq!(failing.status, StatusCode::OK);
        assert_eq!(failing.header(front::TRIES_HEADER), "2");
        let fallback_depth = rank.iter().position(|c| c == failing.cluster()).unwrap() + 1;

        let scrape = fleet.scrape().await;
        let decided = |cluster: &str, depth: &str, algorithm: &str| {
            value(
                &scrape,
                "routex_decisions_total",
                &[
                    ("model", MODEL),
                    ("cluster", cluster),
                    ("rank_depth", depth),
                    ("algorithm", algorithm),
                ],
            )
        };
        // Every request above decided at depth 1 except the fallback; the
        // failed attempt's decision (rank 1, reserved, then released)
        // counts too. The expressions are pulsar, the rest the model's PWW.
        for (i, cluster) in CLUSTERS.iter().enumerate() {
            let all: f64 = samples(&scrape, "routex_decisions_total", &[("cluster", cluster)])
                .iter()
                .map(|s| match s.value {
                    Value::Counter(v) => v,
                    _ => 0.0,
                })
                .sum();
            let mut expected = routed[i] as f64;
            if *cluster == rank[0] {
                expected += 1.0; // the failed attempt
            }
            if *cluster == failing.cluster() {
                expected += 1.0;
            }
            assert_eq!(all, expected, "decisions on {cluster}");
        }
        assert_eq!(
            decided(
                failing.cluster(),
                &fallback_depth.to_string(),
                "pulsar-wait-and-widen"
            ),
            1.0
        );
        let pulsar: f64 = CLUSTERS.iter().map(|c| decided(c, "1", "pulsar")).sum();
        assert_eq!(pulsar, 3.0);
        let rejections = |code: &str, status: &str| {
            value(
                &scrape,
                "routex_rejections_total",
                &[("code", code), ("status", status)],
            )
        };
        assert_eq!(rejections("malformed_expression", "400"), 1.0);
        assert_eq!(rejections("no_eligible_candidates", "404"), 1.0);
        assert_eq!(rejections("invalid_header", "400"), 1.0);
        assert_eq!(rejections("routing_unavailable", "503"), 0.0);
        assert_eq!(value(&scrape, "routex_failed_attempts_total", &[]), 1.0);
        // Reservations in flight: everything delivered since the round-0
        // heartbeat, per cluster, as the view counts them.
        let pending = fleet.pending();
        for (i, cluster) in CLUSTERS.iter().enumerate() {
            let gauge = value(
                &scrape,
                "routex_reservations_in_flight",
                &[("model", MODEL), ("cluster", cluster)],
            );
            assert_eq!(gauge, pending[i] as f64, "{cluster}");
        }
        // One observation per routing step that reserved a backend: every
        // request once, the failing one twice (its failed attempt too).
        let total_routed = routed.iter().sum::<u64>() + 2;
        let count = value(
            &scrape,
            "routex_routing_wait_seconds_count",
            &[("outcome", "routed")],
        );
        assert_eq!(count, total_routed as f64);
        let waits = samples(
            &scrape,
            "routex_routing_wait_seconds",
            &[("outcome", "routed")],
        );
        let Value::Histogram(buckets) = &waits[0].value else {
            panic!("{:?}", waits[0].value)
        };
        let inf = buckets.iter().find(|b| b.less_than.is_infinite()).unwrap();
        assert_eq!(inf.count, total_routed as f64);
        // The two routings that ended in a rejection (the header one never
        // started routing).
        let rejected = value(
            &scrape,
            "routex_routing_wait_seconds_count",
            &[("outcome", "rejected")],
        );
        assert_eq!(rejected, 2.0);
        let expressions = |cache: &str| {
            value(
                &scrape,
                "stargate_routing_expressions_total",
                &[("algorithm", "pulsar"), ("cache", cache)],
            )
        };
        assert_eq!((expressions("build"), expressions("hit")), (1.0, 2.0));
        assert_eq!(
            value(&scrape, "stargate_routing_expression_cache_entries", &[]),
            1.0
        );
        // One target: the model without a routing key.
        assert_eq!(value(&scrape, "routex_targets", &[]), 1.0);
        assert_eq!(value(&scrape, "routex_targets_created_total", &[]), 1.0);
        assert_eq!(
            value(
                &scrape,
                "routex_backends",
                &[("model", MODEL), ("state", "eligible")]
            ),
            3.0
        );
    });
}

/// The model with `last_cluster_affinity` (pulsar-wait-and-widen, seed
/// `v1` as in examples/lb-config.json, affinity group of 1).
fn session_table() -> routex::ir::RouteTable {
    let json = format!(
        r#"{{"models": {{"{MODEL}": {{"algorithm": "pulsar-wait-and-widen", "seed": "v1",
            "last_cluster_affinity": true}}}}}}"#
    );
    let (table, report) = routex::config::check_lb_config("sessions.json", &json);
    assert!(!report.has_errors(), "{report:?}");
    table.unwrap()
}

/// `stargate_routing_session_selections_total` of pulsar-wait-and-widen,
/// for one (state, selection).
fn selections(scrape: &Scrape, state: &str, selection: &str) -> f64 {
    value(
        scrape,
        "stargate_routing_session_selections_total",
        &[
            ("algorithm", "pulsar-wait-and-widen"),
            ("session_state", state),
            ("selection", selection),
        ],
    )
}

/// docs/stargate.md 3.10's selection counter over the proxy: new, returning
/// and stale sessions of many routing keys are counted by the router, not
/// by the targets' balancer instances, so evicting targets (a bound of 2
/// here) takes nothing away.
#[test]
fn session_selections_are_counted_over_every_routing_key_and_survive_evictions() {
    run(async {
        let options = ProxyOptions {
            router: RouterOptions::default().with_cache_capacity(2),
            ..ProxyOptions::default()
        };
        let fleet = Fleet::start_table(session_table(), configs(|_| {}), options).await;
        let scrape = fleet.scrape().await;
        assert!(
            samples(&scrape, "stargate_routing_session_selections_total", &[]).is_empty(),
            "no series before a classified request"
        );
        // Per routing key: a new session, one returning to c2, one whose
        // hint names no candidate (stale). An idle fleet serves each at its
        // primary: rank 1 (within the group of 1) or its last cluster.
        let session = |tenant: &str, hint: Option<&'static str>| {
            let mut headers = vec![
                ("x-routing-key", Some(tenant.to_owned())),
                ("x-cache-affinity-key", Some("conversation".to_owned())),
            ];
            if let Some(hint) = hint {
                headers.push(("x-stargate-last-cluster-id", Some(hint.to_owned())));
            }
            headers
        };
        let send = |headers: Vec<(&'static str, Option<String>)>| {
            let borrowed: Vec<(&str, Option<&str>)> =
                headers.iter().map(|(n, v)| (*n, v.as_deref())).collect();
            fleet.send(&borrowed)
        };
        let sessions_of = |from: usize, to: usize| {
            let mut replies = Vec::new();
            for n in from..to {
                let tenant = format!("tenant-{n}");
                for hint in [None, Some("c2"), Some("c9")] {
                    replies.push((hint, send(session(&tenant, hint))));
                }
            }
            replies
        };
        for (hint, reply) in sessions_of(0, 2) {
            let reply = reply.await;
            assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
            match hint {
                Some("c2") => assert_eq!(reply.cluster(), "c2"),
                _ => assert_eq!(reply.header(front::RANK_DEPTH_HEADER), "1"),
            }
            fleet.heartbeats().await;
        }
        let before = fleet.scrape().await;
        for state in ["new", "returning", "stale"] {
            assert_eq!(selections(&before, state, "primary"), 2.0, "{state}");
            assert_eq!(selections(&before, state, "fallback"), 0.0, "{state}");
        }
        let evicted = |scrape: &Scrape| {
            value(
                scrape,
                "routex_targets_evicted_total",
                &[("reason", "capacity")],
            )
        };
        assert_eq!(evicted(&before), 0.0);

        // Four more routing keys evict the first two targets and two of
        // their own. A session returning to a failing c2 is served
        // elsewhere on its second send; every decision counts, as in the
        // balancer instances: c2 for the failed send, c2 again (its only
        // backend is now excluded, so the cluster is excluded without a
        // send) and the fallback.
        for (hint, reply) in sessions_of(2, 6) {
            let reply = reply.await;
            assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
            if hint == Some("c2") {
                assert_eq!(reply.cluster(), "c2");
            }
            fleet.heartbeats().await;
        }
        fleet.backend("c2").set_failing(true);
        let failed_over = send(session("tenant-0", Some("c2"))).await;
        assert_eq!(failed_over.status, StatusCode::OK, "{}", failed_over.body);
        assert_eq!(failed_over.header(front::TRIES_HEADER), "2");
        assert_ne!(failed_over.cluster(), "c2");

        let after = fleet.scrape().await;
        assert_eq!(value(&after, "routex_targets", &[]), 2.0);
        assert_eq!(evicted(&after), 5.0);
        assert_eq!(selections(&after, "new", "primary"), 6.0);
        assert_eq!(selections(&after, "stale", "primary"), 6.0);
        assert_eq!(value(&after, "routex_clusters_excluded_total", &[]), 1.0);
        assert_eq!(selections(&after, "returning", "primary"), 8.0);
        assert_eq!(selections(&after, "returning", "fallback"), 1.0);
        assert_eq!(selections(&after, "new", "fallback"), 0.0);
        assert_eq!(selections(&after, "stale", "fallback"), 0.0);
        for state in ["new", "returning", "stale"] {
            for selection in ["primary", "fallback"] {
                assert!(
                    selections(&after, state, selection) >= selections(&before, state, selection),
                    "{state} {selection} fell"
                );
            }
        }
    });
}

/// A fleet whose health runs on a clock the test advances: reports expire
/// after 1 s, 2 consecutive failures eject for 10 s.
async fn health_fleet(clock: &Arc<ManualClock>) -> Fleet {
    let health = HealthOptions {
        stats_ttl: Some(Duration::from_secs(1)),
        consecutive_failures: 2,
        base_ejection: Duration::from_secs(10),
        // Ejections end by time here (tests/proxy/health.rs has the probe).
        probe_after: None,
        ..HealthOptions::default()
    }
    .with_clock(clock.clone());
    Fleet::start_with(
        configs(|_| {}),
        ProxyOptions {
            health,
            ..ProxyOptions::default()
        },
    )
    .await
}

#[test]
fn a_backend_whose_reports_stop_is_not_used_until_it_reports_again() {
    run(async {
        let clock = Arc::new(ManualClock::new());
        let fleet = health_fleet(&clock).await;
        let rank = ranking("silent");
        let reply = fleet.keyed("silent").await;
        assert_eq!(reply.cluster(), rank[0]);
        // Everyone but the primary reports; a second later its last
        // report is 1 s old: stale.
        clock.advance(Duration::from_millis(600));
        for c in &rank[1..] {
            fleet.backend(c).heartbeat().await.unwrap();
        }
        clock.advance(Duration::from_millis(400));
        let reply = fleet.keyed("silent").await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
        assert_ne!(reply.cluster(), rank[0]);
        // Positions unchanged, the primary's reservation still counted.
        let view = fleet.proxy.view(MODEL).unwrap();
        let read = view.read();
        assert_eq!(read.position(&rank[0]), Some(position(&rank[0])));
        assert_eq!(read.pending(position(&rank[0])), 1);
        drop(read);
        let scrape = fleet.scrape().await;
        let stale = value(
            &scrape,
            "routex_backends",
            &[("model", MODEL), ("state", "stale")],
        );
        assert_eq!(stale, 1.0);
        // It reports again: eligible at once.
        fleet.backend(&rank[0]).heartbeat().await.unwrap();
        let reply = fleet.keyed("silent").await;
        assert_eq!(reply.cluster(), rank[0]);
    });
}

#[test]
fn consecutive_failures_eject_a_backend_for_a_growing_interval() {
    run(async {
        let clock = Arc::new(ManualClock::new());
        let fleet = health_fleet(&clock).await;
        let rank = ranking("flaky");
        let primary = fleet.backend(&rank[0]);
        primary.set_failing(true);
        // Two requests pay a failed round trip each, then it is ejected.
        for _ in 0..2 {
            let reply = fleet.keyed("flaky").await;
            assert_eq!(reply.header(front::TRIES_HEADER), "2");
        }
        let before = primary.received();
        for _ in 0..5 {
            let reply = fleet.keyed("flaky").await;
            assert_eq!(reply.status, StatusCode::OK);
            assert_eq!(reply.header(front::TRIES_HEADER), "1");
            assert_ne!(reply.cluster(), rank[0]);
        }
        assert_eq!(primary.received(), before, "no request reached it");
        let scrape = fleet.scrape().await;
        assert_eq!(
            value(
                &scrape,
                "routex_backend_ejections_total",
                &[("outcome", "ejected")]
            ),
            1.0
        );
        assert_eq!(value(&scrape, "routex_failed_attempts_total", &[]), 2.0);
        // Back after 10 s; still failing: ejected again after 2 failures,
        // now for 20 s.
        clock.advance(Duration::from_secs(10));
        fleet.heartbeats().await;
        for _ in 0..2 {
            let reply = fleet.keyed("flaky").await;
            assert_eq!(reply.header(front::TRIES_HEADER), "2");
        }
        clock.advance(Duration::from_secs(15));
        fleet.heartbeats().await;
        let reply = fleet.keyed("flaky").await;
        assert_eq!(
            reply.header(front::TRIES_HEADER),
            "1",
            "still ejected at 15 s"
        );
        clock.advance(Duration::from_secs(5));
        fleet.heartbeats().await;
        primary.set_failing(false);
        let reply = fleet.keyed("flaky").await;
        assert_eq!(reply.cluster(), rank[0], "back after 20 s");
        let view = fleet.proxy.view(MODEL).unwrap();
        assert_eq!(view.read().position(&rank[0]), Some(position(&rank[0])));
    });
}

#[test]
fn a_draining_backend_finishes_its_requests_and_takes_no_new_ones() {
    run(async {
        let clock = Arc::new(ManualClock::new());
        let fleet = health_fleet(&clock).await;
        let rank = ranking("drain");
        let primary = fleet.backend(&rank[0]);
        primary.hold();
        let in_flight = tokio::spawn(fleet.keyed("drain"));
        until("the request at the primary", || primary.received() == 1).await;
        primary.set_draining(true);
        primary.heartbeat().await.unwrap();
        // A heartbeat clears reservations; the held request is the
        // engine's own now. New requests go elsewhere.
        for _ in 0..3 {
            let reply = fleet.keyed("drain").await;
            assert_eq!(reply.status, StatusCode::OK);
            assert_ne!(reply.cluster(), rank[0]);
        }
        assert_eq!(primary.received(), 1);
        primary.release();
        let reply = in_flight.await.unwrap();
        assert_eq!(reply.status, StatusCode::OK);
        assert_eq!(reply.cluster(), rank[0], "the in-flight request finished");
        let view = fleet.proxy.view(MODEL).unwrap();
        assert_eq!(view.read().position(&rank[0]), Some(position(&rank[0])));
        let scrape = fleet.scrape().await;
        let draining = value(
            &scrape,
            "routex_backends",
            &[("model", MODEL), ("state", "draining")],
        );
        assert_eq!(draining, 1.0);
        // Draining ends: it takes requests again.
        primary.set_draining(false);
        primary.heartbeat().await.unwrap();
        let reply = fleet.keyed("drain").await;
        assert_eq!(reply.cluster(), rank[0]);
    });
}
