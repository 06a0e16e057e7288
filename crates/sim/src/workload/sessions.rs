//! Session traces (docs/simulator.md, "Session traces"): a request log with
//! one request per line, as CSV with a header or as JSONL, with the
//! columns
//!
//! - `timestamp_ms` or `timestamp_s` (exactly one of them),
//! - `input_tokens` (the whole prompt of this turn), `output_tokens`,
//! - `session_id` (a string or, in JSONL, an integer),
//! - optionally `prefix_group` and `prefix_tokens`: a prompt prefix shared
//!   by every session of the group (a tenant's system prompt), of that many
//!   tokens.
//!
//! Other columns are ignored. The prefix blocks a log does not record are
//! derived by one rule, so that a session's prompt grows turn by turn:
//! block j (of `block_tokens` tokens) of a request is
//!
//! - the group's block j while j < ⌊prefix_tokens / block_tokens⌋,
//! - else, when the block is full (j < ⌊input_tokens / block_tokens⌋), the
//!   session's block j: the same id in every turn of the session, so a
//!   turn reuses every full block of the turns before it,
//! - else (the last, partial block) a block of this turn only: appending
//!   to a prompt changes its last block.
//!
//! So no block is shared across sessions unless a prefix group says so.
//! The affinity key is the session's: `s` and the 16 hex digits of the
//! XXH3-64 of the session id (a bounded size whatever the id's).

use super::trace::line::{json_line_error, LineError, LineRequest};
use routex::check::did_you_mean;
use serde::Deserialize;
use std::collections::BTreeMap;
use xxhash_rust::xxh3::xxh3_64;

/// The longest session id or prefix group, in bytes.
pub const MAX_NAME_BYTES: usize = 256;
/// The most blocks one request may have (input_tokens / block_tokens):
/// a short line must not ask for an unbounded block list.
pub const MAX_BLOCKS_PER_REQUEST: u64 = 1 << 18;

/// The column names (CSV header, JSONL keys).
const TIMESTAMP_MS: &str = "timestamp_ms";
const TIMESTAMP_S: &str = "timestamp_s";
const INPUT: &str = "input_tokens";
const OUTPUT: &str = "output_tokens";
const SESSION: &str = "session_id";
const GROUP: &str = "prefix_group";
const PREFIX: &str = "prefix_tokens";
const COLUMNS: &[&str] = &[
    TIMESTAMP_MS,
    TIMESTAMP_S,
    INPUT,
    OUTPUT,
    SESSION,
    GROUP,
    PREFIX,
];

/// Reads the lines of one session log.
pub(crate) struct SessionReader {
    csv: bool,
    block_tokens: u64,
    /// The CSV header's column indices, once read.
    columns: Option<Columns>,
    /// Turns seen per session (by the id's hash: bounded per entry).
    turns: BTreeMap<u64, u64>,
}

#[derive(Clone, Copy)]
struct Columns {
    timestamp: usize,
    /// 1 for `timestamp_ms`, 1000 for `timestamp_s`.
    scale: f64,
    input: usize,
    output: usize,
    session: usize,
    group: Option<usize>,
    prefix: Option<usize>,
}

/// One line, typed.
struct Row {
    timestamp_ms: f64,
    input: u64,
    output: u64,
    session: String,
    group: Option<String>,
    prefix_tokens: u64,
}

/// A JSONL line; other keys are ignored.
#[derive(Deserialize)]
struct JsonRow {
    timestamp_ms: Option<f64>,
    timestamp_s: Option<f64>,
    input_tokens: u64,
    output_tokens: u64,
    session_id: Name,
    #[serde(default)]
    prefix_group: Option<Name>,
    #[serde(default)]
    prefix_tokens: Option<u64>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Name {
    Text(String),
    Number(u64),
}

impl Name {
    fn text(self) -> String {
        match self {
            Name::Text(s) => s,
            Name::Number(n) => n.to_string(),
        }
    }
}

impl SessionReader {
    pub(crate) fn csv(block_tokens: u64) -> Self {
        Self::new(true, block_tokens)
    }

    pub(crate) fn jsonl(block_tokens: u64) -> Self {
        Self::new(false, block_tokens)
    }

    fn new(csv: bool, block_tokens: u64) -> Self {
        SessionReader {
            csv,
            block_tokens: block_tokens.max(1),
            columns: None,
            turns: BTreeMap::new(),
        }
    }

