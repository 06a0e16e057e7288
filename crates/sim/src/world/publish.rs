//! Change-driven publishing (docs/simulator-model.md A2 `Publish`, A14;
//! `pylon.coalesce_ms`, off by default): on top of its heartbeats, a Pylon
//! publishes after its state changes, at most once per coalescing
//! interval. Changes made while a publication is pending are coalesced
//! into it: it reports the state at the time it goes out.

use crate::kernel::time::Micros;

/// When one Pylon's change-driven publications go out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Coalescer {
    interval: Micros,
    /// The last change-driven publication (heartbeats do not count: they
    /// run on their own timer).
    last: Option<Micros>,
    pending: bool,
}

impl Coalescer {
    pub fn new(interval: Micros) -> Self {
        Coalescer {
            interval,
            last: None,
            pending: false,
        }
    }

    /// The Pylon's state changed at `now`: the instant to schedule a
    /// `Publish` at, or `None` when one is already pending. The first
    /// publication goes out at once; later ones no sooner than `interval`
    /// after the previous one.
    pub fn changed(&mut self, now: Micros) -> Option<Micros> {
        if self.pending {
            return None;
        }
        self.pending = true;
        Some(match self.last {
            Some(last) => now.max(last.saturating_add(self.interval)),
            None => now,
        })
    }

    /// The scheduled publication went out at `now`.
    pub fn published(&mut self, now: Micros) {
        self.pending = false;
        self.last = Some(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn publishes_at_once_then_at_most_once_per_interval() {
        let mut c = Coalescer::new(50_000);
        assert_eq!(c.changed(1_000), Some(1_000), "first change: at once");
        assert_eq!(c.changed(1_000), None, "same instant: coalesced");
        c.published(1_000);
        assert_eq!(c.changed(20_000), Some(51_000), "within the interval");
        assert_eq!(c.changed(30_000), None);
        assert_eq!(c.changed(51_000), None);
        c.published(51_000);
        assert_eq!(c.changed(200_000), Some(200_000), "after a quiet interval");
        c.published(200_000);
        let mut every = Coalescer::new(0);
        assert_eq!(every.changed(7), Some(7));
        every.published(7);
        assert_eq!(every.changed(7), Some(7), "interval 0: every change");
    }
}
