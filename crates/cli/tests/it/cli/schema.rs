//! `routex schema`: the JSON Schema of lb-config.json agrees with the
//! checker. Every bundled configuration validates, every fixture with an
//! error fails, and for every algorithm and field a one-field configuration
//! is valid for the schema exactly when `routex lint` finds no error.

use super::run::{json, root, routex};
use routex::check::schema::{Field, Kind};
use routex::ir::Algorithm;
use serde_json::{json, Value};

fn validator() -> jsonschema::Validator {
    let schema = routex_cli::schema::lb_config_schema();
    jsonschema::draft202012::options()
        .should_validate_formats(true)
        .build(&schema)
        .expect("the generated schema compiles")
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
    let validator = validator();
    let example = std::fs::read_to_string(root().join("examples/lb-config.json")).expect("example");
    assert!(validator.is_valid(&json(&example)));
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
        assert_eq!(validator.is_valid(&value), clean, "{}", path.display());
        if clean {
            checked.0 += 1
        } else {
            checked.1 += 1
        }
    }
    assert!(checked.0 >= 3 && checked.1 >= 5, "{checked:?}");
    // The route file's lb-config.json (`routex build`) validates too.
    let built = routex(&["build", "examples/fleet.routes"]);
    assert!(validator.is_valid(&json(&built.stdout)));
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
    let validator = validator();
    let mut agreed = 0;
    for algorithm in Algorithm::ALL {
        for field in Field::ALL {
            for value in [sample(field), json!("wrong kind"), json!(null)] {
                let config =
                    json!({"models": {"m": {"algorithm": algorithm.name(), field.name(): value}}});
                let text = config.to_string();
                let clean = checker_errors(&text) == 0;
                assert_eq!(
                    validator.is_valid(&config),
                    clean,
                    "{text}: the checker finds {} error(s)",
                    checker_errors(&text)
                );
                agreed += 1;
            }
        }
        for name in [algorithm.name(), "nope"] {
            let config = json!({"default": name, "request_algorithms": {name: name}});
            assert_eq!(
                validator.is_valid(&config),
                checker_errors(&config.to_string()) == 0,
                "{config}"
            );
        }
    }
    assert_eq!(agreed, 6 * routex::ir::FIELDS.len() * 3);
    // Ranges the builder enforces.
    for (field, value, ok) in [
        ("sample_count", 64, true),
        ("sample_count", 65, false),
        ("sample_count", 0, false),
    ] {
        let config = json!({"models": {"m": {"algorithm": "power-of-n", field: value}}});
        assert_eq!(validator.is_valid(&config), ok, "{config}");
        assert_eq!(checker_errors(&config.to_string()) == 0, ok, "{config}");
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
    let validator = jsonschema::draft202012::options()
        .build(&routex_project::schema())
        .expect("the generated schema compiles");
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
    for (toml, value) in cases {
        let clean = !routex_project::parse("routex.toml", toml)
            .report
            .has_errors();
        assert_eq!(validator.is_valid(&value), clean, "{toml}");
    }
}
