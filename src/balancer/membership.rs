//! A name for one list of candidate ids, so the ranking cache can trust a
//! caller's "same candidates as last time" instead of comparing every id on
//! every decision (docs/algorithms.md, the ranking cache).

use std::num::NonZeroU64;
use std::sync::atomic::{AtomicU64, Ordering};

/// Names one ordered list of candidate ids. A caller passes the same value
/// only while the ids (and their order) of its candidate slice are
/// unchanged, and takes a [`Membership::fresh`] one at every change;
/// `router::CandidateView` keeps one this way. Values are unique within the
/// process, so two views never share one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Membership(NonZeroU64);

impl Membership {
    /// A value no earlier call returned.
    pub fn fresh() -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        // 2^64 calls do not happen; saturate rather than wrap to 0.
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        Membership(NonZeroU64::new(n).unwrap_or(NonZeroU64::MAX))
    }
}
