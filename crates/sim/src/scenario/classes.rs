//! The checks of `workload.classes` (docs/simulator.md, "Arrival laws and
//! key popularity"): shares that add up to 1, and each class's sizes
//! checked as the workload's are, at the class's own keys.

use super::limits::Err;
use crate::workload::classes::MAX_CLASSES;
use crate::workload::WorkloadSpec;

/// How far the shares' sum may be from 1 (decimal shares such as 0.1
/// add up to 1 only within rounding).
const SUM_TOLERANCE: f64 = 1e-6;

/// Reports every problem of the workload's size classes.
pub(super) fn check(w: &WorkloadSpec, err: &mut Err<'_>) {
    if w.classes.is_empty() {
        return;
    }
    if w.classes.len() > MAX_CLASSES {
        err(
            "workload.classes",
            format!("at most {MAX_CLASSES} size classes"),
        );
    }
    let mut sum = 0.0;
    for (i, c) in w.classes.iter().enumerate() {
        let at = format!("workload.classes.{i}");
        if c.share.is_finite() && c.share > 0.0 && c.share <= 1.0 {
            sum += c.share;
        } else {
            err(
                &format!("{at}.share"),
                "`share` (the class's share of the keys) must be above 0 and at most 1".into(),
            );
        }
        for (name, size) in [
            ("input_tokens", &c.input_tokens),
            ("output_tokens", &c.output_tokens),
        ] {
            let Some(size) = size else { continue };
            let [lo, hi] = size.bounds();
            if let Some((inner, message)) = size.problem() {
                err(&format!("{at}.{name}.{inner}"), message);
            } else if lo > hi {
                err(
                    &format!("{at}.{name}"),
                    format!("`{name}` [min, max] needs min <= max"),
                );
            }
        }
    }
    if (sum - 1.0).abs() > SUM_TOLERANCE && w.classes.iter().all(|c| c.share.is_finite()) {
        err(
            "workload.classes",
            format!("the classes' shares add up to {sum}, not 1"),
        );
    }
}
