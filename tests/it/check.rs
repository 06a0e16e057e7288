//! Tests for the check layer.
