//! The editor server: the real binary driven over pipes with LSP messages
//! (`client`), and Neovim's built-in client on the same binary (`neovim`).

mod client;
mod diagnostics;
mod editors;
mod features;
mod neovim;
mod project;
mod protocol;
