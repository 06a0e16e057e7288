//! The proxy example (examples/proxy) end to end over loopback: its front
//! end, three fake backends and an HTTP client, all on 127.0.0.1, with the
//! configuration of examples/lb-config.json. Each test builds its own fleet
//! on one thread (so a decision and its reservation are never interleaved
//! with another request's), sends a bounded number of requests and stops
//! within its timeout.
//!
//! The model is `llama-3-70b`: pulsar-wait-and-widen with seed `v1`, a
//! queue SLO of 500..2000 ms, an affinity wait of 300 ms, bands every
//! 200 ms, `fallback_max_queued` 1 and KV checks (docs/stargate.md 3.8).
//! Every backend has 24 engine slots, 1000 prompt tokens/s and room in its
//! KV cache; every request has 100 input tokens. So a cluster with a free
//! slot has a queue estimate of 0 and a full one 24 x 100 / 1000 s =
//! 2400 ms, over the 2000 ms SLO: a cluster takes exactly 24 requests
//! before the next heartbeat, counting the proxy's own reservations.

use crate::backend::{self, Backend};
use crate::fleet::{ranking, run, table, until, Fleet, CLUSTERS, MODEL, SLOTS};
use crate::{fleet, front, gateway};
use http::StatusCode;
use routex::router::{Router, ERROR_CODE_HEADER};
use std::collections::BTreeMap;

fn index(cluster: &str) -> usize {
    CLUSTERS.iter().position(|c| *c == cluster).unwrap()
}

#[test]
fn at_low_load_each_affinity_key_stays_on_its_primary() {
    run(async {
        let fleet = Fleet::start().await;
        let keys: Vec<String> = (0..12).map(|i| format!("conversation-{i}")).collect();
        let primaries: Vec<String> = keys.iter().map(|k| ranking(k)[0].clone()).collect();
        let mut per_cluster = [0usize; 3];
        for p in &primaries {
            per_cluster[index(p)] += 1;
        }
        assert!(
            per_cluster.iter().filter(|n| **n > 0).count() >= 2,
            "the keys hash to more than one cluster: {per_cluster:?}"
        );
        for round in 0..3 {
            for (key, primary) in keys.iter().zip(&primaries) {
                let reply = fleet.keyed(key).await;
                assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
                assert_eq!(reply.cluster(), primary, "round {round}, key {key}");
                assert_eq!(reply.header(front::RANK_DEPTH_HEADER), "1");
                assert_eq!(reply.header(front::TRIES_HEADER), "1");
                let body: serde_json::Value = serde_json::from_str(&reply.body).unwrap();
                assert_eq!(body["cluster"], primary.as_str());
            }
            // Delivered requests stay reserved until their backend reports.
            assert_eq!(fleet.pending(), per_cluster.to_vec());
            fleet.heartbeats().await;
            assert_eq!(fleet.pending(), vec![0, 0, 0]);
        }
        let served: Vec<u64> = fleet.backends.iter().map(Backend::answered).collect();
        let expected: Vec<u64> = per_cluster.iter().map(|n| 3 * *n as u64).collect();
        assert_eq!(served, expected);
    });
}

