//! asof's terminal UI (docs/design.md §8): an Elm-style model — keys become
//! actions in one keymap, `update` changes state and runs the queries,
//! views only draw — on the store's queries.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod tui;
