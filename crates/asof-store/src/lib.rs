//! asof's store: one SQLite file per incident — the log as loaded and what
//! replay derives from it — behind one API (docs/design.md §6): every SQL
//! string and every on-disk format lives here. On top of it: the queries
//! every front end asks, what-if forks, and synthetic logs for scale.

#![forbid(unsafe_code)]

// The core's modules under their own names, so paths read the same in every
// crate of the workspace.
pub use asof_core::{axis, dataset, engine, model, review, text, time};

pub mod fork;
pub mod query;
pub mod store;
pub mod synth;
