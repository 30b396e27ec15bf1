//! asof: what did the AI agent believe then, on what evidence — and what would it
//! have believed without that evidence?
//!
//! The library is the whole core — time, model, dataset parsing, the replay
//! engine, the SQLite store and its queries — and knows nothing of terminals.
//! The CLI and the TUI are front ends on it, behind the cargo features `cli`
//! and `tui` (both on by default); without them the core builds alone.

pub mod axis;
#[cfg(feature = "cli")]
pub mod cli;
pub mod dataset;
pub mod engine;
pub mod export;
pub mod fork;
#[doc(hidden)]
pub mod fuzzing;
pub mod import;
pub mod model;
pub mod query;
pub mod store;
pub mod synth;
pub mod text;
pub mod time;
#[cfg(feature = "tui")]
pub mod tui;
