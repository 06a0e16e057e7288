//! Tests for the syntax layer.
