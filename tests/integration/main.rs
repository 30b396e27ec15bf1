//! asof's integration tests in one binary (one link of the whole program,
//! not one per file): the real binary on real files, property tests against a
//! reference model, the TUI in a TestBackend and in tmux. Each module is a
//! theme; `common` holds what they share. (`tests/allocator.rs` stays a binary
//! of its own: the setting it checks is the process's.)

mod common;

mod architecture;
mod ask;
mod cli;
mod compare;
mod completions;
mod datasets;
mod export;
mod faults;
mod features;
mod fleet;
mod follow;
mod fork;
mod fuzz_regressions;
mod hostile;
mod html;
mod import;
mod import_memories;
mod otlp;
mod pages;
mod quality;
mod queries;
mod review;
mod scrub;
mod serve;
mod stream;
mod synth;
mod tui_tmux;
mod validation;
