//! `routex decide`: the command end to end and its input reader.

mod cli;
mod input;
