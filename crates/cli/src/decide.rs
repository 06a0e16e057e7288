//! `routex decide`: one routing decision through the router runtime
//! (docs/contract.md 5.3).

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use routex::balancer::{ClusterSnapshot, Decision, Request, Scratch};
use routex::ir::RouteTable;
use routex::ir::Target;
use routex::router::{Rejection, RouteRequest, Router, RouterOptions};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// Arguments of `routex decide` (docs/contract.md 5.3).
#[derive(Debug, clap::Args)]
pub struct DecideArgs {
    /// Request and cluster snapshot (JSON); `-` is standard input.
    #[arg(long)]
    pub input: PathBuf,
    /// Route file (`*.routes`) or lb-config.json; default: the permissive
    /// default (every algorithm available).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Model id; default: the request's `model`.
    #[arg(long)]
    pub model: Option<String>,
    /// Seed for the random choices, for reproducible decisions.
    #[arg(long)]
    pub rng_seed: Option<u64>,
    #[arg(long, value_enum, default_value_t = DecideFormat::Json)]
    pub format: DecideFormat,
    /// The `x-routing-method` value: a method name or an expression in
    /// either form; default: the model's configured algorithm.
    pub expr: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum DecideFormat {
    Human,
    Json,
}

/// The input file's request.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RequestInput {
    pub model: Option<String>,
    pub routing_key: Option<String>,
    pub cache_affinity_key: Option<String>,
    pub input_tokens: Option<u64>,
    #[serde(default)]
    pub priority: u32,
    pub request_slo_ms: Option<u64>,
    #[serde(default)]
    pub elapsed_ms: f64,
    #[serde(default)]
    pub excluded: Vec<String>,
    /// `x-stargate-last-cluster-id` (docs/stargate.md 3.10); absent = no
    /// header.
    pub last_cluster_id: Option<String>,
}

/// The input file's cluster; omitted fields are neutral.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClusterInput {
    pub id: String,
    #[serde(default)]
    pub rtt_ms: f64,
    #[serde(default)]
    pub last_mean_input_tps: f64,
    pub max_input_tps: Option<f64>,
    #[serde(default)]
    pub queue_size: u64,
    #[serde(default)]
    pub queued_input_size: u64,
    #[serde(default)]
    pub num_running_queries: u64,
    #[serde(default)]
    pub max_engine_concurrency: u64,
    #[serde(default)]
    pub queue_time_estimate_ms_by_priority: BTreeMap<String, u64>,
    #[serde(default)]
    pub kv_cache_capacity_tokens: u64,
    #[serde(default)]
    pub kv_cache_used_tokens: u64,
    #[serde(default)]
    pub kv_cache_free_tokens: u64,
    /// Carried by stargate, never used by routing.
    #[serde(default)]
    pub total_query_input_size: u64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DecideInput {
    pub request: RequestInput,
    #[serde(default)]
    pub clusters: Vec<ClusterInput>,
}

impl ClusterInput {
    fn snapshot(&self) -> Result<ClusterSnapshot, String> {
        // The same rule as request.elapsed_ms: a negative or non-finite
        // time or rate is a mistake, never a value to route on.
        let rates = [
            ("rtt_ms", Some(self.rtt_ms)),
            ("last_mean_input_tps", Some(self.last_mean_input_tps)),
            ("max_input_tps", self.max_input_tps),
        ];
        for (field, value) in rates {
            if let Some(v) = value.filter(|v| !(v.is_finite() && *v >= 0.0)) {
                return Err(format!(
                    "cluster {}: {field} must be a non-negative number, not {v}",
                    self.id
                ));
            }
        }
        let mut estimates = Vec::with_capacity(self.queue_time_estimate_ms_by_priority.len());
        for (priority, ms) in &self.queue_time_estimate_ms_by_priority {
            let p: u32 = priority.trim().parse().map_err(|_| {
                format!(
                    "cluster {}: queue_time_estimate_ms_by_priority key {priority:?} is not a priority (an integer from 0 to 2^32-1)",
                    self.id
                )
            })?;
            estimates.push((p, *ms));
        }
        estimates.sort_unstable();
        estimates.dedup_by_key(|(p, _)| *p);
        Ok(ClusterSnapshot {
            id: self.id.clone(),
            rtt_ms: self.rtt_ms,
            last_mean_input_tps: self.last_mean_input_tps,
            max_input_tps: self.max_input_tps,
            queue_size: self.queue_size,
            queued_input_size: self.queued_input_size,
            num_running_queries: self.num_running_queries,
            max_engine_concurrency: self.max_engine_concurrency,
            queue_time_estimate_ms_by_priority: estimates,
            kv_cache_capacity_tokens: self.kv_cache_capacity_tokens,
            kv_cache_used_tokens: self.kv_cache_used_tokens,
            kv_cache_free_tokens: self.kv_cache_free_tokens,
            total_query_input_size: 0,
        })
    }
}

