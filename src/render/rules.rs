//! What a code means, for SARIF's rule metadata: every text comes from the
//! code's row of the table (`diag::CODES`), the same row the generated parts
//! of docs/diagnostics.md are written from.

use crate::diag::Code;

/// Where the project's pages live (Cargo.toml `repository`).
pub const REPOSITORY: &str = env!("CARGO_PKG_REPOSITORY");

/// The catalogue entry of `code` on the web: `helpUri`.
pub fn help_uri(code: Code) -> String {
    format!(
        "{REPOSITORY}/blob/main/docs/diagnostics.md#{}",
        code.as_str()
    )
}

/// `not_applicable` → `NotApplicable`: SARIF's friendly rule name.
pub fn pascal_name(code: Code) -> String {
    code.as_str()
        .split('_')
        .map(|word| {
            let mut chars = word.chars();
            match chars.next() {
                Some(first) => first.to_ascii_uppercase().to_string() + chars.as_str(),
                None => String::new(),
            }
        })
        .collect()
}

/// The description as plain text: emphasis markers dropped.
pub fn description_text(code: Code) -> String {
    plain(code.info().description)
}

/// The rule's help as plain text: description, fix, and where the catalogue
/// entry is.
pub fn help_text(code: Code) -> String {
    let info = code.info();
    format!(
        "{}\n\nFix: {}\n\nSee docs/diagnostics.md#{} ({}).",
        plain(info.description),
        plain(info.help),
        info.name,
        help_uri(code)
    )
}

/// The rule's help in Markdown.
pub fn help_markdown(code: Code) -> String {
    let info = code.info();
    format!(
        "{}\n\n**Fix:** {}\n\nSee [`{}` in docs/diagnostics.md]({}).",
        info.description,
        info.help,
        info.name,
        help_uri(code)
    )
}

fn plain(markdown: &str) -> String {
    markdown.replace("**", "")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_pascal_case() {
        assert_eq!(pascal_name(Code::NotApplicable), "NotApplicable");
        assert_eq!(
            pascal_name(Code::NotRepresentableInRouteFile),
            "NotRepresentableInRouteFile"
        );
        assert_eq!(pascal_name(Code::Unavailable), "Unavailable");
    }

    #[test]
    fn help_joins_description_fix_and_link() {
        let text = help_text(Code::DuplicateDefault);
        assert!(text.starts_with("A route file sets `default` more than once.\n\nFix: Keep one `default` line.\n\nSee docs/diagnostics.md#duplicate_default ("));
        assert!(help_markdown(Code::DuplicateDefault).contains("**Fix:** Keep one `default` line."));
    }
}
