//! asof: what did the AI agent believe then, on what evidence — and what would it
//! have believed without that evidence?
//!
//! This package is the `asof` binary; its library gathers the workspace's
//! crates under one name, so a script or a test writes `asof::store` as the
//! binary does (docs/design.md):
//!
//! ```text
//! crates/asof-core     time, model, datasets, the replay engine   no SQLite, no terminal
//! crates/asof-store    the SQLite store, queries, what-if forks   every SQL string
//! crates/asof-import   traces, Graphiti exports, facts tables
//! crates/asof-report   Markdown, HTML and SVG reports
//! crates/asof-fleet    every store as Parquet, for fleet questions in DuckDB
//! crates/asof-serve    OTLP/HTTP receiver (`asof serve`)
//! crates/asof-synth    generated logs, traces and fleets (`asof gen`, benches, tests)
//! crates/asof-tui      the terminal UI
//! src/cli              the command line                         (feature `cli`)
//! src/runtime.rs       allocator and C-library tuning, the one unsafe room
//! ```

pub use asof_core::{axis, dataset, engine, model, pool, redact, review, text, time};
pub use asof_fleet as fleet;
pub use asof_import::import;
pub use asof_report::export;
pub use asof_store::{fork, query, store};
pub use asof_synth as synth;
#[cfg(feature = "tui")]
pub use asof_tui::tui;

#[cfg(feature = "cli")]
pub mod cli;
#[doc(hidden)]
pub mod fuzzing;
pub mod runtime;
