//! Arrival laws and key popularity of the synthetic workload, and the
//! client's closed loop (docs/simulator.md, "Arrival laws and key
//! popularity"), through whole runs: what the client sends, and the
//! diagnostics of bad laws.

use super::fleets::{fleet, listing};
use super::support::{prepared, run_one, snapshot_settings};
use routex_sim::scenario::load;
use serde_json::{json, Value};

/// The requests `v` sends (round-robin on the two-backend fleet), in
/// order: (sent, key).
fn sent(v: &Value, rate: f64) -> Vec<(u64, u32)> {
    let mut p = prepared(&v.to_string());
    p.settings.keep_detail = true;
    let r = run_one(&p, "rr", rate, 1);
    let mut out: Vec<(u64, u32)> = r
        .detail
        .expect("detail")
        .requests
        .iter()
        .map(|q| (q.sent, q.key))
        .collect();
    out.sort_unstable();
    out
}

#[test]
fn a_constant_law_sends_one_request_every_interval() {
    let mut v = fleet();
    v["workload"]["arrival"] = json!({"law": "constant"});
    let s = sent(&v, 10.0);
    // 10 s at 10 RPS: 0.1 s, 0.2 s, ..., 9.9 s.
    assert_eq!(s.len(), 99);
    for (i, &(at, _)) in s.iter().enumerate() {
        let want = (i as u64 + 1) * 100_000;
        assert!(at.abs_diff(want) <= 1, "request {i} at {at}, want {want}");
    }
}

#[test]
fn a_bursty_law_alternates_its_phases_at_the_mean_rate() {
    let mut v = fleet();
    v["measure_s"] = json!(400);
    v["workload"]["arrival"] =
        json!({"law": "bursty", "burst_factor": 3.0, "period_requests": 100});
    let s = sent(&v, 20.0);
    // A mean of 20 RPS over 400 s: 8 000 requests, within 3 %.
    assert!((s.len() as f64 / 8_000.0 - 1.0).abs() < 0.03, "{}", s.len());
    // Quiet 20 x 4 / 6 = 13.33 RPS, burst 40 RPS: a burst phase of 100
    // requests lasts 2.5 s on average, a quiet one 7.5 s.
    let span = |phase: usize| -> f64 {
        let chunks: Vec<f64> = s
            .chunks(100)
            .skip(phase)
            .step_by(2)
            .take(35)
            .map(|c| (c[c.len() - 1].0 - c[0].0) as f64 / 99.0 * 100.0 / 1e6)
            .collect();
        chunks.iter().sum::<f64>() / chunks.len() as f64
    };
    assert!((span(0) / 2.5 - 1.0).abs() < 0.08, "burst {}", span(0));
    assert!((span(1) / 7.5 - 1.0).abs() < 0.08, "quiet {}", span(1));
}

#[test]
fn a_stair_step_law_climbs_to_the_rate() {
    let mut v = fleet();
    v["measure_s"] = json!(300);
    v["workload"]["arrival"] = json!({"law": "stair_step", "steps": 3, "start_fraction": 0.2});
    let s = sent(&v, 30.0);
    // Three 100 s steps at 6, 18 and 30 RPS.
    for (k, rate) in [6.0, 18.0, 30.0].iter().enumerate() {
        let lo = k as u64 * 100_000_000;
        let n = s
            .iter()
            .filter(|&&(at, _)| at >= lo && at < lo + 100_000_000)
            .count() as f64;
        let want = rate * 100.0;
        assert!((n - want).abs() < 4.0 * f64::sqrt(want), "step {k}: {n}");
    }
}

#[test]
fn a_hot_set_sends_its_share_to_the_hot_keys() {
    let mut v = fleet();
    v["measure_s"] = json!(200);
    v["workload"]["keys"] = json!(1000);
    v["workload"]["hot_set"] = json!({"fraction": 0.05, "share": 0.9});
    let s = sent(&v, 20.0);
    let n = s.len() as f64;
    // 50 hot keys: 0.9 + 0.1 x 50 / 1 000 = 90.5 % of the requests.
    let hot = s.iter().filter(|&&(_, k)| k < 50).count() as f64;
    let p = 0.905;
    let sd = (p * (1.0 - p) / n).sqrt();
    assert!((hot / n - p).abs() < 4.0 * sd, "{} of {n}", hot / n);
    // Every key can still be drawn: some cold keys appear.
    assert!(s.iter().any(|&(_, k)| k >= 50));
}

#[test]
fn without_a_law_the_plan_is_the_poisson_one() {
    let v = fleet();
    let mut w = fleet();
    w["workload"]["arrival"] = json!({"law": "poisson"});
    assert_eq!(sent(&v, 10.0), sent(&w, 10.0));
}

