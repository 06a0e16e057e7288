//! `routex decide` end to end through the real binary (docs/contract.md 5.3).

use std::process::Command;

fn decide(args: &[&str]) -> (i32, String, String) {
    let dir = concat!(
        concat!(env!("CARGO_MANIFEST_DIR"), "/../.."),
        "/crates/cli/tests/inputs/decide/"
    );
    let args: Vec<String> = args
        .iter()
        .map(|a| match a.strip_prefix('@') {
            Some(file) => format!("{dir}{file}"),
            None => a.to_string(),
        })
        .collect();
    let out = Command::new(env!("CARGO_BIN_EXE_routex"))
        .arg("decide")
        .args(&args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn json_line(args: &[&str]) -> String {
    let mut all = vec!["--format", "json", "--rng-seed", "1"];
    all.extend_from_slice(args);
    let (code, stdout, stderr) = decide(&all);
    assert_eq!(code, 0, "{args:?}: {stderr}");
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    stdout.trim_end().to_string()
}

#[test]
fn decide_prints_each_documented_decision() {
    assert_eq!(
        json_line(&["--input", "@spec-example.json"]),
        r#"{"version": 1, "decision": "selected", "cluster": "c1", "rank_depth": 1}"#
    );
    // X = 300, every cluster full, 100 ms in: wait out the affinity wait.
    assert_eq!(
        json_line(&[
            "--input",
            "@full-primary.json",
            "--config",
            "@restrictive.routes"
        ]),
        r#"{"version": 1, "decision": "wait", "wait_ms": 200.0}"#
    );
    // Whole milliseconds print exactly (1101 - 100 = 1001 ms; computed
    // through seconds, f64 would print 1000.9999999999999).
    assert_eq!(
        json_line(&[
            "--input",
            "@full-primary.json",
            "--config",
            "@restrictive.routes",
            "pulsar-wait-and-widen;seed=v1;cache_affinity_wait_ms=1101;max_queue_time_floor_ms=1000;max_queue_time_ceil_ms=1000"
        ]),
        r#"{"version": 1, "decision": "wait", "wait_ms": 1001.0}"#
    );
    // No cluster reports max_input_tps: pulsar ranks nothing.
    assert_eq!(
        json_line(&["--input", "@no-max-tps.json", "pulsar"]),
        r#"{"version": 1, "decision": "unavailable"}"#
    );
}

#[test]
fn decide_reports_rejections_with_code_and_status() {
    // (30 + 420) / 150 = 3.0 s against limits 2.9 and 3.1.
    assert_eq!(
        json_line(&[
            "--input",
            "@input-work.json",
            "random;max_input_work_seconds=2.9"
        ]),
        r#"{"version": 1, "decision": "rejected", "code": "input_work_limit_exceeded", "status": 503}"#
    );
    assert!(json_line(&[
        "--input",
        "@input-work.json",
        "random;max_input_work_seconds=3.1"
    ])
    .contains(r#""decision": "selected""#));
    assert_eq!(
        json_line(&["--input", "@no-clusters.json"]),
        r#"{"version": 1, "decision": "rejected", "code": "no_eligible_candidates", "status": 404}"#
    );
    assert_eq!(
        json_line(&[
            "--input",
            "@full-primary.json",
            "--config",
            "@restrictive.routes",
            "power-of-n"
        ]),
        r#"{"version": 1, "decision": "rejected", "code": "unavailable", "status": 400}"#
    );
    // JSON is the default (docs/contract.md 5.3); human is asked for.
    let (code, stdout, _) = decide(&["--input", "@spec-example.json", "fastest"]);
    assert_eq!(code, 0);
    assert_eq!(
        stdout,
        "{\"version\": 1, \"decision\": \"rejected\", \"code\": \"unknown_method\", \"status\": 400}\n"
    );
    let (code, stdout, _) = decide(&[
        "--input",
        "@spec-example.json",
        "--format",
        "human",
        "fastest",
    ]);
    assert_eq!(code, 0);
    assert_eq!(
        stdout,
        "rejected: 400 unknown_method: unknown routing method 'fastest'\n"
    );
}

#[test]
fn decide_overrides_and_model_flag() {
    // A method-only override of the configured round-robin.
    assert_eq!(
        json_line(&[
            "--input",
            "@full-primary.json",
            "--config",
            "@restrictive.routes",
            "round_robin"
        ]),
        r#"{"version": 1, "decision": "selected", "cluster": "a", "rank_depth": 1}"#
    );
    // --model picks a listed model's set.
    let line = json_line(&[
        "--input",
        "@full-primary.json",
        "--config",
        "@restrictive.routes",
        "--model",
        "llama",
    ]);
    assert!(line.contains(r#""decision""#), "{line}");
    // An unlisted --model is a typo (it would silently decide with the
    // default set), with a did-you-mean as `check --model` gives.
    for (model, hint) in [
        ("lama", "; did you mean 'llama'?"),
        ("other", "; it lists 'llama'"),
    ] {
        let (code, stdout, stderr) = decide(&[
            "--input",
            "@full-primary.json",
            "--config",
            "@restrictive.routes",
            "--model",
            model,
        ]);
        assert_eq!((code, stdout.as_str()), (2, ""));
        assert!(
            stderr.ends_with(&format!(
                "restrictive.routes{hint} (omit --model to use the request's model)\n"
            )) && stderr.starts_with(&format!("routex: model '{model}' is not listed in ")),
            "{stderr}"
        );
    }
    // Either expression form.
    assert_eq!(
        json_line(&["--input", "@spec-example.json", r#"pulsar(seed="x")"#]),
        json_line(&["--input", "@spec-example.json", "pulsar;seed=x"]),
    );
}

#[test]
fn same_seed_same_decision() {
    let args = ["--input", "@input-work.json", "power-of-n;sample_count=1"];
    let first = json_line(&args);
    for _ in 0..3 {
        assert_eq!(json_line(&args), first);
    }
}

#[test]
fn unreadable_or_invalid_input_exits_2_with_one_line() {
    for args in [
        &["--input", "@truncated.json"][..],
        &["--input", "@missing-id.json"],
        &["--input", "@misspelt-field.json"],
        &["--input", "@bad-priority-key.json"],
        &["--input", "@does-not-exist.json"],
        &[
            "--input",
            "@spec-example.json",
            "--config",
            "@does-not-exist.routes",
        ],
        &[
            "--input",
            "@spec-example.json",
            "--config",
            "@truncated.json",
        ],
    ] {
        let (code, stdout, stderr) = decide(args);
        assert_eq!(code, 2, "{args:?}");
        assert!(stdout.is_empty(), "{args:?}: {stdout}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.starts_with("routex: "), "{stderr}");
    }
}

#[test]
fn embedding_docs_decide_examples_run() {
    let docs = include_str!("../../../../../docs/embedding.md");
    let mut commands = 0;
    let lines: Vec<&str> = docs.lines().collect();
    for pair in lines.windows(2) {
        let Some(command) = pair[0].strip_prefix("$ routex decide ") else {
            continue;
        };
        // Error examples (stderr shown with `2>&1`) run in the docs test.
        if command.ends_with("2>&1") {
            continue;
        }
        commands += 1;
        let words: Vec<String> = command
            .split(' ')
            .map(|w| {
                w.trim_matches('\'')
                    .replace("crates/cli/tests/inputs/decide/", "@")
            })
            .collect();
        let args: Vec<&str> = words.iter().map(String::as_str).collect();
        let (code, stdout, stderr) = decide(&args);
        assert_eq!(code, 0, "{command}: {stderr}");
        assert_eq!(stdout.trim_end(), pair[1], "{command}");
    }
    assert_eq!(commands, 4);
}

#[test]
fn decide_reads_like_every_command_and_names_the_file_in_positions() {
    let dir = concat!(
        concat!(env!("CARGO_MANIFEST_DIR"), "/../.."),
        "/crates/cli/tests/inputs/decide/"
    );
    let (code, _, stderr) = decide(&["--input", "@misspelt-field.json"]);
    assert_eq!(code, 2);
    let want = format!("routex: {dir}misspelt-field.json:1:40: unknown field `input_token`");
    assert!(stderr.starts_with(&want), "{stderr}");

    let scratch = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("decide-read");
    std::fs::create_dir_all(&scratch).unwrap();
    // Columns count from 1 here too: serde_json's column 0 at the end of
    // an empty file is column 1.
    let empty = scratch.join("empty.json");
    std::fs::write(&empty, "").unwrap();
    let (code, _, stderr) = decide(&["--input", empty.to_str().unwrap()]);
    assert_eq!(code, 2);
    let want = format!("routex: {}:1:1: ", empty.display());
    assert!(stderr.starts_with(&want), "{stderr}");
    let latin1 = scratch.join("latin1.json");
    std::fs::write(&latin1, b"{\"request\": {\"model\": \"caf\xe9\"}}").unwrap();
    let huge = scratch.join("huge.json");
    std::fs::write(&huge, vec![b' '; 4 * 1024 * 1024 + 1]).unwrap();
    for (path, tail) in [
        (&latin1, "latin1.json: not valid UTF-8 (byte 26)\n"),
        (
            &huge,
            "huge.json: file is larger than the 4 MiB input limit\n",
        ),
    ] {
        let (code, stdout, stderr) = decide(&["--input", path.to_str().unwrap()]);
        assert_eq!((code, stdout.as_str()), (2, ""));
        assert!(
            stderr.starts_with("routex: ") && stderr.ends_with(tail),
            "{stderr}"
        );
    }
}

#[test]
fn decide_input_dash_is_standard_input() {
    use std::io::Write;
    let text = std::fs::read_to_string(concat!(
        concat!(env!("CARGO_MANIFEST_DIR"), "/../.."),
        "/crates/cli/tests/inputs/decide/spec-example.json"
    ))
    .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_routex"))
        .args(["decide", "--input", "-", "--rng-seed", "1"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "{\"version\": 1, \"decision\": \"selected\", \"cluster\": \"c1\", \"rank_depth\": 1}\n"
    );
}
