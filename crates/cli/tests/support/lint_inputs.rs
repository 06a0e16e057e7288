//! Large lint inputs generated in code (shared by `benches/lint.rs` and
//! `tests/alloc_lint.rs`): nothing big is committed.

#![allow(dead_code)]

use std::fmt::Write;

/// An lb-config.json with `models` entries, one per line (about 100
/// bytes each, so 40,000 stay under the CLI's 4 MiB limit). With `errors`,
/// each entry has one mistake, cycling through an unknown key, a type
/// error, a negative integer and an unsupported field.
pub fn lb_config(models: usize, errors: bool) -> String {
    let mut text = String::with_capacity(models * 110);
    text.push_str("{\n  \"default\": \"power-of-n\",\n  \"models\": {\n");
    for i in 0..models {
        let mistake = match (errors, i % 4) {
            (false, _) => "",
            (true, 0) => ", \"sed\": \"x\"",
            (true, 1) => ", \"max_queued\": \"two\"",
            (true, 2) => ", \"fallback_max_queued\": -1",
            (true, _) => ", \"sample_count\": 4",
        };
        let comma = if i + 1 < models { "," } else { "" };
        let _ = writeln!(
            text,
            "    \"m{i}\": {{\"algorithm\": \"pulsar-wait-and-widen\", \"n\": 2, \
             \"seed\": \"s{i}\"{mistake}}}{comma}"
        );
    }
    text.push_str("  }\n}\n");
    text
}

/// One model entry with `keys` unknown keys on one line.
pub fn unknown_keys(keys: usize) -> String {
    let mut text = String::from("{\"models\": {\"m\": {\"algorithm\": \"pulsar\"");
    for i in 0..keys {
        let _ = write!(text, ", \"unknown_{i}\": {i}");
    }
    text.push_str("}}}\n");
    text
}

/// A route file of `lines` model lines, each with a syntax error (a
/// missing closing parenthesis) when `errors`.
pub fn route_file(lines: usize, errors: bool) -> String {
    let mut text = String::from("default = power-of-n\n");
    let close = if errors { "" } else { ")" };
    for i in 0..lines {
        let _ = writeln!(
            text,
            "model \"model-{i}\" = pulsar-wait-and-widen(seed=\"s{i}\", n=2, cache_affinity_wait_ms=100{close}"
        );
    }
    text
}

/// Two versions of a clean [`lb_config`] of `models` entries for `routex
/// diff`: in the new one every model's `n` changes, every fourth model is
/// renamed (one removed and one added) and `default` is another
/// algorithm, so every model differs.
pub fn lb_config_pair(models: usize) -> (String, String) {
    let old = lb_config(models, false);
    let mut new = String::with_capacity(old.len());
    for line in old.lines() {
        let line = line.replace("\"n\": 2", "\"n\": 3");
        let line = line.replace("\"default\": \"power-of-n\"", "\"default\": \"random\"");
        match line.trim_start().strip_prefix("\"m") {
            Some(rest) if rest.starts_with(|c: char| c.is_ascii_digit()) => {
                let id: String = rest.chars().take_while(char::is_ascii_digit).collect();
                let renamed = id.parse::<usize>().is_ok_and(|i| i % 4 == 0);
                if renamed {
                    new.push_str(&line.replacen(&format!("\"m{id}\""), &format!("\"n{id}\""), 1));
                } else {
                    new.push_str(&line);
                }
            }
            _ => new.push_str(&line),
        }
        new.push('\n');
    }
    (old, new)
}
