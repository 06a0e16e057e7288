//! Draws by weight: cumulative sums once, then an inverse-CDF pick per
//! draw (a binary search), for every weighted choice a workload makes
//! (keys, size classes, entry routers).

/// Cumulative sums for inverse-CDF draws.
pub(crate) fn cdf(weights: impl Iterator<Item = f64>) -> Vec<f64> {
    let mut total = 0.0;
    weights
        .map(|w| {
            total += w.max(0.0);
            total
        })
        .collect()
}

/// Index of the first cumulative value above u x total.
pub(crate) fn pick(cdf: &[f64], u: f64) -> usize {
    let total = cdf.last().copied().unwrap_or(0.0);
    let target = u * total;
    cdf.partition_point(|&c| c <= target)
        .min(cdf.len().saturating_sub(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pick_skips_zero_weights() {
        let c = cdf([0.0, 1.0, 0.0, 1.0].into_iter());
        assert_eq!(pick(&c, 0.0), 1);
        assert_eq!(pick(&c, 0.49), 1);
        assert_eq!(pick(&c, 0.5), 3);
        assert_eq!(pick(&c, 0.999), 3);
        assert_eq!(pick(&[], 0.3), 0);
    }
}
