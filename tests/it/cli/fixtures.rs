//! Placeholder until the diagnostics fixtures land.
