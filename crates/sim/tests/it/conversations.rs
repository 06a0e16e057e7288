//! Growing conversations (docs/simulator.md, "Growing conversations"):
//! prompt growth and truncation by hand, the turn-count and think-time
//! laws, the start rate, retries then abandonment, determinism, the
//! example, and bad inputs.

use super::support::{input, prepared, run_one, snapshot_settings};
use routex::diag::line_column;
use routex_sim::conversations::{
    draw_exponential, draw_turns, plan, prompts, ConversationSpec, PlanShape, Prompt, Sizes,
};
use routex_sim::kernel::rng::{stream, Stream};
use routex_sim::scenario::{load, Prepared};
use routex_sim::world::fleet::{Fault, FaultAction, RequestLog, Trigger};
use routex_sim::{report::output, sweep};
use std::collections::BTreeMap;

fn spec(first: u64, message: u64, output: u64, max: u64, block: u64) -> ConversationSpec {
    ConversationSpec {
        mean_turns: 8.0,
        think_time_s: 2.0,
        first_message_tokens: [first, first].into(),
        message_tokens: [message, message].into(),
        output_tokens: [output, output].into(),
        max_context_tokens: max,
        block_tokens: block,
        max_turn_attempts: 3,
        retry_backoff_s: 1.0,
    }
}

fn shape(rate_rps: f64, horizon_s: f64) -> PlanShape<'static> {
    PlanShape {
        rate_rps,
        horizon_s,
        router_weights: &[1.0, 1.0],
        ttft_jitter_ms: 20.0,
        decode_tps: [128.0, 200.0],
    }
}

fn p(input: u64, shared: u64, kept_from: u32) -> Prompt {
    Prompt {
        input,
        shared,
        kept_from,
    }
}

#[test]
fn prompts_grow_by_the_reply_and_the_message() {
    // Turn 1: the first message. Turn k: turn k-1's prompt + its reply +
    // the new message; the whole previous prompt is the shared prefix.
    let got = prompts(1_000, &[100, 200, 300], &[50, 60, 70, 80], 1 << 20);
    assert_eq!(
        got,
        vec![
            p(1_000, 0, 2),
            p(1_150, 1_000, 2),
            p(1_410, 1_150, 2),
            p(1_780, 1_410, 2),
        ]
    );
}

#[test]
fn truncation_drops_the_oldest_exchanges_after_the_first_message() {
    // Exchanges: e2 = 50 + 100, e3 = 60 + 200, e4 = 70 + 300.
    // Turn 4 would be 1 780 > 1 500: without e2 1 630, still over; without
    // e3 too, 1 000 + 370 = 1 370: only the first message is shared.
    let got = prompts(1_000, &[100, 200, 300], &[50, 60, 70, 80], 1_500);
    assert_eq!(got[3], p(1_370, 1_000, 4));
    assert_eq!(
        got[..3],
        [p(1_000, 0, 2), p(1_150, 1_000, 2), p(1_410, 1_150, 2)]
    );
    // Fixed sizes: 1 000, 1 150, 1 300, 1 450; then each turn drops one
    // exchange and stays at 1 450 tokens, sharing the first message only.
    let got = prompts(1_000, &[100; 6], &[50; 7], 1_500);
    let inputs: Vec<u64> = got.iter().map(|x| x.input).collect();
    assert_eq!(inputs, [1_000, 1_150, 1_300, 1_450, 1_450, 1_450, 1_450]);
    assert_eq!(got[4], p(1_450, 1_000, 3));
    assert_eq!(got[6], p(1_450, 1_000, 5));
}

