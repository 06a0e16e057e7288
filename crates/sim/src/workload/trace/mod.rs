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
use line::{mooncake_line, not_mooncake, LineRequest};

pub(crate) mod line;
mod replay;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
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
            block_refs: super::MAX_BLOCK_REFS as usize,
            distinct_blocks: super::MAX_BLOCK_IDS as usize,
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

enum Format {
    Mooncake(AffinityRule),
    Sessions(SessionReader),
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

#[cfg(test)]
mod tests;
