//! The router's metrics as a prometheus-client [`Collector`] (feature
//! `metrics`): registered once in the embedder's `Registry`, it reads the
//! router's striped counters and the candidate views at each scrape. The
//! request path only adds to routex's own counters (counters.rs,
//! metrics.rs, the views' decision tallies); nothing here runs per
//! request.
//!
//! docs/embedding.md ("Metrics") lists every series with its labels.

use crate::balancer::{SessionCounts, SessionSelection, SessionState};
use crate::ir::Algorithm;
use crate::router::metrics::counters::{CounterSnapshot, Event, WaitHistogram, WAIT_BUCKETS};
use crate::router::metrics::expression_cache::Metrics;
use crate::router::runtime::Router;
use crate::router::view::health::{BackendHealthRow, BackendState};
use crate::router::view::models::ModelViews;
use crate::router::view::shared::SharedView;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, NoLabelSet};
use prometheus_client::metrics::MetricType;
use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;

/// Every series the collector exports, `_total` and histogram suffixes
/// left to the encoder. The first two are stargate's own names.
pub mod names {
    /// Counter: `x-routing-method` values with parameters resolved, by
    /// algorithm and cache outcome.
    pub const EXPRESSIONS: &str = "stargate_routing_expressions";
    /// Gauge: targets holding a cached expression.
    pub const CACHE_ENTRIES: &str = "stargate_routing_expression_cache_entries";
    /// Counter: cached expressions dropped with their target, by reason
    /// (capacity or idle).
    pub const EXPRESSION_EVICTIONS: &str = "routex_expression_cache_evictions";
    /// Gauge: targets (routing key, model) holding state.
    pub const TARGETS: &str = "routex_targets";
    /// Counter: targets created.
    pub const TARGETS_CREATED: &str = "routex_targets_created";
    /// Counter: targets forgotten, by reason (capacity or idle).
    pub const TARGETS_EVICTED: &str = "routex_targets_evicted";
    /// Counter: balancer instances built (a target's first use of a
    /// definition).
    pub const INSTANCES_BUILT: &str = "routex_balancer_instances_built";
    /// Counter: routed decisions by model, algorithm, cluster and rank
    /// depth.
    pub const DECISIONS: &str = "routex_decisions";
    /// Histogram, in seconds: arrival to the end of routing (a reserved
    /// backend or a rejection).
    pub const WAIT: &str = "routex_routing_wait_seconds";
    /// Counter: routings that ended in a rejection, by code and status.
    pub const REJECTIONS: &str = "routex_rejections";
    /// Gauge: pending reservations by model and cluster.
    pub const RESERVATIONS: &str = "routex_reservations_in_flight";
    /// Counter: failed sends (the request was routed again).
    pub const FAILED_ATTEMPTS: &str = "routex_failed_attempts";
    /// Counter: clusters excluded for one request (no usable backend left).
    pub const CLUSTERS_EXCLUDED: &str = "routex_clusters_excluded";
    /// Counter: routing-loop sleeps, by kind (recheck or retry).
    pub const SLEEPS: &str = "routex_routing_sleeps";
    /// Counter: backend ejections, and ejections refused by the cap.
    pub const EJECTIONS: &str = "routex_backend_ejections";
    /// Gauge: registered backends by model and health state.
    pub const BACKENDS: &str = "routex_backends";
    /// Gauge: each registered backend's health state, by cluster, backend
    /// and state (1 for its state, 0 for the others).
    pub const BACKEND_STATE: &str = "routex_backend_state";
    /// Counter: each registered backend's ejections, by cluster and
    /// backend.
    pub const BACKEND_EJECTED: &str = "routex_backend_ejected";
    /// Gauge: each registered backend's failed sends since its last
    /// success or ejection, by cluster and backend.
    pub const BACKEND_FAILURES: &str = "routex_backend_consecutive_failures";
    /// Counter: route tables swapped in by `Router::reload`.
    pub const RELOADS: &str = "routex_reloads";
    /// Counter: selections of classified sessions, by algorithm, session
    /// state and selection (stargate's name; summed over routing keys and
    /// models: docs/embedding.md, "Metrics").
    pub const SESSION_SELECTIONS: &str = "stargate_routing_session_selections";
}

/// A router and the candidate views an embedder holds, exported at each
/// scrape. Register it with `registry.register_collector(Box::new(collector))`.
/// A scrape reads and changes nothing: the router's maintenance
/// ([`Router::maintenance`]) and the views' ([`SharedView::maintain`]) are
/// the embedder's own calls.
#[derive(Clone)]
pub struct RouterCollector {
    router: Arc<Router>,
    sources: Vec<Source>,
}