#[test]
fn turns_share_their_full_blocks_until_a_truncation() {
    // 64-token blocks: 1 000 tokens are 15 full blocks, 1 150 are 17,
    // 1 300 are 20, 1 450 are 22. Turns 2-4 extend their predecessor's
    // blocks; from turn 5 each turn shares the first message's 15.
    let s = spec(1_000, 100, 50, 1_500, 64);
    let plan = plan(&s, &shape(16.0, 300.0), &mut stream(1, Stream::Workload));
    let conv = plan.conversations.as_ref().expect("a conversation plan");
    assert!(
        conv.conversations.len() > 400,
        "{}",
        conv.conversations.len()
    );
    let mut owner: BTreeMap<u32, usize> = BTreeMap::new();
    let mut checked = 0;
    for (c, cv) in conv.conversations.iter().enumerate() {
        let turns = &conv.turns[cv.first as usize..(cv.first + cv.len) as usize];
        assert_eq!(
            turns[0].request, plan.requests[c],
            "first turns lead the plan"
        );
        let mut previous: &[u32] = &[];
        for (k, t) in turns.iter().enumerate() {
            let blocks = plan.blocks_of(&t.request);
            let (input, full, shared) = match k {
                0 => (1_000, 15, 0),
                1 => (1_150, 17, 15),
                2 => (1_300, 20, 17),
                3 => (1_450, 22, 20),
                _ => (1_450, 22, 15),
            };
            assert_eq!((t.request.input, t.request.output), (input, 50));
            assert_eq!(t.request.key as usize, c);
            assert_eq!(blocks.len(), full, "turn {}", k + 1);
            assert_eq!(blocks[..shared], previous[..shared], "turn {}", k + 1);
            if previous.len() > shared {
                // The first block after the shared prefix is new.
                assert_ne!(blocks[shared], previous[shared], "turn {}", k + 1);
            }
            for &b in blocks {
                assert_eq!(
                    *owner.entry(b).or_insert(c),
                    c,
                    "block {b} in two conversations"
                );
            }
            previous = blocks;
            checked += 1;
        }
    }
    assert!(checked > 3_000, "{checked}");
    assert_eq!(plan.block_ids as usize, owner.len());
}

/// Mean and variance of the values.
fn moments(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, var)
}

#[test]
fn turn_counts_are_geometric_and_think_times_exponential() {
    let mut rng = stream(7, Stream::Workload);
    // Geometric on 1, 2, ... of mean m: variance m (m - 1).
    let turns: Vec<f64> = (0..200_000)
        .map(|_| f64::from(draw_turns(&mut rng, 4.0)))
        .collect();
    let (mean, var) = moments(&turns);
    assert!((mean - 4.0).abs() < 0.04, "mean {mean}");
    assert!((var - 12.0).abs() < 0.5, "variance {var}");
    assert_eq!(turns.iter().copied().fold(f64::MAX, f64::min), 1.0);
    let ones = turns.iter().filter(|&&t| t == 1.0).count() as f64 / 200_000.0;
    assert!((ones - 0.25).abs() < 0.005, "P(1 turn) {ones}");
    assert!((0..1_000).all(|_| draw_turns(&mut rng, 1.0) == 1));
    // Exponential of mean 5 s: variance 25 s².
    let think: Vec<f64> = (0..200_000)
        .map(|_| draw_exponential(&mut rng, 5.0) as f64 / 1e6)
        .collect();
    let (mean, var) = moments(&think);
    assert!((mean - 5.0).abs() < 0.05, "mean {mean}");
    assert!((var - 25.0).abs() < 0.6, "variance {var}");
    assert_eq!(draw_exponential(&mut rng, 0.0), 0);
}

/// The standard normal CDF (Abramowitz and Stegun 7.1.26: error below
/// 1.5e-7).
fn phi(x: f64) -> f64 {
    let z = x.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * z);
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erf = 1.0 - poly * (-z * z).exp();
    0.5 * (1.0 + if x < 0.0 { -erf } else { erf })
}

/// stargate's lognormal as a scenario writes it.
fn lognormal(median: f64, sigma: f64, cap: f64) -> Sizes {
    serde_json::from_value(serde_json::json!({
        "distribution": "lognormal", "mean": median, "sigma": sigma, "p99_cap": cap
    }))
    .expect("a size law")
}

