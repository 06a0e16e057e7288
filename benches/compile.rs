//! Compile-time costs: a request expression on a cache miss, a call-form
//! check with diagnostics, and loading both configuration formats.

use criterion::{black_box, criterion_group, criterion_main, Criterion};

const ROUTES: &str = include_str!("../examples/fleet.routes");
const LB_CONFIG: &str = include_str!("../examples/lb-config.json");

fn compile(c: &mut Criterion) {
    let (table, _) = routex::config::check_lb_config("lb-config.json", LB_CONFIG);
    let table = table.expect("the shipped example loads");
    c.bench_function("compile_request_expression/header", |b| {
        b.iter(|| {
            routex::check::compile_request_expression(
                &table,
                black_box("llama-3-70b"),
                black_box("pulsar-wait-and-widen;seed=v2;n=3;max_queue_time_floor_ms=100"),
            )
        })
    });
    c.bench_function("compile_request_expression/method_only", |b| {
        b.iter(|| routex::check::compile_request_expression(&table, "m", black_box("pulsar")))
    });
    c.bench_function("check_lb_config/fleet", |b| {
        b.iter(|| routex::config::check_lb_config("lb-config.json", black_box(LB_CONFIG)))
    });
    c.bench_function("check_route_file/fleet", |b| {
        b.iter(|| routex::check::check_route_file("fleet.routes", black_box(ROUTES)))
    });
}

criterion_group!(benches, compile);
criterion_main!(benches);
