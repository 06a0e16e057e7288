//! Builders shared by the balancer and router tests: each algorithm's
//! default settings written out by hand (docs/stargate.md 4.3), so
//! tests do not depend on the compiler's defaults.

use routex::ir::{
    Admission, Algorithm, BucketSettings, Comparator, Policy, PowerOfNSettings, PulsarSettings,
    PulsarWaitAndWidenSettings, RendezvousWeight, Settings, Target, WaitAndWidenSettings,
    IR_VERSION,
};

pub fn policy(settings: Settings) -> Policy {
    let algorithm = match &settings {
        Settings::PowerOfN(_) => Algorithm::PowerOfN,
        Settings::WaitAndWiden(_) => Algorithm::WaitAndWiden,
        Settings::RoundRobin {} => Algorithm::RoundRobin,
        Settings::Random {} => Algorithm::Random,
        Settings::Pulsar(_) => Algorithm::Pulsar,
        Settings::PulsarWaitAndWiden(_) => Algorithm::PulsarWaitAndWiden,
    };
    Policy {
        version: IR_VERSION,
        stargate: Target::Widening,
        algorithm,
        admission: Admission::default(),
        settings,
    }
}

/// The 3.6.1 defaults.
pub fn bucket() -> BucketSettings {
    BucketSettings {
        n: 2,
        max_queued: 0,
        ttft_bucket_size_ms: 20,
        next_bucket_unlock_factor: 0.25,
        max_queue_time_floor_ms: None,
        max_queue_time_ceil_ms: None,
        ignore_queue_time: false,
        ignore_input_processing_time: false,
    }
}

pub fn ww() -> WaitAndWidenSettings {
    WaitAndWidenSettings {
        seed: String::new(),
        comparator: Comparator::Ttft,
        cache_affinity_virtual_nodes: 150,
        cache_affinity_backend_selection_count: None,
        cache_affinity_input_tokens_scale: 1.0,
        cache_affinity_wait_ms: 0,
        last_cluster_affinity: false,
        bucket: bucket(),
    }
}

/// PWW defaults (X = 0, S = X, f = 0, k = 1) of the `widening` target
/// (with the no-queue-SLO shortcut); `sessions` tests turn it off.
pub fn pww() -> PulsarWaitAndWidenSettings {
    PulsarWaitAndWidenSettings {
        seed: String::new(),
        consider_kv_free_tokens: false,
        rendezvous_weight: RendezvousWeight::MaxInputTps,
        cache_affinity_backend_selection_count: 1,
        cache_affinity_input_tokens_scale: 1.0,
        cache_affinity_wait_ms: 0,
        band_widen_interval_ms: 0,
        band_widen_interval_is_default: true,
        fallback_max_queued: 0,
        last_cluster_affinity: false,
        no_queue_slo_shortcut: true,
        bucket: bucket(),
    }
}

pub fn pulsar() -> PulsarSettings {
    PulsarSettings {
        seed: String::new(),
        consider_kv_free_tokens: false,
        rendezvous_weight: RendezvousWeight::MaxInputTps,
    }
}

pub fn power_of_n(sample_count: u64, comparator: Comparator) -> PowerOfNSettings {
    PowerOfNSettings {
        sample_count,
        comparator,
    }
}

/// The default policy of `algorithm` (for the tables of the routers
/// built around stand-ins, feature `testing`).
#[cfg(feature = "testing")]
pub fn default_policy(algorithm: Algorithm) -> Policy {
    policy(match algorithm {
        Algorithm::PowerOfN => Settings::PowerOfN(power_of_n(2, Comparator::Ttft)),
        Algorithm::RoundRobin => Settings::RoundRobin {},
        Algorithm::Random => Settings::Random {},
        Algorithm::Pulsar => Settings::Pulsar(pulsar()),
        Algorithm::WaitAndWiden => Settings::WaitAndWiden(ww()),
        Algorithm::PulsarWaitAndWiden => Settings::PulsarWaitAndWiden(pww()),
    })
}
