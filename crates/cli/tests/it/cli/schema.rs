//! `routex schema`: the JSON Schema of lb-config.json agrees with the
//! checker. Every bundled configuration validates, every fixture with an
//! error fails, and for every algorithm and field a one-field configuration
//! is valid for the schema exactly when `routex lint` finds no error.

use super::json_schema::{valid, Draft};
use super::run::{json, root, routex};
use routex::check::schema::{Field, Kind};
use routex::ir::Algorithm;
use serde_json::{json, Value};

/// Whether each configuration is valid for `routex schema`'s schema, or
/// `None` when no validator is installed (the test then says it skipped).
fn schema_valid(configs: &[Value]) -> Option<Vec<bool>> {
    valid(
        &routex_cli::schema::lb_config_schema(),
        Draft::Draft202012,
        configs,
    )
}

fn checker_errors(text: &str) -> usize {
    routex::config::check_lb_config("lb-config.json", text)
        .1
        .errors()
}

#[test]
fn the_command_prints_the_committed_schema() {
    let out = routex(&["schema"]);
    assert_eq!(out.code, 0);
    let committed = std::fs::read_to_string(root().join("docs/lb-config.schema.json"))
        .expect("docs/lb-config.schema.json is committed");
    assert_eq!(
        out.stdout, committed,
        "regenerate: routex schema > docs/lb-config.schema.json"
    );
    assert_eq!(
        json(&out.stdout)["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
}

#[test]
fn bundled_configurations_validate_and_erroneous_fixtures_fail() {
    let example = std::fs::read_to_string(root().join("examples/lb-config.json")).expect("example");
    // (what, instance, whether the checker finds it clean)
    let mut cases = vec![("examples/lb-config.json".to_string(), json(&example), true)];
    let dir = root().join("tests/inputs/diagnostics");
    let mut checked = (0, 0);
    for entry in std::fs::read_dir(&dir).expect("fixtures").flatten() {
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("read");
        let Ok(value) = serde_json::from_str::<Value>(&text) else {
            continue; // invalid_json: no instance to validate
        };
        let clean = checker_errors(&text) == 0;
        if clean {
            checked.0 += 1
        } else {
            checked.1 += 1
        }
        cases.push((path.display().to_string(), value, clean));
    }
    assert!(checked.0 >= 3 && checked.1 >= 5, "{checked:?}");
    // The route file's lb-config.json (`routex build`) validates too.
    let built = routex(&["build", "examples/fleet.routes"]);
    cases.push((
        "routex build examples/fleet.routes".into(),
        json(&built.stdout),
        true,
    ));
    let instances: Vec<Value> = cases.iter().map(|c| c.1.clone()).collect();
    let Some(valid) = schema_valid(&instances) else {
        return;
    };
    for ((what, _, clean), valid) in cases.iter().zip(valid) {
        assert_eq!(valid, *clean, "{what}");
    }
}

/// A value of the field's kind that the checker accepts where the field is
/// taken.
fn sample(field: Field) -> Value {
    match field.kind() {
        Kind::Boolean => json!(true),
        Kind::Text => json!("v1"),
        Kind::Unsigned => json!(3),
        Kind::Decimal => json!(0.5),
        Kind::Comparator => json!("queue-time"),
        Kind::Weight => json!("last-mean-input-tps"),
    }
}

#[test]
fn schema_and_checker_agree_on_every_algorithm_and_field() {
    // Every configuration with the checker's verdict, validated in one batch.
    let mut configs = Vec::new();
    for algorithm in Algorithm::ALL {
        for field in Field::ALL {
            for value in [sample(field), json!("wrong kind"), json!(null)] {
                configs.push(
                    json!({"models": {"m": {"algorithm": algorithm.name(), field.name(): value}}}),
                );
            }
        }
        for name in [algorithm.name(), "nope"] {
            configs.push(json!({"default": name, "request_algorithms": {name: name}}));
        }
    }
    assert_eq!(configs.len(), 6 * (routex::ir::FIELDS.len() * 3 + 2));
    // Ranges the builder enforces.
    let ranges = [
        ("sample_count", 64, true),
        ("sample_count", 65, false),
        ("sample_count", 0, false),
    ];
    for (field, value, ok) in ranges {
        let config = json!({"models": {"m": {"algorithm": "power-of-n", field: value}}});
        assert_eq!(checker_errors(&config.to_string()) == 0, ok, "{config}");
        configs.push(config);
    }
    let Some(valid) = schema_valid(&configs) else {
        return;
    };
    for (config, valid) in configs.iter().zip(valid) {
        let text = config.to_string();
        let errors = checker_errors(&text);
        assert_eq!(
            valid,
            errors == 0,
            "{text}: the checker finds {errors} error(s)"
        );
    }
}

#[test]
fn the_project_schema_is_committed_and_agrees_with_the_reader() {
    let out = routex(&["schema", "routex-toml"]);
    assert_eq!(out.code, 0);
    let committed = std::fs::read_to_string(root().join("docs/routex-toml.schema.json"))
        .expect("docs/routex-toml.schema.json is committed");
    assert_eq!(
        out.stdout, committed,
        "regenerate: routex schema routex-toml > docs/routex-toml.schema.json"
    );
    // The same settings as TOML for the reader and as JSON for the schema.
    let cases = [
        (
            "stargate = \"sessions\"\nformat = \"github\"\n[levels]\nno_queue_slo = \"allow\"\n[[overrides]]\nfiles = [\"a/**\"]\nlevels = { deprecated_alias = \"deny\" }\n[[suppressions]]\nfiles = [\"x.json\"]\ncodes = [\"normalised_value\"]\nreason = \"r\"\n",
            json!({"stargate": "sessions", "format": "github", "levels": {"no_queue_slo": "allow"},
                   "overrides": [{"files": ["a/**"], "levels": {"deprecated_alias": "deny"}}],
                   "suppressions": [{"files": ["x.json"], "codes": ["normalised_value"], "reason": "r"}]}),
        ),
        ("formt = \"json\"\n", json!({"formt": "json"})),
        ("format = \"xml\"\n", json!({"format": "xml"})),
        ("[levels]\nunknown_field = \"allow\"\n", json!({"levels": {"unknown_field": "allow"}})),
        ("[levels]\nno_queue_sol = \"allow\"\n", json!({"levels": {"no_queue_sol": "allow"}})),
        ("[[suppressions]]\nfiles = [\"a\"]\n", json!({"suppressions": [{"files": ["a"]}]})),
        ("[[suppressions]]\nfiles = [\"a\"]\ncodes = [\"unknown_field\"]\n", json!({"suppressions": [{"files": ["a"], "codes": ["unknown_field"]}]})),
    ];
    let instances: Vec<Value> = cases.iter().map(|c| c.1.clone()).collect();
    let Some(valid) = valid(&routex_project::schema(), Draft::Draft202012, &instances) else {
        return;
    };
    for ((toml, _), valid) in cases.iter().zip(valid) {
        let clean = !routex_project::parse("routex.toml", toml)
            .report
            .has_errors();
        assert_eq!(valid, clean, "{toml}");
    }
}