#[derive(Clone)]
enum Source {
    Models(ModelViews),
    One(Arc<str>, SharedView),
}

impl RouterCollector {
    /// A collector of `router`'s counters, without views yet (add them with
    /// [`RouterCollector::with_model_views`] or
    /// [`RouterCollector::with_view`]).
    pub fn new(router: Arc<Router>) -> Self {
        RouterCollector {
            router,
            sources: Vec::new(),
        }
    }

    /// Also exports every view of `views`, present and future.
    pub fn with_model_views(mut self, views: ModelViews) -> Self {
        self.sources.push(Source::Models(views));
        self
    }

    /// Also exports `view` as the view of `model` (a view the embedder
    /// keeps itself).
    pub fn with_view(mut self, model: &str, view: SharedView) -> Self {
        self.sources.push(Source::One(model.into(), view));
        self
    }

    /// Every view exported, with its model.
    fn views(&self) -> Vec<(Arc<str>, SharedView)> {
        let mut all = Vec::new();
        for source in &self.sources {
            match source {
                Source::Models(views) => all.extend(views.all()),
                Source::One(model, view) => all.push((model.clone(), view.clone())),
            }
        }
        all
    }

    /// One health row per backend over every view (a record shared by
    /// several views is one row), by cluster then backend.
    fn health_rows(&self) -> Vec<BackendHealthRow> {
        let mut seen = HashSet::new();
        let mut rows: Vec<BackendHealthRow> = Vec::new();
        for (_, view) in self.views() {
            for row in view.read().backend_health() {
                if seen.insert((row.cluster.clone(), row.backend.clone())) {
                    rows.push(row);
                }
            }
        }
        rows.sort_by(|a, b| (&a.cluster, &a.backend).cmp(&(&b.cluster, &b.backend)));
        rows
    }
}

impl fmt::Debug for RouterCollector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RouterCollector").finish_non_exhaustive()
    }
}

type Labels<'a> = Vec<(&'static str, &'a str)>;

/// One metric family: a descriptor, then one sample per label set.
fn family<'l>(
    encoder: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    kind: MetricType,
    samples: impl IntoIterator<Item = (Labels<'l>, u64)>,
) -> fmt::Result {
    let mut metric = encoder.encode_descriptor(name, help, None, kind)?;
    for (labels, value) in samples {
        let mut sample = metric.encode_family(&labels)?;
        match kind {
            MetricType::Counter => sample.encode_counter::<NoLabelSet, _, u64>(&value, None)?,
            _ => sample.encode_gauge(&value)?,
        }
    }
    Ok(())
}

fn histogram(encoder: &mut DescriptorEncoder, waits: [(&str, &WaitHistogram); 2]) -> fmt::Result {
    let mut metric = encoder.encode_descriptor(
        names::WAIT,
        "Time from a request's arrival to its routing's end (a reserved backend or a rejection).",
        None,
        MetricType::Histogram,
    )?;
    for (outcome, h) in waits {
        // The encoder accumulates: hand it each bucket's own count, then
        // the overflow (waits over the last bound) as the `+Inf` bucket,
        // which both encoders write only when given: without it the
        // OpenMetrics text is invalid and the overflow counted nowhere.
        let mut previous = 0;
        let buckets: Vec<(f64, u64)> = WAIT_BUCKETS
            .iter()
            .copied()
            .chain([f64::INFINITY])
            .zip(h.cumulative.iter().copied().chain([h.count]))
            .map(|(le, n)| {
                let own = n.saturating_sub(previous);
                previous = n;
                (le, own)
            })
            .collect();
        let labels: Labels<'_> = vec![("outcome", outcome)];
        metric
            .encode_family(&labels)?
            .encode_histogram::<NoLabelSet>(h.sum.as_secs_f64(), h.count, &buckets, None)?;
    }
    Ok(())
}

