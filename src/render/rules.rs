//! What a code means, for SARIF's rule metadata: the one-line summary from
//! `Code::summary`, and the full description taken from the code's section
//! of docs/diagnostics.md (its first paragraph), so the catalogue stays the
//! one place a code is explained.

use crate::diag::Code;

/// The diagnostics catalogue, compiled in.
const CATALOGUE: &str = include_str!("../../docs/diagnostics.md");

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

/// The first paragraph of the code's `## code` section in markdown, without
/// its leading severity marker (`**error**, stargate code.`: the rule's
/// level says it), or the summary when the catalogue lacks the section (a
/// docs test forbids that).
pub fn description_markdown(code: Code) -> String {
    let Some(paragraph) = section_paragraph(CATALOGUE, code.as_str()) else {
        return code.summary().to_string();
    };
    match paragraph
        .strip_prefix("**")
        .and_then(|rest| rest.split_once(". "))
    {
        Some((_, description)) if !description.is_empty() => description.to_string(),
        _ => paragraph,
    }
}

/// The same paragraph as plain text: emphasis markers dropped.
pub fn description_text(code: Code) -> String {
    description_markdown(code).replace("**", "")
}

fn section_paragraph(catalogue: &str, name: &str) -> Option<String> {
    let mut lines = catalogue.lines();
    lines
        .find(|line| line.strip_prefix("## ").map(|h| h.trim().trim_matches('`')) == Some(name))?;
    let paragraph: Vec<&str> = lines
        .skip_while(|line| line.trim().is_empty())
        .take_while(|line| !line.trim().is_empty() && !line.starts_with('#'))
        .map(str::trim)
        .collect();
    (!paragraph.is_empty()).then(|| paragraph.join(" "))
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
    fn descriptions_drop_the_severity_marker() {
        let text = description_text(Code::DuplicateDefault);
        assert_eq!(text, "A route file sets `default` more than once.");
        assert!(description_markdown(Code::UnknownMethod).starts_with("The method is not"));
    }

    #[test]
    fn every_code_has_a_catalogue_paragraph() {
        for code in Code::ALL {
            let text = section_paragraph(CATALOGUE, code.as_str());
            assert!(text.is_some_and(|t| t.len() > 20), "{code}");
        }
        assert_eq!(
            section_paragraph("## a\n\nFirst\nline.\n\nSecond.\n## b\n", "a").as_deref(),
            Some("First line.")
        );
        assert_eq!(section_paragraph("## a\n## b\n", "a"), None);
    }
}