/// What `decide` prints.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    Selected {
        cluster: String,
        rank_depth: u32,
        kv_skip: bool,
    },
    Wait(Duration),
    Unavailable,
    Rejected(Rejection),
}

impl Outcome {
    /// The one-line JSON of docs/contract.md 5.3.
    pub fn to_json(&self) -> String {
        match self {
            Outcome::Selected {
                cluster,
                rank_depth,
                ..
            } => format!(
                r#"{{"version": 1, "decision": "selected", "cluster": {}, "rank_depth": {rank_depth}}}"#,
                serde_json::Value::from(cluster.as_str())
            ),
            Outcome::Wait(d) => format!(
                r#"{{"version": 1, "decision": "wait", "wait_ms": {}}}"#,
                serde_json::Value::from(millis(*d))
            ),
            Outcome::Unavailable => r#"{"version": 1, "decision": "unavailable"}"#.to_string(),
            Outcome::Rejected(r) => format!(
                r#"{{"version": 1, "decision": "rejected", "code": "{}", "status": {}}}"#,
                r.code, r.status
            ),
        }
    }

    pub fn to_human(&self) -> String {
        match self {
            Outcome::Selected {
                cluster,
                rank_depth,
                kv_skip,
            } => {
                let skip = if *kv_skip {
                    ", after skipping a higher rank for KV free tokens"
                } else {
                    ""
                };
                format!("selected {cluster} (rank depth {rank_depth}{skip})")
            }
            Outcome::Wait(d) => format!("wait {} ms", millis(*d)),
            Outcome::Unavailable => "unavailable".to_string(),
            Outcome::Rejected(r) => format!("rejected: {} {}: {}", r.status, r.code, r.message),
        }
    }
}

/// A wait in milliseconds, as exact as f64 allows: from whole nanoseconds
/// (`as_secs_f64() * 1000.0` prints 1001 ms as 1000.9999999999999).
fn millis(d: std::time::Duration) -> f64 {
    d.as_nanos() as f64 / 1e6
}

/// Parses the input text. A syntax or shape error starts with its
/// `LINE:COLUMN: ` (1-based), so the CLI can prefix the file name.
pub fn parse_input(text: &str) -> Result<(RequestInput, Vec<ClusterSnapshot>), String> {
    let input: DecideInput = serde_json::from_str(text).map_err(|e| {
        // serde_json ends its message with " at line L column C": moved to
        // the front, where every other routex position is.
        let message = e.to_string();
        let message = match message.rfind(" at line ") {
            Some(at) => &message[..at],
            None => &message,
        };
        let message = routex::json_words::user_message(message);
        format!("{}:{}: {message}", e.line().max(1), e.column().max(1))
    })?;
    if !(input.request.elapsed_ms.is_finite() && input.request.elapsed_ms >= 0.0) {
        return Err("request.elapsed_ms must be a non-negative number".into());
    }
    let clusters = input
        .clusters
        .iter()
        .map(ClusterInput::snapshot)
        .collect::<Result<Vec<_>, _>>()?;
    Ok((input.request, clusters))
}

/// Loads a route table from a configuration file's text.
pub fn load_config(name: &str, text: &str, target: Target) -> Result<RouteTable, String> {
    let (table, report) = routex::config::load_table_for(name, text, target);
    match (table, report.first_error()) {
        (Some(table), None) => Ok(table),
        (_, Some(error)) => Err(format!(
            "invalid configuration {name}: {}: {}",
            error.code, error.message
        )),
        (None, None) => Err(format!("invalid configuration {name}")),
    }
}

