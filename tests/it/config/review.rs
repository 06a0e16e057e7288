//! Review findings on lb-config.json start-up rules (docs/stargate.md 4).

use super::load;
use routex::diag::Code;

/// serde_json refuses numbers that overflow f64 (e.g. `1e400`), so stargate
/// cannot start; an unchecked field such as `max_input_work_seconds` must not
/// load as infinity.
#[test]
fn numbers_overflowing_f64_fail_start_up() {
    for field in [
        "max_input_work_seconds",
        "next_bucket_unlock_factor",
        "cache_affinity_input_tokens_scale",
    ] {
        for number in ["1e400", "-1e400"] {
            let json = format!(
                r#"{{"models": {{"m": {{"algorithm": "wait-and-widen", "{field}": {number}}}}}}}"#
            );
            let (table, report) = load(&json);
            assert!(table.is_none(), "{field}: {number} must not load");
            assert!(
                report
                    .diagnostics
                    .iter()
                    .any(|d| d.is_error()
                        && matches!(d.code, Code::InvalidJson | Code::InvalidValue)),
                "{field}: {:?}",
                report.diagnostics
            );
        }
    }
    let (table, _) =
        load(r#"{"models": {"m": {"algorithm": "random", "max_input_work_seconds": -1e300}}}"#);
    assert!(table.is_some(), "finite values stay unchecked");
}

fn errors(json: &str) -> Vec<(Code, String)> {
    let (table, report) = load(json);
    let errs: Vec<(Code, String)> = report
        .diagnostics
        .iter()
        .filter(|d| d.is_error())
        .map(|d| (d.code, d.message.clone()))
        .collect();
    assert_eq!(table.is_none(), !errs.is_empty(), "{json}");
    errs
}

fn has(json: &str, message: &str) {
    let errs = errors(json);
    assert!(
        errs.iter().any(|(_, m)| m.contains(message)),
        "{json}: want {message:?}, got {errs:?}"
    );
}

#[test]
fn start_up_messages_fixed_by_the_spec() {
    has(
        r#"{"request_algorithms": {"pulsar": "random"}}"#,
        "request_algorithms key pulsar does not match configured algorithm random",
    );
    has(
        r#"{"models": {"m": {"algorithm": "round-robin", "zeta": 1, "seed": "x", "alpha": 2}}}"#,
        "round-robin config does not support field(s): alpha, seed, zeta",
    );
    has(
        r#"{"models": {"m": {"algorithm": "power-of-n", "comparator": null}}}"#,
        "invalid type: null",
    );
    has(
        r#"{"models": {"m": {"algorithm": "wait-and-widen", "comparator": null}}}"#,
        "invalid type: null",
    );
    has(
        r#"{"models": {"m": {"algorithm": "pulsar-wait-and-widen", "comparator": "ttft"}}}"#,
        "comparator is not supported for pulsar-wait-and-widen",
    );
    for n in [0, 65] {
        has(
            &format!(
                r#"{{"models": {{"m": {{"algorithm": "power-of-n", "sample_count": {n}}}}}}}"#
            ),
            &format!("power-of-n sample_count must be between 1 and 64, got {n}"),
        );
    }
    has(
        r#"{"models": {"m": {"algorithm": "wait-and-widen", "cache_affinity_input_tokens_scale": 1.1}}}"#,
        "cache_affinity_input_tokens_scale must be between 0.0 and 1.0, got 1.1",
    );
    for field in ["band_widen_interval_ms", "fallback_max_queued"] {
        has(
            &format!(r#"{{"models": {{"m": {{"algorithm": "wait-and-widen", "{field}": 0}}}}}}"#),
            field,
        );
    }
    // `default` is a name only.
    assert!(!errors(r#"{"default": {"algorithm": "pulsar"}}"#).is_empty());
    assert!(!errors(r#"{"default": "Pulsar"}"#).is_empty());
    assert!(!errors(r#"{"models": {"m": "round_robin"}}"#).is_empty());
    assert!(!errors(r#"{"models": {"m": 3}}"#).is_empty());
    assert!(!errors(r#"{"extra": 1}"#).is_empty());
    assert!(!errors(r#"{"models": {"m": {"algorithm": "pulsar", "sample_count": 2}}}"#).is_empty());
    assert!(!errors(r#"{"models": {"m": {"algorithm": "power-of-n", "seed": "x"}}}"#).is_empty());
    assert!(!errors(r#"{"models": {"m": {"algorithm": "wait-and-widen", "rendezvous_weight": "max-input-tps"}}}"#).is_empty());
    assert!(!errors(
        r#"{"models": {"m": {"algorithm": "wait-and-widen", "consider_kv_free_tokens": false}}}"#
    )
    .is_empty());
    // Accepted: PWW ignores virtual nodes; unchecked work limit; negative factor.
    assert!(errors(r#"{"models": {"m": {"algorithm": "pulsar-wait-and-widen", "cache_affinity_virtual_nodes": 5000, "max_input_work_seconds": -1, "next_bucket_unlock_factor": -3, "ttft_bucket_size_ms": 0, "n": 0}}}"#).is_empty());
    // A nested request_algorithms inside a request_algorithms entry is parsed: its errors count.
    assert!(!errors(r#"{"request_algorithms": {"pulsar": {"algorithm": "pulsar", "request_algorithms": {"x": "nope"}}}}"#).is_empty());
}