    /// The first non-blank line: the CSV header (`Ok(true)`: consumed), or
    /// a JSONL line checked to be an object (`Ok(false)`: read it). `Err`
    /// is the one error of a file in another format.
    pub(crate) fn first_line(&mut self, text: &str) -> Result<bool, LineError> {
        if !self.csv {
            if text.starts_with('{') {
                return Ok(false);
            }
            return Err(LineError::new(format!(
                "the file is not a JSONL session log: its first line is not a JSON object{}",
                if text.contains(',') {
                    " (it looks like CSV: use \"format\": \"session-csv\")"
                } else {
                    ""
                }
            )));
        }
        if text.starts_with('{') {
            return Err(LineError::new(
                "the file is not a CSV session log: its first line is a JSON object \
                 (use \"format\": \"session-jsonl\", or \"mooncake\" for a Mooncake trace)",
            ));
        }
        let fields = split_csv(text)?;
        let names: Vec<&str> = fields.iter().map(|(_, f)| f.trim()).collect();
        let find = |name: &str| names.iter().position(|n| *n == name);
        let unknown: Vec<&str> = names
            .iter()
            .copied()
            .filter(|n| !COLUMNS.contains(n))
            .collect();
        let missing = |name: &str| {
            let hint = unknown
                .iter()
                .find(|u| u.len() <= MAX_NAME_BYTES && did_you_mean(u, [name]).is_some())
                .map(|u| format!(" (is `{u}` meant to be `{name}`?)"))
                .unwrap_or_default();
            LineError::new(format!(
                "the header has no `{name}` column{hint}; a session log's header names \
                 {TIMESTAMP_MS} (or {TIMESTAMP_S}), {INPUT}, {OUTPUT}, {SESSION} and optionally \
                 {GROUP} and {PREFIX}"
            ))
        };
        let (timestamp, scale) = match (find(TIMESTAMP_MS), find(TIMESTAMP_S)) {
            (Some(i), None) => (i, 1.0),
            (None, Some(i)) => (i, 1_000.0),
            (Some(_), Some(i)) => {
                return Err(LineError::at(
                    "give `timestamp_ms` or `timestamp_s`, not both",
                    fields[i].0,
                ))
            }
            (None, None) => return Err(missing(TIMESTAMP_MS)),
        };
        let columns = Columns {
            timestamp,
            scale,
            input: find(INPUT).ok_or_else(|| missing(INPUT))?,
            output: find(OUTPUT).ok_or_else(|| missing(OUTPUT))?,
            session: find(SESSION).ok_or_else(|| missing(SESSION))?,
            group: find(GROUP),
            prefix: find(PREFIX),
        };
        if columns.group.is_some() != columns.prefix.is_some() {
            return Err(LineError::new(
                "`prefix_group` and `prefix_tokens` go together: give both columns or neither",
            ));
        }
        self.columns = Some(columns);
        Ok(true)
    }

    /// One request line.
    pub(crate) fn line(&mut self, text: &str) -> Result<LineRequest, LineError> {
        let row = if self.csv {
            self.csv_row(text)?
        } else {
            json_row(text)?
        };
        self.derive(row)
    }

    fn csv_row(&self, text: &str) -> Result<Row, LineError> {
        let Some(c) = self.columns else {
            return Err(LineError::new("no header line before the first request"));
        };
        let fields = split_csv(text)?;
        let width = [
            Some(c.timestamp),
            Some(c.input),
            Some(c.output),
            Some(c.session),
            c.group,
            c.prefix,
        ]
        .into_iter()
        .flatten()
        .max()
        .unwrap_or(0)
            + 1;
        if fields.len() < width {
            return Err(LineError::new(format!(
                "{} field{} where the header needs at least {width}",
                fields.len(),
                if fields.len() == 1 { "" } else { "s" }
            )));
        }
        let get = |i: usize| (fields[i].0, fields[i].1.trim());
        let (col, ts) = get(c.timestamp);
        let timestamp: f64 = ts.parse().map_err(|_| {
            LineError::at(
                format!(
                    "`{}` must be a number, got \"{ts}\"",
                    if c.scale == 1.0 {
                        TIMESTAMP_MS
                    } else {
                        TIMESTAMP_S
                    }
                ),
                col,
            )
            .wide(fields[c.timestamp].1.len())
        })?;
        let integer = |name: &str, i: usize| {
            let (col, v) = get(i);
            v.parse::<u64>().map_err(|_| {
                LineError::at(
                    format!("`{name}` must be an integer from 0 to 2^64-1, got \"{v}\""),
                    col,
                )
                .wide(fields[i].1.len())
            })
        };
        let group = c
            .group
            .map(|i| get(i).1.to_string())
            .filter(|g| !g.is_empty());
        let prefix_tokens = match (c.prefix, &group) {
            (Some(i), Some(_)) => integer(PREFIX, i)?,
            _ => 0,
        };
        Ok(Row {
            timestamp_ms: timestamp * c.scale,
            input: integer(INPUT, c.input)?,
            output: integer(OUTPUT, c.output)?,
            session: get(c.session).1.to_string(),
            group,
            prefix_tokens,
        })
    }

