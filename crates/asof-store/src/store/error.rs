//! What can go wrong with a store, in the store's words.

use super::FORMAT_VERSION;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{0}: no such store")]
    NotFound(PathBuf),
    #[error("{0}: already exists; choose another path or pass --force to replace it")]
    Exists(PathBuf),
    #[error("{0}: not an asof store (a SQLite file without asof's application id)")]
    Foreign(PathBuf),
    #[error(
        "{path}: store format version {found} is newer than this asof reads ({FORMAT_VERSION}); upgrade asof"
    )]
    Newer { path: PathBuf, found: i32 },
    #[error("{path}: not a readable asof store: {reason}")]
    Damaged { path: PathBuf, reason: String },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("store: {0}")]
    Sqlite(#[from] rusqlite::Error),
}

impl StoreError {
    /// Whether the user can fix this by pointing at another file (exit code 2).
    pub fn is_input_error(&self) -> bool {
        !matches!(self, StoreError::Sqlite(_) | StoreError::Io { .. })
    }
}

pub type Result<T> = std::result::Result<T, StoreError>;

/// Whether SQLite reported the file damaged (a malformed page, or no
/// database at all where one was).
pub fn is_malformed(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseCorrupt | rusqlite::ErrorCode::NotADatabase)
    )
}

/// Why a load failed: the dataset (found by replay), or the store.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error(transparent)]
    Dataset(#[from] crate::dataset::DatasetErrors),
    #[error(transparent)]
    Store(#[from] StoreError),
}
