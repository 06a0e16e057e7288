//! The gateway's last-cluster store (docs/stargate.md 3.10): what the
//! gateway in front of a stargate router remembers per session, so it can
//! send `x-stargate-last-cluster-id` back. The proxy can play that gateway
//! (`ProxyOptions::sessions`).
//!
//! A session is (routing key, model, affinity key). An entry lives for the
//! TTL after the response that wrote it; only successful responses write,
//! and only an id stargate's gateway accepts (non-empty visible ASCII, at
//! most 256 bytes). The store is keyed by client input, so it is bounded:
//! at most `capacity` sessions (the oldest first-recorded one goes first),
//! and a key part longer than [`MAX_KEY_PART_BYTES`] is never stored.

use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// The longest cluster id the store accepts (the gateway's bound).
pub const MAX_CLUSTER_ID_BYTES: usize = 256;
/// The longest routing key, model or affinity key a session may have to be
/// remembered.
pub const MAX_KEY_PART_BYTES: usize = 1024;

/// A session: (routing key, model, affinity key).
type Key = (Option<String>, String, String);

/// How the store behaves.
#[derive(Clone, Copy, Debug)]
pub struct StoreOptions {
    /// How long an entry lives after the response that wrote it.
    pub ttl: Duration,
    /// The most sessions remembered at once.
    pub capacity: usize,
}

impl Default for StoreOptions {
    fn default() -> Self {
        StoreOptions {
            ttl: Duration::from_secs(600),
            capacity: 65_536,
        }
    }
}

/// The store; `Send + Sync`.
pub struct SessionStore {
    options: StoreOptions,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Session -> (last cluster, expiry).
    entries: HashMap<Key, (String, Instant)>,
    /// Sessions in the order they were first recorded, for eviction.
    order: VecDeque<Key>,
}

impl SessionStore {
    pub fn new(options: StoreOptions) -> Self {
        SessionStore {
            options,
            state: Mutex::default(),
        }
    }

    fn key(routing_key: Option<&str>, model: &str, affinity_key: &str) -> Option<Key> {
        let fits = |part: &str| part.len() <= MAX_KEY_PART_BYTES;
        (routing_key.is_none_or(fits) && fits(model) && fits(affinity_key)).then(|| {
            (
                routing_key.map(str::to_owned),
                model.to_owned(),
                affinity_key.to_owned(),
            )
        })
    }

    /// The session's last cluster, unless its entry expired by `now`.
    pub fn last_cluster(
        &self,
        routing_key: Option<&str>,
        model: &str,
        affinity_key: &str,
        now: Instant,
    ) -> Option<String> {
        let key = Self::key(routing_key, model, affinity_key)?;
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state
            .entries
            .get(&key)
            .filter(|(_, expiry)| now < *expiry)
            .map(|(cluster, _)| cluster.clone())
    }

    /// Remembers the cluster of a successful response; an id the gateway
    /// does not accept is ignored. Returns whether it was recorded.
    pub fn record(
        &self,
        routing_key: Option<&str>,
        model: &str,
        affinity_key: &str,
        cluster: &str,
        now: Instant,
    ) -> bool {
        let acceptable = !cluster.is_empty()
            && cluster.len() <= MAX_CLUSTER_ID_BYTES
            && cluster.bytes().all(|b| b.is_ascii_graphic());
        let Some(key) = Self::key(routing_key, model, affinity_key).filter(|_| acceptable) else {
            return false;
        };
        let expiry = now + self.options.ttl;
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(entry) = state.entries.get_mut(&key) {
            *entry = (cluster.to_owned(), expiry);
            return true;
        }
        while state.entries.len() >= self.options.capacity.max(1) {
            let Some(oldest) = state.order.pop_front() else {
                break;
            };
            state.entries.remove(&oldest);
        }
        state.order.push_back(key.clone());
        state.entries.insert(key, (cluster.to_owned(), expiry));
        true
    }

    /// Sessions remembered (expired ones included until evicted).
    pub fn len(&self) -> usize {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.entries.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_expire_are_bounded_and_refuse_bad_ids() {
        let store = SessionStore::new(StoreOptions {
            ttl: Duration::from_secs(10),
            capacity: 2,
        });
        let t0 = Instant::now();
        assert!(store.record(None, "m", "k1", "a", t0));
        assert_eq!(
            store.last_cluster(None, "m", "k1", t0).as_deref(),
            Some("a")
        );
        assert_eq!(store.last_cluster(Some("rk"), "m", "k1", t0), None);
        assert_eq!(
            store.last_cluster(None, "m", "k1", t0 + Duration::from_secs(10)),
            None
        );
        for bad in ["", "a b", "caf\u{e9}", &"x".repeat(257)] {
            assert!(!store.record(None, "m", "k2", bad, t0), "{bad:?}");
        }
        assert!(store.record(None, "m", "k2", &"x".repeat(256), t0));
        assert!(store.record(None, "m", "k3", "c", t0));
        assert_eq!(store.len(), 2);
        assert_eq!(
            store.last_cluster(None, "m", "k1", t0),
            None,
            "evicted first"
        );
        assert!(!store.record(None, "m", &"k".repeat(1025), "a", t0));
    }
}