    /// The blocks and key of a row (the rule of the module documentation).
    fn derive(&mut self, row: Row) -> Result<LineRequest, LineError> {
        if row.session.is_empty() || row.session.len() > MAX_NAME_BYTES {
            return Err(LineError::new(format!(
                "`session_id` must have 1 to {MAX_NAME_BYTES} bytes"
            )));
        }
        if row.group.as_ref().is_some_and(|g| g.len() > MAX_NAME_BYTES) {
            return Err(LineError::new(format!(
                "`prefix_group` must have at most {MAX_NAME_BYTES} bytes"
            )));
        }
        if row.prefix_tokens > row.input {
            return Err(LineError::new(format!(
                "`prefix_tokens` ({}) is more than the prompt's `input_tokens` ({})",
                row.prefix_tokens, row.input
            )));
        }
        let bt = self.block_tokens;
        let n = row.input.div_ceil(bt);
        if n > MAX_BLOCKS_PER_REQUEST {
            return Err(LineError::new(format!(
                "a prompt of {n} blocks ({} tokens / {bt} per block) is more than the \
                 {MAX_BLOCKS_PER_REQUEST} one request may have",
                row.input
            )));
        }
        let session_hash = xxh3_64(row.session.as_bytes());
        let turn = self.turns.entry(session_hash).or_insert(0);
        *turn += 1;
        let shared = match &row.group {
            Some(_) => row.prefix_tokens / bt,
            None => 0,
        };
        let full = row.input / bt;
        let blocks = (0..n)
            .map(|j| match &row.group {
                Some(group) if j < shared => block_id(b'g', group, j),
                _ if j < full => block_id(b's', &row.session, j),
                _ => block_id(b't', &row.session, *turn),
            })
            .collect();
        Ok(LineRequest {
            timestamp_ms: row.timestamp_ms,
            input: row.input,
            output: row.output,
            blocks,
            key: Some(format!("s{session_hash:016x}")),
        })
    }
}

fn json_row(text: &str) -> Result<Row, LineError> {
    let row: JsonRow = serde_json::from_str(text).map_err(|e| json_line_error(text, &e))?;
    let timestamp_ms = match (row.timestamp_ms, row.timestamp_s) {
        (Some(ms), None) => ms,
        (None, Some(s)) => s * 1_000.0,
        _ => {
            return Err(LineError::new(
                "give exactly one of `timestamp_ms` and `timestamp_s`",
            ))
        }
    };
    let group = row.prefix_group.map(Name::text).filter(|g| !g.is_empty());
    if group.is_some() != row.prefix_tokens.is_some() {
        return Err(LineError::new(
            "`prefix_group` and `prefix_tokens` go together: give both or neither",
        ));
    }
    Ok(Row {
        timestamp_ms,
        input: row.input_tokens,
        output: row.output_tokens,
        session: row.session_id.text(),
        group,
        prefix_tokens: row.prefix_tokens.unwrap_or(0),
    })
}

/// A block id: the kind (`g` group, `s` session, `t` a turn's own last
/// block), the name and the index, hashed.
fn block_id(kind: u8, name: &str, index: u64) -> u64 {
    let mut bytes = Vec::with_capacity(name.len() + 13);
    bytes.push(kind);
    bytes.extend_from_slice(&(name.len() as u32).to_le_bytes());
    bytes.extend_from_slice(name.as_bytes());
    bytes.extend_from_slice(&index.to_le_bytes());
    xxh3_64(&bytes)
}

/// The fields of a CSV line with the 1-based byte column each starts at:
/// separated by `,`, optionally in double quotes with `""` for a quote
/// (RFC 4180, without line breaks inside a field).
fn split_csv(line: &str) -> Result<Vec<(usize, String)>, LineError> {
    let mut fields = Vec::new();
    let bytes = line.as_bytes();
    let mut i = 0;
    loop {
        let start = i;
        let mut field = String::new();
        if bytes.get(i) == Some(&b'"') {
            i += 1;
            loop {
                match bytes.get(i) {
                    None => return Err(LineError::at("a quoted field is not closed", start + 1)),
                    Some(b'"') if bytes.get(i + 1) == Some(&b'"') => {
                        field.push('"');
                        i += 2;
                    }
                    Some(b'"') => {
                        i += 1;
                        break;
                    }
                    Some(_) => {
                        let rest = &line[i..];
                        let next = rest.find('"').unwrap_or(rest.len());
                        field.push_str(&rest[..next]);
                        i += next;
                    }
                }
            }
            if !matches!(bytes.get(i), None | Some(b',')) {
                return Err(LineError::at(
                    "text after a quoted field's closing quote",
                    i + 1,
                ));
            }
        } else {
            let rest = &line[i..];
            let next = rest.find(',').unwrap_or(rest.len());
            field.push_str(&rest[..next]);
            i += next;
        }
        fields.push((start + 1, field));
        if bytes.get(i) == Some(&b',') {
            i += 1;
        } else {
            return Ok(fields);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_fields_with_quotes_and_columns() {
        let f = split_csv(r#"1,"a,""b""",,x"#).expect("fields");
        let fields: Vec<(usize, &str)> = f.iter().map(|(c, s)| (*c, s.as_str())).collect();
        assert_eq!(fields, vec![(1, "1"), (3, "a,\"b\""), (13, ""), (14, "x")]);
        assert!(split_csv("\"open").is_err());
        assert_eq!(
            split_csv("a\"b\"x").map(|f| f.len()),
            Ok(1),
            "quotes only open a field"
        );
        assert!(split_csv("\"a\"b").is_err());
    }
}
