//! `routex lint` at size, through the library: checking an lb-config.json
//! or route file and rendering its report in every format. Inputs are
//! generated in code (crates/cli/tests/support/lint_inputs.rs). Next to the clean
//! check, `serde_json::from_str::<serde_json::Value>` of the same text is
//! the reference: a reader that keeps no spans and checks nothing.
//! Targets (docs/performance.md): 40,000 models with one error each at most
//! 1 s per format, 40,000 clean at most 0.3 s and within 5x the reference,
//! 8,000 unknown keys in one entry at most 0.1 s. The `diff` group times
//! `routex diff` on two configurations in which every model differs.
//!
//! `cargo bench --bench lint -- --warm-up-time 1 --measurement-time 3`

#[path = "../tests/support/lint_inputs.rs"]
mod inputs;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use routex::config::{check_lb_config, load_table};
use routex::diag::Report;
use routex::render::{github, json, sarif};
use routex_cli::human;
use std::hint::black_box;

const SIZES: [usize; 4] = [5_000, 10_000, 20_000, 40_000];

fn lint(name: &str, text: &str) -> Report {
    load_table(name, text).1
}

/// Clean configurations: the check against the reference parse.
fn clean(c: &mut Criterion) {
    let mut g = c.benchmark_group("lint_clean");
    g.sample_size(10);
    for models in SIZES {
        let text = inputs::lb_config(models, false);
        g.bench_with_input(
            BenchmarkId::new("serde_json_value", models),
            &text,
            |b, t| b.iter(|| serde_json::from_str::<serde_json::Value>(black_box(t))),
        );
        g.bench_with_input(
            BenchmarkId::new("check_lb_config", models),
            &text,
            |b, t| b.iter(|| check_lb_config("lb-config.json", black_box(t))),
        );
    }
    g.finish();
}

/// One error per model: check plus each renderer, with the reference
/// parse of the same text in the same run.
fn errors(c: &mut Criterion) {
    let mut g = c.benchmark_group("lint_errors");
    g.sample_size(10);
    for models in SIZES {
        let text = inputs::lb_config(models, true);
        let check = |t: &str| lint("lb-config.json", black_box(t));
        g.bench_with_input(
            BenchmarkId::new("serde_json_value", models),
            &text,
            |b, t| b.iter(|| serde_json::from_str::<serde_json::Value>(black_box(t))),
        );
        g.bench_with_input(BenchmarkId::new("check", models), &text, |b, t| {
            b.iter(|| check(t))
        });
        g.bench_with_input(BenchmarkId::new("human", models), &text, |b, t| {
            b.iter(|| human::render(&[check(t)], human::Style::Plain))
        });
        g.bench_with_input(BenchmarkId::new("json", models), &text, |b, t| {
            b.iter(|| json::render(&[check(t)]))
        });
        g.bench_with_input(BenchmarkId::new("github", models), &text, |b, t| {
            b.iter(|| github::render(&[check(t)]))
        });
        g.bench_with_input(BenchmarkId::new("sarif", models), &text, |b, t| {
            b.iter(|| sarif::render(&[check(t)]))
        });
    }
    g.finish();
}

/// 8,000 unknown keys in one entry, and route files with an error per line.
fn edges(c: &mut Criterion) {
    let mut g = c.benchmark_group("lint_edges");
    g.sample_size(10);
    let keys = inputs::unknown_keys(8_000);
    g.bench_function("unknown_keys_8000_json", |b| {
        b.iter(|| json::render(&[lint("lb-config.json", black_box(&keys))]))
    });
    g.bench_function("unknown_keys_8000_human", |b| {
        b.iter(|| {
            human::render(
                &[lint("lb-config.json", black_box(&keys))],
                human::Style::Plain,
            )
        })
    });
    for lines in [4_000, 16_000] {
        let text = inputs::route_file(lines, true);
        g.bench_with_input(
            BenchmarkId::new("route_file_errors_json", lines),
            &text,
            |b, t| b.iter(|| json::render(&[lint("fleet.routes", black_box(t))])),
        );
    }
    g.finish();
}

/// `routex diff` of two configurations in which every model differs
/// (crates/cli/tests/support/lint_inputs.rs `lb_config_pair`): the comparison of the
/// loaded tables, and the whole run (load both, compare, render json),
/// next to checking the two files alone.
fn diff(c: &mut Criterion) {
    let mut g = c.benchmark_group("diff");
    g.sample_size(10);
    for models in SIZES {
        let (old, new) = inputs::lb_config_pair(models);
        let load = |t: &str| check_lb_config("lb-config.json", t).0;
        g.bench_with_input(BenchmarkId::new("check_both", models), &models, |b, _| {
            b.iter(|| (load(black_box(&old)), load(black_box(&new))))
        });
        let (Some(a), Some(z)) = (load(&old), load(&new)) else {
            panic!("the generated pair loads");
        };
        g.bench_with_input(BenchmarkId::new("diff_tables", models), &models, |b, _| {
            b.iter(|| routex::diff::diff_tables(black_box(&a), black_box(&z)))
        });
        // The usual review: nothing (or little) changed. Two loads of one
        // text, so no definition is shared.
        let (Some(same_a), Some(same_z)) = (load(&old), load(&old)) else {
            panic!("the generated configuration loads");
        };
        g.bench_with_input(
            BenchmarkId::new("diff_tables_unchanged", models),
            &models,
            |b, _| b.iter(|| routex::diff::diff_tables(black_box(&same_a), black_box(&same_z))),
        );
        g.bench_with_input(
            BenchmarkId::new("end_to_end_json", models),
            &models,
            |b, _| {
                b.iter(|| {
                    let (Some(a), Some(z)) = (load(black_box(&old)), load(black_box(&new))) else {
                        return String::new();
                    };
                    let d = routex::diff::diff_tables(&a, &z);
                    routex::render::diff::render_json(&d, "old.json", "new.json")
                })
            },
        );
    }
    g.finish();
}

criterion_group!(benches, clean, errors, edges, diff);
criterion_main!(benches);
