//! The async routing driver (feature `tokio`): the routing loop of
//! docs/stargate.md 2.2 over a [`SharedView`], to completion, in one call.
//!
//! It resolves once, decides, honours Wait up to the wait deadline, makes
//! generic retries only with `x-max-wait-ms`, skips failed backends and
//! excludes clusters without one left, and returns the chosen cluster with
//! a [`Reservation`] or a [`Rejection`]. Sleeping requests also wake when
//! the view changes (a stats report, a released reservation), so capacity
//! that frees up is used at once rather than at the next recheck.
//!
//! The random source and [`Scratch`] are the driver's: each routing takes
//! a pair from a pool and gives it back when dropped, so the futures are
//! `Send` and a warm request allocates no scratch space. Time is
//! `tokio::time::Instant`, so paused test time drives it.

use super::exclusions::Exclusions;
use super::metrics::counters::Event;
use super::rejection::Rejection;
use super::request::{has_candidates, Resolved, RouteRequest};
use super::runtime::Router;
use super::view::health::FailureOutcome;
use super::view::shared::{Reservation, SharedView};
use super::wait::{SleepKind, Step, WaitLoop};
use crate::balancer::{Choice, Decision, Request, Scratch};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::time::Instant;

/// Routes requests over a shared view. Cheap to clone (an `Arc`); one per
/// process, shared by every request task.
pub struct Driver {
    shared: Arc<Shared>,
}

impl Clone for Driver {
    fn clone(&self) -> Self {
        Driver {
            shared: self.shared.clone(),
        }
    }
}

struct Shared {
    router: Arc<Router>,
    workers: Mutex<Vec<Worker>>,
    /// The seed of the next new worker's random source.
    next_seed: AtomicU64,
}

#[derive(Debug)]
struct Worker {
    rng: ChaCha8Rng,
    scratch: Scratch,
}

/// A routed request: the cluster and backend to send it to, the
/// balancer's choice, and the reservation that counts it in the view.
#[derive(Debug)]
pub struct Routed {
    /// The selected cluster's id.
    pub cluster: Arc<str>,
    /// The id of the cluster's backend to send the request to.
    pub backend: Arc<str>,
    /// `choice.index` is the cluster's position at decision time.
    pub choice: Choice,
    /// Dropping it releases the reservation; keep it while the request is
    /// being sent, then [`Reservation::keep`] or drop it.
    pub reservation: Reservation,
    /// Decisions this routing made so far (1 = the first one selected).
    pub decisions: u32,
    /// Sends this routing tried, this one included (1 = the first).
    pub attempts: u32,
    /// Time from the request's arrival to this reservation: waits,
    /// retries and earlier failed attempts included.
    pub waited: Duration,
}

impl Driver {
    /// A driver whose random sources are seeded from the process's hash
    /// seed (different in every process).
    pub fn new(router: Arc<Router>) -> Self {
        let seed = std::collections::hash_map::RandomState::new()
            .build_hasher()
            .finish();
        Driver::with_seed(router, seed)
    }

    /// A driver whose n-th random source (0-based, in order of first
    /// need) is `ChaCha8Rng::seed_from_u64(seed + n)`: reproducible runs.
    pub fn with_seed(router: Arc<Router>, seed: u64) -> Self {
        Driver {
            shared: Arc::new(Shared {
                router,
                workers: Mutex::new(Vec::new()),
                next_seed: AtomicU64::new(seed),
            }),
        }
    }

    /// The router this driver routes with.
    pub fn router(&self) -> &Router {
        &self.shared.router
    }

    /// Routes a request to completion: [`Driver::routing`] and one
    /// [`Routing::next`]. `max_wait_ms` is the `x-max-wait-ms` header.
    pub async fn route(
        &self,
        request: RouteRequest<'_>,
        max_wait_ms: Option<u64>,
        view: &SharedView,
    ) -> Result<Routed, Rejection> {
        self.routing(request, max_wait_ms).next(view).await
    }

