//! asof's terminal UI (docs/design.md §8): an Elm-style model — keys become
//! actions in one keymap, `update` changes state and runs the queries,
//! views only draw — on the store's queries.

#![forbid(unsafe_code)]
#![warn(missing_docs)]
#![warn(clippy::unwrap_used)]
#![cfg_attr(test, allow(clippy::unwrap_used))]

pub mod tui;
