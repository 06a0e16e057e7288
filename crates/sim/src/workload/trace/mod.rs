//! Trace replay (docs/simulator.md, "Trace replay"): requests read from a
//! Mooncake JSONL trace, one request per line with `timestamp` (ms),
//! `input_length`, `output_length` and `hash_ids` (ids of the prompt's
//! prefix blocks; equal ids are a reusable prefix).
//!
//! The file is streamed line by line and never held whole; what is kept is
//! bounded by [`Limits`]. Offered load is swept by compressing time: a run
//! at `rate_rps` replays arrival t at t x native / rate, where native is the
//! trace's own rate. The affinity key a client would send is derived from
//! the first blocks ([`AffinityRule`]).

use super::sessions::SessionReader;
use super::{BlockSpan, Plan, PlanShape, PlannedRequest, WorkloadSource};
use crate::kernel::time::{from_secs, Micros};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use routex::config::json::{Json, Node};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::{BufRead, Read};
use std::sync::Arc;
use xxhash_rust::xxh3::xxh3_64;

/// The scenario's `trace` object.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceSpec {
    /// The JSONL file, relative to the scenario file's directory.
    pub path: String,
    /// One of [`FORMATS`].
    #[serde(default = "default_format")]
    pub format: String,
    /// Tokens per block of `hash_ids` (512 in the Mooncake traces).
    #[serde(default = "default_block_tokens")]
    pub block_tokens: u64,
    /// Time compression factors, one run each; the offered rate of a run is
    /// speed-up x the trace's native rate. Absent = use `rates_rps`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub speedups: Vec<f64>,
    /// Mooncake traces only (a session log's key is its session id);
    /// absent = [`AffinityRule::default`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub affinity_key: Option<AffinityRule>,
    /// Replays only the first this many requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_requests: Option<u64>,
    /// What a repetition of the trace (when it is shorter than warm-up +
    /// window at the offered rate) reuses of the earlier ones.
    #[serde(default, skip_serializing_if = "Repeat::is_fresh")]
    pub repeat: Repeat,
}

/// How a trace shorter than the run's horizon is repeated
/// (docs/simulator.md, "Steady-state measurement").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Repeat {
    /// Every repetition gets block ids and affinity keys no earlier
    /// repetition used: new users, so repetition invents no reuse.
    #[default]
    Fresh,
    /// Every repetition keeps the trace's block ids and keys: the same
    /// users come back, and their prefixes may still be cached.
    Same,
}

impl Repeat {
    fn is_fresh(&self) -> bool {
        *self == Repeat::Fresh
    }
}

/// The trace formats `trace.format` accepts: Mooncake JSONL, and request
/// logs with session ids as CSV or JSONL (`crates/sim/src/workload/sessions.rs`).
pub const FORMATS: &[&str] = &["mooncake", "session-csv", "session-jsonl"];

/// The format a trace file's first non-blank line suggests: a JSON object
/// with `hash_ids` is Mooncake, another JSON object a JSONL session log,
/// anything else a CSV session log (`routex sim init --trace`).
pub fn guess_format(first_line: &str) -> &'static str {
    let line = first_line.trim();
    match line.starts_with('{') {
        true if line.contains("\"hash_ids\"") => "mooncake",
        true => "session-jsonl",
        false => "session-csv",
    }
}

fn default_format() -> String {
    "mooncake".into()
}
fn default_block_tokens() -> u64 {
    512
}

/// How a request's `x-cache-affinity-key` is derived: `t` + the XXH3-64 (hex)
/// of its first `first_blocks` block ids, as little-endian u64s (all of them
/// when it has fewer). `first_blocks: 0` sends no key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AffinityRule {
    pub first_blocks: u32,
}

impl Default for AffinityRule {
    /// Two blocks: every conversation of the Mooncake traces shares block 0,
    /// so one block would put every request on one key.
    fn default() -> Self {
        AffinityRule { first_blocks: 2 }
    }
}

impl AffinityRule {
    /// The key of a request whose raw block ids are `ids`; `None` = no key.
    pub fn key(self, ids: &[u64]) -> Option<String> {
        if self.first_blocks == 0 {
            return None;
        }
        let n = ids.len().min(self.first_blocks as usize);
        let bytes: Vec<u8> = ids[..n].iter().flat_map(|id| id.to_le_bytes()).collect();
        Some(format!("t{:016x}", xxh3_64(&bytes)))
    }
}

/// What a trace may hold in memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    pub requests: usize,
    /// Σ blocks over the requests.
    pub block_refs: usize,
    /// Distinct blocks (each engine v2 cache indexes them with a `u32`).
    pub distinct_blocks: usize,
    pub line_bytes: usize,
    /// Malformed lines reported before reading stops.
    pub errors: usize,
}

