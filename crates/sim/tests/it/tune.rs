//! `routex sim tune` on a small scenario: the search is deterministic
//! across `--jobs`, respects the TTFT bound, halves as documented, and
//! prints a winner that routex's own checkers read back to the same values.

use super::support::{input, prepared};
use routex::config::check_lb_config;
use routex::ir::Settings;
use routex_sim::search::tune::space::{Setting, Space};
use routex_sim::search::tune::{report, tune, TuneResult, TuneSpec};

fn spec(p: &routex_sim::scenario::Prepared, bound_ms: f64) -> TuneSpec {
    TuneSpec {
        template: p.policies.iter().position(|x| x.name == "guard").unwrap(),
        rate_rps: 12.0,
        ttft_p99_bound_ms: bound_ms,
        trials: 12,
        seed: 5,
        eta: 3,
        space: Space::default(),
    }
}

fn search(jobs: usize, bound_ms: f64) -> (TuneResult, String) {
    let mut p = prepared(&input("fast-check.json"));
    p.settings.mode = routex_sim::WaitMode::Fast;
    let s = spec(&p, bound_ms);
    let r = tune(&p, &s, jobs, &mut |_| {}).expect("tune");
    let text = report::table(&r, &s) + &report::summary(&r, &s);
    (r, text)
}

#[test]
fn same_result_for_any_job_count() {
    let (one, text_one) = search(1, 4_000.0);
    let (two, text_two) = search(2, 4_000.0);
    assert_eq!(text_one, text_two);
    assert_eq!(one.best().expression, two.best().expression);
    // Rung 1: 12 trials x 1 seed x a third of the window; the best
    // ceil(12 / 3) = 4 move on, the reference among them here; rung 2
    // keeps ceil(4 / 3) = 2, the reference again, and rung 3 runs those
    // 2 on the scenario's 3 seeds.
    let per_rung: Vec<usize> = (1..=3)
        .map(|n| {
            one.trials
                .iter()
                .filter(|t| t.evaluations.len() >= n)
                .count()
        })
        .collect();
    assert_eq!(per_rung, vec![12, 4, 2]);
    assert_eq!(one.runs, 12 + 4 + 2 * 3);
}

#[test]
fn the_bound_is_respected_and_the_reference_kept() {
    let bound = 4_000.0;
    let (r, _) = search(2, bound);
    for t in &r.trials {
        for e in &t.evaluations {
            assert_eq!(
                e.feasible,
                e.ttft_p99_ms <= bound && e.steady,
                "trial {}",
                t.id
            );
        }
    }
    let best = r.best().last().copied().unwrap();
    assert!(best.feasible, "some trial meets 4 s on this scenario");
    // The winner is the best feasible trial of the last rung.
    let last_rung = r.rungs.len();
    for t in r.trials.iter().filter(|t| t.evaluations.len() == last_rung) {
        let e = t.last().unwrap();
        if e.feasible {
            assert!(e.goodput_rps <= best.goodput_rps);
        }
    }
    let reference = r.reference().expect("reference");
    assert_eq!(reference.evaluations.len(), last_rung);
    assert_eq!(
        reference.setting,
        Setting {
            wait_ms: 300,
            interval_ms: 300,
            max_queued: 2,
            fallback_max_queued: 0,
            group: 1
        }
    );
    // An impossible bound: nothing is feasible, the closest p99 wins.
    let (none, text) = search(1, 1.0);
    assert!(none.trials.iter().all(|t| !t.last().unwrap().feasible));
    assert!(text.contains("no trial met the TTFT p99 bound"));
    let p99 = |t: &routex_sim::search::tune::Trial| t.last().unwrap().ttft_p99_ms;
    let deepest: Vec<f64> = none
        .trials
        .iter()
        .filter(|t| t.evaluations.len() == last_rung)
        .map(p99)
        .collect();
    assert!(deepest.windows(2).all(|w| w[0] <= w[1]), "{deepest:?}");
}