/// Median, share at `cap`, mean and largest of the values.
fn law_moments(mut v: Vec<u64>, cap: u64) -> (f64, f64, f64, u64) {
    v.sort_unstable();
    let n = v.len() as f64;
    let at_cap = v.iter().filter(|&&x| x == cap).count() as f64 / n;
    let mean = v.iter().sum::<u64>() as f64 / n;
    (v[v.len() / 2] as f64, at_cap, mean, *v.last().unwrap_or(&0))
}

/// E[min(X, cap)] for X lognormal of median m and shape s.
fn capped_mean(m: f64, s: f64, cap: f64) -> f64 {
    let mu = m.ln();
    let k = (cap.ln() - mu) / s;
    (mu + s * s / 2.0).exp() * phi(k - s) + cap * (1.0 - phi(k))
}

#[test]
fn lognormal_sizes_have_stargates_median_cap_and_mean() {
    // First messages: median 2 000, sigma 0.6, the cap at the 99th
    // percentile (2 000 x e^(2.326 x 0.6) = 8 076): half the conversations
    // open below 2 000, 1 % are clamped to the cap, and the mean is the
    // clamped lognormal's, 2 000 x e^0.18 = 2 394 less what the cap cuts.
    let cap = (2_000.0 * (2.326_348 * 0.6f64).exp()).round();
    let mut s = spec(1_000, 100, 50, 1 << 20, 64);
    s.first_message_tokens = lognormal(2_000.0, 0.6, cap);
    s.output_tokens = lognormal(300.0, 0.4, 600.0);
    s.max_context_tokens = 1 << 20;
    let plan = plan(
        &s,
        &shape(200.0, 2_000.0),
        &mut stream(11, Stream::Workload),
    );
    let conv = plan.conversations.as_ref().expect("conversations");
    let firsts: Vec<u64> = plan.requests.iter().map(|r| r.input).collect();
    assert!(firsts.len() > 45_000, "{}", firsts.len());
    let (median, at_cap, mean, most) = law_moments(firsts, cap as u64);
    assert!((median / 2_000.0 - 1.0).abs() < 0.01, "median {median}");
    assert_eq!(most, cap as u64);
    assert!((at_cap - 0.01).abs() < 0.0015, "share at the cap {at_cap}");
    let want = capped_mean(2_000.0, 0.6, cap);
    assert!((2_370.0..2_385.0).contains(&want), "{want}");
    assert!((mean / want - 1.0).abs() < 0.01, "mean {mean} vs {want}");
    // Replies: median 300, sigma 0.4, capped at 600 (P(X > 600) = 4.1 %).
    let replies: Vec<u64> = conv.turns.iter().map(|t| t.request.output).collect();
    let (median, at_cap, mean, most) = law_moments(replies, 600);
    assert!((median / 300.0 - 1.0).abs() < 0.01, "median {median}");
    assert_eq!(most, 600);
    let above = 1.0 - phi(2f64.ln() / 0.4);
    assert!((at_cap - above).abs() < 0.003, "{at_cap} vs {above}");
    let want = capped_mean(300.0, 0.4, 600.0);
    assert!((mean / want - 1.0).abs() < 0.01, "mean {mean} vs {want}");
}

#[test]
fn the_uniform_law_draws_as_the_range_form() {
    // A `uniform` object and `[min, max]` consume the stream alike, so a
    // file can switch forms without changing its plan.
    let mut object = spec(1_000, 100, 50, 1 << 20, 64);
    object.first_message_tokens = serde_json::from_value(serde_json::json!(
        {"distribution": "uniform", "min": 1_500, "max": 4_500}
    ))
    .expect("law");
    let mut range = spec(1_000, 100, 50, 1 << 20, 64);
    range.first_message_tokens = [1_500, 4_500].into();
    let a = plan(
        &object,
        &shape(20.0, 100.0),
        &mut stream(5, Stream::Workload),
    );
    let b = plan(
        &range,
        &shape(20.0, 100.0),
        &mut stream(5, Stream::Workload),
    );
    assert_eq!(a.requests, b.requests);
    assert_eq!(a.conversations, b.conversations);
    assert!(a.requests.iter().any(|r| r.input != a.requests[0].input));
}

