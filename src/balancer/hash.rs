//! The stargate hash construction (docs/stargate.md 3.6.6, 3.7.2):
//! a version byte, then tagged fields, hashed with XXH3-64 (seed 0).
//!
//! Bytes are written into a caller-owned buffer, so after warm-up hashing
//! never allocates. A shared prefix (seed, routing key, model, ...) is
//! written once and each cluster's suffix is appended and truncated again.

use xxhash_rust::xxh3::xxh3_64;

/// The hash layout version, first byte of every hashed input.
pub const VERSION: u8 = 1;

/// Appends `tag(name, value)`: name, 0xFF, value length (u64 LE), value.
pub fn push_tag(buf: &mut Vec<u8>, name: &str, value: &[u8]) {
    buf.extend_from_slice(name.as_bytes());
    buf.push(0xFF);
    buf.extend_from_slice(&(value.len() as u64).to_le_bytes());
    buf.extend_from_slice(value);
}

/// Starts a hashed input: version, seed, routing key ("" when absent), model.
pub fn start(buf: &mut Vec<u8>, seed: &str, routing_key: Option<&str>, model: &str) {
    buf.clear();
    buf.push(VERSION);
    push_tag(buf, "seed", seed.as_bytes());
    push_tag(buf, "routing_key", routing_key.unwrap_or("").as_bytes());
    push_tag(buf, "model_id", model.as_bytes());
}

/// Hashes the buffer with `tag(name, value)` appended, then restores it.
pub fn hash_with(buf: &mut Vec<u8>, name: &str, value: &[u8]) -> u64 {
    let prefix = buf.len();
    push_tag(buf, name, value);
    let h = xxh3_64(buf);
    buf.truncate(prefix);
    h
}

/// The Pulsar rendezvous hash H of one cluster (3.7.2), in one call; the
/// ranking builds the same bytes incrementally. For the tests that pin H.
#[cfg(feature = "testing")]
pub fn pulsar_hash(
    buf: &mut Vec<u8>,
    seed: &str,
    routing_key: Option<&str>,
    model: &str,
    affinity_key: Option<&str>,
    cluster_id: &str,
) -> u64 {
    start(buf, seed, routing_key, model);
    push_tag(
        buf,
        "cache_affinity_key",
        affinity_key.unwrap_or("").as_bytes(),
    );
    hash_with(buf, "cluster_id", cluster_id.as_bytes())
}

/// u = (H + 1) / (2^64 + 1 rounded), e = -ln u (3.7.3).
pub fn exponential(h: u64) -> f64 {
    let u = (h as f64 + 1.0) / (u64::MAX as f64 + 2.0);
    -u.ln()
}
