//! `routex build` / `routex import`.