#[test]
fn the_start_rate_times_the_mean_turns_is_the_offered_rate() {
    // The plan: starts at 100 / 4 = 25 per s over 1 000 s, 4 turns each on
    // average: about 100 000 turns (sd about 0.8 %).
    let mut s = spec(1_000, 100, 50, 1 << 20, 64);
    s.mean_turns = 4.0;
    let plan = plan(&s, &shape(100.0, 1_000.0), &mut stream(3, Stream::Workload));
    let conv = plan.conversations.as_ref().expect("conversations");
    let starts = conv.conversations.len() as f64;
    assert!((starts / 25_000.0 - 1.0).abs() < 0.02, "{starts} starts");
    let turns = conv.turns.len() as f64;
    assert!((turns / 100_000.0 - 1.0).abs() < 0.03, "{turns} turns");
    // A run in steady state: the window's requests per second are the
    // offered rate (think time 2 s, 4 turns: a conversation lasts about
    // 10 s, far shorter than the 60 s warm-up).
    let mut p = prepared(&input("conversations.json"));
    p.set_window(60.0, 600.0);
    let m = run_one(&p, "guard", 8.0, 1).metrics;
    assert!(m.steady, "{m:?}");
    assert!(
        (m.offered_rps / 8.0 - 1.0).abs() < 0.12,
        "{}",
        m.offered_rps
    );
    assert_eq!(m.abandoned_conversations, Some(0));
    let started = m.conversations.expect("conversation metrics") as f64;
    assert!((started / (2.0 * 600.0) - 1.0).abs() < 0.1, "{started}");
    // Each turn reuses its predecessor's full blocks.
    assert!(m.token_reuse > 0.5, "{}", m.token_reuse);
}

#[test]
fn failed_turns_are_retried_with_linear_backoff_then_abandoned() {
    // Every backend is gone from the start: each attempt ends in no-route
    // at its send. Attempt 2 goes 1 s after attempt 1, attempt 3 2 s after
    // attempt 2; then the conversation is abandoned.
    let mut p = prepared(&input("conversations.json"));
    p.set_window(0.0, 30.0);
    p.settings.keep_detail = true;
    p.settings.faults = (0..6)
        .map(|b| Fault {
            trigger: Trigger::At(0),
            backend: b,
            action: FaultAction::Remove,
        })
        .collect();
    let r = run_one(&p, "guard", 8.0, 1);
    let detail = r.detail.expect("detail");
    let mut sends: BTreeMap<u32, Vec<u64>> = BTreeMap::new();
    for req in &detail.requests {
        assert!(!req.succeeded);
        sends.entry(req.key).or_default().push(req.sent);
    }
    let horizon = 30_000_000;
    let mut complete = 0;
    for times in sends.values() {
        let t0 = times[0];
        let expected: Vec<u64> = [t0, t0 + 1_000_000, t0 + 3_000_000]
            .into_iter()
            .filter(|&t| t < horizon)
            .collect();
        assert_eq!(times, &expected);
        complete += usize::from(times.len() == 3);
    }
    assert!(complete > 40, "{complete}");
    let m = r.metrics;
    assert_eq!(m.succeeded, 0);
    assert_eq!(m.no_route, m.measured);
    // Every conversation started before 27 s was abandoned.
    assert_eq!(m.conversations, Some(sends.len() as u64));
    assert_eq!(m.abandoned_conversations, Some(complete as u64));
    let share = m.abandoned_share.expect("share");
    assert!((share - complete as f64 / sends.len() as f64).abs() < 1e-12);
    assert_eq!(m.turn_retries, Some(m.measured - sends.len() as u64));
}

