//! asof's reports (docs/design.md §8): an audit report in Markdown, one
//! self-contained HTML file with a recorded-time slider, and a topic's plane
//! as SVG — each opening with where it came from.

#![forbid(unsafe_code)]
#![warn(missing_docs)]
#![warn(clippy::unwrap_used)]
#![cfg_attr(test, allow(clippy::unwrap_used))]

pub mod export;
