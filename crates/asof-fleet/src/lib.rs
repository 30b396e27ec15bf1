//! asof-fleet

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod export;
pub mod parquet;
pub mod tables;
