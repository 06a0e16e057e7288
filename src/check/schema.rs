//! The field schema, as the checker reads it: the field table of
//! [`crate::ir::fields`] (every field's kind, default, range, the
//! algorithms it applies to in expressions, route files and
//! lb-config.json, and the stargate targets that accept it). The
//! expression and lb-config.json columns differ on purpose; see
//! docs/configuration.md.

pub use crate::ir::fields::{
    algorithm_list, configured, configured_iter, get, is_set, set, Field, FieldSpec, JsonRange,
    Kind, KindMismatch, Typed, FIELDS,
};