impl Collector for RouterCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> fmt::Result {
        let metrics: Metrics = self.router.read_metrics();
        let c: &CounterSnapshot = &metrics.counters;
        let algorithms: Vec<(String, &'static str, u64)> = metrics
            .expressions
            .iter()
            .map(|(a, o, n)| (a.to_string(), o.as_str(), *n))
            .collect();
        family(
            &mut encoder,
            names::EXPRESSIONS,
            "x-routing-method values with parameters resolved, by algorithm and cache outcome (hit; build and rebuild are misses).",
            MetricType::Counter,
            algorithms
                .iter()
                .map(|(a, o, n)| (vec![("algorithm", a.as_str()), ("cache", *o)], *n)),
        )?;
        family(
            &mut encoder,
            names::CACHE_ENTRIES,
            "Targets holding a cached expression.",
            MetricType::Gauge,
            [(Vec::new(), metrics.entries)],
        )?;
        family(
            &mut encoder,
            names::EXPRESSION_EVICTIONS,
            "Cached expressions dropped with their target: evicted past the target bound (capacity) or expired (idle).",
            MetricType::Counter,
            [
                (vec![("reason", "capacity")], c.event(Event::ExpressionEvicted)),
                (vec![("reason", "idle")], c.event(Event::ExpressionExpired)),
            ],
        )?;
        family(
            &mut encoder,
            names::TARGETS,
            "Targets (routing key, model) holding state.",
            MetricType::Gauge,
            [(Vec::new(), metrics.targets)],
        )?;
        family(
            &mut encoder,
            names::TARGETS_CREATED,
            "Targets created (a slot taken by a new routing key and model).",
            MetricType::Counter,
            [(Vec::new(), c.event(Event::TargetCreated))],
        )?;
        family(
            &mut encoder,
            names::TARGETS_EVICTED,
            "Targets forgotten: evicted past the bound (capacity) or expired (idle).",
            MetricType::Counter,
            [
                (vec![("reason", "capacity")], c.event(Event::TargetEvicted)),
                (vec![("reason", "idle")], c.event(Event::TargetExpired)),
            ],
        )?;
        family(
            &mut encoder,
            names::INSTANCES_BUILT,
            "Balancer instances built (a target's first use of a definition).",
            MetricType::Counter,
            [(Vec::new(), c.event(Event::InstanceBuilt))],
        )?;
        self.decisions(&mut encoder)?;
        histogram(
            &mut encoder,
            [("routed", &c.waits_routed), ("rejected", &c.waits_rejected)],
        )?;
        let rejections: Vec<(&'static str, String, u64)> = c
            .rejections
            .iter()
            .map(|(code, n)| (code.as_str(), code.status().to_string(), *n))
            .collect();
        family(
            &mut encoder,
            names::REJECTIONS,
            "Routings that ended in a rejection, by stargate code and HTTP status.",
            MetricType::Counter,
            rejections
                .iter()
                .map(|(code, status, n)| (vec![("code", *code), ("status", status.as_str())], *n)),
        )?;
        family(
            &mut encoder,
            names::FAILED_ATTEMPTS,
            "Sends that failed; the request was routed again without that backend.",
            MetricType::Counter,
            [(Vec::new(), c.event(Event::FailedAttempt))],
        )?;
        family(
            &mut encoder,
            names::CLUSTERS_EXCLUDED,
            "Clusters excluded for one request (no usable backend left in them).",
            MetricType::Counter,
            [(Vec::new(), c.event(Event::ClusterExcluded))],
        )?;
        family(
            &mut encoder,
            names::SLEEPS,
            "Routing loop sleeps: timed waits (recheck) and generic retries (retry).",
            MetricType::Counter,
            [
                (vec![("kind", "recheck")], c.event(Event::RecheckSleep)),
                (vec![("kind", "retry")], c.event(Event::RetrySleep)),
            ],
        )?;
        family(
            &mut encoder,
            names::EJECTIONS,
            "Backends ejected for consecutive failures, and ejections refused by the cap on a cluster's ejected share.",
            MetricType::Counter,
            [
                (vec![("outcome", "ejected")], c.event(Event::BackendEjected)),
                (vec![("outcome", "capped")], c.event(Event::EjectionCapped)),
            ],
        )?;
        family(
            &mut encoder,
            names::RELOADS,
            "Route tables swapped in by Router::reload.",
            MetricType::Counter,
            [(Vec::new(), c.event(Event::Reload))],
        )?;
        session_selections(&mut encoder, &c.sessions)?;
        self.view_gauges(&mut encoder)?;
        self.backend_health(&mut encoder)
    }
}

/// The router's session counts: six series per algorithm that classified
/// a request, at 0 until counted.
fn session_selections(
    encoder: &mut DescriptorEncoder,
    sessions: &[(Algorithm, SessionCounts)],
) -> fmt::Result {
    let algorithms: Vec<(String, &SessionCounts)> =
        sessions.iter().map(|(a, c)| (a.to_string(), c)).collect();
    family(
        encoder,
        names::SESSION_SELECTIONS,
        "Selections of requests classified by last_cluster_affinity, by algorithm, session state (new, returning, stale) and selection (primary, fallback), over every routing key and model.",
        MetricType::Counter,
        algorithms.iter().flat_map(|(algorithm, counts)| {
            SessionState::ALL.into_iter().flat_map(move |state| {
                SessionSelection::ALL.into_iter().map(move |selection| {
                    (
                        vec![
                            ("algorithm", algorithm.as_str()),
                            ("session_state", state.as_str()),
                            ("selection", selection.as_str()),
                        ],
                        counts[state as usize][selection as usize],
                    )
                })
            })
        }),
    )
}

impl RouterCollector {
    /// Routed decisions per (model, algorithm, cluster, rank depth), from
    /// the views' tallies.
    fn decisions(&self, encoder: &mut DescriptorEncoder) -> fmt::Result {
        /// (model, algorithm, cluster, rank depth, count).
        type Row = (Arc<str>, String, Arc<str>, String, u64);
        let mut rows: Vec<Row> = Vec::new();
        for (model, view) in self.views() {
            let view = view.read();
            for c in 0..view.snapshots().len() {
                let Some(cluster) = view.cluster_id(c) else {
                    continue;
                };
                for (depth, algorithm, n) in view.decisions(c) {
                    rows.push((
                        model.clone(),
                        algorithm.to_string(),
                        cluster.clone(),
                        depth.to_string(),
                        n,
                    ));
                }
            }
        }
        family(
            encoder,
            names::DECISIONS,
            "Routed decisions (a backend reserved), by model, algorithm, cluster and rank depth (1 = primary).",
            MetricType::Counter,
            rows.iter().map(|(m, a, c, d, n)| {
                (
                    vec![
                        ("model", &**m),
                        ("algorithm", a.as_str()),
                        ("cluster", &**c),
                        ("rank_depth", d.as_str()),
                    ],
                    *n,
                )
            }),
        )
    }

