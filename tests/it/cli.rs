//! Tests for the cli layer.
