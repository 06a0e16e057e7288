//! Tests for the config layer.
