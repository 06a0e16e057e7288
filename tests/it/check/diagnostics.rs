//! Snapshots of diagnostics lists (code, severity, message, span, help) for
//! representative inputs, and the catalogue fixtures of
//! tests/inputs/diagnostics/.

use routex::diag::{Code, Report};
use serde_json::json;

fn listing(report: &Report) -> serde_json::Value {
    let items: Vec<_> = report
        .diagnostics
        .iter()
        .map(|d| {
            json!({
                "code": d.code.as_str(),
                "severity": d.severity,
                "message": d.message,
                "span": [d.span.start, d.span.end],
                "text": report.text.get(d.span.start..d.span.end),
                "help": d.help,
            })
        })
        .collect();
    json!(items)
}

fn settings() -> insta::Settings {
    let mut s = insta::Settings::clone_current();
    s.set_snapshot_path("../../../snapshots/check");
    s.set_prepend_module_to_snapshot(false);
    s
}

#[test]
fn diagnostics_of_representative_expressions() {
    let cases = [
        (
            "expr_every_parameter_problem",
            "pulsar;sed=x;comparator=ttft;consider_kv_free_tokens=\"yes\";max_input_work_seconds=0",
        ),
        ("expr_alias_and_range", "powerOf2(sample_count=99)"),
        ("expr_misspelt_method", "pulsr-wait-and-widen;seed=x"),
        (
            "expr_pww_without_slo",
            "pulsar-wait-and-widen(cache_affinity_wait_ms=300, max_queue_time_floor_ms=9)",
        ),
    ];
    for (name, text) in cases {
        let (_, report) = routex::check::check_expression("arg:1", text, None, None);
        settings().bind(|| insta::assert_json_snapshot!(name, listing(&report)));
    }
}

#[test]
fn diagnostics_of_representative_files() {
    let routes = "default = random\ndefault = pulsar\nallow pulsar\nallow pulsar\nmodel \"m\" = wait-and-widen(n=0)\nmodel \"m\" = random\n";
    let (_, report) = routex::check::check_route_file("a.routes", routes);
    settings().bind(|| insta::assert_json_snapshot!("routes_duplicates", listing(&report)));
    let json = r#"{
  "default": "Pulsar",
  "fallback": 1,
  "request_algorithms": {"pulsar": "random", "powerOf2": {"algorithm": "power-of-n", "sample_count": 0}},
  "models": {"m": {"algorithm": "random", "seed": "x", "widen": 2}, "n": 3}
}"#;
    let (_, report) = routex::config::check_lb_config("lb-config.json", json);
    settings().bind(|| insta::assert_json_snapshot!("json_many_problems", listing(&report)));
}

/// Each fixture produces its code (CODE.expr / CODE.routes / CODE.json).
#[test]
fn every_fixture_produces_its_code() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/inputs/diagnostics");
    let mut seen = 0;
    for entry in std::fs::read_dir(dir).expect("fixtures folder") {
        let path = entry.expect("entry").path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_string();
        let Some((stem, ext)) = name.split_once('.') else {
            continue;
        };
        let Some(code) = Code::ALL.iter().find(|c| c.as_str() == stem) else {
            continue;
        };
        // The project configuration's and the command's fixtures (`.toml`,
        // `.bin`) are the command's tests to run.
        if !matches!(ext, "expr" | "routes" | "json") {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("read");
        let report = match ext {
            "expr" => routex::check::check_expression("arg:1", text.trim_end(), None, None).1,
            "routes" => match *code {
                Code::DefaultWithArguments => routex::config::build(&name, &text).1,
                _ => routex::check::check_route_file(&name, &text).1,
            },
            "json" => match *code {
                Code::NotRepresentableInRouteFile => routex::config::import(&name, &text).1,
                _ => routex::config::check_lb_config(&name, &text).1,
            },
            _ => continue,
        };
        let produced = report.diagnostics.iter().any(|d| d.code == *code);
        if !produced
            && !matches!(
                code,
                Code::MalformedExpression | Code::SyntaxError | Code::NotRepresentableInHeader
            )
        {
            panic!("{name}: {:?}", report.diagnostics);
        }
        seen += 1;
    }
    assert!(seen >= 20, "{seen} fixtures");
}