#[test]
fn a_closed_loop_sends_each_request_when_a_place_frees() {
    // Two backends that each hold a request exactly 1 s, 10 RPS planned,
    // at most 2 out: from the third request on, request k goes out when
    // request k - 2 resolves (or at its planned arrival if later), so the
    // client never has more than 2 out and the fleet completes 2 a second.
    let mut v = fleet();
    v["workload"]["arrival"] = json!({"law": "constant"});
    let open_loop = v.clone();
    v["client"]["max_in_flight"] = json!(2);
    let mut p = prepared(&v.to_string());
    p.settings.keep_detail = true;
    let r = run_one(&p, "rr", 10.0, 1);
    let log = r.detail.expect("detail").requests;
    assert_eq!(log.len(), 99);
    assert!(log.iter().all(|q| q.succeeded));
    for k in 2..log.len() {
        let want = log[k].asked.max(log[k - 2].resolved);
        assert_eq!(log[k].sent, want, "request {k}");
        assert_eq!(log[k].resolved, log[k].sent + 1_000_000, "request {k}");
    }
    // The planned arrivals end at 10 s; the last request goes out about
    // 49 s in (97 requests after the first two, two a second).
    let last = log.iter().map(|q| q.sent).max().unwrap_or(0);
    assert!(
        (48_000_000..50_100_000).contains(&last),
        "last sent at {last}"
    );
    // Open loop: the same plan sends all 99 on time.
    let open = {
        let mut p = prepared(&open_loop.to_string());
        p.settings.keep_detail = true;
        run_one(&p, "rr", 10.0, 1).detail.expect("detail").requests
    };
    assert!(open.iter().all(|q| q.sent == q.asked));
    let asked: Vec<u64> = open.iter().map(|q| q.asked).collect();
    assert_eq!(log.iter().map(|q| q.asked).collect::<Vec<_>>(), asked);
}

#[test]
fn reply_sizes_follow_their_law_per_request() {
    let outputs = |size: Value| -> Vec<u64> {
        let mut v = fleet();
        v["measure_s"] = json!(400);
        v["workload"]["output_tokens"] = size;
        let mut p = prepared(&v.to_string());
        p.settings.keep_detail = true;
        let r = run_one(&p, "rr", 10.0, 1);
        r.detail
            .expect("detail")
            .requests
            .iter()
            .map(|q| q.output)
            .collect()
    };
    // A whole number is every reply's size, and draws nothing: the plan
    // is the one written before replies could vary.
    assert!(outputs(json!(1)).iter().all(|&o| o == 1));
    assert_eq!(sent(&fleet(), 10.0).len(), 96);
    // [1, 9]: uniform over 9 values, mean 5 (sd 2.58 over ~4 000 draws:
    // the mean within 0.2).
    let uniform = outputs(json!([1, 9]));
    let n = uniform.len() as f64;
    assert!(n > 3_800.0, "{n}");
    let mean = uniform.iter().sum::<u64>() as f64 / n;
    assert!((mean - 5.0).abs() < 0.2, "{mean}");
    assert!((1..=9).all(|k| uniform.contains(&k)));
    assert!(uniform.iter().all(|&o| (1..=9).contains(&o)));
    // stargate's lognormal: median 4, capped at 20.
    let mut ln =
        outputs(json!({"distribution": "lognormal", "mean": 4, "sigma": 0.8, "p99_cap": 20}));
    ln.sort_unstable();
    assert_eq!(ln[ln.len() / 2], 4);
    assert_eq!(ln.last().copied(), Some(20));
}

#[test]
fn size_classes_split_the_keys_by_share() {
    // A quarter of 1 000 keys large (4 000-token prompts, 3-token
    // replies), the rest the workload's (1 000 and 1).
    let mut v = fleet();
    v["measure_s"] = json!(200);
    v["workload"]["keys"] = json!(1000);
    v["workload"]["classes"] = json!([
        {"share": 0.75},
        {"share": 0.25, "input_tokens": 4000, "output_tokens": 3}
    ]);
    let mut p = prepared(&v.to_string());
    p.settings.keep_detail = true;
    let log = run_one(&p, "rr", 20.0, 1).detail.expect("detail").requests;
    let mut large_keys = std::collections::BTreeSet::new();
    let mut small_keys = std::collections::BTreeSet::new();
    for q in &log {
        match (q.input, q.output) {
            (4_000, 3) => large_keys.insert(q.key),
            (1_000, 1) => small_keys.insert(q.key),
            other => panic!("a request of sizes {other:?}"),
        };
    }
    assert!(large_keys.is_disjoint(&small_keys));
    // Keys drawn by share: 25 % of the keys seen, within 4 standard
    // deviations of the binomial share.
    let seen = (large_keys.len() + small_keys.len()) as f64;
    let share = large_keys.len() as f64 / seen;
    assert!(
        (share - 0.25).abs() < 4.0 * (0.25 * 0.75 / seen).sqrt(),
        "{share} of {seen}"
    );
    // Without classes the plan is the one drawn before classes existed.
    let mut w = fleet();
    w["workload"]["classes"] = json!([]);
    assert_eq!(sent(&fleet(), 10.0), sent(&w, 10.0));
}