#[test]
fn a_burst_on_one_key_spreads_24_24_24_and_the_73rd_gets_503() {
    run(async {
        let fleet = Fleet::start().await;
        let key = "burst";
        let rank = ranking(key);
        for b in &fleet.backends {
            b.hold();
        }
        let mut replies = tokio::task::JoinSet::new();
        for _ in 0..73 {
            replies.spawn(fleet.keyed(key));
        }
        // The first 24 take the primary's free slots at once; the other 49
        // wait out the 300 ms affinity wait, then the open set (ranks 1-3)
        // offers ranks 2 and 3 until each holds 24; the primary, full, is
        // over the SLO. The last one finds nothing and, without
        // x-max-wait-ms, gets 503 at once.
        let first = replies.join_next().await.unwrap().unwrap();
        assert_eq!(
            first.status,
            StatusCode::SERVICE_UNAVAILABLE,
            "{}",
            first.body
        );
        assert_eq!(first.header(ERROR_CODE_HEADER), "routing_unavailable");
        until("72 requests at the backends", || {
            fleet.received().iter().sum::<u64>() == 72
        })
        .await;
        assert_eq!(fleet.received(), vec![24, 24, 24]);
        assert_eq!(fleet.pending(), vec![24, 24, 24]);
        for b in &fleet.backends {
            b.release();
        }
        let mut by_cluster: BTreeMap<String, usize> = BTreeMap::new();
        while let Some(reply) = replies.join_next().await {
            let reply = reply.unwrap();
            assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
            let depth = rank.iter().position(|c| c == reply.cluster()).unwrap() + 1;
            assert_eq!(reply.header(front::RANK_DEPTH_HEADER), depth.to_string());
            *by_cluster.entry(reply.cluster().to_owned()).or_default() += 1;
        }
        let expected: BTreeMap<String, usize> =
            CLUSTERS.iter().map(|c| ((*c).to_owned(), 24)).collect();
        assert_eq!(by_cluster, expected);
    });
}

#[test]
fn malformed_headers_get_400_with_their_code() {
    run(async {
        let fleet = Fleet::start().await;
        let reply = fleet
            .send(&[("x-routing-method", Some("pulsar;seed=a,b"))])
            .await;
        assert_eq!(reply.status, StatusCode::BAD_REQUEST);
        assert_eq!(reply.header(ERROR_CODE_HEADER), "malformed_expression");
        assert_eq!(reply.header("content-type"), "application/json");
        let expected = Router::new(table())
            .resolve(MODEL, None, Some(b"pulsar;seed=a,b"))
            .unwrap_err();
        assert_eq!(reply.body, expected.body_json());
        let body: serde_json::Value = serde_json::from_str(&reply.body).unwrap();
        assert_eq!(body["code"], "malformed_expression");
        assert!(body["error"].as_str().unwrap().starts_with("P3:"), "{body}");

        let reply = fleet.send(&[("x-routing-method", Some("fastest"))]).await;
        assert_eq!(reply.status, StatusCode::BAD_REQUEST);
        assert_eq!(
            reply.body,
            r#"{"error":"unknown routing method 'fastest'","code":"unknown_method"}"#
        );

        let reply = fleet.send(&[("x-input-tokens", None)]).await;
        assert_eq!(reply.status, StatusCode::BAD_REQUEST);
        assert_eq!(reply.header(ERROR_CODE_HEADER), "invalid_header");
        assert_eq!(
            reply.body,
            r#"{"error":"missing required header x-input-tokens","code":"invalid_header"}"#
        );
        for (name, value) in [
            ("x-priority", "-1"),
            ("x-max-wait-ms", ""),
            ("x-request-slo-ms", "1.5"),
            ("x-input-tokens", "18446744073709551616"),
        ] {
            let reply = fleet.send(&[(name, Some(value))]).await;
            assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{name}: {value}");
            assert_eq!(reply.header(ERROR_CODE_HEADER), "invalid_header");
        }
        let reply = fleet.send(&[("x-model", Some("unknown-model"))]).await;
        assert_eq!(reply.status, StatusCode::NOT_FOUND);
        assert_eq!(reply.header(ERROR_CODE_HEADER), "no_eligible_candidates");
        assert_eq!(fleet.received(), vec![0, 0, 0], "nothing was forwarded");
    });
}

