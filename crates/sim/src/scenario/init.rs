//! `routex sim init`: the text of a minimal scenario for one model of a
//! configuration, every constant at the value of the built-in default
//! scenario (docs/simulator-model.md A10.1) and a `"//"` comment per
//! section (keys spelt `//` are comments: [`super::schema`]).

pub use crate::workload::trace::{guess_format, FORMATS};
use serde_json::Value;

/// What the scenario is written for.
#[derive(Clone, Debug)]
pub struct InitSpec<'a> {
    /// The scenario's `name`.
    pub name: &'a str,
    /// `base_config` as written: a path relative to the scenario's directory.
    pub config_path: &'a str,
    /// `router.model`.
    pub model: &'a str,
    /// The algorithm the configuration gives the model: the one policy,
    /// named `configured`, is this method alone, which resolves to the
    /// model's own settings.
    pub algorithm: &'a str,
    pub trace: Option<TraceInit<'a>>,
    /// Growing conversations instead of the synthetic workload (ignored
    /// with a trace).
    pub conversations: bool,
}

/// A trace to replay instead of the synthetic workload.
#[derive(Clone, Debug)]
pub struct TraceInit<'a> {
    /// Relative to the scenario's directory.
    pub path: &'a str,
    /// One of `workload::trace::FORMATS`.
    pub format: &'a str,
    /// The trace's span in seconds, when known: the measured window then
    /// covers it.
    pub span_s: Option<f64>,
}

fn s(text: &str) -> String {
    Value::from(text).to_string()
}

/// The scenario text (JSON, two-space indented sections).
pub fn scenario(spec: &InitSpec<'_>) -> String {
    let (engine_model, workload) = match &spec.trace {
        Some(t) => {
            let measure = t.span_s.map_or(600.0, |span| span.ceil().max(1.0));
            (
                "block-cache-v2",
                format!(
                    r#"  "warmup_s": 0, "measure_s": {measure},
  "trace": {{
    "//": "Replays the trace; a run at speed-up s offers s x the trace's own rate (docs/simulator.md \"Trace replay\"). measure_s covers the whole trace at speed-up 1.",
    "path": {path}, "format": {format}, "block_tokens": 512,
    "speedups": [1]
  }},"#,
                    path = s(t.path),
                    format = s(t.format)
                ),
            )
        }
        None if spec.conversations => (
            "block-cache-v2",
            r#"  "warmup_s": 120, "measure_s": 180,
  "rates_rps": [150, 200, 250],
  "conversations": {
    "//": "Growing conversations (docs/simulator.md \"Growing conversations\"): each turn's prompt is the last one + its reply + a new message; turn counts geometric of mean mean_turns, think time exponential; sizes [min, max] uniform or a size law; older exchanges dropped past max_context_tokens; a failed turn retried after 1 x, 2 x retry_backoff_s, then the conversation abandoned. The warm-up covers a few conversation lifetimes.",
    "mean_turns": 6, "think_time_s": 8,
    "first_message_tokens": [1500, 4500], "message_tokens": [50, 400],
    "output_tokens": [100, 400], "max_context_tokens": 16384,
    "block_tokens": 256, "max_turn_attempts": 3, "retry_backoff_s": 1.0
  },"#
            .to_string(),
        ),
        None => (
            "mockdynamo-v1",
            r#"  "warmup_s": 60, "measure_s": 180,
  "rates_rps": [200, 240, 280],
  "workload": {
    "//": "The synthetic workload R: keys with Zipf popularity (zipf_s 0 = uniform), Poisson arrivals at each rate of rates_rps.",
    "keys": 768, "zipf_s": 0.0, "input_tokens": [6661, 6661], "output_tokens": 256
  },"#
                .to_string(),
        ),
    };
    format!(
        r#"{{
  "//": "Written by `routex sim init`. Keys named // are comments; every constant is the built-in default scenario's (docs/simulator.md \"Scenario files\").",
  "name": {name},
  "seeds": [1, 2, 3],
{workload}
  "topology": {{
    "//": "The fleet: regions with their routers and backends, and the round-trip times between regions (ms). Describe your own here.",
    "regions": [
      {{"name": "usw2", "routers": 3, "backends": 4, "traffic_weight": 1.0}},
      {{"name": "ue1",  "routers": 3, "backends": 4, "traffic_weight": 0.0}},
      {{"name": "ew1",  "routers": 3, "backends": 4, "traffic_weight": 0.0}},
      {{"name": "an1",  "routers": 3, "backends": 4, "traffic_weight": 0.0}},
      {{"name": "as2",  "routers": 3, "backends": 4, "traffic_weight": 0.0}}
    ],
    "rtt_ms": [[0,65,125,100,140],[65,0,70,150,200],[125,70,0,210,255],
               [100,150,210,0,105],[140,200,255,105,0]],
    "intra_region_rtt_ms": 1.0, "stats_relay_ms": 0.0
  }},
  "engine": {{
    "//": "One backend: concurrent slots, prefill and decode rates, TTFT and the KV cache (engine profile A, docs/simulator-model.md A4).",
    "model": {engine_model}, "slots": 25, "prefill_tps": 7000,
    "ttft_base_ms": 10, "ttft_jitter_ms": 20,
    "decode_tps": [128, 200], "kv_capacity_tokens": 400000, "backend_speed": 1.0
  }},
  "pylon": {{
    "//": "What backends publish to routers: the heartbeat, the input-TPS estimate and queue-mismatch admission (docs/simulator-model.md A5); mismatch_by_policy (policy name -> any keys of mismatch) sets admission per policy.",
    "heartbeat_ms": 1000, "coalesce_ms": null,
    "input_tps": {{"mode": "window", "initial": 175000, "window": 8, "floor_ms": 10}},
    "max_input_tps": "constant",
    "mismatch": {{"enabled": true, "min_delta_ms": 25, "tolerance": 1.25}}
  }},
  "router": {{
    "//": "The routing loop; model must be one the base configuration lists.",
    "max_retries": 2, "recheck_ms": 25, "retry_sleep_ms": [1, 9],
    "routing_key": "rk", "model": {model}
  }},
  "client": {{
    "//": "The client's limits and the SLOs goodput counts against (ms).",
    "request_slo_ms": 10000, "max_wait_ms": 10000,
    "timeout_ms": 30000, "ttft_slo_ms": 10000
  }},
  "base_config": {config},
  "policies": {{
    "//": "Name -> routing expression, compiled against base_config for router.model; add the variants to compare.",
    "configured": {algorithm}
  }}
}}
"#,
        name = s(spec.name),
        engine_model = s(engine_model),
        model = s(spec.model),
        config = s(spec.config_path),
        algorithm = s(spec.algorithm),
    )
}