#[test]
fn only_a_success_sends_the_next_turn_and_a_cut_is_no_abandonment() {
    let mut p = prepared(&input("conversations.json"));
    p.set_window(5.0, 25.0);
    p.settings.keep_detail = true;
    let r = run_one(&p, "guard", 8.0, 2);
    let detail = r.detail.expect("detail");
    let mut per_key: BTreeMap<u32, Vec<(u64, bool, u64)>> = BTreeMap::new();
    for req in &detail.requests {
        per_key
            .entry(req.key)
            .or_default()
            .push((req.sent, req.succeeded, req.done));
        assert!(req.sent < 30_000_000, "nothing is sent after the horizon");
    }
    let mut follow_ups = 0;
    for turns in per_key.values() {
        for pair in turns.windows(2) {
            // The next turn goes after the previous one's last token.
            assert!(pair[0].1, "a next turn only after a success");
            assert!(pair[1].0 >= pair[0].2, "{pair:?}");
            follow_ups += 1;
        }
    }
    assert!(follow_ups > 50, "{follow_ups}");
    assert_eq!(r.metrics.abandoned_conversations, Some(0));
    assert_eq!(r.metrics.turn_retries, Some(0));
}

/// The most requests in flight at any instant: a request counts from its
/// send to its resolution; a place freed and taken at the same instant
/// counts once (the resolution first).
fn most_in_flight(log: &[RequestLog]) -> i64 {
    let mut edges: Vec<(u64, i64)> = log
        .iter()
        .flat_map(|r| [(r.sent, 1), (r.resolved, -1)])
        .collect();
    edges.sort_unstable();
    let (mut now, mut most) = (0, 0);
    for (_, d) in edges {
        now += d;
        most = most.max(now);
    }
    most
}

#[test]
fn the_in_flight_cap_holds_and_turns_queue_behind_it() {
    // 20 RPS of conversations on 6 backends of 4 slots: open loop, the
    // client has up to 18 requests out at once; capped at 6, never more
    // than 6 (before the fix a conversation's next turns bypassed the cap:
    // 19 at once), and the requests that find 6 out (319 of 386: 113 of
    // the 151 first turns, the rest next turns) wait in arrival order for
    // a place, 1.025 s on average; every one measured still succeeds.
    let mut p = prepared(&input("conversations.json"));
    p.set_window(5.0, 25.0);
    p.settings.keep_detail = true;
    let open = run_one(&p, "guard", 20.0, 1).detail.expect("detail");
    assert!(open.requests.iter().all(|r| r.sent == r.asked));
    let open_most = most_in_flight(&open.requests);
    p.settings.max_in_flight = Some(6);
    let r = run_one(&p, "guard", 20.0, 1);
    let log = r.detail.expect("detail").requests;
    let most = most_in_flight(&log);
    let waited: Vec<_> = log.iter().filter(|r| r.sent > r.asked).collect();
    // Conversation c's first turn is request c.
    let conversations = log
        .iter()
        .map(|r| r.key)
        .max()
        .map_or(0, |k| k as usize + 1);
    let first_turns = log[..conversations]
        .iter()
        .filter(|r| r.sent > r.asked)
        .count();
    let wait_s: f64 = waited.iter().map(|r| (r.sent - r.asked) as f64 / 1e6).sum();
    let mean_wait = wait_s / waited.len().max(1) as f64;
    println!(
        "open most {open_most}; capped most {most}, {} of {} requests waited ({first_turns} of {conversations} first turns), mean wait {mean_wait:.3} s, succeeded {} of {}",
        waited.len(),
        log.len(),
        r.metrics.succeeded,
        r.metrics.measured
    );
    assert_eq!(open_most, 18);
    assert_eq!(most, 6);
    assert_eq!((waited.len(), log.len()), (319, 386));
    assert_eq!((first_turns, conversations), (113, 151));
    assert_eq!(r.metrics.succeeded, r.metrics.measured);
    assert!((mean_wait - 1.025).abs() < 0.001, "{mean_wait}");
    assert!(log.iter().all(|r| r.sent >= r.asked));
    // A request that waited went out the instant a place came free, and
    // the waiting went out in the order they were asked for.
    let resolutions: std::collections::BTreeSet<u64> = log.iter().map(|r| r.resolved).collect();
    assert!(waited.iter().all(|r| resolutions.contains(&r.sent)));
    let mut order: Vec<(u64, u64)> = waited.iter().map(|r| (r.sent, r.asked)).collect();
    order.sort_unstable();
    assert!(order.windows(2).all(|w| w[0].1 <= w[1].1), "FIFO");
}

