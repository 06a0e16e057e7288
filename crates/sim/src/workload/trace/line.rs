//! One line of a trace, read on its own: the request it describes before
//! its blocks are interned, or the problem with it (in the user's words,
//! at the value it is about). Mooncake's JSONL lines here; the session
//! logs' lines in `workload::sessions`, which share these types.

use super::AffinityRule;
use routex::config::json::{Json, Node};
use serde::Deserialize;

/// A problem with one line, before its number is known.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct LineError {
    pub message: String,
    /// 1-based byte column in the trimmed line.
    pub column: Option<usize>,
    /// Bytes from `column`.
    pub width: usize,
}

impl LineError {
    pub(crate) fn new(message: impl Into<String>) -> Self {
        LineError {
            message: message.into(),
            column: None,
            width: 1,
        }
    }

    /// The value at fault is `width` bytes long (at least 1).
    pub(crate) fn wide(mut self, width: usize) -> Self {
        self.width = width.max(1);
        self
    }

    pub(crate) fn at(message: impl Into<String>, column: usize) -> Self {
        LineError {
            message: message.into(),
            column: Some(column),
            width: 1,
        }
    }
}

/// One request as a line describes it, before its blocks are interned.
pub(crate) struct LineRequest {
    pub timestamp_ms: f64,
    pub input: u64,
    pub output: u64,
    /// The prompt's prefix blocks, first first (raw ids).
    pub blocks: Vec<u64>,
    pub key: Option<String>,
}

/// One line of a Mooncake trace; other fields are ignored.
#[derive(Deserialize)]
struct MooncakeLine {
    timestamp: f64,
    input_length: u64,
    output_length: u64,
    hash_ids: Vec<u64>,
}

/// serde_json's message in the user's words, at the value it is about:
/// serde's column is where it stopped (the end of a string), so the
/// member of the line's object whose value holds that column is found in
/// the span-keeping tree.
pub(crate) fn json_line_error(text: &str, e: &serde_json::Error) -> LineError {
    let message = e.to_string();
    let message = match message.rfind(" at line ") {
        Some(i) => &message[..i],
        None => &message,
    };
    let mut error = LineError::at(routex::json_words::user_message(message), e.column().max(1));
    let at = e.column().saturating_sub(1);
    let span = match routex::config::json::parse(text) {
        Ok(Node {
            value: Json::Object(members),
            ..
        }) => members
            .iter()
            .find(|m| m.value.span.start <= at && at < m.value.span.end)
            .map(|m| m.value.span),
        // Not an object at all: the whole value.
        Ok(node) => Some(node.span),
        Err(_) => None,
    };
    if let Some(span) = span {
        error.column = Some(span.start + 1);
        error.width = (span.end - span.start).max(1);
    }
    error
}

/// The first line of a file read as Mooncake JSONL: `Some` (the one error
/// to report) when it is plainly another format.
pub(super) fn not_mooncake(text: &str) -> Option<String> {
    if text.starts_with('{') {
        return None;
    }
    let hint = if text.contains(',') {
        "it looks like CSV: a request log with session ids is read with \"format\": \"session-csv\""
    } else {
        "each line of a Mooncake trace is a JSON object with `timestamp`, `input_length`, `output_length` and `hash_ids`"
    };
    Some(format!(
        "the file is not a Mooncake JSONL trace: its first line is not a JSON object ({hint})"
    ))
}

pub(super) fn mooncake_line(text: &str, rule: AffinityRule) -> Result<LineRequest, LineError> {
    let line: MooncakeLine = serde_json::from_str(text).map_err(|e| json_line_error(text, &e))?;
    Ok(LineRequest {
        timestamp_ms: line.timestamp,
        input: line.input_length,
        output: line.output_length,
        key: rule.key(&line.hash_ids),
        blocks: line.hash_ids,
    })
}
