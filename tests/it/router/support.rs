//! Fakes for router tests: hand-built policies and tables, an engine that
//! counts decisions like round-robin, and a compiler that counts builds and
//! can be held inside a build.

use rand::RngCore;
use routex::balancer::Choice;
use routex::balancer::{Balancer, StandIn};
use routex::balancer::{ClusterSnapshot, Decision, Request, Scratch};
use routex::diag::{Code, Diagnostic, Span};
use routex::ir::*;
use routex::router::{Compiler, ManualClock, Router, RouterOptions};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub use crate::support::default_policy;

pub fn definition(algorithm: Algorithm) -> Arc<Definition> {
    Arc::new(Definition {
        config: AlgorithmConfig::named(algorithm),
        policy: default_policy(algorithm),
    })
}

/// default power-of-n; top-level {random, pulsar}; model "m1" round-robin
/// with its own {wait-and-widen}.
pub fn restrictive_table() -> RouteTable {
    let mut models = indexmap::IndexMap::new();
    models.insert(
        "m1".to_string(),
        ModelEntry {
            definition: definition(Algorithm::RoundRobin),
            request_algorithms: [(Algorithm::WaitAndWiden, definition(Algorithm::WaitAndWiden))]
                .into_iter()
                .collect(),
        },
    );
    RouteTable {
        version: IR_VERSION,
        default: definition(Algorithm::PowerOfN),
        request_algorithms: [Algorithm::Random, Algorithm::Pulsar]
            .into_iter()
            .map(|a| (a, definition(a)))
            .collect(),
        models,
    }
}

pub fn permissive_table() -> RouteTable {
    RouteTable::permissive(|c| default_policy(c.algorithm))
}

/// Picks candidates in turn, like round-robin, so shared state shows.
#[derive(Debug)]
pub struct CountingEngine {
    counter: AtomicU64,
}

impl CountingEngine {
    /// A fresh instance whatever the policy: its counter at 0.
    fn build(_: &Policy) -> Balancer {
        Balancer::stand_in(CountingEngine {
            counter: AtomicU64::new(0),
        })
    }
}

impl StandIn for CountingEngine {
    fn decide(
        &self,
        _: &Request<'_>,
        clusters: &[ClusterSnapshot],
        _: &mut dyn RngCore,
        _: &mut Scratch,
    ) -> Decision {
        let n = self.counter.fetch_add(1, Ordering::Relaxed);
        match clusters.len() as u64 {
            0 => Decision::Unavailable,
            len => Decision::Selected(Choice {
                index: (n % len) as usize,
                rank_depth: 1,
                selected_after_kv_free_tokens_skip: false,
            }),
        }
    }
}

/// A compiler for `method;...` / `method(...)` values: resolves the method
/// in the table (unknown_method / unavailable), fails on values containing
/// `bad`, and blocks values containing `slow` until released.
pub struct FakeCompiler {
    pub builds: AtomicUsize,
    entered: Mutex<Sender<()>>,
    release: Mutex<Receiver<()>>,
}

/// The test's side of the `slow` build's hand-shake.
pub struct Gate {
    entered: Mutex<Receiver<()>>,
    release: Mutex<Sender<()>>,
}

impl Gate {
    /// Blocks until a `slow` build is parked inside the compiler.
    pub fn wait_entered(&self) {
        self.entered.lock().unwrap().recv().unwrap();
    }

    pub fn release(&self) {
        self.release.lock().unwrap().send(()).unwrap();
    }
}

impl FakeCompiler {
    pub fn new() -> (Arc<FakeCompiler>, Gate) {
        let (entered_tx, entered_rx) = channel();
        let (release_tx, release_rx) = channel();
        let compiler = Arc::new(FakeCompiler {
            builds: AtomicUsize::new(0),
            entered: Mutex::new(entered_tx),
            release: Mutex::new(release_rx),
        });
        let gate = Gate {
            entered: Mutex::new(entered_rx),
            release: Mutex::new(release_tx),
        };
        (compiler, gate)
    }

    pub fn builds(&self) -> usize {
        self.builds.load(Ordering::SeqCst)
    }

    fn compile(
        &self,
        table: &RouteTable,
        model: &str,
        value: &str,
    ) -> Result<Definition, Vec<Diagnostic>> {
        let method = value.split([';', '(']).next().unwrap_or_default();
        let error = |code, message: String| vec![Diagnostic::new(code, Span::new(0, 0), message)];
        let (algorithm, _) = Algorithm::from_header_name(method).ok_or_else(|| {
            error(
                Code::UnknownMethod,
                format!("unknown routing method '{method}'"),
            )
        })?;
        let base = table.resolve(model, algorithm).ok_or_else(|| {
            error(
                Code::Unavailable,
                format!("routing method {algorithm} is not configured for this model"),
            )
        })?;
        if value.contains("bad") {
            return Err(error(
                Code::UnknownParameter,
                "unknown parameter 'bad'".into(),
            ));
        }
        if value.contains("slow") {
            let _ = self.entered.lock().unwrap().send(());
            let _ = self.release.lock().unwrap().recv();
        }
        self.builds.fetch_add(1, Ordering::SeqCst);
        Ok(Definition::clone(base.definition))
    }
}

pub struct Harness {
    pub router: Router,
    pub compiler: Arc<FakeCompiler>,
    pub gate: Gate,
    pub clock: Arc<ManualClock>,
}

pub fn harness_with(table: RouteTable, capacity: usize, idle: Duration) -> Harness {
    let (compiler, gate) = FakeCompiler::new();
    let clock = Arc::new(ManualClock::new());
    let for_router = compiler.clone();
    let compile: Compiler = Arc::new(move |t, m, v| for_router.compile(t, m, v));
    let options = RouterOptions::default()
        .with_cache_capacity(capacity)
        .with_idle_timeout(idle)
        .with_clock(clock.clone())
        .with_call_form_compiler(compile);
    Harness {
        router: Router::with_stand_ins(table, options, CountingEngine::build),
        compiler,
        gate,
        clock,
    }
}

pub fn harness() -> Harness {
    harness_with(permissive_table(), 16_384, Duration::from_secs(15 * 60))
}

pub fn cluster(id: &str) -> ClusterSnapshot {
    ClusterSnapshot {
        id: id.to_string(),
        ..ClusterSnapshot::default()
    }
}

pub fn request(model: &str) -> Request<'_> {
    Request {
        model,
        ..Request::default()
    }
}
