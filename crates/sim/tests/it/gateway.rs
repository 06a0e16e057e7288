//! The gateway's last-cluster store (docs/simulator.md, "The gateway's
//! last-cluster store"): the end-to-end check of docs/stargate.md 3.10 on
//! a two-backend fleet, with `last_cluster_affinity` and the store on and
//! off.

use super::support::run_one;
use routex_sim::scenario::{load_with, LoadOptions};
use routex_sim::world::fleet::RequestLog;

/// The chat session's turns, in order, of one run of
/// `crates/sim/tests/inputs/sessions-overflow.json` with the flag and the store
/// (its TTL in ms) as given; also the two fillers.
fn run(flag: bool, store_ttl_ms: Option<u64>) -> (Vec<RequestLog>, [RequestLog; 2]) {
    let dir = super::repo().join("crates/sim/tests/inputs");
    let text = std::fs::read_to_string(dir.join("sessions-overflow.json")).expect("scenario");
    let mut v: serde_json::Value = serde_json::from_str(&text).expect("json");
    v["base_config"]["request_algorithms"]["pulsar-wait-and-widen"]["last_cluster_affinity"] =
        flag.into();
    v["client"]["last_cluster_store"] = match store_ttl_ms {
        Some(ttl) => serde_json::json!({ "ttl_ms": ttl }),
        None => serde_json::Value::Null,
    };
    let options = LoadOptions {
        dir: Some(&dir),
        ..LoadOptions::default()
    };
    let mut p = load_with("sessions-overflow.json", &v.to_string(), options)
        .unwrap_or_else(|f| panic!("{:?}", f.reports()));
    p.settings.keep_detail = true;
    let rate = p.file.rates_rps[0];
    let result = run_one(&p, "sessions", rate, 1);
    let log = result.detail.expect("detail").requests;
    assert_eq!(log.len(), 13, "the trace once");
    assert!(log.iter().all(|r| r.succeeded), "{log:?}");
    (log[2..].to_vec(), [log[0], log[1]])
}

fn backends(turns: &[RequestLog]) -> Vec<u32> {
    turns.iter().map(|r| r.backend).collect()
}

#[test]
fn a_session_stays_where_it_overflowed_only_with_the_flag_and_the_store() {
    let (on, fillers) = run(true, Some(600_000));
    // The setting: both fillers on the session's primary, which is full
    // when the first turn arrives, so that turn overflows to the other.
    let primary = fillers[0].backend;
    assert_eq!(fillers[1].backend, primary);
    let other = 1 - primary;
    assert_eq!(on[0].backend, other, "the first turn overflows");
    assert!(
        fillers.iter().all(|f| f.done < on[1].sent),
        "the primary drained before the second turn"
    );
    // Flag and store on: every later turn returns to where the session was
    // served (rank 1 after the promotion), and finds its prefix there.
    assert_eq!(backends(&on[1..]), vec![other; 10]);
    assert!(on[1..].iter().all(|r| r.rank_depth == 1));
    assert!(on[1].reused > 0, "the first turn's blocks are warm there");

    // Flag off, store on: the hint is sent and ignored; back to the primary,
    // whose cache never saw the session.
    let (off, _) = run(false, Some(600_000));
    assert_eq!(off[0].backend, other);
    assert_eq!(backends(&off[1..]), vec![primary; 10]);
    assert_eq!(off[1].reused, 0, "cold on the primary");
    assert!(off[2].reused > 0, "warm from the second turn on");

    // Flag on, no store: every turn is a new session, which takes its
    // primary when it has room.
    let (no_store, _) = run(true, None);
    assert_eq!(backends(&no_store[1..]), vec![primary; 10]);

    // Flag and store on, but the entry expired before the second turn
    // (TTL 5 s, turn 1 done near 1 s, turn 2 at 30 s): a new session again.
    // Turn 2's response teaches the store the primary for the rest.
    let (expired, _) = run(true, Some(5_000));
    assert_eq!(expired[0].backend, other);
    assert_eq!(backends(&expired[1..]), vec![primary; 10]);
}
