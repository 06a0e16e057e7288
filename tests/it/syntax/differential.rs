//! Differential test against `sfv` (RFC 8941): wherever stargate's header
//! rules defer to RFC 8941 (step 5), routex accepts exactly what sfv accepts.

use proptest::prelude::*;
use routex::syntax::{is_rfc8941_item, parse_header};

fn number() -> impl Strategy<Value = String> {
    ("-?", "[0-9]{0,17}", prop::option::of("[0-9]{0,5}")).prop_map(|(s, i, f)| match f {
        Some(f) => format!("{s}{i}.{f}"),
        None => format!("{s}{i}"),
    })
}

fn bare() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => "-?[0-9]{1,15}",
        2 => "-?[0-9]{1,12}\\.[0-9]{1,3}",
        2 => number(),
        3 => "\"[ -!#-\\[\\]-~]{0,8}\"",
        1 => "\"([ -!#-\\[\\]-~]|\\\\[\"\\\\]|\\\\[a-z]|[\t\u{e9}]){0,8}\"?",
        3 => "[*a-zA-Z][a-zA-Z0-9!#$%&'*+.^_`|~:/-]{0,8}",
        1 => "\\?[0-2]?",
        1 => ":[A-Za-z0-9+/=]{0,9}:?",
        1 => "@[0-9]{1,4}",
        1 => "%\"[a-z]{0,3}\"",
        1 => "",
        1 => " [a-z0-9]{1,3}",
    ]
}

fn header_like() -> impl Strategy<Value = String> {
    let name = prop_oneof![4 => "[a-z*][a-z0-9_.*-]{0,5}", 1 => "[A-Z1]"];
    let param = (
        " {0,1}",
        name,
        prop::option::weighted(0.9, bare()),
        prop_oneof![6 => Just(""), 1 => Just(" ")],
    );
    let junk = prop_oneof![8 => Just(String::new()), 1 => "[ a-z,;]{1,2}"];
    (
        " {0,1}",
        bare(),
        prop::collection::vec(param, 0..4),
        " {0,1}",
        junk,
    )
        .prop_map(|(lead, method, params, trail, junk)| {
            let mut s = format!("{lead}{method}");
            for (sp, name, value, after) in params {
                s.push(';');
                s.push_str(&sp);
                s.push_str(&name);
                if let Some(v) = value {
                    s.push('=');
                    s.push_str(&v);
                }
                s.push_str(after);
            }
            s.push_str(&trail);
            s.push_str(&junk);
            s
        })
}

fn sfv_accepts(text: &str) -> bool {
    sfv::Parser::parse_item(text.as_bytes()).is_ok()
}

/// Which step of 5.1 rejected the value: before RFC 8941 (1-4), at it (5),
/// or after it / not at all (6+).
fn routex_step(text: &str) -> u8 {
    match parse_header(text) {
        Ok(_) => 6,
        Err(errors) => {
            let d = &errors[0];
            let tag = d.message.split(':').next().unwrap_or("");
            match tag {
                "P7" | "P3" | "P9" | "P11" | "P6" | "P5" => 4,
                "P4" if d.message.contains("requires an explicit value") => 4,
                t if t.starts_with("RFC 8941") => 5,
                _ => 6,
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2048, ..ProptestConfig::default() })]

    #[test]
    fn rfc8941_item_parser_agrees_with_sfv(text in header_like()) {
        prop_assert_eq!(is_rfc8941_item(&text), sfv_accepts(&text), "{:?}", text);
    }

    #[test]
    fn header_step_5_agrees_with_sfv(text in header_like()) {
        if text.contains(';') {
            let step = routex_step(&text);
            if step >= 5 {
                prop_assert_eq!(step == 6, sfv_accepts(&text), "{:?}", text);
            }
        }
    }
}

#[test]
fn rfc8941_edge_cases_agree_with_sfv() {
    let cases = [
        "a",
        "a;b",
        "a;b=1",
        "a; b=1",
        "a ;b=1",
        "a;b= 1",
        "a;b=",
        "  a  ",
        "\ta",
        "a\t",
        "1",
        "-1",
        "-",
        "1.",
        "1.1234",
        "123456789012.123",
        "1234567890123.1",
        "999999999999999",
        "1000000000000000",
        "-999999999999999",
        "1e3",
        "\"a",
        "\"\\a\"",
        "\"\\\"\"",
        "\"é\"",
        "?1",
        "?2",
        ":AA==:",
        ":AA=:",
        ":AAA:",
        ":A:",
        ":====:",
        "::",
        ":AA",
        "*",
        "*a/b:c",
        "a;*=1",
        "a;b;c",
        "a;b=?0;c=:YQ==:",
        "@1",
        "%\"x\"",
        "a;B=1",
        "a;b=1 x",
        "a;b=\"x\"y",
        "",
        " ",
        "a;b=1;b=2",
    ];
    for text in cases {
        assert_eq!(is_rfc8941_item(text), sfv_accepts(text), "{text:?}");
    }
}

#[test]
fn the_generator_covers_both_outcomes() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let strategy = header_like();
    let (mut accepted, mut total) = (0, 0);
    for _ in 0..1000 {
        let text = strategy.new_tree(&mut runner).expect("value").current();
        total += 1;
        if sfv_accepts(&text) {
            accepted += 1;
        }
    }
    assert!(
        accepted * 10 > total && accepted * 10 < total * 9,
        "{accepted} of {total} accepted"
    );
}
