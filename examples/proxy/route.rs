//! One request's routing attempts: the routing loop of docs/stargate.md 2.2
//! over the candidate view, with the proxy's backend failures fed back as
//! exclusions.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use routex::balancer::{Decision, Request, Scratch};
use routex::router::{
    Rejection, RequestHeaders, Reservation, Resolved, RouteRequest, Router, SharedView, Step,
    WaitLoop,
};
use std::cell::RefCell;
use tokio::time::Instant;

thread_local! {
    /// One scratch buffer per runtime thread, used only between awaits.
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// A backend chosen for one attempt, reserved in the view until the
/// reservation is kept (delivered) or dropped (failed, cancelled).
pub struct Routed {
    pub cluster: String,
    pub backend: String,
    pub rank_depth: u32,
    pub reservation: Reservation,
}

/// The attempts of one request: resolved once, decided until a backend
/// is chosen or the loop gives up.
pub struct Attempts<'a> {
    request: RouteRequest<'a>,
    resolved: Resolved,
    view: SharedView,
    wait_loop: WaitLoop,
    arrival: Instant,
    rng: ChaCha8Rng,
    /// Clusters with no usable backend left (step 1 of the loop).
    excluded: Vec<String>,
    /// (cluster, backend) pairs that failed this request.
    failed: Vec<(String, String)>,
    /// Backends tried so far.
    pub tries: u32,
}

impl<'a> Attempts<'a> {
    /// Resolves `x-routing-method` once (a 400 comes from here).
    pub fn new(
        router: &Router,
        view: SharedView,
        headers: &RequestHeaders<'a>,
    ) -> Result<Self, Rejection> {
        let request = headers.route_request();
        let resolved =
            router.resolve(headers.model, headers.routing_key, headers.routing_method)?;
        Ok(Attempts {
            request,
            resolved,
            view,
            wait_loop: WaitLoop::new(headers.max_wait_ms),
            arrival: Instant::now(),
            rng: ChaCha8Rng::from_rng(&mut rand::rng()),
            excluded: Vec::new(),
            failed: Vec::new(),
            tries: 0,
        })
    }

    /// Decides, sleeping as the loop says (and waking early when the view
    /// changes), until a backend is reserved or the request is rejected.
    pub async fn next(&mut self) -> Result<Routed, Rejection> {
        let view = self.view.clone();
        loop {
            // Armed before deciding, so a change during the decision wakes us.
            let changed = view.changed_signal();
            tokio::pin!(changed);
            changed.as_mut().enable();
            let delay = match self.step()? {
                Ok(routed) => {
                    self.tries += 1;
                    return Ok(routed);
                }
                Err(delay) => delay,
            };
            tokio::select! {
                () = tokio::time::sleep(delay) => {}
                () = changed => {}
            }
        }
    }

    /// The chosen backend failed: release its reservation, never try it
    /// again for this request.
    pub fn failed(&mut self, routed: Routed) {
        self.failed.push((routed.cluster, routed.backend));
        drop(routed.reservation);
    }

    /// One pass without awaiting: `Ok(Ok(_))` reserved, `Ok(Err(d))` sleep
    /// `d`, `Err(_)` rejected.
    fn step(&mut self) -> Result<Result<Routed, std::time::Duration>, Rejection> {
        loop {
            let elapsed = self.arrival.elapsed();
            let view = self.view.read();
            let excluded: Vec<&str> = self.excluded.iter().map(String::as_str).collect();
            let request = Request {
                elapsed,
                excluded: &excluded,
                ..self.request.request.clone()
            };
            let decision = SCRATCH.with(|scratch| {
                self.resolved.decide(
                    &request,
                    view.snapshots(),
                    &mut self.rng,
                    &mut scratch.borrow_mut(),
                )
            })?;
            let choice = match self.wait_loop.step(&decision, elapsed, &mut self.rng) {
                Step::Select(choice) => choice,
                Step::Sleep(delay, _) => return Ok(Err(delay)),
                Step::GiveUp => return Err(self.wait_loop.give_up_rejection()),
            };
            debug_assert!(matches!(decision, Decision::Selected(_)));
            let cluster = view.snapshots()[choice.index].id.clone();
            let usable = |b: usize| {
                let id = view.backends(choice.index).nth(b).unwrap_or_default();
                !self.failed.iter().any(|(c, f)| *c == cluster && f == id)
            };
            let Some(b) = view.pick_backend(choice.index, usable) else {
                // Selected, but every backend failed: exclude, decide again.
                self.excluded.push(cluster);
                continue;
            };
            let backend = view
                .backends(choice.index)
                .nth(b)
                .unwrap_or_default()
                .to_owned();
            drop(view);
            let priority = self.request.request.priority;
            let tokens = self.request.request.input_tokens.unwrap_or(0);
            let Some(reservation) = self.view.reserve(choice.index, b, priority, tokens) else {
                continue; // membership changed since the decision
            };
            return Ok(Ok(Routed {
                cluster,
                backend,
                rank_depth: choice.rank_depth,
                reservation,
            }));
        }
    }
}