/// The printed expression and model entry compile with routex's own
/// checkers to the winner's values.
#[test]
fn the_winner_pastes_into_both_formats() {
    let (r, _) = search(2, 4_000.0);
    let p = prepared(&input("fast-check.json"));
    let table = p.route_table().expect("table");
    let (expression, entry) = report::paste(&r, &table, "m").expect("paste");
    let want = r.best().setting;
    let check = |settings: &Settings, what: &str| match settings {
        Settings::PulsarWaitAndWiden(s) => {
            assert_eq!(s.cache_affinity_wait_ms, want.wait_ms, "{what}");
            assert_eq!(s.band_widen_interval_ms, want.interval_ms, "{what}");
            assert_eq!(s.bucket.max_queued, want.max_queued, "{what}");
            assert_eq!(s.fallback_max_queued, want.fallback_max_queued, "{what}");
            assert_eq!(
                s.cache_affinity_backend_selection_count, want.group,
                "{what}"
            );
            // The template's other arguments survive.
            assert_eq!(s.bucket.max_queue_time_floor_ms, Some(4_000), "{what}");
            assert_eq!(s.seed, "routesim-v1", "{what}");
        }
        other => panic!("{what}: {other:?}"),
    };
    let (definition, report) = routex::check::check_expression("expr", &expression, None, None);
    assert!(!report.has_errors(), "{:?}", report.diagnostics);
    check(&definition.expect("compiles").policy.settings, "expression");
    assert!(
        entry.starts_with("\"m\": {\n  \"algorithm\": \"pulsar-wait-and-widen\""),
        "{entry}"
    );
    let config = format!("{{\"default\": \"random\", \"models\": {{\n{entry}\n}}}}");
    let (table, report) = check_lb_config("lb-config.json", &config);
    assert!(report.diagnostics.is_empty(), "{:?}", report.diagnostics);
    let table = table.expect("loads");
    check(
        &table.models["m"].definition.policy.settings,
        "lb-config entry",
    );
}

#[test]
fn a_template_that_is_not_pulsar_wait_and_widen_is_refused() {
    let p = prepared(&input("fast-check.json"));
    let mut s = spec(&p, 1_000.0);
    s.template = p.policies.iter().position(|x| x.name == "legacy").unwrap();
    let err = tune(&p, &s, 1, &mut |_| {}).unwrap_err();
    assert!(err.diagnostics[0]
        .message
        .contains("not a pulsar-wait-and-widen"));
}

/// On a trace the cheap rung replays the first third of the compressed
/// trace (its window ends with the trace, whatever `measure_s` says).
#[test]
fn a_trace_rung_is_a_third_of_the_compressed_trace() {
    use routex_sim::scenario::{load_with, LoadOptions};
    let root = std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    let text =
        std::fs::read_to_string(root.join("crates/sim/examples/scenario-trace-conversation.json"))
            .expect("example");
    let mut v: serde_json::Value = serde_json::from_str(&text).expect("json");
    v["seeds"] = serde_json::json!([1, 2]);
    let guard = v["policies"]["guard"].clone();
    v["policies"] = serde_json::json!({ "guard": guard });
    let examples = root.join("crates/sim/examples");
    let options = LoadOptions {
        dir: Some(&examples),
        trace: None,
        ..LoadOptions::default()
    };
    let mut p = load_with("trace.json", &v.to_string(), options).expect("loads");
    p.settings.mode = routex_sim::WaitMode::Fast;
    let t = p.trace.clone().expect("a trace");
    let rate = 20.0 * t.native_rps;
    // A trace is repeated to fill the window, so a rung's window is the
    // scenario's, scaled.
    let (warmup, measure) = routex_sim::search::tune::window(&p, rate, 1.0 / 3.0);
    assert_eq!((warmup, measure), (20.0, 60.0));
    let (_, full) = routex_sim::search::tune::window(&p, rate, 1.0);
    assert_eq!(full, 180.0);
    let s = TuneSpec {
        template: 0,
        rate_rps: rate,
        ttft_p99_bound_ms: 5_000.0,
        trials: 6,
        seed: 3,
        eta: 3,
        space: Space::default(),
    };
    let one = tune(&p, &s, 1, &mut |_| {}).expect("tune");
    let two = tune(&p, &s, 2, &mut |_| {}).expect("tune");
    assert_eq!(report::table(&one, &s), report::table(&two, &s));
    // 6 trials on a third of the trace, ceil(6 / 3) = 2 on the whole of
    // it, ceil(2 / 3) = 1 on both seeds: plus the reference wherever it
    // missed the cut.
    let reached = |n| {
        one.trials
            .iter()
            .filter(|t| t.evaluations.len() >= n)
            .count()
    };
    let (r1, r2, r3) = (reached(1), reached(2), reached(3));
    assert_eq!(r1, 6);
    assert!(r2 == 2 || r2 == 3, "{r2}");
    assert!(r3 == 1 || r3 == 2, "{r3}");
    assert_eq!(one.reference().map(|t| t.evaluations.len()), Some(3));
    assert_eq!(one.runs, r1 + r2 + 2 * r3);
}

