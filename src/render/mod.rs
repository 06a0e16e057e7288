//! Renderers over the one diagnostic model: human (miette), json, github, sarif.