fn files(p: &Prepared, jobs: usize) -> Vec<String> {
    let runs = sweep::sweep(p, jobs, &mut |_, _| {});
    vec![
        output::summary_json(p, "faithful", &runs),
        output::summary_csv(p, &runs),
        output::table(p, &runs),
    ]
}

#[test]
fn job_counts_give_identical_files_with_the_conversation_metrics() {
    let mut p = prepared(&input("conversations.json"));
    p.set_window(5.0, 15.0);
    let one = files(&p, 1);
    assert_eq!(one, files(&p, 2), "--jobs 2");
    for name in output::CONVERSATION_METRICS {
        assert!(one[0].contains(&format!("\"{name}\"")), "{name}");
        assert!(one[1].lines().next().unwrap_or("").contains(name), "{name}");
    }
    assert!(one[2].contains("conversations: guard at 8: "), "{}", one[2]);
}

#[test]
fn the_example_runs_in_quick_form() {
    let path = super::repo().join("crates/sim/examples/scenario-conversations.json");
    let text = std::fs::read_to_string(&path).expect("example");
    let mut p = prepared(&text);
    p.quick();
    p.set_window(20.0, 30.0);
    p.file.rates_rps = vec![150.0];
    p.policies.truncate(1);
    let runs = sweep::sweep(&p, 1, &mut |_, _| {});
    // The files a user reads, pinned: a change of how sizes, turns or
    // think times are drawn shows here as a changed snapshot.
    let shown = format!(
        "{}\n{}",
        output::summary_csv(&p, &runs),
        output::table(&p, &runs)
    );
    snapshot_settings().bind(|| insta::assert_snapshot!("conversations_example_quick", shown));
    let m = &runs[0].result.metrics;
    assert!(m.conversations.expect("conversations") > 300, "{m:?}");
    assert!(m.succeeded > 2_000, "{m:?}");
    assert!(m.token_reuse > 0.4, "{m:?}");
    let off = std::fs::read_to_string(
        super::repo().join("crates/sim/examples/scenario-conversations-off.json"),
    )
    .expect("example");
    assert_eq!(
        off.replace(
            "\"last_cluster_affinity\": false",
            "\"last_cluster_affinity\": true"
        )
        .lines()
        .skip(3)
        .collect::<Vec<_>>(),
        text.lines().skip(3).collect::<Vec<_>>(),
        "the two examples differ only by the flag"
    );
}

/// Every diagnostic of a scenario that does not load, one a line: code,
/// line:column, message and help.
fn diagnostics(text: &str) -> String {
    let Err(report) = load("conversations.json", text) else {
        panic!("expected an invalid scenario");
    };
    report
        .diagnostics
        .iter()
        .map(|d| {
            let (line, col) = line_column(text, d.span.start);
            let help = d.help.clone().unwrap_or_default();
            format!("{:?} {line}:{col} {} [{help}]\n", d.code, d.message)
        })
        .collect()
}

fn with_conversations(object: &str) -> String {
    let text = input("conversations.json");
    let start = text.find("\"conversations\"").expect("key");
    let end = start + text[start..].find('}').expect("end") + 1;
    format!(
        "{}\"conversations\": {object}{}",
        &text[..start],
        &text[end..]
    )
}

