//! Messages in words a user reads (no Rust or serde type names), and help
//! that never leads to another diagnostic.

use super::load;
use routex::diag::Code;

#[test]
fn did_you_mean_names_the_canonical_algorithm_never_an_alias() {
    for (typo, want) in [
        ("power-of-tw", "power-of-n"),
        ("pulsar-multiregio", "pulsar-wait-and-widen"),
    ] {
        let (_, report) = load(&format!(r#"{{"default": "{typo}"}}"#));
        let d = &report.diagnostics[0];
        assert_eq!(d.code, Code::UnknownMethod);
        let help = d.help.as_deref().unwrap_or_default();
        assert!(
            help.starts_with(&format!("did you mean \"{want}\"?")),
            "{typo}: {help}"
        );
        // Following the advice loads without a warning.
        let (table, report) = load(&format!(r#"{{"default": "{want}"}}"#));
        assert!(table.is_some() && report.diagnostics.is_empty());
    }
    let (_, report) = routex::check::check_expression("arg:1", "power-of-tw", None, None);
    let help = report.diagnostics[0].help.as_deref().unwrap_or_default();
    assert!(
        help.contains("power-of-n") && !help.contains("power-of-two"),
        "{help}"
    );
}

#[test]
fn no_rust_or_serde_words_in_messages() {
    let field = |value: &str| {
        let json = format!(r#"{{"models": {{"m": {{"algorithm": "wait-and-widen", {value}}}}}}}"#);
        let (_, report) = load(&json);
        let d = &report.diagnostics[0];
        format!("{} {}", d.message, d.help.as_deref().unwrap_or_default())
    };
    for (value, want) in [
        (
            r#""max_queued": -1"#,
            "integer `-1` is negative, expected an integer from 0 to 2^64-1",
        ),
        (
            r#""max_queued": 100000000000000000000000"#,
            "integer `100000000000000000000000` is too large",
        ),
        (
            r#""max_queued": 1.5"#,
            "number `1.5`, expected an integer from 0 to 2^64-1",
        ),
        (r#""comparator": "fastest""#, "unknown comparator `fastest`"),
        (r#""seed": [1]"#, "invalid type: array, expected a string"),
        (r#""seed": {}"#, "invalid type: object, expected a string"),
    ] {
        let text = field(value);
        assert!(text.contains(want), "{value}: {text}");
        for serde_word in [
            "u64",
            "u32",
            "f64",
            "18446744073709551615",
            "floating point",
            "variant",
            "sequence",
        ] {
            assert!(!text.contains(serde_word), "{value}: {text}");
        }
    }
    // An expression value that is only too large says the range too.
    let (_, report) = routex::check::check_expression(
        "arg:1",
        "wait-and-widen(max_queued=99999999999999999999999)",
        None,
        None,
    );
    let message = &report.diagnostics[0].message;
    assert!(
        message.ends_with("expected an integer from 0 to 2^64-1"),
        "{message}"
    );
}

#[test]
fn an_entry_of_the_wrong_type_uses_stargates_words() {
    let (_, report) = load(r#"{"models": {"m": 3}}"#);
    assert_eq!(
        report.diagnostics[0].message,
        "invalid type: integer `3`, expected algorithm name or detailed config object"
    );
}

/// `$schema` is what editors add for `routex schema`'s output, but
/// stargate rejects unknown top-level fields (docs/stargate.md 4.1): the
/// key stays an error, whose help says where the schema goes. The editor
/// server reads the same values as naming routex's schema.
#[test]
fn a_schema_key_is_rejected_as_stargate_does_with_help() {
    for (value, names_routex) in [
        (routex::config::SCHEMA_ID.to_string(), true),
        ("./.vscode/lb-config.schema.json".to_string(), true),
        (
            "https://json.schemastore.org/package.json".to_string(),
            false,
        ),
    ] {
        assert_eq!(
            routex::config::names_routex_schema(&value),
            names_routex,
            "{value}"
        );
        let (table, report) = load(&format!(r#"{{"$schema": "{value}", "default": "random"}}"#));
        assert!(table.is_none(), "{value}");
        assert_eq!(report.diagnostics.len(), 1, "{value}");
        let d = &report.diagnostics[0];
        assert_eq!(d.code, Code::UnknownField);
        assert_eq!(&report.text[d.span.start..d.span.end], "\"$schema\"");
        assert_eq!(
            d.message,
            "unknown field `$schema`: stargate refuses to start with any top-level field but `default`, `request_algorithms` and `models`"
        );
        let help = d.help.as_deref().unwrap_or_default();
        assert_eq!(help.contains("json.schemas"), names_routex, "{help}");
        assert!(help.starts_with("remove it"), "{help}");
    }
}
