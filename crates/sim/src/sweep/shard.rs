//! Sweeps beyond one machine (docs/simulator.md, "Sharded sweeps"):
//! `sim run --shard K/N` runs every N-th cell of the run matrix starting at
//! the K-th and writes one shard file; `sim merge` checks that a set of
//! shard files covers the matrix exactly once, for the same scenario, and
//! gives back the runs in run order, from which the usual files are
//! written byte for byte as an unsharded run writes them.
//!
//! A shard file is JSON: the scenario's fingerprint, K and N, and per run
//! its index in the matrix and its result (metrics, diagnostics, time
//! series; floats round-trip exactly).

use crate::measure::metrics::{Bin, RunDiagnostics, RunMetrics};
use crate::measure::timeline::Timeline;
use crate::run::{RunResult, RunStats};
use crate::sweep::{RunKey, RunOutput};
use serde::{Deserialize, Serialize};

/// `K/N`: the K-th (1-based) of N slices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

impl Shard {
    /// Parses `K/N` with 1 <= K <= N <= 100 000.
    pub fn parse(text: &str) -> Result<Shard, String> {
        let bad = || format!("`{text}` is not a shard: write K/N with 1 <= K <= N <= 100000");
        let (k, n) = text.split_once('/').ok_or_else(bad)?;
        let index: u32 = k.trim().parse().map_err(|_| bad())?;
        let count: u32 = n.trim().parse().map_err(|_| bad())?;
        if index == 0 || index > count || count > 100_000 {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }

    /// Whether run `i` of the matrix belongs to this shard: runs are dealt
    /// round-robin, so shards get a mix of cheap and costly cells.
    pub fn owns(self, i: usize) -> bool {
        i % self.count as usize == (self.index - 1) as usize
    }

    pub fn file_name(self) -> String {
        format!("shard-{}-of-{}.json", self.index, self.count)
    }
}

/// One run as a shard file holds it.
#[derive(Serialize, Deserialize)]
struct ShardRun {
    run: usize,
    metrics: RunMetrics,
    diagnostics: RunDiagnostics,
    series: Vec<Bin>,
    /// Each backend's timeline (absent from files written before it).
    #[serde(default)]
    timeline: Timeline,
}

#[derive(Serialize, Deserialize)]
struct ShardFile {
    /// Identifies the scenario and every option that changes results.
    fingerprint: String,
    shard: [u32; 2],
    /// Runs in the whole matrix.
    runs_total: usize,
    runs: Vec<ShardRun>,
}

/// The text of a shard file for `runs` (indices into the matrix of
/// `total` runs).
pub fn write(
    fingerprint: &str,
    shard: Shard,
    total: usize,
    runs: &[(usize, &RunOutput)],
) -> String {
    let file = ShardFile {
        fingerprint: fingerprint.to_string(),
        shard: [shard.index, shard.count],
        runs_total: total,
        runs: runs
            .iter()
            .map(|(i, r)| ShardRun {
                run: *i,
                metrics: r.result.metrics.clone(),
                diagnostics: r.result.diagnostics.clone(),
                series: r.result.series.clone(),
                timeline: r.result.timeline.clone(),
            })
            .collect(),
    };
    let mut s = serde_json::to_string(&file).unwrap_or_default();
    s.push('\n');
    s
}

/// Combines shard files (name, text) into the runs of the whole matrix, in
/// run order. `keys` is the matrix of the scenario given to merge.
pub fn merge(
    fingerprint: &str,
    keys: &[RunKey],
    files: &[(String, String)],
) -> Result<Vec<RunOutput>, String> {
    let mut slots: Vec<Option<RunOutput>> = vec![None; keys.len()];
    let mut count = None;
    let mut seen_shards = Vec::new();
    for (name, text) in files {
        let f: ShardFile = serde_json::from_str(text).map_err(|e| not_a_shard(name, &e))?;
        if f.fingerprint != fingerprint {
            return Err(format!(
                "{name}: written for another scenario or other options (fingerprint {} here, {} in the file)",
                fingerprint, f.fingerprint
            ));
        }
        if f.runs_total != keys.len() {
            return Err(format!(
                "{name}: a matrix of {} runs, not {}",
                f.runs_total,
                keys.len()
            ));
        }
        let [k, n] = f.shard;
        if *count.get_or_insert(n) != n {
            return Err(format!(
                "{name}: shard {k}/{n} mixes with shards of another count"
            ));
        }
        if seen_shards.contains(&k) {
            return Err(format!("{name}: shard {k}/{n} given twice"));
        }
        seen_shards.push(k);
        let shard = Shard { index: k, count: n };
        for r in f.runs {
            let Some(slot) = slots.get_mut(r.run) else {
                return Err(format!("{name}: run {} is outside the matrix", r.run));
            };
            if !shard.owns(r.run) || slot.is_some() {
                return Err(format!(
                    "{name}: run {} does not belong to shard {k}/{n}",
                    r.run
                ));
            }
            *slot = Some(RunOutput {
                key: keys[r.run],
                result: RunResult {
                    metrics: r.metrics,
                    diagnostics: r.diagnostics,
                    series: r.series,
                    timeline: r.timeline,
                    stats: RunStats::default(),
                    detail: None,
                },
                wall_ms: 0.0,
            });
        }
    }
    let missing: Vec<String> = slots
        .iter()
        .enumerate()
        .filter(|(_, s)| s.is_none())
        .map(|(i, _)| i.to_string())
        .take(10)
        .collect();
    if !missing.is_empty() {
        let n = count.unwrap_or(0);
        let absent: Vec<String> = (1..=n)
            .filter(|k| !seen_shards.contains(k))
            .map(|k| format!("{k}/{n}"))
            .collect();
        return Err(format!(
            "the shards do not cover the matrix: runs {} missing (shards {} not given)",
            missing.join(", "),
            absent.join(", ")
        ));
    }
    Ok(slots.into_iter().flatten().collect())
}

/// A fingerprint of everything that decides a run's results: the scenario
/// text and the options applied to it (XXH3-64, hex).
pub fn fingerprint(parts: &[&str]) -> String {
    let mut bytes = Vec::new();
    for p in parts {
        bytes.extend_from_slice(&(p.len() as u64).to_le_bytes());
        bytes.extend_from_slice(p.as_bytes());
    }
    format!("{:016x}", xxhash_rust::xxh3::xxh3_64(&bytes))
}

/// A shard file serde cannot read, as `FILE:LINE:COLUMN: ...` in the
/// user's words (docs/cli.md's error style), not serde's.
fn not_a_shard(name: &str, e: &serde_json::Error) -> String {
    let text = e.to_string();
    let message = text.find(" at line ").map_or(text.as_str(), |i| &text[..i]);
    format!(
        "{name}:{}:{}: not a shard file: {}",
        e.line().max(1),
        // serde_json says column 0 at the end of an empty file.
        e.column().max(1),
        routex::json_words::user_message(message)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_deals_round_robin() {
        let s = Shard::parse("2/3").expect("valid");
        assert_eq!(s, Shard { index: 2, count: 3 });
        let owned: Vec<usize> = (0..8).filter(|&i| s.owns(i)).collect();
        assert_eq!(owned, vec![1, 4, 7]);
        for bad in ["0/3", "4/3", "3", "a/b", "1/0", "1/100001", "-1/2"] {
            assert!(Shard::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(s.file_name(), "shard-2-of-3.json");
        assert_ne!(fingerprint(&["ab", "c"]), fingerprint(&["a", "bc"]));
    }

    #[test]
    fn an_unreadable_shard_file_is_named_with_its_position_in_user_words() {
        let err = merge(
            "f",
            &[],
            &[("s.json".into(), "{\"fingerprint\": 5}".into())],
        )
        .expect_err("not a shard");
        assert_eq!(
            err,
            "s.json:1:17: not a shard file: invalid type: integer `5`, expected a string"
        );
        let err = merge(
            "f",
            &[],
            &[("s.json".into(), "{\"shard\": [1, -2]}".into())],
        )
        .expect_err("not a shard");
        assert_eq!(
            err,
            "s.json:1:16: not a shard file: invalid value: integer `-2` is negative, \
             expected an integer from 0 to 2^32-1"
        );
    }
}
