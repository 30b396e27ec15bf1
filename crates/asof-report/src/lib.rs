//! asof's reports (docs/design.md §8): an audit report in Markdown, one
//! self-contained HTML file with a recorded-time slider, and a topic's plane
//! as SVG — each opening with where it came from.

#![forbid(unsafe_code)]

pub use asof_core::{axis, dataset, engine, model, redact, review, text, time};
pub use asof_import::import;
pub use asof_store::{fork, query, store};

pub mod export;
