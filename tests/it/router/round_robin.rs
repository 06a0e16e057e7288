//! Round-robin through the router with the real balancer
//! (docs/stargate.md 3.3, 7.7).

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use routex::balancer::{Decision, Request, Scratch};
use routex::router::{RouteRequest, Router};

fn picks(router: &Router, methods: &[Option<&str>]) -> Vec<usize> {
    let clusters: Vec<_> = ["a", "b", "c"].map(super::support::cluster).into();
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let mut scratch = Scratch::default();
    methods
        .iter()
        .map(|method| {
            let request = RouteRequest {
                request: Request {
                    model: "m",
                    ..Request::default()
                },
                routing_method: method.map(str::as_bytes),
            };
            match router.route(&request, &clusters, &mut rng, &mut scratch) {
                Ok(Decision::Selected(c)) => {
                    assert_eq!(c.rank_depth, 1);
                    c.index
                }
                other => panic!("{method:?}: {other:?}"),
            }
        })
        .collect()
}

#[test]
fn matching_round_robin_override_reuses_configured_target_sequence() {
    let (table, _) = routex::config::load_table("rr.routes", "model \"m\" = round-robin\n");
    let router = Router::new(table.expect("route file"));
    let sequence = picks(
        &router,
        &[
            None,
            Some("round-robin"),
            Some("ROUND_ROBIN"),
            None,
            Some(" round_robin "),
        ],
    );
    assert_eq!(sequence, [0, 1, 2, 0, 1]);
    // An expression is its own definition with a fresh counter, and does
    // not advance the configured one.
    let expression = picks(
        &router,
        &[Some("round-robin;require_input_tokens=false"); 2],
    );
    assert_eq!(expression, [0, 1]);
    assert_eq!(picks(&router, &[None]), [2]);
}
