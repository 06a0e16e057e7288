//! JSON Schema validation by the reference implementation, Python's
//! `jsonschema` (Debian's `python3-jsonschema`, with `python3-rfc3987` for
//! the `uri` and `uri-reference` formats), run once per batch of
//! instances. A Rust validator crate would add about 30 crates and three
//! minutes of CPU to every cold test build; the Python one is what many
//! editors' and CI tools' schema checks are built on.
//!
//! The first of `$ROUTEX_PYTHON`, `python3` and `/usr/bin/python3` that
//! has both modules is used (a Python of one's own, such as pyenv's, may
//! shadow the Debian packages). Without one, the tests that need it say
//! they skipped,
//! unless `ROUTEX_REQUIRE_JSONSCHEMA` is set (`.ci/run` sets it once the
//! packages are installed), which makes a missing validator a failure.

use serde_json::{json, Value};
use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::OnceLock;

/// The schema dialect a document declares.
#[derive(Clone, Copy)]
pub enum Draft {
    /// SARIF 2.1.0's schema.
    Draft7,
    /// `routex schema`'s output.
    Draft202012,
}

/// Reads `{"schema", "draft", "formats", "instances"}` on stdin and prints
/// one list of errors (`message at /path`) per instance, or
/// `{"missing": WHAT}` when a format checker it was asked for is absent.
const SCRIPT: &str = r#"
import json, sys
import jsonschema
req = json.load(sys.stdin)
cls = {"7": jsonschema.Draft7Validator, "2020-12": jsonschema.Draft202012Validator}[req["draft"]]
cls.check_schema(req["schema"])
kwargs = {}
if req["formats"]:
    checker = getattr(cls, "FORMAT_CHECKER", None) or jsonschema.FormatChecker()
    for need in ("uri", "uri-reference"):
        if need not in checker.checkers:
            print(json.dumps({"missing": "format checker " + need + " (python3-rfc3987)"}))
            sys.exit(0)
    kwargs["format_checker"] = checker
v = cls(req["schema"], **kwargs)
out = [["%s at /%s" % (e.message, "/".join(str(p) for p in e.absolute_path)) for e in v.iter_errors(i)]
       for i in req["instances"]]
print(json.dumps(out))
"#;

/// The errors of each instance against `schema`, or `None` (after saying
/// why on stderr) when no validator is installed and none is required.
pub fn validate(
    schema: &Value,
    draft: Draft,
    formats: bool,
    instances: &[Value],
) -> Option<Vec<Vec<String>>> {
    let required = std::env::var_os("ROUTEX_REQUIRE_JSONSCHEMA").is_some();
    let skip = |why: String| {
        assert!(!required, "ROUTEX_REQUIRE_JSONSCHEMA is set but {why}");
        eprintln!("JSON Schema validation skipped: {why}");
        None
    };
    let request = json!({
        "schema": schema,
        "draft": match draft { Draft::Draft7 => "7", Draft::Draft202012 => "2020-12" },
        "formats": formats,
        "instances": instances,
    });
    let python = match interpreter() {
        Ok(python) => python,
        Err(why) => return skip(why.clone()),
    };
    let mut child = Command::new(python)
        .args(["-c", SCRIPT])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the interpreter starts again");
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(request.to_string().as_bytes())
            .expect("the request is written");
    }
    let out = child.wait_with_output().expect("python3 runs to the end");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the validator failed:\n{stderr}");
    let answer: Value = serde_json::from_slice(&out.stdout).expect("the validator prints JSON");
    if let Some(missing) = answer.get("missing").and_then(Value::as_str) {
        return skip(format!("{missing} is not installed"));
    }
    let lists = answer.as_array().expect("one list per instance");
    assert_eq!(lists.len(), instances.len());
    Some(
        lists
            .iter()
            .map(|errors| {
                errors
                    .as_array()
                    .expect("a list of errors")
                    .iter()
                    .map(|e| e.as_str().unwrap_or_default().to_string())
                    .collect()
            })
            .collect(),
    )
}

/// Whether each instance is valid, or `None` when validation is skipped.
pub fn valid(schema: &Value, draft: Draft, instances: &[Value]) -> Option<Vec<bool>> {
    validate(schema, draft, true, instances).map(|all| all.iter().map(Vec::is_empty).collect())
}

/// The first Python that imports `jsonschema` and `rfc3987` (probed once).
fn interpreter() -> &'static Result<String, String> {
    static FOUND: OnceLock<Result<String, String>> = OnceLock::new();
    FOUND.get_or_init(|| {
        let candidates = std::env::var("ROUTEX_PYTHON")
            .into_iter()
            .chain(["python3".to_string(), "/usr/bin/python3".to_string()]);
        for python in candidates {
            let ok = Command::new(&python)
                .args(["-c", "import jsonschema, rfc3987"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            if ok {
                return Ok(python);
            }
        }
        Err("no python3 with the jsonschema and rfc3987 modules \
             (Debian: python3-jsonschema python3-rfc3987)"
            .to_string())
    })
}
