//! `routex sim` through its command line: exit codes, output files, shards.

mod inputs;
mod run;
mod shard;
mod slurm;
mod tune;
