//! The trace reader and replay on small traces written in the tests.

use super::*;
use crate::kernel::rng::{stream, Stream};

fn spec() -> TraceSpec {
    TraceSpec {
        path: "t.jsonl".into(),
        format: default_format(),
        block_tokens: 512,
        speedups: Vec::new(),
        affinity_key: None,
        max_requests: None,
        repeat: Repeat::Fresh,
    }
}

const GOOD: &str = r#"{"timestamp": 0, "input_length": 1000, "output_length": 10, "hash_ids": [0, 1]}
{"timestamp": 500, "input_length": 1500, "output_length": 20, "hash_ids": [0, 1, 7]}

{"timestamp": 2000, "input_length": 600, "output_length": 5, "hash_ids": [0, 9], "extra": true}
"#;

#[test]
fn reads_requests_blocks_and_keys() {
    let t = Trace::read(GOOD.as_bytes(), &spec(), Limits::default()).expect("good");
    assert_eq!(t.len(), 3);
    assert_eq!(t.span_s(), 2.0);
    assert_eq!(t.native_rps(), 1.5);
    assert_eq!(t.block_ids(), 4, "0, 1, 7, 9 interned densely");
    assert_eq!(&t.blocks[..], &[0, 1, 0, 1, 2, 0, 3]);
    assert_eq!(t.distinct_keys(), 2, "[0, 1] twice, [0, 9] once");
    assert_eq!(t.requests[0].key, t.requests[1].key);
    assert_eq!(
        AffinityRule::default().key(&[0, 1, 7]),
        AffinityRule::default().key(&[0, 1])
    );
    assert_eq!(AffinityRule { first_blocks: 0 }.key(&[0]), None);
}

#[test]
fn malformed_lines_are_errors_with_their_line_numbers() {
    let text =
        "{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 1, \"hash_ids\": [0]}\n\
                {\"timestamp\": 1, \"input_length\": 10}\n\
                not json\n\
                {\"timestamp\": -5, \"input_length\": 10, \"output_length\": 1, \"hash_ids\": []}\n\
                {\"timestamp\": 3, \"input_length\": 0, \"output_length\": 1, \"hash_ids\": []}\n";
    let e = Trace::read(text.as_bytes(), &spec(), Limits::default()).unwrap_err();
    let lines: Vec<u64> = e.iter().map(|e| e.line).collect();
    assert_eq!(lines, vec![2, 3, 4, 5]);
    assert!(
        e[0].message.contains("missing field `output_length`"),
        "{}",
        e[0].message
    );
    assert_eq!(e[1].column, Some(2), "{}", e[1].message);
    assert!(e[2].message.contains("timestamp"));
    assert!(e[3].message.contains("input_length"));
}

#[test]
fn bounds_stop_reading() {
    let tight = Limits {
        requests: 2,
        ..Limits::default()
    };
    let e = Trace::read(GOOD.as_bytes(), &spec(), tight).unwrap_err();
    assert_eq!(e[0].line, 4);
    let short = Limits {
        line_bytes: 40,
        ..Limits::default()
    };
    let e = Trace::read(GOOD.as_bytes(), &spec(), short).unwrap_err();
    assert_eq!((e.len(), e[0].line), (1, 1));
    assert!(e[0].message.contains("longer than 40 bytes"));
    let few = Limits {
        errors: 2,
        ..Limits::default()
    };
    let e = Trace::read("{x\n{y\n{z\n".as_bytes(), &spec(), few).unwrap_err();
    assert_eq!(e.len(), 2, "reading stops after the error limit");
    let e = Trace::read("\n\n".as_bytes(), &spec(), Limits::default()).unwrap_err();
    assert!(e[0].message.contains("no request"));
    let mut first_two = spec();
    first_two.max_requests = Some(2);
    let t = Trace::read(GOOD.as_bytes(), &first_two, Limits::default()).expect("prefix");
    assert_eq!(t.len(), 2);
}