impl Default for Limits {
    /// About 300 MB at the worst: 4 M requests, 64 M block references,
    /// 16 M distinct blocks, 1 MiB per line.
    fn default() -> Self {
        Limits {
            requests: 4_000_000,
            block_refs: 64 << 20,
            distinct_blocks: 1 << 24,
            line_bytes: 1 << 20,
            errors: 20,
        }
    }
}

/// A problem with one line (1-based) of the trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceError {
    pub line: u64,
    /// The 1-based byte column in the line, when one value is at fault.
    pub column: Option<usize>,
    /// The value's length in bytes from `column` (at least 1).
    pub width: usize,
    pub message: String,
}

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

enum Format {
    Mooncake(AffinityRule),
    Sessions(SessionReader),
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
fn not_mooncake(text: &str) -> Option<String> {
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

fn mooncake_line(text: &str, rule: AffinityRule) -> Result<LineRequest, LineError> {
    let line: MooncakeLine = serde_json::from_str(text).map_err(|e| json_line_error(text, &e))?;
    Ok(LineRequest {
        timestamp_ms: line.timestamp,
        input: line.input_length,
        output: line.output_length,
        key: rule.key(&line.hash_ids),
        blocks: line.hash_ids,
    })
}

/// Why a request was not kept.
enum Stop {
    /// This line only.
    Line(String),
    /// A bound of [`Limits`]: reading stops.
    Bound(String),
}

/// The requests read so far, their interned blocks and keys.
#[derive(Default)]
struct Builder {
    /// How messages name the timestamp, input and output of a line.
    names: [&'static str; 3],
    requests: Vec<TraceRequest>,
    blocks: Vec<u32>,
    intern: BTreeMap<u64, u32>,
    keys: BTreeMap<String, u32>,
    key_names: Vec<String>,
    first_ms: Option<f64>,
}

impl Builder {
    fn push(&mut self, line: LineRequest, limits: &Limits) -> Result<(), Stop> {
        let [timestamp, input, output] = self.names;
        if !(line.timestamp_ms.is_finite() && line.timestamp_ms >= 0.0) {
            return Err(Stop::Line(format!(
                "{timestamp} must be a finite number of ms >= 0"
            )));
        }
        if line.input == 0 || line.input > MAX_INPUT {
            return Err(Stop::Line(format!(
                "{input} must be in 1..={MAX_INPUT}, got {}",
                line.input
            )));
        }
        if line.output > MAX_OUTPUT {
            return Err(Stop::Line(format!(
                "{output} must be at most {MAX_OUTPUT}, got {}",
                line.output
            )));
        }
        let first = *self.first_ms.get_or_insert(line.timestamp_ms);
        if line.timestamp_ms < first {
            return Err(Stop::Line(format!(
                "{timestamp} {} is before the first request's {first}",
                line.timestamp_ms
            )));
        }
        if self.requests.len() >= limits.requests
            || self.blocks.len() + line.blocks.len() > limits.block_refs
        {
            return Err(Stop::Bound(format!(
                "the trace is larger than the simulator holds: at most {} requests and {} block ids in all",
                limits.requests, limits.block_refs
            )));
        }
        let start = self.blocks.len() as u32;
        for &id in &line.blocks {
            let next = self.intern.len() as u32;
            let dense = *self.intern.entry(id).or_insert(next);
            self.blocks.push(dense);
        }
        if self.intern.len() > limits.distinct_blocks {
            return Err(Stop::Bound(format!(
                "more than {} distinct block ids",
                limits.distinct_blocks
            )));
        }
        let key = match line.key {
            Some(name) => match self.keys.get(&name) {
                Some(&k) => k,
                None => {
                    let k = self.key_names.len() as u32;
                    self.keys.insert(name.clone(), k);
                    self.key_names.push(name);
                    k
                }
            },
            None => u32::MAX,
        };
        self.requests.push(TraceRequest {
            at_us: from_secs((line.timestamp_ms - first) / 1_000.0),
            input: line.input,
            output: line.output,
            key,
            blocks: BlockSpan {
                start,
                len: line.blocks.len() as u32,
            },
        });
        Ok(())
    }
}

#[derive(Clone, Copy, Debug)]
struct TraceRequest {
    /// From the first request's timestamp.
    at_us: Micros,
    input: u64,
    output: u64,
    key: u32,
    blocks: BlockSpan,
}

/// A trace read into memory, shared by every run of a scenario.
#[derive(Clone, Debug)]
pub struct Trace {
    requests: Vec<TraceRequest>,
    key_names: Arc<[String]>,
    blocks: Arc<[u32]>,
    block_ids: u32,
    block_tokens: u64,
    repeat: Repeat,
    /// With `max_requests`: the requests the file holds (non-blank lines).
    file_requests: Option<u64>,
}

/// Largest sizes a request may ask for (the synthetic workload's bounds).
const MAX_INPUT: u64 = 1_000_000_000;
const MAX_OUTPUT: u64 = 1_000_000;

impl Trace {
    /// Reads a trace in `spec.format` (docs/simulator.md, "Trace replay"
    /// and "Session traces"). Blank lines are skipped. Errors name their
    /// line; reading stops after `limits.errors` of them, at the first
    /// bound exceeded, or at a first line that shows the file is in
    /// another format (one error, not one per line).
    pub fn read(
        mut reader: impl BufRead,
        spec: &TraceSpec,
        limits: Limits,
    ) -> Result<Trace, Vec<TraceError>> {
        let mut format = match spec.format.as_str() {
            "session-csv" => Format::Sessions(SessionReader::csv(spec.block_tokens)),
            "session-jsonl" => Format::Sessions(SessionReader::jsonl(spec.block_tokens)),
            _ => Format::Mooncake(spec.affinity_key.unwrap_or_default()),
        };
        let mut errors = Vec::new();
        let mut b = Builder {
            names: match format {
                Format::Mooncake(_) => ["`timestamp`", "`input_length`", "`output_length`"],
                Format::Sessions(_) => ["the timestamp in ms", "`input_tokens`", "`output_tokens`"],
            },
            ..Builder::default()
        };
        let mut buf = Vec::new();
        let mut line_no = 0u64;
        let mut seen_content = false;
        let max = spec.max_requests.unwrap_or(u64::MAX);
        let mut file_requests = None;
        loop {
            if b.requests.len() as u64 >= max {
                file_requests = Some(max + count_lines(&mut reader));
                break;
            }
            if errors.len() >= limits.errors {
                break;
            }
            buf.clear();
            line_no += 1;
            let err = |message: String| TraceError {
                line: line_no,
                column: None,
                width: 1,
                message,
            };
            // A bounded read: a line longer than the limit is an error, not
            // an allocation of its size.
            let read = BufRead::read_until(
                &mut Read::take(&mut reader, limits.line_bytes as u64 + 1),
                b'\n',
                &mut buf,
            );
            match read {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) => {
                    errors.push(err(format!("cannot read: {e}")));
                    break;
                }
            }
            if buf.len() > limits.line_bytes && buf.last() != Some(&b'\n') {
                errors.push(err(format!("line longer than {} bytes", limits.line_bytes)));
                break;
            }
            let raw = match std::str::from_utf8(&buf) {
                Ok(t) => t,
                Err(e) => {
                    errors.push(err(format!(
                        "not valid UTF-8 (byte {})",
                        e.valid_up_to() + 1
                    )));
                    continue;
                }
            };
            let text = raw.trim();
            if text.is_empty() {
                continue;
            }
            let lead = raw.len() - raw.trim_start().len();
            let first = !seen_content;
            seen_content = true;
            let parsed = match &mut format {
                Format::Mooncake(rule) => {
                    if first {
                        if let Some(message) = not_mooncake(text) {
                            errors.push(err(message));
                            break;
                        }
                    }
                    mooncake_line(text, *rule)
                }
                Format::Sessions(reader) => {
                    if first {
                        match reader.first_line(text) {
                            Ok(true) => continue,
                            Ok(false) => {}
                            Err(bad) => {
                                errors.push(TraceError {
                                    line: line_no,
                                    column: bad.column.map(|c| c + lead),
                                    width: bad.width,
                                    message: bad.message,
                                });
                                break;
                            }
                        }
                    }
                    reader.line(text)
                }
            };
            let request = match parsed {
                Ok(r) => r,
                Err(bad) => {
                    errors.push(TraceError {
                        line: line_no,
                        column: bad.column.map(|c| c + lead),
                        width: bad.width,
                        message: bad.message,
                    });
                    continue;
                }
            };
            match b.push(request, &limits) {
                Ok(()) => {}
                Err(Stop::Line(message)) => errors.push(err(message)),
                Err(Stop::Bound(message)) => {
                    errors.push(err(message));
                    break;
                }
            }
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        if b.requests.is_empty() {
            return Err(vec![TraceError {
                line: line_no,
                column: None,
                width: 1,
                message: "the trace holds no request".into(),
            }]);
        }
        let mut requests = b.requests;
        // Replay in time order; equal times keep the file's order.
        requests.sort_by_key(|r| r.at_us);
        Ok(Trace {
            requests,
            key_names: b.key_names.into(),
            block_ids: b.intern.len() as u32,
            blocks: b.blocks.into(),
            block_tokens: spec.block_tokens,
            repeat: spec.repeat,
            file_requests,
        })
    }

    /// The requests the file holds when `max_requests` cut it (`None`
    /// when every request was read).
    pub fn file_requests(&self) -> Option<u64> {
        self.file_requests
            .filter(|&n| n > self.requests.len() as u64)
    }

    /// The time from one repetition's first arrival to the next one's, at
    /// speed-up 1: the span plus one mean gap, so the request rate over
    /// repetitions stays the native rate's (n - 1) / n.
    fn period_us(&self) -> f64 {
        let n = self.requests.len() as f64;
        let span = self.span_s() * 1e6;
        if n > 1.0 {
            span * n / (n - 1.0)
        } else {
            span
        }
    }

    /// How a run at `rate_rps` over `horizon_s` replays the trace: the
    /// requests it plans and how many times the trace starts (1 = no
    /// repetition).
    pub fn replay(&self, rate_rps: f64, horizon_s: f64) -> Replay {
        let mut out = Replay::default();
        if rate_rps.is_nan() || rate_rps <= 0.0 || self.requests.is_empty() {
            return out;
        }
        let scale = self.native_rps() / rate_rps;
        let horizon = horizon_s * 1e6;
        let period = self.period_us() * scale;
        let full = if period > 0.0 {
            (horizon / period).floor()
        } else {
            0.0
        };
        let full = full.min(u32::MAX as f64) as u64;
        let cut_at = horizon - full as f64 * period;
        let partial = self
            .requests
            .partition_point(|r| ((r.at_us as f64) * scale).round() < cut_at)
            as u64;
        out.requests = full
            .saturating_mul(self.requests.len() as u64)
            .saturating_add(partial);
        out.repetitions = full + u64::from(partial > 0);
        out
    }
}

/// [`Trace::replay`]'s answer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Replay {
    pub requests: u64,
    /// Times the trace starts within the horizon (1 = played once, maybe
    /// in part).
    pub repetitions: u64,
}

/// Non-blank lines left in a reader (cheap: no parsing), saturating.
fn count_lines(reader: &mut impl BufRead) -> u64 {
    let mut n = 0u64;
    let mut blank = true;
    loop {
        let consumed = match reader.fill_buf() {
            Ok([]) | Err(_) => break,
            Ok(buf) => {
                for &b in buf {
                    if b == b'\n' {
                        n = n.saturating_add(u64::from(!blank));
                        blank = true;
                    } else if !b.is_ascii_whitespace() {
                        blank = false;
                    }
                }
                buf.len()
            }
        };
        reader.consume(consumed);
    }
    n + u64::from(!blank)
}

impl Trace {
    pub fn len(&self) -> usize {
        self.requests.len()
    }

    /// From the first arrival to the last.
    pub fn span_s(&self) -> f64 {
        self.requests.last().map_or(0, |r| r.at_us) as f64 / 1e6
    }

    /// Requests per second at speed-up 1 (n over the span).
    pub fn native_rps(&self) -> f64 {
        self.requests.len() as f64 / self.span_s()
    }

    pub fn distinct_keys(&self) -> usize {
        self.key_names.len()
    }

    pub fn block_ids(&self) -> u32 {
        self.block_ids
    }

    /// Block references over all requests.
    pub fn block_refs(&self) -> usize {
        self.blocks.len()
    }

    pub fn repeat(&self) -> Repeat {
        self.repeat
    }
}

impl WorkloadSource for Trace {
    /// Compresses time by rate / native rate and repeats the trace until
    /// the horizon: repetition k starts k periods (span plus one mean gap)
    /// after the first, with fresh block ids and keys unless the trace
    /// says `"repeat": "same"`. Per request, in replay order, the
    /// `WORKLOAD` stream draws the entry router, the TTFT jitter and the
    /// decode rate, so every speed-up and policy sees the same draws.
    fn plan(&self, shape: &PlanShape<'_>, rng: &mut ChaCha8Rng) -> Plan {
        let scale = if shape.rate_rps > 0.0 {
            self.native_rps() / shape.rate_rps
        } else {
            f64::INFINITY
        };
        let horizon = from_secs(shape.horizon_s);
        let mut total = 0.0;
        let router_cdf: Vec<f64> = shape
            .router_weights
            .iter()
            .map(|w| {
                total += w.max(0.0);
                total
            })
            .collect();
        let replay = self.replay(shape.rate_rps, shape.horizon_s);
        let reps = replay.repetitions.max(1);
        let fresh = self.repeat == Repeat::Fresh && reps > 1;
        let mut requests = Vec::with_capacity(replay.requests.min(50_000_000) as usize);
        let keys = self.key_names.len() as u32;
        let period = self.period_us() * scale;
        let mut used = 0u64;
        'reps: for k in 0..reps {
            if router_cdf.is_empty() || !scale.is_finite() {
                break;
            }
            let offset = k as f64 * period;
            let (block_shift, key_shift) = if fresh {
                ((k as usize * self.blocks.len()) as u32, k as u32 * keys)
            } else {
                (0, 0)
            };
            for r in &self.requests {
                let arrival = (offset + (r.at_us as f64 * scale).round()).round() as Micros;
                if arrival >= horizon {
                    break 'reps;
                }
                let u: f64 = rng.random();
                let router = router_cdf
                    .partition_point(|&c| c <= u * total)
                    .min(router_cdf.len() - 1);
                let jitter_ms = shape.ttft_jitter_ms * rng.random::<f64>();
                let [lo, hi] = shape.decode_tps;
                let decode_tps = lo + (hi - lo) * rng.random::<f64>();
                used = k + 1;
                requests.push(PlannedRequest {
                    arrival,
                    key: if r.key == u32::MAX {
                        r.key
                    } else {
                        r.key + key_shift
                    },
                    input: r.input,
                    output: r.output,
                    router: router as u32,
                    jitter_ms,
                    decode_tps,
                    blocks: BlockSpan {
                        start: r.blocks.start + block_shift,
                        len: r.blocks.len,
                    },
                });
            }
        }
        let (key_names, blocks, block_ids) = if fresh && used > 1 {
            self.fresh_ids(used as usize)
        } else {
            (
                Arc::clone(&self.key_names),
                Arc::clone(&self.blocks),
                self.block_ids,
            )
        };
        Plan {
            requests,
            key_names,
            blocks,
            block_ids,
            block_tokens: self.block_tokens,
            end: horizon,
            conversations: None,
        }
    }
}

impl Trace {
    /// Keys, block list and block-id count for `reps` repetitions with
    /// fresh ids: repetition k's block ids are the trace's plus k x the
    /// trace's distinct blocks, its keys the trace's with `~k` appended.
    fn fresh_ids(&self, reps: usize) -> (Arc<[String]>, Arc<[u32]>, u32) {
        let mut names = Vec::with_capacity(self.key_names.len() * reps);
        let mut blocks = Vec::with_capacity(self.blocks.len() * reps);
        for k in 0..reps {
            let shift = k as u32 * self.block_ids;
            blocks.extend(self.blocks.iter().map(|b| b + shift));
            names.extend(self.key_names.iter().map(|name| {
                if k == 0 {
                    name.clone()
                } else {
                    format!("{name}~{k}")
                }
            }));
        }
        (
            names.into(),
            blocks.into(),
            self.block_ids.saturating_mul(reps as u32),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::rng::{stream, Stream};

    fn spec() -> TraceSpec {
        TraceSpec {
            path: "t.jsonl".into(),
            format: default_format(),
            block_tokens: 512,
            speedups: Vec::new(),
            affinity_key: None,
            max_requests: None,
            repeat: Repeat::Fresh,
        }
    }

    const GOOD: &str = r#"{"timestamp": 0, "input_length": 1000, "output_length": 10, "hash_ids": [0, 1]}
{"timestamp": 500, "input_length": 1500, "output_length": 20, "hash_ids": [0, 1, 7]}

{"timestamp": 2000, "input_length": 600, "output_length": 5, "hash_ids": [0, 9], "extra": true}
"#;

    #[test]
    fn reads_requests_blocks_and_keys() {
        let t = Trace::read(GOOD.as_bytes(), &spec(), Limits::default()).expect("good");
        assert_eq!(t.len(), 3);
        assert_eq!(t.span_s(), 2.0);
        assert_eq!(t.native_rps(), 1.5);
        assert_eq!(t.block_ids(), 4, "0, 1, 7, 9 interned densely");
        assert_eq!(&t.blocks[..], &[0, 1, 0, 1, 2, 0, 3]);
        assert_eq!(t.distinct_keys(), 2, "[0, 1] twice, [0, 9] once");
        assert_eq!(t.requests[0].key, t.requests[1].key);
        assert_eq!(
            AffinityRule::default().key(&[0, 1, 7]),
            AffinityRule::default().key(&[0, 1])
        );
        assert_eq!(AffinityRule { first_blocks: 0 }.key(&[0]), None);
    }

    #[test]
    fn malformed_lines_are_errors_with_their_line_numbers() {
        let text = "{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 1, \"hash_ids\": [0]}\n\
                    {\"timestamp\": 1, \"input_length\": 10}\n\
                    not json\n\
                    {\"timestamp\": -5, \"input_length\": 10, \"output_length\": 1, \"hash_ids\": []}\n\
                    {\"timestamp\": 3, \"input_length\": 0, \"output_length\": 1, \"hash_ids\": []}\n";
        let e = Trace::read(text.as_bytes(), &spec(), Limits::default()).unwrap_err();
        let lines: Vec<u64> = e.iter().map(|e| e.line).collect();
        assert_eq!(lines, vec![2, 3, 4, 5]);
        assert!(
            e[0].message.contains("missing field `output_length`"),
            "{}",
            e[0].message
        );
        assert_eq!(e[1].column, Some(2), "{}", e[1].message);
        assert!(e[2].message.contains("timestamp"));
        assert!(e[3].message.contains("input_length"));
    }

    #[test]
    fn bounds_stop_reading() {
        let tight = Limits {
            requests: 2,
            ..Limits::default()
        };
        let e = Trace::read(GOOD.as_bytes(), &spec(), tight).unwrap_err();
        assert_eq!(e[0].line, 4);
        let short = Limits {
            line_bytes: 40,
            ..Limits::default()
        };
        let e = Trace::read(GOOD.as_bytes(), &spec(), short).unwrap_err();
        assert_eq!((e.len(), e[0].line), (1, 1));
        assert!(e[0].message.contains("longer than 40 bytes"));
        let few = Limits {
            errors: 2,
            ..Limits::default()
        };
        let e = Trace::read("{x\n{y\n{z\n".as_bytes(), &spec(), few).unwrap_err();
        assert_eq!(e.len(), 2, "reading stops after the error limit");
        let e = Trace::read("\n\n".as_bytes(), &spec(), Limits::default()).unwrap_err();
        assert!(e[0].message.contains("no request"));
        let mut first_two = spec();
        first_two.max_requests = Some(2);
        let t = Trace::read(GOOD.as_bytes(), &first_two, Limits::default()).expect("prefix");
        assert_eq!(t.len(), 2);
    }

    #[test]
    fn compression_scales_arrivals_and_keeps_blocks() {
        let t = Trace::read(GOOD.as_bytes(), &spec(), Limits::default()).expect("good");
        let shape = |rate_rps, horizon_s| PlanShape {
            rate_rps,
            horizon_s,
            router_weights: &[1.0, 1.0],
            ttft_jitter_ms: 20.0,
            decode_tps: [128.0, 200.0],
        };
        // Horizons within one pass of the trace (no repetition).
        let native = t.plan(&shape(1.5, 2.5), &mut stream(1, Stream::Workload));
        let arrivals: Vec<Micros> = native.requests.iter().map(|r| r.arrival).collect();
        assert_eq!(arrivals, vec![0, 500_000, 2_000_000]);
        assert_eq!(native.end, 2_500_000);
        let fast = t.plan(&shape(6.0, 0.6), &mut stream(1, Stream::Workload));
        let arrivals: Vec<Micros> = fast.requests.iter().map(|r| r.arrival).collect();
        assert_eq!(arrivals, vec![0, 125_000, 500_000], "4 x faster");
        assert_eq!(fast.blocks_of(&fast.requests[1]), &[0, 1, 2]);
        assert_eq!(fast.requests[1].output, 20);
        assert_eq!(fast.block_tokens, 512);
        // The same draws whatever the speed-up.
        let routers = |p: &Plan| p.requests.iter().map(|r| r.router).collect::<Vec<_>>();
        assert_eq!(routers(&native), routers(&fast));
        let cut = shape(1.5, 1.0);
        let cut = t.plan(&cut, &mut stream(1, Stream::Workload));
        assert_eq!((cut.requests.len(), cut.end), (2, 1_000_000));
    }

    /// Token reuse of a plan with one infinite cache, in arrival order:
    /// each request reuses the longest run of its leading blocks seen
    /// before.
    fn infinite_cache_reuse(p: &Plan) -> f64 {
        let mut seen = std::collections::BTreeSet::new();
        let (mut reused, mut total) = (0u64, 0u64);
        for r in &p.requests {
            let ids = p.blocks_of(r);
            let run = ids.iter().take_while(|id| seen.contains(*id)).count() as u64;
            reused += (run * p.block_tokens).min(r.input);
            total += r.input;
            seen.extend(ids.iter().copied());
        }
        reused as f64 / total as f64
    }

    #[test]
    fn repetition_fills_the_horizon_and_fresh_ids_invent_no_reuse() {
        let t = Trace::read(GOOD.as_bytes(), &spec(), Limits::default()).expect("good");
        let shape = PlanShape {
            rate_rps: 1.5,
            horizon_s: 9.0,
            router_weights: &[1.0],
            ttft_jitter_ms: 20.0,
            decode_tps: [128.0, 200.0],
        };
        // Span 2 s, period 2 x 3/2 = 3 s: starts at 0, 3 and 6 s.
        let fresh = t.plan(&shape, &mut stream(1, Stream::Workload));
        let arrivals: Vec<Micros> = fresh.requests.iter().map(|r| r.arrival).collect();
        assert_eq!(
            arrivals,
            vec![
                0, 500_000, 2_000_000, 3_000_000, 3_500_000, 5_000_000, 6_000_000, 6_500_000,
                8_000_000
            ]
        );
        assert_eq!(fresh.end, 9_000_000);
        assert_eq!(
            t.replay(1.5, 9.0),
            Replay {
                requests: 9,
                repetitions: 3
            }
        );
        assert_eq!(
            t.replay(1.5, 1.0),
            Replay {
                requests: 2,
                repetitions: 1
            }
        );
        assert_eq!(fresh.block_ids, 12, "three times the 4 distinct blocks");
        assert_eq!(fresh.key_names.len(), 6);
        assert_eq!(fresh.blocks_of(&fresh.requests[3]), &[4, 5]);
        assert_ne!(fresh.requests[0].key, fresh.requests[3].key);
        assert_eq!(
            &fresh.key_names[fresh.requests[3].key as usize],
            &format!("{}~1", fresh.key_names[0])
        );
        // One pass reuses what the trace itself shares; fresh repetitions
        // reuse exactly that again, no more.
        let once = t.plan(
            &PlanShape {
                horizon_s: 2.5,
                ..shape
            },
            &mut stream(1, Stream::Workload),
        );
        assert_eq!(once.requests.len(), 3);
        let base = infinite_cache_reuse(&once);
        assert!(base > 0.0);
        assert!((infinite_cache_reuse(&fresh) - base).abs() < 1e-12);
        // The same ids come back warm.
        let mut same_spec = spec();
        same_spec.repeat = Repeat::Same;
        let same = Trace::read(GOOD.as_bytes(), &same_spec, Limits::default()).expect("good");
        let same = same.plan(&shape, &mut stream(1, Stream::Workload));
        assert_eq!(same.block_ids, 4);
        assert_eq!(same.requests[3].key, same.requests[0].key);
        assert!(infinite_cache_reuse(&same) > base + 0.3);
    }

    #[test]
    fn max_requests_counts_the_requests_left_out() {
        let mut first = spec();
        first.max_requests = Some(1);
        let t = Trace::read(GOOD.as_bytes(), &first, Limits::default()).expect("good");
        assert_eq!(
            t.file_requests(),
            Some(3),
            "the blank line is not a request"
        );
        first.max_requests = Some(3);
        let t = Trace::read(GOOD.as_bytes(), &first, Limits::default()).expect("good");
        assert_eq!(t.file_requests(), None);
    }

    fn sessions(format: &str, block_tokens: u64) -> TraceSpec {
        TraceSpec {
            format: format.into(),
            block_tokens,
            ..spec()
        }
    }

    /// The raw block lists of every request, in file order, as small
    /// numbers (first appearance order of the dense ids).
    fn block_lists(t: &Trace) -> Vec<Vec<u32>> {
        t.requests
            .iter()
            .map(|r| t.blocks[r.blocks.start as usize..][..r.blocks.len as usize].to_vec())
            .collect()
    }

    const SESSIONS_CSV: &str = "timestamp_s,session_id,input_tokens,output_tokens,extra\n\
        0.0,alice,250,10,x\n\
        0.5,bob,250,10,y\n\
        1.0,alice,520,20,z\n\
        \n\
        2.0,\"alice\",700,5,w\n";

    #[test]
    fn session_prompts_grow_turn_by_turn_and_stay_in_their_session() {
        let t = Trace::read(
            SESSIONS_CSV.as_bytes(),
            &sessions("session-csv", 100),
            Limits::default(),
        )
        .expect("good");
        assert_eq!(t.len(), 4);
        assert_eq!(t.span_s(), 2.0);
        // alice 250 tokens: full blocks 0, 1 and a partial one (ids 0, 1, 2);
        // bob's blocks are his own (3, 4, 5); alice's next turns reuse her
        // full blocks and add their own.
        assert_eq!(
            block_lists(&t),
            vec![
                vec![0, 1, 2],
                vec![3, 4, 5],
                vec![0, 1, 6, 7, 8, 9],
                vec![0, 1, 6, 7, 8, 10, 11],
            ]
        );
        assert_eq!(t.distinct_keys(), 2, "one key per session");
        let keys: Vec<u32> = t.requests.iter().map(|r| r.key).collect();
        assert_eq!(keys, vec![0, 1, 0, 0]);
        assert_eq!(t.key_names[0], format!("s{:016x}", xxh3_64(b"alice")));
    }

    #[test]
    fn a_prefix_group_is_the_only_thing_sessions_share() {
        let jsonl = r#"{"timestamp_ms": 0, "session_id": 1, "input_tokens": 300, "output_tokens": 1, "prefix_group": "tenant-a", "prefix_tokens": 200}
{"timestamp_ms": 10, "session_id": 2, "input_tokens": 300, "output_tokens": 1, "prefix_group": "tenant-a", "prefix_tokens": 250}
{"timestamp_ms": 20, "session_id": 3, "input_tokens": 300, "output_tokens": 1, "prefix_group": "tenant-b", "prefix_tokens": 200}
{"timestamp_ms": 30, "session_id": "1", "input_tokens": 300, "output_tokens": 1}
"#;
        let t = Trace::read(
            jsonl.as_bytes(),
            &sessions("session-jsonl", 100),
            Limits::default(),
        )
        .expect("good");
        assert_eq!(
            block_lists(&t),
            vec![
                // tenant-a's two prefix blocks, then session 1's own block.
                vec![0, 1, 2],
                // 250 prefix tokens are two full blocks: the same two.
                vec![0, 1, 3],
                // Another tenant shares nothing.
                vec![4, 5, 6],
                // Session 1 without its group: positions 0 and 1 are the
                // session's own blocks, position 2 its full block again.
                vec![7, 8, 2],
            ]
        );
    }

    #[test]
    fn bad_session_lines_are_errors_at_their_line_and_column() {
        let text = "timestamp_ms,input_tokens,output_tokens,session_id\n\
            0,100,1,a\n\
            5,lots,1,a\n\
            6,100\n\
            7,100,1,\n\
            -1,100,1,b\n\
            8,100,1,\"open\n";
        let e = Trace::read(
            text.as_bytes(),
            &sessions("session-csv", 64),
            Limits::default(),
        )
        .unwrap_err();
        let got: Vec<(u64, Option<usize>)> = e.iter().map(|e| (e.line, e.column)).collect();
        assert_eq!(
            got,
            vec![(3, Some(3)), (4, None), (5, None), (6, None), (7, Some(9))]
        );
        assert_eq!(
            e[0].message,
            "`input_tokens` must be an integer from 0 to 2^64-1, got \"lots\""
        );
        assert_eq!(e[1].message, "2 fields where the header needs at least 4");
        assert!(e[2]
            .message
            .contains("`session_id` must have 1 to 256 bytes"));
        assert!(e[3]
            .message
            .contains("timestamp in ms must be a finite number"));
        assert_eq!(e[4].message, "a quoted field is not closed");
    }

    #[test]
    fn a_file_in_another_format_is_one_error() {
        // A CSV read as Mooncake: one error at line 1, not one per line.
        let e = Trace::read(SESSIONS_CSV.as_bytes(), &spec(), Limits::default()).unwrap_err();
        assert_eq!(e.len(), 1);
        assert_eq!(e[0].line, 1);
        assert!(
            e[0].message.contains("not a Mooncake JSONL trace"),
            "{}",
            e[0].message
        );
        assert!(e[0].message.contains("\"session-csv\""), "{}", e[0].message);
        // A Mooncake trace read as a CSV log, and a header with a typo.
        let e = Trace::read(
            GOOD.as_bytes(),
            &sessions("session-csv", 64),
            Limits::default(),
        )
        .unwrap_err();
        assert_eq!((e.len(), e[0].line), (1, 1));
        assert!(e[0].message.contains("\"mooncake\""), "{}", e[0].message);
        let typo = "timestamp_ms,input_tokens,output_tokens,sesion_id\n0,1,1,a\n";
        let e = Trace::read(
            typo.as_bytes(),
            &sessions("session-csv", 64),
            Limits::default(),
        )
        .unwrap_err();
        assert_eq!(e.len(), 1);
        assert!(
            e[0].message
                .contains("no `session_id` column (is `sesion_id` meant to be `session_id`?)"),
            "{}",
            e[0].message
        );
        assert_eq!(
            guess_format(GOOD.lines().next().unwrap_or_default()),
            "mooncake"
        );
        assert_eq!(guess_format("{\"session_id\": 1}"), "session-jsonl");
        assert_eq!(guess_format("timestamp_s,session_id"), "session-csv");
    }

    #[test]
    fn a_short_line_cannot_ask_for_unbounded_blocks() {
        let text = "timestamp_ms,input_tokens,output_tokens,session_id\n0,1000000000,1,a\n";
        let e = Trace::read(
            text.as_bytes(),
            &sessions("session-csv", 1),
            Limits::default(),
        )
        .unwrap_err();
        assert!(
            e[0].message
                .contains("is more than the 262144 one request may have"),
            "{}",
            e[0].message
        );
    }
}
