//! What a document is to routex (a route file, an lb-config.json, a
//! simulator scenario, or something else), decided from its name, language
//! id and content; and the size up to which it is checked. Read by
//! `documents` (which keeps each document's kind) and `analysis` (which
//! checks it by kind).

/// Largest document checked: the CLI's 4 MiB input limit. A larger one
/// gets one diagnostic saying so; hover and completion still answer.
pub const MAX_CHECKED_BYTES: usize = 4 * 1024 * 1024;

/// What a document is to routex.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `*.routes`.
    Routes,
    /// An lb-config.json.
    Config,
    /// A simulator scenario (docs/simulator.md).
    Scenario,
    /// Any other file: no diagnostics, empty answers.
    Other,
}

/// How a kind was decided: by name it never changes; by content it is
/// decided again while the document is not yet a routex file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Decided {
    ByName,
    ByContent,
}

/// `*.routes` by name; `lb-config.json` by name; other JSON by a
/// `$schema` naming routex's schema, a scenario's keys, or the content rule
/// `routex lint` uses ([`routex::config::looks_like_lb_config`]).
pub(crate) fn classify(name: &str, language_id: &str, text: &str) -> (Kind, Decided) {
    if name.ends_with(".routes") || language_id == "routex" {
        return (Kind::Routes, Decided::ByName);
    }
    if name == "lb-config.json" {
        return (Kind::Config, Decided::ByName);
    }
    let json = name.ends_with(".json") || matches!(language_id, "json" | "jsonc");
    if !json {
        return (Kind::Other, Decided::ByName);
    }
    if text.len() > MAX_CHECKED_BYTES {
        return (Kind::Other, Decided::ByContent);
    }
    let top: Option<serde_json::Map<String, serde_json::Value>> = serde_json::from_str(text).ok();
    let key = |k: &str| top.as_ref().and_then(|m| m.get(k));
    let kind = if key("$schema")
        .and_then(|s| s.as_str())
        .is_some_and(routex::config::names_routex_schema)
    {
        Kind::Config
    } else if key("policies").is_some() && key("topology").is_some() {
        Kind::Scenario
    } else if routex::config::looks_like_lb_config(text) {
        Kind::Config
    } else {
        Kind::Other
    };
    (kind, Decided::ByContent)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_by_name_schema_and_content() {
        let k = |name: &str, text: &str| classify(name, "json", text).0;
        assert_eq!(k("fleet.routes", ""), Kind::Routes);
        assert_eq!(k("lb-config.json", "[1]"), Kind::Config);
        assert_eq!(
            k(
                "x.json",
                r#"{"$schema": "https://example.org/routex/lb-config.schema.json"}"#
            ),
            Kind::Config
        );
        // The rule the checker uses: the schema's $id or file name, not any
        // URL that mentions routex.
        let id = format!(r#"{{"$schema": "{}"}}"#, routex::config::SCHEMA_ID);
        assert_eq!(k("x.json", &id), Kind::Config);
        assert_eq!(
            k(
                "x.json",
                r#"{"$schema": "./.vscode/lb-config.schema.json"}"#
            ),
            Kind::Config
        );
        assert_eq!(
            k(
                "x.json",
                r#"{"$schema": "https://routex.example/package.schema.json"}"#
            ),
            Kind::Other
        );
        assert_eq!(k("x.json", r#"{"models": {}}"#), Kind::Config);
        assert_eq!(k("x.json", "{not json"), Kind::Config);
        assert_eq!(
            k("x.json", r#"{"policies": {}, "topology": {}}"#),
            Kind::Scenario
        );
        assert_eq!(k("package.json", r#"{"name": "x"}"#), Kind::Other);
        assert_eq!(classify("notes.txt", "plaintext", "{}").0, Kind::Other);
    }
}
