//! asof-fleet

#![forbid(unsafe_code)]

pub mod export;
pub mod parquet;
pub mod tables;
