//! `asof serve` (design.md §7, "Live ingestion"): an OTLP/HTTP receiver.
//! Requests are decoded ([`decode`]), appended to the store's archive and
//! synced before they are acknowledged ([`archive`], [`server`]) over
//! bounded HTTP/1.1 connections ([`http`]); the store
//! follows the archive as `asof load --follow` follows any trace file.

#![forbid(unsafe_code)]
#![warn(missing_docs)]
#![warn(clippy::unwrap_used)]
#![cfg_attr(test, allow(clippy::unwrap_used))]

pub mod archive;
pub mod decode;
pub mod http;
pub mod review;
pub mod server;
