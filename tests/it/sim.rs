//! Tests for the sim layer.
