//! Faithful mode's reuse of a lasting `Unavailable` (docs/simulator.md
//! "The parity scenario's speed"): a poll over an unchanged view takes the
//! router's earlier answer instead of deciding again. It must change
//! nothing: the same metrics, series and run counters with and without it,
//! while most polls of an overloaded run are reused.

use super::support::{input, prepared};
use routex_sim::run::RunResult;
use routex_sim::scenario::Prepared;

/// Runs `policy` of `p` at 18 RPS, seed 1, with the reuse on or off.
fn once(p: &Prepared, policy: &str, reuse: bool) -> RunResult {
    let mut settings = p.settings.clone();
    settings.reuse_lasting_unavailable = reuse;
    super::support::run_with(&settings, p, policy, 18.0, 1)
}

/// The fast-mode check's scenario (six 4-slot backends, about 15 RPS
/// warm, run at 18 RPS) with a fourth policy whose queue-SLO limit moves
/// with elapsed (floor 1 000 ms, ceiling 4 000 ms, the 10 s request SLO):
/// its Unavailable never lasts within the 10 s max wait.
fn scenario() -> Prepared {
    let mut v: serde_json::Value = serde_json::from_str(&input("fast-check.json")).expect("json");
    v["policies"]["moving-limit"] = serde_json::Value::from(
        "wait-and-widen(max_queued=2, cache_affinity_backend_selection_count=1, \
         cache_affinity_wait_ms=300, comparator=\"utilization\", \
         max_queue_time_floor_ms=1000, max_queue_time_ceil_ms=4000, seed=\"routesim-v1\")",
    );
    prepared(&serde_json::to_string(&v).expect("json"))
}

#[test]
fn reusing_a_lasting_unavailable_changes_no_output() {
    let p = scenario();
    // (policy, decisions, of them reused).
    let mut seen = Vec::new();
    for policy in ["wait-and-widen", "guard", "legacy", "moving-limit"] {
        let on = once(&p, policy, true);
        let off = once(&p, policy, false);
        assert_eq!(on.metrics, off.metrics, "{policy}");
        assert_eq!(on.series, off.series, "{policy}");
        assert_eq!(on.diagnostics, off.diagnostics, "{policy}");
        let mut stats = on.stats.clone();
        assert_eq!(off.stats.decisions_reused, 0, "{policy}");
        stats.decisions_reused = 0;
        assert_eq!(stats, off.stats, "{policy}");
        seen.push((policy, on.stats.decisions, on.stats.decisions_reused));
    }
    // Most polls of the two lasting policies are reused; the legacy band
    // walk is not examined, and the moving limit never lasts.
    assert_eq!(
        seen,
        [
            ("wait-and-widen", 101_643, 89_372),
            ("guard", 145_924, 126_991),
            ("legacy", 172_002, 0),
            ("moving-limit", 70_536, 0)
        ]
    );
}
