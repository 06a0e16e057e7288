//! The scenario file's sections as serde reads them (docs/simulator-model.md
//! A10.1): the top level, the Pylon, router and client sections. The
//! workload, topology and engine sections are the types of the parts they
//! configure.

use super::*;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    pub name: String,
    pub seeds: Vec<u64>,
    pub warmup_s: f64,
    pub measure_s: f64,
    /// Offered rates; for a trace, `trace.speedups` may give them instead.
    #[serde(default)]
    pub rates_rps: Vec<f64>,
    pub topology: TopologySpec,
    pub engine: EngineParams,
    pub pylon: PylonSpec,
    pub router: RouterSpec,
    pub client: ClientSpec,
    /// The synthetic workload; absent when `trace` is given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload: Option<WorkloadSpec>,
    /// Trace replay instead of the synthetic workload.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<TraceSpec>,
    /// Growing conversations instead of the synthetic workload.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversations: Option<ConversationSpec>,
    #[serde(default)]
    pub base_config: Option<serde_json::Value>,
    pub policies: IndexMap<String, String>,
    /// How the fleet changes during a run (docs/simulator.md, "Faults").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub faults: Vec<faults::FaultSpec>,
    /// The stargate target the base configuration and the policies are
    /// compiled for (docs/stargate.md 0.1); absent: the command line's
    /// `--stargate`, else the newest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stargate: Option<Target>,
    /// Every run starts with each key cached where its policy places it on
    /// an idle fleet (docs/simulator.md, "Warm start"); absent or false:
    /// cold, as before.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub warm_start: bool,
}

impl ScenarioFile {
    /// The stargate target the scenario is compiled for.
    pub fn target(&self) -> Target {
        self.stargate.unwrap_or(Target::NEWEST)
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PylonSpec {
    pub heartbeat_ms: u64,
    /// Change-driven publishing (A2 `Publish`, A14): at most one extra
    /// publication per this many ms after state changes; `null` = off.
    #[serde(default)]
    pub coalesce_ms: Option<u64>,
    pub input_tps: InputTpsSpec,
    pub max_input_tps: MaxInputTpsSpec,
    pub mismatch: MismatchSpec,
    /// Queue-mismatch admission per policy: a policy's name and the keys
    /// of `mismatch` it sets otherwise (`admission.rs`).
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub mismatch_by_policy: IndexMap<String, admission::MismatchOverride>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InputTpsSpec {
    pub mode: TpsModeSpec,
    pub initial: f64,
    pub window: usize,
    pub floor_ms: f64,
    /// `initial` is per GPU worker (stargate's second-generation
    /// simulator): a backend starts from `initial` x its engine's
    /// `num_gpu_workers` (engine v3 only). Absent: per backend.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub per_gpu_worker: bool,
}

impl InputTpsSpec {
    /// A backend's initial input TPS on `engine`.
    pub fn initial_for(&self, engine: &EngineParams) -> f64 {
        if self.per_gpu_worker {
            let workers = engine.batched.clone().unwrap_or_default().num_gpu_workers;
            self.initial * f64::from(workers)
        } else {
            self.initial
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TpsModeSpec {
    Window,
    Constant,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MaxInputTpsSpec {
    Constant,
    RunningMax,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MismatchSpec {
    pub enabled: bool,
    pub min_delta_ms: u64,
    pub tolerance: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RouterSpec {
    pub max_retries: u32,
    pub recheck_ms: u64,
    pub retry_sleep_ms: [u64; 2],
    pub routing_key: String,
    pub model: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClientSpec {
    pub request_slo_ms: u64,
    pub max_wait_ms: u64,
    pub timeout_ms: u64,
    pub ttft_slo_ms: u64,
    /// The gateway's last-cluster store (docs/stargate.md 3.10): each
    /// request of a session carries the backend of the session's last
    /// successful response as `x-stargate-last-cluster-id`. Absent or
    /// `null`: no store, no request carries a hint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_cluster_store: Option<LastClusterStoreSpec>,
    /// A closed loop: the most requests the client has out at once; a
    /// request that finds them all out waits for a place, in the order
    /// the client asked. Absent: an open loop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_in_flight: Option<u32>,
}

/// `client.last_cluster_store` (docs/simulator.md, "The gateway's
/// last-cluster store").
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LastClusterStoreSpec {
    /// How long an entry lives after the response that wrote it.
    pub ttl_ms: u64,
    /// The most sessions remembered at once; absent: 65 536.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_sessions: Option<u32>,
}
