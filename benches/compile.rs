//! Compile cost of one expression: parse + check + lower
//! (`check::check_expression`) of a typical header expression and of the
//! equivalent call expression, next to `sfv`'s RFC 8941 parse of the same
//! header text (the floor any header-form compiler pays), and the parsers
//! alone; plus `compile_request_expression` against a prebuilt table, the
//! router's cost on an expression-cache miss. Target: the full compile
//! within 2x of sfv's parse.
//!
//! `cargo bench --bench compile -- --warm-up-time 1 --measurement-time 3`

use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;

const HEADER: &str = "pulsar-wait-and-widen;seed=v1;cache_affinity_wait_ms=300;\
band_widen_interval_ms=300;max_queue_time_floor_ms=500;max_queue_time_ceil_ms=2000";

const CALL: &str = "pulsar-wait-and-widen(seed=v1, cache_affinity_wait_ms=300, \
band_widen_interval_ms=300, max_queue_time_floor_ms=500, max_queue_time_ceil_ms=2000)";

fn compile(c: &mut Criterion) {
    let mut g = c.benchmark_group("compile");
    g.bench_function("sfv_parse_item", |b| {
        b.iter(|| sfv::Parser::parse_item(black_box(HEADER.as_bytes())))
    });
    g.bench_function("parse_header", |b| {
        b.iter(|| routex::syntax::parse_header(black_box(HEADER)))
    });
    g.bench_function("parse_call", |b| {
        b.iter(|| routex::syntax::parse_call(black_box(CALL)))
    });
    g.bench_function("check_expression_header", |b| {
        b.iter(|| routex::check::check_expression("arg:1", black_box(HEADER), None, None))
    });
    g.bench_function("check_expression_call", |b| {
        b.iter(|| routex::check::check_expression("arg:1", black_box(CALL), None, None))
    });
    // What a router pays on an expression-cache miss: the table is built
    // once, no report, no provenance.
    let table = routex::check::permissive_table();
    g.bench_function("compile_request_expression_header", |b| {
        b.iter(|| routex::check::compile_request_expression(&table, "m", black_box(HEADER)))
    });
    g.bench_function("compile_request_expression_call", |b| {
        b.iter(|| routex::check::compile_request_expression(&table, "m", black_box(CALL)))
    });
    g.finish();
}

const ROUTES: &str = include_str!("../examples/fleet.routes");
const LB_CONFIG: &str = include_str!("../examples/lb-config.json");

/// What a router pays on an expression-cache miss, and loading both
/// configuration formats of the fleet example.
fn configuration(c: &mut Criterion) {
    let (table, _) = routex::config::check_lb_config("lb-config.json", LB_CONFIG);
    let Some(table) = table else {
        eprintln!("examples/lb-config.json does not load: skipping the configuration benches");
        return;
    };
    let mut g = c.benchmark_group("configuration");
    g.bench_function("compile_request_expression_header", |b| {
        b.iter(|| {
            routex::check::compile_request_expression(
                &table,
                black_box("llama-3-70b"),
                black_box("pulsar-wait-and-widen;seed=v2;n=3;max_queue_time_floor_ms=100"),
            )
        })
    });
    g.bench_function("compile_request_expression_method_only", |b| {
        b.iter(|| routex::check::compile_request_expression(&table, "m", black_box("pulsar")))
    });
    g.bench_function("check_lb_config_fleet", |b| {
        b.iter(|| routex::config::check_lb_config("lb-config.json", black_box(LB_CONFIG)))
    });
    g.bench_function("parse_route_file_fleet", |b| {
        b.iter(|| routex::syntax::parse_route_file(black_box(ROUTES)))
    });
    g.bench_function("check_route_file_fleet", |b| {
        b.iter(|| routex::check::check_route_file("fleet.routes", black_box(ROUTES)))
    });
    g.finish();
}

criterion_group!(benches, compile, configuration);
criterion_main!(benches);
