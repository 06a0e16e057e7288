//! Review findings on lb-config.json start-up rules (reference-behaviour.md 4).

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