#[test]
fn compression_scales_arrivals_and_keeps_blocks() {
    let t = Trace::read(GOOD.as_bytes(), &spec(), Limits::default()).expect("good");
    let shape = |rate_rps, horizon_s| PlanShape {
        rate_rps,
        horizon_s,
        router_weights: &[1.0, 1.0],
        ttft_jitter_ms: 20.0,
        decode_tps: [128.0, 200.0],
    };
    // Horizons within one pass of the trace (no repetition).
    let native = t.plan(&shape(1.5, 2.5), &mut stream(1, Stream::Workload));
    let arrivals: Vec<Micros> = native.requests.iter().map(|r| r.arrival).collect();
    assert_eq!(arrivals, vec![0, 500_000, 2_000_000]);
    assert_eq!(native.end, 2_500_000);
    let fast = t.plan(&shape(6.0, 0.6), &mut stream(1, Stream::Workload));
    let arrivals: Vec<Micros> = fast.requests.iter().map(|r| r.arrival).collect();
    assert_eq!(arrivals, vec![0, 125_000, 500_000], "4 x faster");
    assert_eq!(fast.blocks_of(&fast.requests[1]), &[0, 1, 2]);
    assert_eq!(fast.requests[1].output, 20);
    assert_eq!(fast.block_tokens, 512);
    // The same draws whatever the speed-up.
    let routers = |p: &Plan| p.requests.iter().map(|r| r.router).collect::<Vec<_>>();
    assert_eq!(routers(&native), routers(&fast));
    let cut = shape(1.5, 1.0);
    let cut = t.plan(&cut, &mut stream(1, Stream::Workload));
    assert_eq!((cut.requests.len(), cut.end), (2, 1_000_000));
}

/// Token reuse of a plan with one infinite cache, in arrival order:
/// each request reuses the longest run of its leading blocks seen
/// before.
fn infinite_cache_reuse(p: &Plan) -> f64 {
    let mut seen = std::collections::BTreeSet::new();
    let (mut reused, mut total) = (0u64, 0u64);
    for r in &p.requests {
        let ids = p.blocks_of(r);
        let run = ids.iter().take_while(|id| seen.contains(*id)).count() as u64;
        reused += (run * p.block_tokens).min(r.input);
        total += r.input;
        seen.extend(ids.iter().copied());
    }
    reused as f64 / total as f64
}

#[test]
fn repetition_fills_the_horizon_and_fresh_ids_invent_no_reuse() {
    let t = Trace::read(GOOD.as_bytes(), &spec(), Limits::default()).expect("good");
    let shape = PlanShape {
        rate_rps: 1.5,
        horizon_s: 9.0,
        router_weights: &[1.0],
        ttft_jitter_ms: 20.0,
        decode_tps: [128.0, 200.0],
    };
    // Span 2 s, period 2 x 3/2 = 3 s: starts at 0, 3 and 6 s.
    let fresh = t.plan(&shape, &mut stream(1, Stream::Workload));
    let arrivals: Vec<Micros> = fresh.requests.iter().map(|r| r.arrival).collect();
    assert_eq!(
        arrivals,
        vec![
            0, 500_000, 2_000_000, 3_000_000, 3_500_000, 5_000_000, 6_000_000, 6_500_000, 8_000_000
        ]
    );
    assert_eq!(fresh.end, 9_000_000);
    assert_eq!(
        t.replay(1.5, 9.0),
        Replay {
            requests: 9,
            repetitions: 3
        }
    );
    assert_eq!(
        t.replay(1.5, 1.0),
        Replay {
            requests: 2,
            repetitions: 1
        }
    );
    assert_eq!(fresh.block_ids, 12, "three times the 4 distinct blocks");
    assert_eq!(fresh.key_names.len(), 6);
    assert_eq!(fresh.blocks_of(&fresh.requests[3]), &[4, 5]);
    assert_ne!(fresh.requests[0].key, fresh.requests[3].key);
    assert_eq!(
        &fresh.key_names[fresh.requests[3].key as usize],
        &format!("{}~1", fresh.key_names[0])
    );
    // One pass reuses what the trace itself shares; fresh repetitions
    // reuse exactly that again, no more.
    let once = t.plan(
        &PlanShape {
            horizon_s: 2.5,
            ..shape
        },
        &mut stream(1, Stream::Workload),
    );
    assert_eq!(once.requests.len(), 3);
    let base = infinite_cache_reuse(&once);
    assert!(base > 0.0);
    assert!((infinite_cache_reuse(&fresh) - base).abs() < 1e-12);
    // The same ids come back warm.
    let mut same_spec = spec();
    same_spec.repeat = Repeat::Same;
    let same = Trace::read(GOOD.as_bytes(), &same_spec, Limits::default()).expect("good");
    let same = same.plan(&shape, &mut stream(1, Stream::Workload));
    assert_eq!(same.block_ids, 4);
    assert_eq!(same.requests[3].key, same.requests[0].key);
    assert!(infinite_cache_reuse(&same) > base + 0.3);
}