    /// Starts the routing loop of one request: its deadlines count from
    /// now less `request.request.elapsed` (time the caller already spent).
    pub fn routing<'r>(&self, request: RouteRequest<'r>, max_wait_ms: Option<u64>) -> Routing<'r> {
        let arrival = Instant::now()
            .checked_sub(request.request.elapsed)
            .unwrap_or_else(Instant::now);
        let worker = self.take_worker();
        Routing {
            driver: self.clone(),
            request,
            arrival,
            wait: WaitLoop::new(max_wait_ms),
            resolved: None,
            failed: Vec::new(),
            excluded: Exclusions::new(),
            decisions: 0,
            worker: Some(worker),
        }
    }

    fn take_worker(&self) -> Worker {
        let pooled = self
            .shared
            .workers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        pooled.unwrap_or_else(|| Worker {
            rng: ChaCha8Rng::seed_from_u64(self.shared.next_seed.fetch_add(1, Ordering::Relaxed)),
            scratch: Scratch::default(),
        })
    }

    fn give_back(&self, worker: Worker) {
        self.shared
            .workers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(worker);
    }
}

/// One request's routing loop: resolved once, deadlines fixed at arrival,
/// failed backends and excluded clusters remembered across attempts.
pub struct Routing<'r> {
    driver: Driver,
    request: RouteRequest<'r>,
    arrival: Instant,
    wait: WaitLoop,
    resolved: Option<Resolved>,
    /// (cluster, backend) pairs that failed for this request.
    failed: Vec<(Arc<str>, Arc<str>)>,
    /// Clusters with no usable backend left.
    excluded: Exclusions,
    decisions: u32,
    worker: Option<Worker>,
}

impl Drop for Routing<'_> {
    fn drop(&mut self) {
        if let Some(worker) = self.worker.take() {
            self.driver.give_back(worker);
        }
    }
}

impl<'r> Routing<'r> {
    /// The sending of `routed` failed: its backend is not tried again for
    /// this request (and its cluster is excluded once none is left); its
    /// reservation is released. Call [`Routing::next`] to route again.
    pub fn failed(&mut self, routed: Routed) {
        let events = &self.driver.shared.router.events;
        events.count(Event::FailedAttempt);
        match routed.reservation.fail() {
            FailureOutcome::Counted => {}
            FailureOutcome::Ejected => events.count(Event::BackendEjected),
            FailureOutcome::Capped => events.count(Event::EjectionCapped),
        }
        self.failed.push((routed.cluster, routed.backend));
    }

    /// The next routing: runs the loop until a backend is reserved or the
    /// request is rejected. Cancel-safe: a reservation is made only in the
    /// step that returns it, so dropping the future leaves none behind.
    pub async fn next(&mut self, view: &SharedView) -> Result<Routed, Rejection> {
        let outcome = self.next_inner(view).await;
        let events = &self.driver.shared.router.events;
        let waited = Instant::now().saturating_duration_since(self.arrival);
        match outcome {
            Ok(mut routed) => {
                routed.waited = waited;
                events.routed(waited);
                Ok(routed)
            }
            Err(rejection) => {
                events.rejected(rejection.code, waited);
                Err(rejection)
            }
        }
    }

    async fn next_inner(&mut self, view: &SharedView) -> Result<Routed, Rejection> {
        loop {
            let changed = view.changed_signal();
            tokio::pin!(changed);
            // Registered before deciding: a change during the decision
            // still wakes the sleep that follows it.
            changed.as_mut().enable();
            // Stale reports and ended ejections, if one is due.
            view.maintain();
            let elapsed = Instant::now().saturating_duration_since(self.arrival);
            let (step, epoch) = self.decide(view, elapsed)?;
            match step {
                Step::Select(choice) => {
                    if let Some(routed) = self.reserve(view, choice, epoch) {
                        return Ok(routed);
                    }
                }
                Step::Sleep(delay, kind) => {
                    self.driver.shared.router.events.count(match kind {
                        SleepKind::Recheck => Event::RecheckSleep,
                        SleepKind::Retry => Event::RetrySleep,
                    });
                    tokio::select! {
                        () = tokio::time::sleep(delay) => {}
                        () = &mut changed => {}
                    }
                }
                Step::GiveUp => return Err(self.wait.give_up_rejection()),
            }
        }
    }

