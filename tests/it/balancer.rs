//! Tests for the balancer layer.
