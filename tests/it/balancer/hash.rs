//! The pinned hash construction (docs/stargate.md 3.6.6, 3.7.2-3.7.3).

use routex::balancer::hash;
use routex::balancer::pulsar_score;

#[test]
fn pulsar_hash_is_pinned_to_a_fixed_algorithm_and_version() {
    let mut buf = Vec::new();
    let h = hash::pulsar_hash(
        &mut buf,
        "seed-1",
        Some("rk-1"),
        "model-a",
        Some("prefix-123"),
        "inst-a",
    );
    assert_eq!(h, 0x19443c44ec9f8abf);
    let e = hash::exponential(h);
    let u = (-e).exp();
    assert!((u - 0.0986974).abs() < 1e-7, "u = {u}");
    assert!((e - 2.315696).abs() < 1e-6, "e = {e}");
    assert!((pulsar_score(1000.0, h).unwrap() - 1000.0 / e).abs() < 1e-9);
}

#[test]
fn hashed_input_layout_is_130_bytes_for_the_test_vector() {
    let mut buf = Vec::new();
    hash::start(&mut buf, "seed-1", Some("rk-1"), "model-a");
    hash::push_tag(&mut buf, "cache_affinity_key", b"prefix-123");
    hash::push_tag(&mut buf, "cluster_id", b"inst-a");
    assert_eq!(buf.len(), 130);
    assert_eq!(buf[0], hash::VERSION);
    // tag("seed", "seed-1") = "seed" 0xFF 6u64 LE "seed-1".
    assert_eq!(&buf[1..5], b"seed");
    assert_eq!(buf[5], 0xFF);
    assert_eq!(&buf[6..14], &6u64.to_le_bytes());
    assert_eq!(&buf[14..20], b"seed-1");
    assert_eq!(xxhash_rust::xxh3::xxh3_64(&buf), 0x19443c44ec9f8abf);
}

#[test]
fn absent_routing_and_affinity_keys_hash_as_empty_text() {
    let mut buf = Vec::new();
    let absent = hash::pulsar_hash(&mut buf, "s", None, "m", None, "c");
    let empty = hash::pulsar_hash(&mut buf, "s", Some(""), "m", Some(""), "c");
    assert_eq!(absent, empty);
    let other = hash::pulsar_hash(&mut buf, "s", None, "m", Some("k"), "c");
    assert_ne!(absent, other);
}

#[test]
fn pulsar_u_equal_to_one_leaves_the_cluster_unranked() {
    // Edge case 13: hashes near u64::MAX round to u = 1, e = 0.
    assert_eq!(hash::exponential(u64::MAX), 0.0);
    assert_eq!(pulsar_score(1000.0, u64::MAX), None);
    assert!(pulsar_score(1000.0, 0).is_some());
}
