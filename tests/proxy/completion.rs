//! Short requests under a longer heartbeat: with `Completion::Complete` a
//! request frees its slot when its answer has been delivered, so finished
//! requests never make others wait; with `Completion::Keep` (stargate's
//! semantics) every finished request holds its slot until its backend's
//! next heartbeat, and the routing loop sleeps.
//!
//! The fleet: three clusters of one backend, 8 engine slots each (24), 50 ms
//! per request, a heartbeat every 200 ms; 16 clients, each sending 15
//! requests one after the other (fewer clients than slots, so any wait
//! comes from slots held by finished requests).

use crate::backend::BackendConfig;
use crate::fleet::{run, Fleet, CLUSTERS, MODEL, TPS};
use crate::front::{Completion, ProxyOptions};
use http::StatusCode;
use prometheus_parse::Value;
use std::time::{Duration, Instant};

const CLIENTS: usize = 16;
const REQUESTS: usize = 15;

struct Outcome {
    /// Routing-loop sleeps (recheck and retry).
    sleeps: f64,
    /// Requests answered per second of wall time.
    rate: f64,
    /// Requests whose routing took a millisecond or more
    /// (x-routex-waited-ms > 0): waits, and decisions slowed by the load.
    waited: usize,
}

async fn drive(completion: Completion) -> Outcome {
    let configs = CLUSTERS
        .iter()
        .map(|c| BackendConfig {
            service_time: Duration::from_millis(50),
            heartbeat_every: Some(Duration::from_millis(200)),
            ..BackendConfig::new(c, &[MODEL], 8, TPS)
        })
        .collect();
    let options = ProxyOptions {
        completion,
        ..ProxyOptions::default()
    };
    let fleet = Fleet::start_with(configs, options).await;
    let started = Instant::now();
    let clients: Vec<_> = (0..CLIENTS)
        .map(|_| {
            // Wait-and-widen without an affinity key: any cluster with a
            // free slot, else a timed wait.
            let requests: Vec<_> = (0..REQUESTS)
                .map(|_| {
                    fleet.send(&[
                        ("x-routing-method", Some("wait-and-widen")),
                        ("x-max-wait-ms", Some("5000")),
                    ])
                })
                .collect();
            tokio::spawn(async move {
                let mut waited = 0;
                for request in requests {
                    let reply = request.await;
                    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
                    let ms: u64 = reply.header(crate::front::WAITED_HEADER).parse().unwrap();
                    waited += usize::from(ms > 0);
                }
                waited
            })
        })
        .collect();
    let mut waited = 0;
    for client in clients {
        waited += client.await.unwrap();
    }
    let elapsed = started.elapsed().as_secs_f64();
    let scrape = fleet.scrape().await;
    let sleeps = scrape
        .samples
        .iter()
        .filter(|s| s.metric == "routex_routing_sleeps_total")
        .map(|s| match s.value {
            Value::Counter(v) => v,
            _ => 0.0,
        })
        .sum();
    Outcome {
        sleeps,
        rate: (CLIENTS * REQUESTS) as f64 / elapsed,
        waited,
    }
}

#[test]
fn finished_requests_free_their_slots_when_completed() {
    run(async {
        let complete = drive(Completion::Complete).await;
        let keep = drive(Completion::Keep).await;
        eprintln!(
            "completion: complete {:.0} req/s, {} sleeps, {} waited; keep {:.0} req/s, {} sleeps, {} waited",
            complete.rate, complete.sleeps, complete.waited, keep.rate, keep.sleeps, keep.waited
        );
        // No routing-loop sleep at all. (`waited` is not asserted: on a
        // loaded machine a decision alone can take a millisecond.)
        assert_eq!(
            complete.sleeps, 0.0,
            "no routing-loop wait from finished requests"
        );
        // The same load with the slots held until the next heartbeat:
        // 24 slots per 200 ms cannot carry 16 clients at 50 ms.
        assert!(keep.sleeps > 0.0, "keep holds finished requests' slots");
        assert!(keep.waited > 10, "{}", keep.waited);
    });
}