    /// Reservations in flight per (model, cluster), and backends per
    /// (model, state).
    fn view_gauges(&self, encoder: &mut DescriptorEncoder) -> fmt::Result {
        let mut pending: Vec<(Arc<str>, Arc<str>, u64)> = Vec::new();
        let mut states: Vec<(Arc<str>, &'static str, u64)> = Vec::new();
        for (model, view) in self.views() {
            let view = view.read();
            let mut by_state = [0u64; BackendState::NAMES.len()];
            for c in 0..view.snapshots().len() {
                let Some(cluster) = view.cluster_id(c) else {
                    continue;
                };
                pending.push((model.clone(), cluster.clone(), view.pending(c) as u64));
                for b in 0..view.backends(c).count() {
                    let state = view.backend_state(c, b).unwrap_or(BackendState::Eligible);
                    let i = BackendState::NAMES
                        .iter()
                        .position(|n| *n == state.as_str())
                        .unwrap_or(0);
                    by_state[i] += 1;
                }
            }
            for (name, n) in BackendState::NAMES.into_iter().zip(by_state) {
                states.push((model.clone(), name, n));
            }
        }
        family(
            encoder,
            names::RESERVATIONS,
            "Pending reservations (routed requests their backend has not reported yet), by model and cluster.",
            MetricType::Gauge,
            pending
                .iter()
                .map(|(m, c, n)| (vec![("model", &**m), ("cluster", &**c)], *n)),
        )?;
        family(
            encoder,
            names::BACKENDS,
            "Registered backends by model and health state (eligible, stale, ejected, probing, draining).",
            MetricType::Gauge,
            states
                .iter()
                .map(|(m, s, n)| (vec![("model", &**m), ("state", *s)], *n)),
        )
    }

    /// One set of series per registered backend: its state, ejections and
    /// consecutive failures, labelled by cluster and backend id (bounded
    /// by the registrations, never by client input).
    fn backend_health(&self, encoder: &mut DescriptorEncoder) -> fmt::Result {
        let rows = self.health_rows();
        fn labels(r: &BackendHealthRow) -> Labels<'_> {
            vec![("cluster", &*r.cluster), ("backend", &*r.backend)]
        }
        family(
            encoder,
            names::BACKEND_STATE,
            "Each registered backend's health state: 1 for the state it is in, 0 for the others (eligible, stale, ejected, probing, draining). A backend several models route to has one health record.",
            MetricType::Gauge,
            rows.iter().flat_map(|r| {
                BackendState::NAMES.into_iter().map(move |name| {
                    let mut l = labels(r);
                    l.push(("state", name));
                    (l, u64::from(r.state.as_str() == name))
                })
            }),
        )?;
        family(
            encoder,
            names::BACKEND_EJECTED,
            "Ejections of each registered backend since its registration.",
            MetricType::Counter,
            rows.iter().map(|r| (labels(r), r.ejections)),
        )?;
        family(
            encoder,
            names::BACKEND_FAILURES,
            "Failed sends of each registered backend since its last success or ejection.",
            MetricType::Gauge,
            rows.iter()
                .map(|r| (labels(r), u64::from(r.consecutive_failures))),
        )
    }
}
