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

use super::{BlockSpan, Plan, PlanShape, PlannedRequest, WorkloadSource};
use crate::time::{from_secs, Micros};
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
    /// Only `"mooncake"`.
    #[serde(default = "default_format")]
    pub format: String,
    /// Tokens per block of `hash_ids` (512 in the Mooncake traces).
    #[serde(default = "default_block_tokens")]
    pub block_tokens: u64,
    /// Time compression factors, one run each; the offered rate of a run is
    /// speed-up x the trace's native rate. Absent = use `rates_rps`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub speedups: Vec<f64>,
    #[serde(default)]
    pub affinity_key: AffinityRule,
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
    pub message: String,
}

/// One line of a Mooncake trace; other fields are ignored.
#[derive(Deserialize)]
struct MooncakeLine {
    timestamp: f64,
    input_length: u64,
    output_length: u64,
    hash_ids: Vec<u64>,
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
    /// Reads a Mooncake JSONL trace. Blank lines are skipped. Errors name
    /// their line; reading stops after `limits.errors` of them or at the
    /// first bound exceeded.
    pub fn read(
        mut reader: impl BufRead,
        spec: &TraceSpec,
        limits: Limits,
    ) -> Result<Trace, Vec<TraceError>> {
        let mut errors = Vec::new();
        let mut requests: Vec<TraceRequest> = Vec::new();
        let mut blocks: Vec<u32> = Vec::new();
        let mut intern: BTreeMap<u64, u32> = BTreeMap::new();
        let mut keys: BTreeMap<String, u32> = BTreeMap::new();
        let mut key_names: Vec<String> = Vec::new();
        let mut first_ms: Option<f64> = None;
        let mut buf = Vec::new();
        let mut line_no = 0u64;
        let max = spec.max_requests.unwrap_or(u64::MAX);
        let mut file_requests = None;
        loop {
            if requests.len() as u64 >= max {
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
            let text = match std::str::from_utf8(&buf) {
                Ok(t) => t.trim(),
                Err(e) => {
                    errors.push(err(format!(
                        "not valid UTF-8 (byte {})",
                        e.valid_up_to() + 1
                    )));
                    continue;
                }
            };
            if text.is_empty() {
                continue;
            }
            let line: MooncakeLine = match serde_json::from_str(text) {
                Ok(l) => l,
                Err(e) => {
                    let message = e.to_string();
                    let message = match message.rfind(" at line ") {
                        Some(i) => format!(
                            "{} (column {})",
                            routex::json_words::user_message(&message[..i]),
                            e.column()
                        ),
                        None => routex::json_words::user_message(&message),
                    };
                    errors.push(err(message));
                    continue;
                }
            };
            if !(line.timestamp.is_finite() && line.timestamp >= 0.0) {
                errors.push(err("`timestamp` must be a finite number of ms >= 0".into()));
                continue;
            }
            if line.input_length == 0 || line.input_length > MAX_INPUT {
                errors.push(err(format!(
                    "`input_length` must be in 1..={MAX_INPUT}, got {}",
                    line.input_length
                )));
                continue;
            }
            if line.output_length > MAX_OUTPUT {
                errors.push(err(format!(
                    "`output_length` must be at most {MAX_OUTPUT}, got {}",
                    line.output_length
                )));
                continue;
            }
            let first = *first_ms.get_or_insert(line.timestamp);
            if line.timestamp < first {
                errors.push(err(format!(
                    "`timestamp` {} is before the first request's {first}",
                    line.timestamp
                )));
                continue;
            }
            if requests.len() >= limits.requests
                || blocks.len() + line.hash_ids.len() > limits.block_refs
            {
                errors.push(err(format!(
                    "the trace is larger than the simulator holds: at most {} requests and {} block ids in all",
                    limits.requests, limits.block_refs
                )));
                break;
            }
            let start = blocks.len() as u32;
            for &id in &line.hash_ids {
                let next = intern.len() as u32;
                let dense = *intern.entry(id).or_insert(next);
                blocks.push(dense);
            }
            if intern.len() > limits.distinct_blocks {
                errors.push(err(format!(
                    "more than {} distinct block ids",
                    limits.distinct_blocks
                )));
                break;
            }
            let key = match spec.affinity_key.key(&line.hash_ids) {
                Some(name) => {
                    let next = key_names.len() as u32;
                    *keys.entry(name).or_insert_with_key(|name| {
                        key_names.push(name.clone());
                        next
                    })
                }
                None => u32::MAX,
            };
            requests.push(TraceRequest {
                at_us: from_secs((line.timestamp - first) / 1_000.0),
                input: line.input_length,
                output: line.output_length,
                key,
                blocks: BlockSpan {
                    start,
                    len: line.hash_ids.len() as u32,
                },
            });
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        if requests.is_empty() {
            return Err(vec![TraceError {
                line: line_no,
                message: "the trace holds no request".into(),
            }]);
        }
        // Replay in time order; equal times keep the file's order.
        requests.sort_by_key(|r| r.at_us);
        Ok(Trace {
            requests,
            key_names: key_names.into(),
            block_ids: intern.len() as u32,
            blocks: blocks.into(),
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
    use crate::rng::{stream, Stream};

    fn spec() -> TraceSpec {
        TraceSpec {
            path: "t.jsonl".into(),
            format: default_format(),
            block_tokens: 512,
            speedups: Vec::new(),
            affinity_key: AffinityRule::default(),
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
        assert!(e[1].message.contains("(column 2)"), "{}", e[1].message);
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
        let e = Trace::read("x\ny\nz\n".as_bytes(), &spec(), few).unwrap_err();
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
}
