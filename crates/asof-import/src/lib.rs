//! asof's importers (docs/design.md §7): what agents and memories really
//! write — OpenTelemetry traces, Graphiti exports, facts tables edited in
//! place — read into a dataset, with every assumption counted in an import
//! summary. A facts table is itself a SQLite file: reading it is the one
//! place outside the store crate that speaks SQL, and only to read input.

#![forbid(unsafe_code)]
#![warn(missing_docs)]
#![warn(clippy::unwrap_used)]
#![cfg_attr(test, allow(clippy::unwrap_used))]

pub mod import;
