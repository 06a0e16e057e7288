//! Generated docs: docs/configuration.md's field table is regenerated from
//! the field table (src/ir/fields.rs) and must equal the committed one.
//! `ROUTEX_BLESS=1` rewrites the committed page instead of failing.

use std::path::Path;

const BEGIN: &str = "<!-- fields:begin";
const END: &str = "<!-- fields:end -->";

/// The page with the text between the markers replaced by `table`.
fn regenerate(page: &str, table: &str) -> Option<String> {
    let begin = page.find(BEGIN)?;
    let body = begin + page[begin..].find('\n')? + 1;
    let end = page.find(END)?;
    (end >= body).then(|| format!("{}{table}{}", &page[..body], &page[end..]))
}

#[test]
fn configuration_field_table_is_generated_from_the_field_table() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/configuration.md");
    let committed = std::fs::read_to_string(&path).expect("docs/configuration.md");
    let table = routex::ir::fields::markdown_table();
    let fresh = regenerate(&committed, &table).expect("the fields:begin/end markers");
    if std::env::var_os("ROUTEX_BLESS").is_some() {
        std::fs::write(&path, &fresh).expect("write docs/configuration.md");
        return;
    }
    assert!(
        fresh == committed,
        "docs/configuration.md's field table is stale: run ROUTEX_BLESS=1 cargo test \
         --test it -- config::generated"
    );
    // One row per field, in table order.
    for spec in routex::ir::FIELDS {
        assert!(
            table.contains(&format!("| `{}` |", spec.name)),
            "{}",
            spec.name
        );
    }
}

#[test]
fn regeneration_replaces_only_the_marked_part() {
    let page = "a\n<!-- fields:begin x -->\nold\n<!-- fields:end -->\nb\n";
    assert_eq!(
        regenerate(page, "new\n").as_deref(),
        Some("a\n<!-- fields:begin x -->\nnew\n<!-- fields:end -->\nb\n")
    );
    assert_eq!(regenerate("no markers", "t"), None);
}
