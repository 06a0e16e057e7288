//! Embedding the router: load a route file, then route requests with and
//! without `x-routing-method` overrides, printing decisions and rejections.
//!
//! Run with `cargo run -p routex --example embed`.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use routex::balancer::{ClusterSnapshot, Decision, Request, Scratch};
use routex::router::{RouteRequest, Router, Step, WaitLoop};
use std::time::Duration;

fn cluster(id: &str, running: u64, queued: u64) -> ClusterSnapshot {
    ClusterSnapshot {
        id: id.to_string(),
        rtt_ms: 5.0,
        last_mean_input_tps: 8000.0,
        max_input_tps: Some(8000.0),
        queue_size: queued / 1000,
        queued_input_size: queued,
        num_running_queries: running,
        max_engine_concurrency: 25,
        ..ClusterSnapshot::default()
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/embed.routes");
    let text = std::fs::read_to_string(path)?;
    let (table, report) = routex::config::load_table(path, &text);
    let table = table.ok_or_else(|| format!("{path}: {:?}", report.first_error()))?;
    // One router per process, shared by every request thread.
    let router = Router::new(table);

    let clusters = [
        cluster("usw2-a", 3, 0),
        cluster("usw2-b", 25, 40_000),
        cluster("ue1-a", 10, 8_000),
    ];
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut scratch = Scratch::default();

    let overrides = [
        ("llama-3-70b", None),
        ("llama-3-70b", Some("round_robin")),
        (
            "llama-3-70b",
            Some("pulsar-wait-and-widen;seed=v2;cache_affinity_wait_ms=0"),
        ),
        ("llama-3-70b", Some("power-of-n")),
        ("mistral-7b", None),
        ("mistral-7b", Some("random;max_input_work_seconds=0.5")),
        ("mistral-7b", Some("fastest")),
    ];
    for (model, method) in overrides {
        let request = RouteRequest {
            request: Request {
                model,
                cache_affinity_key: Some("conversation-42"),
                input_tokens: Some(6000),
                ..Request::default()
            },
            routing_method: method.map(str::as_bytes),
        };
        let shown = method.unwrap_or("(configured)");
        match router.route(&request, &clusters, &mut rng, &mut scratch) {
            Ok(Decision::Selected(choice)) => println!(
                "{model} {shown}: selected {} (rank depth {})",
                clusters[choice.index].id, choice.rank_depth
            ),
            Ok(other) => println!("{model} {shown}: {other:?}"),
            Err(rejection) => println!(
                "{model} {shown}: {} {}={} {}",
                rejection.status,
                routex::router::ERROR_CODE_HEADER,
                rejection.header_value(),
                rejection.body_json()
            ),
        }
    }

    // The routing loop in virtual time: every cluster full, so the request
    // waits out the affinity wait and gives up at its x-max-wait-ms.
    let full = [cluster("usw2-a", 25, 0), cluster("usw2-b", 25, 0)];
    let resolved = router.resolve("llama-3-70b", None, None)?;
    let wait_loop = WaitLoop::new(Some(100));
    let mut elapsed = Duration::ZERO;
    loop {
        let request = Request {
            model: "llama-3-70b",
            cache_affinity_key: Some("conversation-42"),
            input_tokens: Some(6000),
            elapsed,
            ..Request::default()
        };
        let decision = resolved.decide(&request, &full, &mut rng, &mut scratch)?;
        match wait_loop.step(&decision, elapsed, &mut rng) {
            Step::Select(choice) => {
                println!("loop: selected {} at {elapsed:?}", full[choice.index].id);
                break;
            }
            Step::Sleep(d, kind) => {
                println!("loop: {decision:?} at {elapsed:?} -> sleep {d:?} ({kind:?})");
                elapsed += d;
            }
            Step::GiveUp => {
                println!("loop: 503 at {elapsed:?}");
                break;
            }
        }
    }
    println!("{}", router.metrics().to_prometheus());
    Ok(())
}
