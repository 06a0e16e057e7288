//! The pest parser generated from `grammar/routex.pest`. Its pairs are read
//! only by `build`; its errors only by `errors`.

#[derive(pest_derive::Parser)]
#[grammar = "grammar/routex.pest"]
pub(crate) struct RoutexParser;
