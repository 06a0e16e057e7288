//! The gateway's last-cluster store (docs/stargate.md 3.10), as a scenario
//! that turns it on (`client.last_cluster_store`) models it: the gateway in
//! front of the routers remembers, per session, the backend that served
//! the session's last successful response, and sends it back with the
//! session's next request as `x-stargate-last-cluster-id`.
//!
//! A session is (routing key, model, affinity key). A run has one routing
//! key and one model, so the store is keyed by the plan's affinity-key
//! index; a key part longer than [`MAX_KEY_PART_BYTES`] is never stored,
//! as the proxy's gateway does. The store is bounded: it remembers at most
//! `max_sessions` sessions (the oldest first-recorded goes first), and its
//! memory is one 16-byte slot and one flag per affinity key of the plan
//! (which holds each key's name already) plus 4 bytes per remembered
//! session. It is built once per run and allocates nothing afterwards;
//! nothing in it depends on a hash map's order.

use crate::kernel::time::Micros;
use std::collections::VecDeque;

/// The longest routing key, model or affinity key of a remembered session
/// (the proxy's gateway's bound, `examples/proxy/gateway.rs`).
pub const MAX_KEY_PART_BYTES: usize = 1024;
/// The longest cluster id the gateway accepts.
pub const MAX_CLUSTER_ID_BYTES: usize = 256;
/// The default of `max_sessions`.
pub const DEFAULT_MAX_SESSIONS: u32 = 65_536;

/// A scenario's store settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StoreSettings {
    /// How long an entry lives after the response that wrote it reached
    /// the client.
    pub ttl_us: Micros,
    /// The most sessions remembered at once (at least 1).
    pub max_sessions: u32,
}

/// No backend.
const NONE: u32 = u32::MAX;

#[derive(Clone, Copy, Debug)]
struct Entry {
    backend: u32,
    expiry: Micros,
}

const EMPTY: Entry = Entry {
    backend: NONE,
    expiry: 0,
};

/// One run's store.
#[derive(Debug)]
pub struct LastClusterStore {
    ttl_us: Micros,
    capacity: usize,
    /// Per affinity-key index: its entry (`NONE` when not remembered).
    entries: Vec<Entry>,
    /// Per affinity-key index: whether its session can be stored at all.
    storable: Vec<bool>,
    /// Per backend: whether the gateway accepts its id.
    acceptable: Vec<bool>,
    /// Remembered keys, oldest first-recorded first.
    order: VecDeque<u32>,
}

impl LastClusterStore {
    /// The store of a run whose requests send `routing_key`, `model` and
    /// the affinity keys `key_names`, over backends of ids `backend_ids`.
    pub fn new(
        settings: StoreSettings,
        routing_key: &str,
        model: &str,
        key_names: &[String],
        backend_ids: &[&str],
    ) -> Self {
        let fits = |part: &str| part.len() <= MAX_KEY_PART_BYTES;
        let run_fits = fits(routing_key) && fits(model);
        let storable: Vec<bool> = key_names.iter().map(|k| run_fits && fits(k)).collect();
        let acceptable = backend_ids
            .iter()
            .map(|id| {
                !id.is_empty()
                    && id.len() <= MAX_CLUSTER_ID_BYTES
                    && id.bytes().all(|b| b.is_ascii_graphic())
            })
            .collect();
        let capacity = usize::try_from(settings.max_sessions.max(1)).unwrap_or(usize::MAX);
        LastClusterStore {
            ttl_us: settings.ttl_us,
            capacity,
            entries: vec![EMPTY; key_names.len()],
            order: VecDeque::with_capacity(capacity.min(key_names.len())),
            storable,
            acceptable,
        }
    }

    /// The session's last backend at `now`, unless its entry expired.
    pub fn last_backend(&self, key: u32, now: Micros) -> Option<u32> {
        self.entries
            .get(key as usize)
            .filter(|e| e.backend != NONE && now < e.expiry)
            .map(|e| e.backend)
    }

    /// A successful response of `backend` reached the client at `now`:
    /// remembers it for the session of `key`. Returns whether it was
    /// recorded (a key past the plan's, a key part too long or an id the
    /// gateway refuses is not).
    pub fn record(&mut self, key: u32, backend: u32, now: Micros) -> bool {
        let k = key as usize;
        if !self.storable.get(k).copied().unwrap_or(false)
            || !self
                .acceptable
                .get(backend as usize)
                .copied()
                .unwrap_or(false)
        {
            return false;
        }
        let expiry = now.saturating_add(self.ttl_us);
        if self.entries[k].backend != NONE {
            self.entries[k] = Entry { backend, expiry };
            return true;
        }
        while self.order.len() >= self.capacity {
            let Some(oldest) = self.order.pop_front() else {
                break;
            };
            self.entries[oldest as usize] = EMPTY;
        }
        self.order.push_back(key);
        self.entries[k] = Entry { backend, expiry };
        true
    }

    /// Sessions remembered (expired ones included until evicted).
    pub fn len(&self) -> usize {
        self.order.len()
    }

    /// Whether no session is remembered.
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store(max_sessions: u32, keys: &[&str], backends: &[&str]) -> LastClusterStore {
        let names: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
        LastClusterStore::new(
            StoreSettings {
                ttl_us: 10,
                max_sessions,
            },
            "rk",
            "m",
            &names,
            backends,
        )
    }

    #[test]
    fn entries_expire_after_their_ttl_and_are_overwritten() {
        let mut s = store(4, &["k0", "k1"], &["a", "b"]);
        assert_eq!(s.last_backend(0, 0), None, "a new session");
        assert!(s.record(0, 1, 100));
        assert_eq!(s.last_backend(0, 100), Some(1));
        assert_eq!(s.last_backend(0, 109), Some(1));
        assert_eq!(s.last_backend(0, 110), None, "expired at 100 + ttl");
        assert_eq!(s.last_backend(1, 100), None, "another session");
        assert!(s.record(0, 0, 105));
        assert_eq!(s.last_backend(0, 114), Some(0), "the latest response wins");
        assert_eq!(s.len(), 1);
    }

    #[test]
    fn bounded_oldest_first_recorded_goes_first() {
        let mut s = store(2, &["k0", "k1", "k2"], &["a"]);
        assert!(s.record(0, 0, 0));
        assert!(s.record(1, 0, 1));
        assert!(s.record(0, 0, 2), "an update keeps its place");
        assert!(s.record(2, 0, 3));
        assert_eq!(s.len(), 2);
        assert_eq!(s.last_backend(0, 3), None, "evicted: first recorded");
        assert_eq!(s.last_backend(1, 3), Some(0));
        assert_eq!(s.last_backend(2, 3), Some(0));
        assert!(s.order.capacity() >= 2);
    }

    #[test]
    fn refuses_what_the_gateway_refuses() {
        let long_key = "k".repeat(MAX_KEY_PART_BYTES + 1);
        let long_id = "x".repeat(MAX_CLUSTER_ID_BYTES + 1);
        let fits_id = "x".repeat(MAX_CLUSTER_ID_BYTES);
        let mut s = store(
            8,
            &["k0", &long_key],
            &["", "a b", "caf\u{e9}", &long_id, &fits_id],
        );
        for bad in 0..4 {
            assert!(!s.record(0, bad, 0), "backend {bad}");
        }
        assert!(s.record(0, 4, 0));
        assert!(!s.record(1, 4, 0), "a key part over the bound");
        assert!(!s.record(7, 4, 0), "a key past the plan's");
        assert!(!s.record(0, 9, 0), "a backend past the fleet");
        assert_eq!(s.last_backend(7, 0), None);
    }
}
