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
    /// SQLite itself reports the file damaged (a malformed page): said in
    /// one sentence by every command that meets it.
    #[error("{0}: not a readable asof store: {MALFORMED}")]
    Malformed(PathBuf),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("store: {0}")]
    Sqlite(#[from] rusqlite::Error),
}

/// What every command says of a store SQLite reports damaged.
pub const MALFORMED: &str = "SQLite reports the file damaged (database disk image is malformed); `asof check` on it names the one command that recovers it";

impl StoreError {
    /// `e`, met opening or reading the store at `path`: [`StoreError::Malformed`]
    /// when SQLite reports the file damaged, else [`StoreError::Damaged`] with
    /// the reason (asof's own, without SQLite's prefix, when a row did not
    /// decode).
    pub fn damaged(path: &std::path::Path, e: rusqlite::Error) -> StoreError {
        if is_malformed(&e) {
            return StoreError::Malformed(path.to_owned());
        }
        StoreError::Damaged {
            path: path.to_owned(),
            reason: match e {
                rusqlite::Error::FromSqlConversionFailure(_, _, reason) => reason.to_string(),
                e => e.to_string(),
            },
        }
    }

    /// Whether the user can fix this by pointing at another file (exit code 2).
    pub fn is_input_error(&self) -> bool {
        !matches!(self, StoreError::Sqlite(_) | StoreError::Io { .. })
    }
}

pub type Result<T> = std::result::Result<T, StoreError>;

/// Whether SQLite reported the file damaged (a malformed page, or no
/// database at all where one was).
pub fn is_malformed(e: &rusqlite::Error) -> bool {
    e.sqlite_error_code() == Some(rusqlite::ErrorCode::DatabaseCorrupt)
}

/// Why a load failed: the dataset (found by replay), or the store.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error(transparent)]
    Dataset(#[from] asof_core::dataset::DatasetErrors),
    #[error(transparent)]
    Store(#[from] StoreError),
}
