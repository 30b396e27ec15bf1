//! asof's core: instants and intervals, the model, dataset reading and
//! validation, and the replay engine that turns an event log into belief
//! versions (docs/design.md §1–§4). It knows nothing of SQLite, terminals or
//! command lines, and holds no unsafe code.

#![forbid(unsafe_code)]
#![warn(missing_docs)]
#![warn(clippy::unwrap_used)]
#![cfg_attr(test, allow(clippy::unwrap_used))]

pub mod axis;
pub mod dataset;
pub mod engine;
pub mod model;
pub mod pool;
pub mod redact;
pub mod review;
pub mod segments;
pub mod text;
pub mod time;
