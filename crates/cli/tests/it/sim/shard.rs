//! `sim run --shard K/N` and `sim merge`: the merged files are byte for
//! byte the files of an unsharded run, whatever the thread counts.

use routex_cli::sim::{run, MergeArgs, RunArgs, ScenarioArgs, SimArgs, SimCommand};
use routex_sim::report::results::FILES;
use routex_sim::sweep::shard::Shard;
use std::path::{Path, PathBuf};

fn small() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .join("crates/sim/tests/inputs/small.json")
}

fn options(seed: u64) -> ScenarioArgs {
    ScenarioArgs {
        quick: false,
        rng_seed: Some(seed),
        mode: Some("fast".into()),
        trace: None,
    }
}

fn run_args(out: &Path, jobs: usize, shard: Option<&str>, seed: u64) -> SimArgs {
    SimArgs {
        command: SimCommand::Run(RunArgs {
            scenario: Some(small()),
            manifest: None,
            options: options(seed),
            out: Some(out.to_path_buf()),
            jobs,
            shard: shard.map(|s| Shard::parse(s).expect("shard")),
            per_seed: false,
        }),
    }
}

fn merge_args(out: &Path, shards: Vec<PathBuf>, seed: u64) -> SimArgs {
    SimArgs {
        command: SimCommand::Merge(MergeArgs {
            shards,
            scenario: Some(small()),
            options: options(seed),
            out: out.to_path_buf(),
        }),
    }
}

#[test]
fn merged_shards_are_the_unsharded_files() {
    let root = std::env::temp_dir().join(format!("routex-shard-{}", std::process::id()));
    let (whole, shards, merged) = (root.join("whole"), root.join("shards"), root.join("merged"));
    assert_eq!(run(&run_args(&whole, 2, None, 3)), 0);
    // Three shards of a 6-run matrix (3 policies x 2 rates), on 1 and 2 threads.
    for (k, jobs) in [("1/3", 1), ("2/3", 2), ("3/3", 1)] {
        assert_eq!(run(&run_args(&shards, jobs, Some(k), 3)), 0);
    }
    for k in 1..=3 {
        let text =
            std::fs::read_to_string(shards.join(format!("shard-{k}-of-3.json"))).expect("shard");
        assert_eq!(
            text.matches("\"run\":").count(),
            2,
            "shard {k} holds 2 runs"
        );
    }
    let files = |ks: &[u32]| -> Vec<PathBuf> {
        ks.iter()
            .map(|k| shards.join(format!("shard-{k}-of-3.json")))
            .collect()
    };
    assert_eq!(run(&merge_args(&merged, files(&[3, 1, 2]), 3)), 0);
    for f in FILES {
        let a = std::fs::read(whole.join(f)).expect("whole");
        let b = std::fs::read(merged.join(f)).expect("merged");
        assert!(a == b, "{f} differs");
    }
    // A missing shard, a shard twice, or other options: usage errors.
    let bad = root.join("bad");
    assert_eq!(run(&merge_args(&bad, files(&[1, 2]), 3)), 2);
    assert_eq!(run(&merge_args(&bad, files(&[1, 2, 2, 3]), 3)), 2);
    assert_eq!(
        run(&merge_args(&bad, files(&[1, 2, 3]), 4)),
        2,
        "another seed"
    );
    assert!(!bad.join("summary.json").exists());
}