#[test]
fn bad_size_classes_are_diagnostics_at_their_keys() {
    let mut v = fleet();
    v["workload"]["classes"] = json!([
        {"share": 0.5, "input_tokens": [10, 5]},
        {"share": 0.0},
        {"share": 0.3, "output_tokens": {"distribution": "lognormal", "mean": 4, "sigma": -1, "p99_cap": 20}}
    ]);
    let text = serde_json::to_string_pretty(&v).expect("json");
    let r = load("classes.json", &text).expect_err("bad classes");
    let messages: Vec<&str> = r.diagnostics.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(
        messages,
        [
            "`input_tokens` [min, max] needs min <= max",
            "`share` (the class's share of the keys) must be above 0 and at most 1",
            "`sigma` must be a number >= 0, got -1",
            "the classes' shares add up to 0.8, not 1",
        ]
    );
}

#[test]
fn bad_reply_sizes_are_diagnostics_at_their_keys() {
    let problems = |size: Value| -> Vec<(String, String)> {
        let mut v = fleet();
        v["workload"]["output_tokens"] = size;
        let text = serde_json::to_string_pretty(&v).expect("json");
        let r = load("sizes.json", &text).expect_err("bad size");
        r.diagnostics
            .iter()
            .map(|d| {
                (
                    d.code.as_str().to_owned(),
                    text[d.span.start..d.span.end].to_owned(),
                )
            })
            .collect()
    };
    assert_eq!(
        problems(json!([9, 1])),
        [("invalid_value".into(), "\"output_tokens\"".into())]
    );
    assert_eq!(
        problems(json!({"distribution": "lognormal", "mean": 4, "sigma": -1, "p99_cap": 20})),
        [("invalid_value".into(), "-1".into())]
    );
    assert_eq!(
        problems(json!(2_000_000)),
        [("invalid_value".into(), "\"workload\"".into())]
    );
    assert_eq!(
        problems(json!("256")),
        [("invalid_type".into(), "\"256\"".into())]
    );
}

#[test]
fn bad_laws_are_diagnostics_at_their_keys() {
    let mut v = fleet();
    v["workload"]["arrival"] = json!({"law": "bursti"});
    v["workload"]["hot_set"] = json!({"fraction": 0.1, "shares": 0.5});
    let text = serde_json::to_string_pretty(&v).expect("json");
    let shape = load("arrivals.json", &text).expect_err("unknown law");
    let mut out = listing(&text, &shape.diagnostics);
    v["workload"]["arrival"] = json!({"law": "bursty", "steps": 4, "burst_factor": 0.5});
    v["workload"]["hot_set"] = json!({"fraction": 0.0, "share": 1.5});
    v["workload"]["zipf_s"] = json!(0.6);
    v["client"]["max_in_flight"] = json!(0);
    let text = serde_json::to_string_pretty(&v).expect("json");
    let values = load("arrivals.json", &text).expect_err("bad values");
    out.push_str("---\n");
    out.push_str(&listing(&text, &values.diagnostics));
    v["workload"]["arrival"] = json!({"law": "stair_step", "steps": 0, "start_fraction": 1.2});
    v["client"]
        .as_object_mut()
        .expect("object")
        .remove("max_in_flight");
    v["workload"]["zipf_s"] = json!(0.0);
    v["workload"]
        .as_object_mut()
        .expect("object")
        .remove("hot_set");
    let text = serde_json::to_string_pretty(&v).expect("json");
    let values = load("arrivals.json", &text).expect_err("bad steps");
    out.push_str("---\n");
    out.push_str(&listing(&text, &values.diagnostics));
    let mut s = snapshot_settings();
    s.set_omit_expression(true);
    s.bind(|| insta::assert_snapshot!("arrival_bad_inputs", out));
}

#[test]
fn the_table_says_how_the_window_falls_on_a_bursty_law() {
    let mut v = fleet();
    v["rates_rps"] = json!([20, 10, 20]);
    v["workload"]["arrival"] = json!({"law": "bursty", "burst_factor": 3.0, "period_requests": 50});
    let p = prepared(&v.to_string());
    let runs = routex_sim::sweep::sweep(&p, 1, &mut |_, _| {});
    let table = routex_sim::report::output::table(&p, &runs);
    let notes: Vec<&str> = table
        .lines()
        .filter(|l| l.starts_with("arrivals at"))
        .collect();
    // One line per rate, once, in increasing order: at 10 RPS a cycle of
    // 100 requests lasts 10 s on average, the 10 s window holds 1.00.
    assert_eq!(notes.len(), 2, "{table}");
    assert!(notes[0].starts_with(
        "arrivals at 10 RPS: bursty, 50 requests at 20.0 RPS (~2.5 s) then 50 at 6.7 RPS (~7.5 s); \
         the measured window (10 s) holds 1.00 cycles of ~10.0 s"
    ), "{}", notes[0]);
    assert!(notes[1].starts_with("arrivals at 20 RPS:"), "{}", notes[1]);
    // A Poisson workload prints none.
    let p = prepared(&fleet().to_string());
    let runs = routex_sim::sweep::sweep(&p, 1, &mut |_, _| {});
    assert!(!routex_sim::report::output::table(&p, &runs).contains("arrivals at"));
}
