//! The one what-if entry point, for `asof fork` and the TUI's `w` alike: fork a
//! parent without some evidence into a new store file and compare it.
//!
//! ```text
//! Source::File  a store on disk: copied, only the (agent, topic) pairs citing
//!               the removed evidence replayed (fork::copy)
//! Source::Log   a log in memory (a dataset, the demo, a trace): the policy of
//!               design.md §5 applied and the whole log replayed
//!                         │
//!                         ▼
//!       a new store with its lineage · the policy report · the diff · the pairs
//!       whose answers can differ
//! ```
//! Errors are typed: what the user named wrongly (unknown evidence) apart from
//! what failed (the store).

use super::ForkError;
use super::copy::Pair;
use super::diff;
use crate::store::{Contents, Store, StoreError};
use asof_core::model::Dataset;
use std::path::Path;

/// What to fork.
pub enum Source<'a> {
    /// A store file, open as `store`.
    File {
        /// The store.
        store: &'a Store,
        /// Its file.
        path: &'a Path,
    },
    /// A log held in memory, with the store made from it and the SHA-256 its
    /// lineage records (of the file it was read from, or of the bundled demo).
    Log {
        /// The store made from it.
        store: &'a Store,
        /// The log.
        log: &'a Dataset,
        /// The SHA-256 its lineage records.
        sha256: String,
    },
}

/// A fork made: its policy report, how it differs, and the (agent, topic)
/// pairs whose answers can differ from the parent's.
pub use super::copy::Made;

/// Why a what-if could not be made.
#[derive(Debug, thiserror::Error)]
pub enum WhatIfError {
    /// The user named evidence that is not there, or none.
    #[error(transparent)]
    Fork(#[from] ForkError),
    /// The parent could not be read or the fork written.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The parent's source could not be read to record its SHA-256.
    #[error("{0}")]
    Source(String),
}

impl WhatIfError {
    /// Whether the user's input caused it (exit 2), not a failure (exit 1).
    pub fn is_input(&self) -> bool {
        match self {
            WhatIfError::Fork(_) => true,
            WhatIfError::Store(e) => e.is_input_error(),
            WhatIfError::Source(_) => true,
        }
    }
}

impl From<super::copy::CopyError> for WhatIfError {
    fn from(e: super::copy::CopyError) -> Self {
        match e {
            super::copy::CopyError::Fork(e) => WhatIfError::Fork(e),
            super::copy::CopyError::Store(e) => WhatIfError::Store(e),
        }
    }
}

/// Forks `source` without `removed` into a new store at `out` (replacing one
/// there only with `force`) and compares it with its parent.
pub fn fork(
    source: Source<'_>,
    removed: &[String],
    out: &Path,
    force: bool,
) -> Result<Made, WhatIfError> {
    fork_with(source, removed, Vec::new(), None, out, force)
}

/// [`fork`], recording why evidence was removed (`--without-rejected`, and
/// the review whose rejections chose it) in the report and the fork's lineage.
pub fn fork_with(
    source: Source<'_>,
    removed: &[String],
    rejected: Vec<super::Rejected>,
    review: Option<String>,
    out: &Path,
    force: bool,
) -> Result<Made, WhatIfError> {
    match source {
        Source::File { store, path } => {
            let mut made =
                super::copy::fork_file(store, path, removed, out, force, |sha, report| {
                    let report = super::PolicyReport {
                        rejected: rejected.clone(),
                        review: review.clone(),
                        ..report.clone()
                    };
                    super::lineage(store, sha, &report)
                })?;
            made.report.rejected = rejected;
            made.report.review = review;
            Ok(made)
        }
        Source::Log { store, log, sha256 } => {
            let mut forked = super::fork(log, removed)?;
            forked.report.rejected = rejected;
            forked.report.review = review;
            let contents = Contents {
                dataset: &forked.dataset,
                replay: &forked.replay,
                source: store.label(),
                meta: super::lineage(store, &sha256, &forked.report)?,
            };
            Store::create_with(out, &contents, force)?;
            let diff = diff::compare(store, &forked.replay.versions)?;
            let mut pairs: Vec<Pair> = Vec::new();
            let shown = diff
                .divergence
                .iter()
                .map(|(pair, _)| pair)
                .chain(diff.truth.iter().map(|(pair, _, _)| pair));
            for pair in shown {
                if !pairs.contains(pair) {
                    pairs.push(pair.clone());
                }
            }
            Ok(Made {
                report: forked.report,
                diff,
                parent_sha256: sha256,
                pairs,
            })
        }
    }
}