#[test]
fn a_max_wait_shorter_than_the_affinity_wait_ends_in_503() {
    run(async {
        let fleet = Fleet::start().await;
        let key = "waiting";
        let rank = ranking(key);
        // 24 delivered requests, reserved until the primary reports: full.
        for _ in 0..SLOTS {
            let reply = fleet.keyed(key).await;
            assert_eq!(reply.cluster(), rank[0]);
        }
        let mut pending = vec![0; 3];
        pending[index(&rank[0])] = 24;
        assert_eq!(fleet.pending(), pending);

        // 100 ms < the 300 ms affinity wait: 503 before the bands open.
        let reply = fleet
            .send(&[
                ("x-cache-affinity-key", Some(key)),
                ("x-max-wait-ms", Some("100")),
            ])
            .await;
        assert_eq!(reply.status, StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(reply.header(ERROR_CODE_HEADER), "routing_unavailable");
        let body: serde_json::Value = serde_json::from_str(&reply.body).unwrap();
        assert_eq!(body["code"], "routing_unavailable");
        assert_eq!(fleet.received().iter().sum::<u64>(), 24);

        // A longer budget outlasts the wait: rank 2 or 3 after 300 ms.
        let reply = fleet
            .send(&[
                ("x-cache-affinity-key", Some(key)),
                ("x-max-wait-ms", Some("5000")),
            ])
            .await;
        assert_eq!(reply.status, StatusCode::OK);
        assert_ne!(reply.cluster(), rank[0]);
        let depth = rank.iter().position(|c| c == reply.cluster()).unwrap() + 1;
        assert_eq!(reply.header(front::RANK_DEPTH_HEADER), depth.to_string());

        // The primary's heartbeat clears its reservations: primary again.
        fleet.backend(&rank[0]).heartbeat().await.unwrap();
        let reply = fleet
            .send(&[
                ("x-cache-affinity-key", Some(key)),
                ("x-max-wait-ms", Some("100")),
            ])
            .await;
        assert_eq!(reply.cluster(), rank[0]);
    });
}

#[test]
fn a_failing_backend_excludes_its_cluster_and_the_request_is_routed_again() {
    run(async {
        let fleet = Fleet::start().await;
        let key = "failing";
        let rank = ranking(key);
        fleet.backend(&rank[0]).set_failing(true);
        let reply = fleet.keyed(key).await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
        assert_eq!(reply.header(front::TRIES_HEADER), "2");
        assert_ne!(reply.cluster(), rank[0]);
        let depth = rank.iter().position(|c| c == reply.cluster()).unwrap() + 1;
        assert_eq!(reply.header(front::RANK_DEPTH_HEADER), depth.to_string());
        let primary = fleet.backend(&rank[0]);
        assert_eq!((primary.received(), primary.answered()), (1, 0));
        // The failed attempt's reservation is released; the delivered one kept.
        let mut pending = vec![0; 3];
        pending[index(reply.cluster())] = 1;
        assert_eq!(fleet.pending(), pending);

        // Every backend failing: each cluster is tried once, then 503.
        for b in &fleet.backends {
            b.set_failing(true);
        }
        let before = fleet.received();
        let reply = fleet.keyed(key).await;
        assert_eq!(reply.status, StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(reply.header(ERROR_CODE_HEADER), "candidates_exhausted");
        let after = fleet.received();
        let tried: Vec<u64> = after.iter().zip(&before).map(|(a, b)| a - b).collect();
        assert_eq!(tried, vec![1, 1, 1]);
        assert_eq!(fleet.pending(), pending, "failed attempts leave nothing");
    });
}

#[test]
fn a_client_that_disconnects_leaves_no_reservation() {
    run(async {
        let fleet = Fleet::start().await;
        let key = "cancelled";
        let rank = ranking(key);
        for b in &fleet.backends {
            b.hold();
        }
        let request = tokio::spawn(fleet.keyed(key));
        until("the request at its backend", || {
            fleet.backend(&rank[0]).received() == 1
        })
        .await;
        let mut pending = vec![0; 3];
        pending[index(&rank[0])] = 1;
        assert_eq!(fleet.pending(), pending);
        // The client goes away: the connection closes, the proxy's handler
        // future is dropped, and with it the reservation.
        request.abort();
        until("the reservation released", || {
            fleet.pending() == vec![0, 0, 0]
        })
        .await;
        for b in &fleet.backends {
            b.release();
        }
    });
}

/// The end-to-end check of docs/stargate.md 3.10 (sessions): two long
/// requests fill cluster `a` (engine concurrency 2); a session's first
/// request overflows to `b`; `a` drains; the session's next 10 requests stay
/// on `b` with `last_cluster_affinity` on and return to `a` with it off.
/// The proxy plays the gateway: it learns the session's cluster from the
/// `x-stargate-cluster-id` of each successful response and sends it back.
#[test]
fn a_session_stays_where_it_overflowed_with_last_cluster_affinity() {
    for flag in [true, false] {
        let mut placed = Vec::new();
        run(async { placed = session_check(flag).await });
        let expected = if flag { "b" } else { "a" };
        assert_eq!(placed, vec![expected; 10], "last_cluster_affinity {flag}");
    }
}

fn session_table(flag: bool) -> routex::ir::RouteTable {
    let json = format!(
        r#"{{"request_algorithms": {{"pulsar": {{"algorithm": "pulsar", "seed": "s"}}}},
            "models": {{"{MODEL}": {{"algorithm": "pulsar-wait-and-widen", "seed": "s",
                "last_cluster_affinity": {flag}}}}}}}"#
    );
    let (table, report) = routex::config::check_lb_config("sessions.json", &json);
    assert!(!report.has_errors(), "{report:?}");
    table.unwrap()
}

