//! asof's store: one SQLite file per incident — the log as loaded and what
//! replay derives from it — behind one API (docs/design.md §6): every SQL
//! string and every on-disk format lives here. On top of it: the queries
//! every front end asks, and what-if forks.

#![forbid(unsafe_code)]
#![warn(missing_docs)]
#![warn(clippy::unwrap_used)]
#![cfg_attr(test, allow(clippy::unwrap_used))]

pub mod fork;
pub mod query;
pub mod store;
#[cfg(test)]
mod testing;
