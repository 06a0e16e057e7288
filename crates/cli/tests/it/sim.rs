//! `routex sim` through its command line: exit codes, output files, shards.

mod run;
mod shard;
mod tune;