/// The tune patch: a base configuration whose model has its own
/// `request_algorithms` and fields the search does not touch comes back
/// intact but for the fields the winner's expression sets; routex's own
/// diff sees only those.
#[test]
fn the_patched_configuration_keeps_everything_it_did_not_tune() {
    let base: serde_json::Value = serde_json::json!({
        "default": "power-of-n",
        "request_algorithms": {"pulsar": {"algorithm": "pulsar", "seed": "req-v1"}},
        "models": {
            "m": {
                "algorithm": "pulsar-wait-and-widen",
                "seed": "v1",
                "n": 3,
                "max_queue_time_floor_ms": 500,
                "max_queue_time_ceil_ms": 2000,
                "cache_affinity_wait_ms": 300,
                "band_widen_interval_ms": 200,
                "fallback_max_queued": 1,
                "request_algorithms": {
                    "pulsar": {"algorithm": "pulsar", "seed": "v1"},
                    "round-robin": "round-robin"
                }
            },
            "other": "round-robin"
        }
    });
    let text = serde_json::to_string_pretty(&base).expect("json");
    let (table, _) = routex::config::load_table("lb-config.json", &text);
    let table = table.expect("the base loads");
    let winner = "pulsar-wait-and-widen(seed=\"v1\", n=3, max_queue_time_floor_ms=500, max_queue_time_ceil_ms=2000, cache_affinity_wait_ms=700, band_widen_interval_ms=900, fallback_max_queued=0, max_queued=8)";
    let (patched, entry) = report::patched_config(Some(&base), &table, "m", winner).expect("patch");
    assert_eq!(
        entry["request_algorithms"],
        base["models"]["m"]["request_algorithms"]
    );
    assert_eq!(patched["request_algorithms"], base["request_algorithms"]);
    assert_eq!(patched["models"]["other"], "round-robin");
    assert_eq!(patched["default"], "power-of-n");
    for (k, v) in [
        ("cache_affinity_wait_ms", 700),
        ("band_widen_interval_ms", 900),
        ("fallback_max_queued", 0),
        ("max_queued", 8),
        ("n", 3),
        ("max_queue_time_floor_ms", 500),
    ] {
        assert_eq!(entry[k], v, "{k}");
    }
    let patched_text = serde_json::to_string_pretty(&patched).expect("json");
    let (_, report) = check_lb_config("patched.json", &patched_text);
    assert!(report.diagnostics.is_empty(), "{:?}", report.diagnostics);
    let (new_table, _) = routex::config::load_table("patched.json", &patched_text);
    let diff = routex::diff::diff_tables(&table, &new_table.expect("loads"));
    let human = routex::render::diff::render_human(&diff, "lb-config.json", "patched.json");
    for field in [
        "cache_affinity_wait_ms",
        "band_widen_interval_ms",
        "fallback_max_queued",
        "max_queued",
    ] {
        assert!(human.contains(field), "{field} in\n{human}");
    }
    for field in ["round-robin", "max_queue_time_floor_ms", "seed"] {
        assert!(!human.contains(field), "{field} unchanged, yet in\n{human}");
    }
}
