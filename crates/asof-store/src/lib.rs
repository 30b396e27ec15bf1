//! asof's store: one SQLite file per incident — the log as loaded and what
//! replay derives from it — behind one API (docs/design.md §6): every SQL
//! string and every on-disk format lives here. On top of it: the queries
//! every front end asks, what-if forks, and synthetic logs for scale.

#![forbid(unsafe_code)]

pub mod fork;
pub mod query;
pub mod store;
pub mod synth;