    /// One decision on the view as it is, and the loop's next step. The
    /// excluded clusters are the caller's plus the loop's, gathered without
    /// allocating (`Exclusions::with_slice`).
    fn decide(&mut self, view: &SharedView, elapsed: Duration) -> Result<(Step, u64), Rejection> {
        let read = view.read();
        let snapshots = read.snapshots();
        let caller = self.request.request.excluded;
        let unhealthy = read.unavailable();
        let left = |excluded: &[&str]| {
            has_candidates(
                &Request {
                    excluded,
                    ..Request::default()
                },
                snapshots,
            )
        };
        // Candidates gone only because of health: unavailable for now (a
        // report or the end of an ejection may bring one back), so wait or
        // give up as after Unavailable, not 404/503.
        let health_only = !unhealthy.is_empty()
            && self.excluded.with_slice(caller, left)
            && !self.excluded.with_slices(caller, unhealthy, left);
        let step = self.excluded.with_slices(caller, unhealthy, |excluded| {
            let request = Request {
                elapsed,
                excluded,
                ..self.request.request.clone()
            };
            let router = &self.driver.shared.router;
            let worker = self.worker.get_or_insert_with(|| self.driver.take_worker());
            if health_only {
                return Ok(self
                    .wait
                    .step(&Decision::Unavailable, elapsed, &mut worker.rng));
            }
            if self.resolved.is_none() {
                if !has_candidates(&request, snapshots) {
                    let r = RouteRequest {
                        request: request.clone(),
                        routing_method: self.request.routing_method,
                    };
                    return Err(router
                        .route(&r, snapshots, &mut NoRng, &mut Scratch::default())
                        .expect_err("no candidates is a rejection"));
                }
                self.resolved = Some(router.resolve(
                    request.model,
                    request.routing_key,
                    self.request.routing_method,
                )?);
            }
            let resolved = self.resolved.as_ref().expect("resolved above");
            // Classified once, on the first attempt's candidates; every
            // retry and timed wait reuses it (docs/stargate.md 3.10).
            let request = match request.session {
                None if self.decisions == 0 => {
                    let session = resolved.instance().classify(&request, snapshots);
                    self.request.request.session = session;
                    Request { session, ..request }
                }
                _ => request,
            };
            self.decisions = self.decisions.saturating_add(1);
            let decision =
                resolved.decide(&request, snapshots, &mut worker.rng, &mut worker.scratch)?;
            Ok(self.wait.step(&decision, elapsed, &mut worker.rng))
        })?;
        Ok((step, read.membership_epoch()))
    }

    /// Step 5: a backend of the chosen cluster, skipping failed ones, and
    /// its reservation; `None` to decide again at once (no backend left,
    /// so the cluster is excluded; or membership changed meanwhile).
    fn reserve(&mut self, view: &SharedView, choice: Choice, epoch: u64) -> Option<Routed> {
        let failed = &self.failed;
        let tokens = self.request.request.input_tokens.unwrap_or(0);
        let priority = self.request.request.priority;
        let mut exclude = None;
        let algorithm = self
            .resolved
            .as_ref()
            .map(|r| r.definition().policy.algorithm);
        let decision = algorithm.map(|a| (a, choice.rank_depth));
        let reserved = view.reserve_decided(
            |v| {
                if v.membership_epoch() != epoch {
                    return None;
                }
                let cluster = v.cluster_id(choice.index)?;
                let usable = |b: usize| {
                    v.backend_id(choice.index, b).is_some_and(|id| {
                        !failed.iter().any(|(c, f)| **c == **cluster && **f == **id)
                    })
                };
                match v.pick_backend(choice.index, usable) {
                    Some(b) => Some((choice.index, b, priority, tokens)),
                    None => {
                        exclude = Some(cluster.clone());
                        None
                    }
                }
            },
            decision,
        );
        if let Some(cluster) = exclude {
            self.driver
                .shared
                .router
                .events
                .count(Event::ClusterExcluded);
            self.excluded.insert(cluster);
        }
        let (reservation, cluster, backend) = reserved?;
        Some(Routed {
            cluster,
            backend,
            choice,
            reservation,
            decisions: self.decisions,
            attempts: u32::try_from(self.failed.len())
                .unwrap_or(u32::MAX)
                .saturating_add(1),
            waited: Duration::ZERO,
        })
    }
}

/// The rejection path draws no random numbers.
struct NoRng;

impl rand::RngCore for NoRng {
    fn next_u32(&mut self) -> u32 {
        0
    }

    fn next_u64(&mut self) -> u64 {
        0
    }

    fn fill_bytes(&mut self, dst: &mut [u8]) {
        dst.fill(0);
    }
}
