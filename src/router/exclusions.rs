//! Clusters excluded across one request's attempts (docs/stargate.md 2.2:
//! a cluster with no usable backend left is excluded and the request
//! decided again), handed to each decision as the `&[&str]` that
//! `Request::excluded` takes without building a `Vec<&str>` per attempt.

use std::sync::Arc;

/// Ids gathered on the stack by [`Exclusions::with_slice`]; past this many
/// in one call, that call collects them into a `Vec`.
pub(crate) const INLINE_EXCLUDED: usize = 16;

/// The clusters one request excluded so far. The list grows once per
/// excluded cluster (at most once per cluster and request), never per
/// attempt; each decision borrows it through [`Exclusions::with_slice`].
///
/// Public for embedders that run their own wait loop over
/// [`super::Router::route`] (docs/embedding.md); the async driver uses it
/// for its own.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Exclusions {
    ids: Vec<Arc<str>>,
}

impl Exclusions {
    /// No cluster excluded.
    pub fn new() -> Self {
        Exclusions::default()
    }

    /// Excludes a cluster; returns false (and stores nothing) if it was
    /// already excluded. An `Arc<str>`, such as a candidate view's cluster
    /// id, is stored without copying the text.
    pub fn insert(&mut self, id: impl AsRef<str> + Into<Arc<str>>) -> bool {
        if self.contains(id.as_ref()) {
            return false;
        }
        self.ids.push(id.into());
        true
    }

    /// Whether cluster `id` is excluded (a linear scan: the list is short).
    pub fn contains(&self, id: &str) -> bool {
        self.ids.iter().any(|e| **e == *id)
    }

    /// How many clusters are excluded.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether no cluster is excluded.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Forgets every id, keeping the buffer for the next request.
    /// Forgets every exclusion, keeping the storage (for the next request).
    pub fn clear(&mut self) {
        self.ids.clear();
    }

    /// The excluded ids, in the order they were excluded.
    pub fn iter(&self) -> impl Iterator<Item = &str> {
        self.ids.iter().map(|id| &**id)
    }

    /// Calls `f` with `also` (for example the request's own exclusions)
    /// followed by these ids, as one slice for `Request::excluded`. Up to
    /// 16 ids (`INLINE_EXCLUDED`) in all are gathered in an array on the
    /// stack: no allocation; more are collected into a `Vec` for this call.
    pub fn with_slice<R>(&self, also: &[&str], f: impl FnOnce(&[&str]) -> R) -> R {
        self.with_slices(also, &[], f)
    }

    /// [`Exclusions::with_slice`] with a second list first joined after
    /// `also`, for example a candidate view's unavailable clusters
    /// ([`super::CandidateView::unavailable`]). An id in both lists is
    /// passed twice, which excludes it all the same.
    pub fn with_slices<R>(
        &self,
        also: &[&str],
        more: &[Arc<str>],
        f: impl FnOnce(&[&str]) -> R,
    ) -> R {
        let total = also.len() + more.len() + self.ids.len();
        let all = also
            .iter()
            .copied()
            .chain(more.iter().map(|id| &**id))
            .chain(self.iter());
        if total <= INLINE_EXCLUDED {
            let mut inline = [""; INLINE_EXCLUDED];
            for (slot, id) in inline.iter_mut().zip(all) {
                *slot = id;
            }
            f(&inline[..total])
        } else {
            let spilled: Vec<&str> = all.collect();
            f(&spilled)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_kept_once_in_order_and_joined_after_the_callers() {
        let mut ex = Exclusions::new();
        assert!(ex.insert("b"));
        assert!(ex.insert(Arc::<str>::from("c")));
        assert!(ex.insert(String::from("d")));
        assert!(!ex.insert("c"), "already excluded");
        assert_eq!(ex.len(), 3);
        assert!(ex.contains("d") && !ex.contains("a"));
        assert_eq!(ex.with_slice(&["a"], |s| s.join(",")), "a,b,c,d");
        assert_eq!(Exclusions::new().with_slice(&[], |s| s.len()), 0);
    }

    #[test]
    fn more_than_the_inline_ids_spill_and_stay_complete() {
        let mut ex = Exclusions::new();
        let ids: Vec<String> = (0..INLINE_EXCLUDED + 3).map(|i| format!("c{i}")).collect();
        for id in &ids {
            ex.insert(id.as_str());
        }
        for also in [&[][..], &["x"][..]] {
            let joined = ex.with_slice(also, |s| s.join(","));
            let expected: Vec<&str> = also
                .iter()
                .copied()
                .chain(ids.iter().map(String::as_str))
                .collect();
            assert_eq!(joined, expected.join(","));
        }
    }
}