/// One decision for a parsed input. `Err` is a usage error (exit 2).
pub fn decide(
    table: RouteTable,
    request: &RequestInput,
    clusters: &[ClusterSnapshot],
    model: Option<&str>,
    expr: Option<&str>,
    rng_seed: Option<u64>,
) -> Result<Outcome, String> {
    let model = model
        .or(request.model.as_deref())
        .ok_or("no model: give --model or request.model")?;
    let excluded: Vec<&str> = request.excluded.iter().map(String::as_str).collect();
    let elapsed = Duration::try_from_secs_f64(request.elapsed_ms / 1000.0)
        .map_err(|_| "request.elapsed_ms is out of range".to_string())?;
    let balancer_request = Request {
        model,
        routing_key: request.routing_key.as_deref(),
        cache_affinity_key: request.cache_affinity_key.as_deref(),
        input_tokens: request.input_tokens,
        priority: request.priority,
        request_slo_ms: request.request_slo_ms,
        elapsed,
        excluded: &excluded,
        last_cluster_id: request.last_cluster_id.as_deref(),
        session: None,
    };
    let route_request = RouteRequest {
        request: balancer_request,
        routing_method: expr.map(str::as_bytes),
    };
    let mut rng = match rng_seed {
        Some(seed) => ChaCha8Rng::seed_from_u64(seed),
        None => ChaCha8Rng::from_os_rng(),
    };
    // decide's EXPR may be written in either form (docs/contract.md 5.3); a
    // router behind a stargate front end reads the header form only.
    let options = RouterOptions::default().with_call_form_compiler(std::sync::Arc::new(
        routex::check::compile_request_expression,
    ));
    let router: Router = Router::with_options(table, options);
    let mut scratch = Scratch::default();
    Ok(
        match router.route(&route_request, clusters, &mut rng, &mut scratch) {
            Ok(Decision::Selected(choice)) => match clusters.get(choice.index) {
                Some(cluster) => Outcome::Selected {
                    cluster: cluster.id.clone(),
                    rank_depth: choice.rank_depth,
                    kv_skip: choice.selected_after_kv_free_tokens_skip,
                },
                None => {
                    return Err(format!(
                        "internal error: choice {} out of range",
                        choice.index
                    ))
                }
            },
            Ok(Decision::Wait(d)) => Outcome::Wait(d),
            Ok(Decision::Unavailable) => Outcome::Unavailable,
            Err(rejection) => Outcome::Rejected(rejection),
        },
    )
}

/// A file (or `-`) under the CLI's input rules: 4 MiB, UTF-8.
fn read(path: &std::path::Path) -> Result<String, String> {
    super::input::read_text(path).map_err(|e| e.to_string())
}

fn run_inner(args: &DecideArgs) -> Result<Outcome, String> {
    let name = super::input::source_name(&args.input);
    let (request, clusters) = parse_input(&read(&args.input)?).map_err(|e| {
        match e.starts_with(|c: char| c.is_ascii_digit()) {
            true => format!("{name}:{e}"),
            false => format!("{name}: {e}"),
        }
    })?;
    let table = match &args.config {
        Some(path) => {
            let name = super::input::source_name(path);
            let target = super::project::target_for_file(Some(path));
            let table = load_config(&name, &read(path)?, target)?;
            if let Some(model) = &args.model {
                listed_model(&table, model, &name)?;
            }
            table
        }
        None => routex::check::permissive_table_for(super::project::target_for_file(None)),
    };
    decide(
        table,
        &request,
        &clusters,
        args.model.as_deref(),
        args.expr.as_deref(),
        args.rng_seed,
    )
}

/// `--model` with `--config` must name a model the configuration lists,
/// as `check --model` requires: an unlisted name would silently decide
/// with the default set. (A request's own `model` may be unlisted: that is
/// what a router receives.) A configuration that lists no model gives
/// every model the default, so any name is the same there.
fn listed_model(table: &RouteTable, model: &str, config: &str) -> Result<(), String> {
    if table.models.is_empty() || table.models.contains_key(model) {
        return Ok(());
    }
    let hint = super::check::unlisted_model_hint(table, model);
    Err(format!(
        "model '{model}' is not listed in {config}{hint} (omit --model to use the request's model)"
    ))
}

/// Runs `routex decide`; returns the exit code.
pub fn run(args: &DecideArgs) -> i32 {
    match run_inner(args) {
        Ok(outcome) => {
            match args.format {
                DecideFormat::Json => println!("{}", outcome.to_json()),
                DecideFormat::Human => println!("{}", outcome.to_human()),
            }
            0
        }
        Err(message) => super::output::usage_error(message),
    }
}
