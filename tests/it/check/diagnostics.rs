//! Snapshots of diagnostics lists (code, severity, message, span, help) for
//! representative inputs, and the catalogue fixtures of
//! tests/inputs/diagnostics/.

use routex::diag::{Code, Report};
use routex::ir::Target;
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
    ];
    for (name, text) in cases {
        let (_, report) = routex::check::check_expression("arg:1", text, None, None);
        settings().bind(|| insta::assert_json_snapshot!(name, listing(&report)));
    }
    // no_queue_slo's premise holds only for `widening` (docs/stargate.md
    // 3.10): the same expression warns there and not for `sessions`.
    let pww = "pulsar-wait-and-widen(cache_affinity_wait_ms=300, max_queue_time_floor_ms=9)";
    for (name, target) in [
        ("expr_pww_without_slo", Target::Widening),
        ("expr_pww_without_slo_sessions", Target::Sessions),
    ] {
        let (_, report) = routex::check::check_expression_for("arg:1", pww, None, None, target);
        settings().bind(|| insta::assert_json_snapshot!(name, listing(&report)));
    }
}

/// `last_cluster_affinity` accepted or refused per target and per
/// algorithm, in lb-config.json, route files and request expressions.
#[test]
fn last_cluster_affinity_per_target_and_algorithm() {
    let mut rows = Vec::new();
    for target in Target::ALL {
        for algorithm in routex::ir::Algorithm::ALL {
            let json = format!(
                r#"{{"models": {{"m": {{"algorithm": "{algorithm}", "last_cluster_affinity": true}}}}}}"#
            );
            let (_, report) = routex::config::check_lb_config_for("lb-config.json", &json, target);
            rows.push(json!({"target": target.name(), "form": "lb-config.json",
                "algorithm": algorithm.name(), "diagnostics": listing(&report)}));
            let routes = format!("default = {algorithm}(last_cluster_affinity=true)\n");
            let (_, report) = routex::check::check_route_file_for("a.routes", &routes, target);
            rows.push(json!({"target": target.name(), "form": "route file",
                "algorithm": algorithm.name(), "diagnostics": listing(&report)}));
        }
        // stargate's expression parser does not know the parameter.
        let (_, report) = routex::check::check_expression_for(
            "arg:1",
            "pulsar-wait-and-widen;last_cluster_affinity=true",
            None,
            None,
            target,
        );
        rows.push(json!({"target": target.name(), "form": "x-routing-method",
            "algorithm": "pulsar-wait-and-widen", "diagnostics": listing(&report)}));
    }
    settings().bind(|| insta::assert_json_snapshot!("last_cluster_affinity_targets", rows));
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
        // CODE.TARGET.ext: checked for that stargate target.
        let (target, ext) = match ext.split_once('.') {
            Some((t, ext)) => match Target::from_name(t) {
                Some(target) => (target, ext),
                None => continue,
            },
            None => (Target::NEWEST, ext),
        };
        // The project configuration's and the command's fixtures (`.toml`,
        // `.bin`) are the command's tests to run.
        if !matches!(ext, "expr" | "routes" | "json") {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("read");
        let report = match ext {
            "expr" => {
                routex::check::check_expression_for("arg:1", text.trim_end(), None, None, target).1
            }
            "routes" => match *code {
                Code::DefaultWithArguments => routex::config::build(&name, &text).1,
                _ => routex::check::check_route_file_for(&name, &text, target).1,
            },
            "json" => match *code {
                Code::NotRepresentableInRouteFile => routex::config::import(&name, &text).1,
                _ => routex::config::check_lb_config_for(&name, &text, target).1,
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