#[test]
fn max_requests_counts_the_requests_left_out() {
    let mut first = spec();
    first.max_requests = Some(1);
    let t = Trace::read(GOOD.as_bytes(), &first, Limits::default()).expect("good");
    assert_eq!(
        t.file_requests(),
        Some(3),
        "the blank line is not a request"
    );
    first.max_requests = Some(3);
    let t = Trace::read(GOOD.as_bytes(), &first, Limits::default()).expect("good");
    assert_eq!(t.file_requests(), None);
}

fn sessions(format: &str, block_tokens: u64) -> TraceSpec {
    TraceSpec {
        format: format.into(),
        block_tokens,
        ..spec()
    }
}

/// The raw block lists of every request, in file order, as small
/// numbers (first appearance order of the dense ids).
fn block_lists(t: &Trace) -> Vec<Vec<u32>> {
    t.requests
        .iter()
        .map(|r| t.blocks[r.blocks.start as usize..][..r.blocks.len as usize].to_vec())
        .collect()
}

const SESSIONS_CSV: &str = "timestamp_s,session_id,input_tokens,output_tokens,extra\n\
    0.0,alice,250,10,x\n\
    0.5,bob,250,10,y\n\
    1.0,alice,520,20,z\n\
    \n\
    2.0,\"alice\",700,5,w\n";

#[test]
fn session_prompts_grow_turn_by_turn_and_stay_in_their_session() {
    let t = Trace::read(
        SESSIONS_CSV.as_bytes(),
        &sessions("session-csv", 100),
        Limits::default(),
    )
    .expect("good");
    assert_eq!(t.len(), 4);
    assert_eq!(t.span_s(), 2.0);
    // alice 250 tokens: full blocks 0, 1 and a partial one (ids 0, 1, 2);
    // bob's blocks are his own (3, 4, 5); alice's next turns reuse her
    // full blocks and add their own.
    assert_eq!(
        block_lists(&t),
        vec![
            vec![0, 1, 2],
            vec![3, 4, 5],
            vec![0, 1, 6, 7, 8, 9],
            vec![0, 1, 6, 7, 8, 10, 11],
        ]
    );
    assert_eq!(t.distinct_keys(), 2, "one key per session");
    let keys: Vec<u32> = t.requests.iter().map(|r| r.key).collect();
    assert_eq!(keys, vec![0, 1, 0, 0]);
    assert_eq!(t.key_names[0], format!("s{:016x}", xxh3_64(b"alice")));
}

#[test]
fn a_prefix_group_is_the_only_thing_sessions_share() {
    let jsonl = r#"{"timestamp_ms": 0, "session_id": 1, "input_tokens": 300, "output_tokens": 1, "prefix_group": "tenant-a", "prefix_tokens": 200}
{"timestamp_ms": 10, "session_id": 2, "input_tokens": 300, "output_tokens": 1, "prefix_group": "tenant-a", "prefix_tokens": 250}
{"timestamp_ms": 20, "session_id": 3, "input_tokens": 300, "output_tokens": 1, "prefix_group": "tenant-b", "prefix_tokens": 200}
{"timestamp_ms": 30, "session_id": "1", "input_tokens": 300, "output_tokens": 1}
"#;
    let t = Trace::read(
        jsonl.as_bytes(),
        &sessions("session-jsonl", 100),
        Limits::default(),
    )
    .expect("good");
    assert_eq!(
        block_lists(&t),
        vec![
            // tenant-a's two prefix blocks, then session 1's own block.
            vec![0, 1, 2],
            // 250 prefix tokens are two full blocks: the same two.
            vec![0, 1, 3],
            // Another tenant shares nothing.
            vec![4, 5, 6],
            // Session 1 without its group: positions 0 and 1 are the
            // session's own blocks, position 2 its full block again.
            vec![7, 8, 2],
        ]
    );
}