/// A key whose Pulsar ranking (seed `s`) puts `a` first.
fn key_ranking_a_first(prefix: &str) -> String {
    use routex::balancer::{ClusterSnapshot, Decision, Request, Scratch};
    use routex::router::RouteRequest;
    let router = Router::new(session_table(true));
    let clusters: Vec<ClusterSnapshot> = ["a", "b"]
        .iter()
        .map(|id| ClusterSnapshot {
            last_mean_input_tps: fleet::TPS,
            max_input_tps: Some(fleet::TPS),
            ..ClusterSnapshot::new(*id)
        })
        .collect();
    (0..1000)
        .map(|i| format!("{prefix}-{i}"))
        .find(|key| {
            let request = RouteRequest {
                request: Request {
                    model: MODEL,
                    cache_affinity_key: Some(key),
                    input_tokens: Some(100),
                    ..Request::default()
                },
                routing_method: Some(b"pulsar"),
            };
            let d = router.route(
                &request,
                &clusters,
                &mut rand::rng(),
                &mut Scratch::default(),
            );
            matches!(d, Ok(Decision::Selected(c)) if c.index == 0)
        })
        .expect("some key ranks a first")
}

/// The check once; the clusters of the session's last 10 requests.
async fn session_check(flag: bool) -> Vec<String> {
    let options = front::ProxyOptions {
        sessions: Some(gateway::StoreOptions::default()),
        ..front::ProxyOptions::default()
    };
    let configs = ["a", "b"]
        .iter()
        .map(|c| backend::BackendConfig::new(c, &[MODEL], 2, fleet::TPS))
        .collect();
    let fleet = Fleet::start_table(session_table(flag), configs, options).await;
    let (a, b) = (&fleet.backends[0], &fleet.backends[1]);
    let session = key_ranking_a_first("session");
    let fillers = [key_ranking_a_first("long-1"), key_ranking_a_first("long-2")];
    // Two long requests fill a.
    a.hold();
    let long: Vec<_> = fillers
        .iter()
        .map(|key| tokio::spawn(fleet.keyed(key)))
        .collect();
    until("two requests held at a", || a.received() == 2).await;
    fleet.heartbeats().await;
    // The session's first request overflows to b (a new session neither
    // waits nor keeps to a full primary).
    let first = fleet.keyed(&session).await;
    assert_eq!(first.status, StatusCode::OK, "{}", first.body);
    assert_eq!(first.header("x-stargate-cluster-id"), "b");
    assert_eq!(b.received(), 1);
    // a drains.
    a.release();
    for reply in long {
        let reply = reply.await.unwrap();
        assert_eq!(reply.status, StatusCode::OK);
        assert_eq!(reply.header("x-stargate-cluster-id"), "a");
    }
    fleet.heartbeats().await;
    // The next 10 requests of the session.
    let mut placed = Vec::new();
    for _ in 0..10 {
        let reply = fleet.keyed(&session).await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
        assert_eq!(reply.header("x-stargate-cluster-id"), reply.cluster());
        placed.push(reply.cluster().to_owned());
        fleet.heartbeats().await;
    }
    placed
}
