//! The texts a new user met, each pinned: quoting help in both forms,
//! `unavailable` naming the model and its methods, and the models an
//! unlisted `--model` could have meant.

use super::run::{json, routex, scratch};

/// `(message, help)` of each finding of a JSON report.
fn said(stdout: &str) -> Vec<(String, String)> {
    json(stdout)["diagnostics"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|d| {
            (
                d["message"].as_str().unwrap_or("").to_string(),
                d["help"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

const WHY: &str = "(a value that starts with a digit but is not a number, or holds a character a bare word cannot, must be a quoted string)";

#[test]
fn a_value_that_cannot_stand_bare_gets_quoting_help_in_both_forms() {
    let header = routex(&["check", "--format", "json", "pulsar;seed=405b-v1"]);
    assert_eq!(
        said(&header.stdout),
        [(
            "RFC 8941 (P1/P2/P4/P8): not a valid structured-field item: `b` after the end of the item at byte 15 in routing expression 'pulsar;seed=405b-v1'".to_string(),
            format!("quote the value: seed=\"405b-v1\" {WHY}"),
        )]
    );
    let header = routex(&[
        "check",
        "--format",
        "json",
        "pulsar;seed=a@b;cache_affinity_wait_ms=5",
    ]);
    assert_eq!(
        said(&header.stdout)[0].1,
        format!("quote the value: seed=\"a@b\" {WHY}")
    );
    let call = routex(&["check", "--format", "json", "pulsar(seed=405b-v1)"]);
    assert_eq!(
        said(&call.stdout),
        [(
            "expected `,` or `)`, found `b-v1`".to_string(),
            format!("quote the value: seed = \"405b-v1\" {WHY}"),
        )]
    );
    let dir = scratch("rough-edges-quoting");
    let file = dir.join("fleet.routes");
    std::fs::write(
        &file,
        "default = round-robin\nmodel \"m\" = pulsar(\n    seed = 405b-v1,\n)\n",
    )
    .expect("write");
    let out = routex(&["lint", "--format", "json", file.to_str().expect("UTF-8")]);
    assert_eq!(
        said(&out.stdout),
        [(
            "expected `,` or `)`, found `b-v1`".to_string(),
            format!("quote the value: seed = \"405b-v1\" {WHY}"),
        )]
    );
    // Quoted, both forms are clean.
    for expr in ["pulsar;seed=\"405b-v1\"", "pulsar(seed=\"405b-v1\")"] {
        assert_eq!(routex(&["check", expr]).code, 0, "{expr}");
    }
    // An entry's `=` is not a parameter's: no quoting help for a method.
    std::fs::write(&file, "default = round robin\n").expect("write");
    let out = routex(&["lint", "--format", "json", file.to_str().expect("UTF-8")]);
    let helps = said(&out.stdout);
    assert!(!helps.is_empty());
    assert!(
        helps.iter().all(|(_, help)| !help.starts_with("quote")),
        "{helps:?}"
    );
}

/// Each form judges a bare value by its own token rule: a header's RFC 8941
/// token takes `/`, `:` and `*`, so the header accepts these values; the
/// route-file and call grammar's `token` does not, so both get the help.
#[test]
fn quoting_help_follows_each_forms_own_token_rule() {
    let dir = scratch("rough-edges-token-rule");
    let file = dir.join("fleet.routes");
    for value in ["a/b", "a:b", "x*y", "1.5.2"] {
        let header = format!("pulsar;seed={value}");
        if value == "1.5.2" {
            // Not a header token or number either (it starts with a digit,
            // and a decimal has one `.`): the header form's help, in its
            // own spelling.
            let out = routex(&["check", "--format", "json", &header]);
            assert_eq!(out.code, 1, "{header}");
            let helps: Vec<String> = said(&out.stdout).into_iter().map(|(_, h)| h).collect();
            assert_eq!(
                helps,
                [format!("quote the value: seed=\"{value}\" {WHY}")],
                "{header}"
            );
        } else {
            let out = routex(&["check", &header]);
            assert_eq!(out.code, 0, "{header}: {}", out.stdout);
        }
        let help = format!("quote the value: seed = \"{value}\" {WHY}");
        let call = format!("pulsar(seed={value})");
        let out = routex(&["check", "--format", "json", &call]);
        let helps: Vec<String> = said(&out.stdout).into_iter().map(|(_, h)| h).collect();
        assert_eq!(helps, std::slice::from_ref(&help), "{call}");
        std::fs::write(
            &file,
            format!("default = round-robin\nmodel \"m\" = pulsar(seed = {value})\n"),
        )
        .expect("write");
        let out = routex(&["lint", "--format", "json", file.to_str().expect("UTF-8")]);
        let helps: Vec<String> = said(&out.stdout).into_iter().map(|(_, h)| h).collect();
        assert_eq!(helps, [help], "route file with seed = {value}");
    }
    // What both grammars take bare gets no help, quoted or not.
    for expr in [
        "pulsar(seed=a.b-c_d)",
        "pulsar;seed=a.b-c_d",
        "pulsar(seed=\"a/b\")",
    ] {
        assert_eq!(routex(&["check", expr]).code, 0, "{expr}");
    }
}

#[test]
fn unavailable_names_the_model_and_its_methods_in_its_help() {
    let out = routex(&[
        "check",
        "--format",
        "json",
        "--config",
        "examples/fleet.routes",
        "--model",
        "llama-3-70b",
        "random",
    ]);
    assert_eq!(out.code, 1);
    assert_eq!(
        said(&out.stdout),
        [(
            // The message is stargate's; the help names the model.
            "routing method random is not configured for this model".to_string(),
            "the methods configured for model 'llama-3-70b': wait-and-widen, round-robin, pulsar, pulsar-wait-and-widen".to_string(),
        )]
    );
    let out = routex(&[
        "check",
        "--format",
        "json",
        "--config",
        "examples/fleet.routes",
        "random",
    ]);
    assert_eq!(
        said(&out.stdout),
        [(
            "routing method random is not configured for this model".to_string(),
            "the methods configured for the models the configuration does not list: power-of-n, wait-and-widen, pulsar".to_string(),
        )]
    );
}