#[test]
fn bad_session_lines_are_errors_at_their_line_and_column() {
    let text = "timestamp_ms,input_tokens,output_tokens,session_id\n\
        0,100,1,a\n\
        5,lots,1,a\n\
        6,100\n\
        7,100,1,\n\
        -1,100,1,b\n\
        8,100,1,\"open\n";
    let e = Trace::read(
        text.as_bytes(),
        &sessions("session-csv", 64),
        Limits::default(),
    )
    .unwrap_err();
    let got: Vec<(u64, Option<usize>)> = e.iter().map(|e| (e.line, e.column)).collect();
    assert_eq!(
        got,
        vec![(3, Some(3)), (4, None), (5, None), (6, None), (7, Some(9))]
    );
    assert_eq!(
        e[0].message,
        "`input_tokens` must be an integer from 0 to 2^64-1, got \"lots\""
    );
    assert_eq!(e[1].message, "2 fields where the header needs at least 4");
    assert!(e[2]
        .message
        .contains("`session_id` must have 1 to 256 bytes"));
    assert!(e[3]
        .message
        .contains("timestamp in ms must be a finite number"));
    assert_eq!(e[4].message, "a quoted field is not closed");
}

#[test]
fn a_file_in_another_format_is_one_error() {
    // A CSV read as Mooncake: one error at line 1, not one per line.
    let e = Trace::read(SESSIONS_CSV.as_bytes(), &spec(), Limits::default()).unwrap_err();
    assert_eq!(e.len(), 1);
    assert_eq!(e[0].line, 1);
    assert!(
        e[0].message.contains("not a Mooncake JSONL trace"),
        "{}",
        e[0].message
    );
    assert!(e[0].message.contains("\"session-csv\""), "{}", e[0].message);
    // A Mooncake trace read as a CSV log, and a header with a typo.
    let e = Trace::read(
        GOOD.as_bytes(),
        &sessions("session-csv", 64),
        Limits::default(),
    )
    .unwrap_err();
    assert_eq!((e.len(), e[0].line), (1, 1));
    assert!(e[0].message.contains("\"mooncake\""), "{}", e[0].message);
    let typo = "timestamp_ms,input_tokens,output_tokens,sesion_id\n0,1,1,a\n";
    let e = Trace::read(
        typo.as_bytes(),
        &sessions("session-csv", 64),
        Limits::default(),
    )
    .unwrap_err();
    assert_eq!(e.len(), 1);
    assert!(
        e[0].message
            .contains("no `session_id` column (is `sesion_id` meant to be `session_id`?)"),
        "{}",
        e[0].message
    );
    assert_eq!(
        guess_format(GOOD.lines().next().unwrap_or_default()),
        "mooncake"
    );
    assert_eq!(guess_format("{\"session_id\": 1}"), "session-jsonl");
    assert_eq!(guess_format("timestamp_s,session_id"), "session-csv");
}

#[test]
fn a_short_line_cannot_ask_for_unbounded_blocks() {
    let text = "timestamp_ms,input_tokens,output_tokens,session_id\n0,1000000000,1,a\n";
    let e = Trace::read(
        text.as_bytes(),
        &sessions("session-csv", 1),
        Limits::default(),
    )
    .unwrap_err();
    assert!(
        e[0].message
            .contains("is more than the 262144 one request may have"),
        "{}",
        e[0].message
    );
}
