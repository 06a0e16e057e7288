//! The editor server's latency on the paths a user waits for, in process
//! (no pipes): diagnostics of a 4 MiB lb-config.json after a one-character
//! change (apply the edit, check, convert every diagnostic to LSP), hover
//! and completion near the end of that file (the worst place for the
//! cursor scan), and hover and completion in the bundled route file.
//! Reference in the same run: `serde_json::from_str::<Value>` of the same
//! 4 MiB, the floor any JSON-reading checker pays. Targets: diagnostics
//! within 100 ms, hover and completion within 10 ms (docs/performance.md).
//!
//! `cargo bench --bench lsp -- --warm-up-time 1 --measurement-time 3`

use criterion::{criterion_group, criterion_main, Criterion};
use routex_lsp::documents::Document;
use routex_lsp::lsp_types::{Position, Range, TextDocumentContentChangeEvent, Uri};
use routex_lsp::{completion, diagnostics, hover};
use std::hint::black_box;
use std::str::FromStr;

const MIB: usize = 1024 * 1024;

/// A valid lb-config.json of just under `bytes`: models of every detailed
/// kind, each with a few fields.
fn config(bytes: usize) -> String {
    let mut text = String::from("{\n  \"default\": \"power-of-n\",\n  \"models\": {\n");
    let entries = [
        "{\"algorithm\": \"pulsar-wait-and-widen\", \"seed\": \"v1\", \"cache_affinity_wait_ms\": 300, \"max_queue_time_floor_ms\": 500, \"max_queue_time_ceil_ms\": 2000}",
        "{\"algorithm\": \"wait-and-widen\", \"seed\": \"mx\", \"comparator\": \"queue-time\", \"max_queued\": 4}",
        "{\"algorithm\": \"power-of-n\", \"sample_count\": 3}",
        "\"round-robin\"",
    ];
    let mut i = 0;
    while text.len() + 400 < bytes {
        text.push_str(&format!(
            "    \"model-{i}\": {},\n",
            entries[i % entries.len()]
        ));
        i += 1;
    }
    text.push_str("    \"last\": {\"algorithm\": \"pulsar\", \"seed\": \"end\"}\n  }\n}\n");
    text
}

fn document(name: &str, text: String) -> Document {
    let uri = Uri::from_str(&format!("file:///bench/{name}")).expect("a URI");
    Document::new(&uri, "json", 1, text)
}

fn lsp(c: &mut Criterion) {
    let text = config(4 * MIB);
    let lines = text.lines().count() as u32;
    let mut g = c.benchmark_group("lsp");
    g.sample_size(10);
    g.bench_function("serde_json_value_4mib", |b| {
        b.iter(|| serde_json::from_str::<serde_json::Value>(black_box(&text)).map(|_| ()))
    });
    // The last model's seed, on the line before `  }`: "end" <-> "enx".
    let mut doc = document("lb-config.json", text.clone());
    let seed_line = lines - 3;
    let line_text = text.lines().nth(seed_line as usize).expect("the line");
    let at = line_text.find("\"end\"").expect("the seed") as u32 + 3;
    let mut version = 1;
    g.bench_function("diagnostics_4mib_after_change", |b| {
        b.iter(|| {
            version += 1;
            let letter = if version % 2 == 0 { "x" } else { "d" };
            let change = TextDocumentContentChangeEvent {
                range: Some(Range::new(
                    Position::new(seed_line, at),
                    Position::new(seed_line, at + 1),
                )),
                range_length: None,
                text: letter.into(),
            };
            doc.apply(version, vec![change]).expect("small edit");
            let published = diagnostics::of_document(&doc, "file:///docs/diagnostics.md");
            assert!(published.is_empty());
            published
        })
    });
    // Hover and completion on a checked document (the analysis exists once
    // diagnostics were published).
    let _ = diagnostics::of_document(&doc, "");
    let seed_key = doc.lines.offset(
        &doc.text,
        Position::new(
            seed_line,
            line_text.find("\"seed\"").expect("key") as u32 + 2,
        ),
    );
    g.bench_function("hover_4mib_end", |b| {
        b.iter(|| hover::hover(&doc, black_box(seed_key)).expect("a hover"))
    });
    let key_slot = doc.lines.offset(
        &doc.text,
        Position::new(seed_line, line_text.find("\"seed\"").expect("key") as u32),
    );
    g.bench_function("completion_4mib_end", |b| {
        b.iter(|| {
            let items = completion::complete(&doc, black_box(key_slot), std::iter::empty());
            assert!(!items.is_empty());
            items
        })
    });
    let routes = std::fs::read_to_string(concat!(
        concat!(env!("CARGO_MANIFEST_DIR"), "/../.."),
        "/examples/fleet.routes"
    ))
    .expect("the bundled route file");
    let routes_doc = document("fleet.routes", routes.clone());
    let _ = diagnostics::of_document(&routes_doc, "");
    let field = routes.find("band_widen_interval_ms").expect("a field") + 3;
    g.bench_function("hover_routes", |b| {
        b.iter(|| hover::hover(&routes_doc, black_box(field)).expect("a hover"))
    });
    let param = routes.find("seed = \"v1\"").expect("an argument");
    g.bench_function("completion_routes", |b| {
        b.iter(|| completion::complete(&routes_doc, black_box(param), std::iter::empty()))
    });
    g.finish();
}

criterion_group!(benches, lsp);
criterion_main!(benches);
