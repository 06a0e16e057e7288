//! Tests for the router layer.
