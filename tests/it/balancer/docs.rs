//! The worked examples of docs/algorithms.md, one test each.