#[test]
fn bad_conversation_keys_and_values_are_diagnosed() {
    let settings = snapshot_settings();
    let structure = diagnostics(&with_conversations(
        r#"{"mean_turn": 4, "think_time_s": "2", "first_message_tokens": [500],
            "message_tokens": [20, 200], "output_tokens": [20, 100],
            "max_context_tokens": 4096, "block_tokens": 64, "retry_backof_s": 1}"#,
    ));
    let values = diagnostics(&with_conversations(
        r#"{"mean_turns": 0.5, "think_time_s": -1, "first_message_tokens": [0, 3000],
            "message_tokens": [200, 20], "output_tokens": [0, 100],
            "max_context_tokens": 3000, "block_tokens": 0, "max_turn_attempts": 0,
            "retry_backoff_s": 1e300}"#,
    ));
    let blocks = diagnostics(&with_conversations(
        r#"{"mean_turns": 4, "think_time_s": 2, "first_message_tokens": [500, 1500],
            "message_tokens": [20, 200], "output_tokens": [20, 100],
            "max_context_tokens": 1000000, "block_tokens": 1}"#,
    ));
    let both = diagnostics(&input("conversations.json").replacen(
        "\"conversations\"",
        "\"workload\": {\"keys\": 2, \"zipf_s\": 0, \"input_tokens\": [1, 1], \"output_tokens\": 1},\n  \"conversations\"",
        1,
    ));
    let laws = diagnostics(&with_conversations(
        r#"{"mean_turns": 4, "think_time_s": 2,
            "first_message_tokens": {"distribution": "lognormal", "mean": 0, "sigma": 0.5},
            "message_tokens": {"distribution": "lognormel", "mean": 100},
            "output_tokens": {"distribution": "uniform", "min": 5, "maks": 10},
            "max_context_tokens": 4096, "block_tokens": 64}"#,
    ));
    let law_values = diagnostics(&with_conversations(
        r#"{"mean_turns": 4, "think_time_s": 2,
            "first_message_tokens": {"distribution": "lognormal", "mean": 0, "sigma": 0.5, "p99_cap": 900},
            "message_tokens": {"distribution": "lognormal", "mean": 100, "sigma": 1, "min": 50, "p99_cap": 2e9},
            "output_tokens": {"distribution": "uniform", "min": 50, "max": 10},
            "max_context_tokens": 4096, "block_tokens": 64}"#,
    ));
    let shown = format!(
        "# structure\n{structure}\n# values\n{values}\n# block budget\n{blocks}\n# two workloads\n{both}\n# size laws\n{laws}\n# size law values\n{law_values}"
    );
    settings.bind(|| insta::assert_snapshot!("conversations_bad_inputs", shown));
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

    /// For any sizes: every prompt fits, is the first message plus the
    /// exchanges it keeps, drops only ever more of them, and shares the
    /// whole previous prompt unless it dropped one (then the first message).
    #[test]
    fn prompts_fit_and_share_what_they_keep(
        first in 1u64..5_000,
        pairs in proptest::collection::vec((0u64..600, 1u64..600), 0..40),
        last_output in 1u64..600,
        slack in 0u64..20_000,
    ) {
        let messages: Vec<u64> = pairs.iter().map(|p| p.0).collect();
        let mut outputs: Vec<u64> = pairs.iter().map(|p| p.1).collect();
        outputs.push(last_output);
        let max = first + 600 + 600 + slack;
        let got = prompts(first, &messages, &outputs, max);
        proptest::prop_assert_eq!(got.len(), messages.len() + 1);
        proptest::prop_assert_eq!(got[0], p(first, 0, 2));
        for k in 1..got.len() {
            let (prev, cur) = (got[k - 1], got[k]);
            let turn = k + 1;
            let kept: u64 = (cur.kept_from as usize..=turn)
                .map(|j| outputs[j - 2] + messages[j - 2])
                .sum();
            proptest::prop_assert!(cur.input <= max);
            proptest::prop_assert_eq!(cur.input, first + kept);
            proptest::prop_assert!(cur.kept_from >= prev.kept_from);
            proptest::prop_assert!(cur.kept_from as usize <= turn);
            let expected = if cur.kept_from == prev.kept_from { prev.input } else { first };
            proptest::prop_assert_eq!(cur.shared, expected);
            // Dropping one exchange fewer would not have fitted.
            if cur.kept_from > prev.kept_from {
                let j = cur.kept_from as usize - 1;
                proptest::prop_assert!(cur.input + outputs[j - 2] + messages[j - 2] > max);
            }
        }
    }
}
