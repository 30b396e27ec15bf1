//! What can go wrong with a store, in the store's words.

use super::FORMAT_VERSION;
use std::path::PathBuf;

/// What can go wrong with a store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// No file there.
    #[error("{0}: no such store")]
    NotFound(PathBuf),
    /// A store is there and `--force` was not given.
    #[error("{0}: already exists; choose another path or pass --force to replace it")]
    Exists(PathBuf),
    /// A SQLite file, not asof's.
    #[error("{0}: not an asof store (a SQLite file without asof's application id)")]
    Foreign(PathBuf),
    /// Written by a newer asof.
    #[error(
        "{path}: store format version {found} is newer than this asof reads ({FORMAT_VERSION}); upgrade asof"
    )]
    Newer {
        /// The store.
        path: PathBuf,
        /// Its format version.
        found: i32,
    },
    /// Not readable as a store: why.
    #[error("{path}: not a readable asof store: {reason}")]
    Damaged {
        /// The store.
        path: PathBuf,
        /// Why, in asof's words.
        reason: String,
    },
    /// SQLite itself reports the file damaged (a malformed page): said in
    /// one sentence by every command that meets it.
    #[error("{0}: not a readable asof store: {MALFORMED}")]
    Malformed(PathBuf),
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// SQLite failed (not the file's fault).
    #[error("store: {0}")]
    Sqlite(SqlFailure),
}

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> Self {
        StoreError::Sqlite(SqlFailure(e))
    }
}

/// A failure SQLite reported, kept whole for its message. No SQLite type
/// leaves the store: what a caller needs to know of it is a method.
#[derive(Debug)]
pub struct SqlFailure(rusqlite::Error);

impl std::fmt::Display for SqlFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for SqlFailure {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.0)
    }
}

impl SqlFailure {
    /// Whether SQLite reported the file damaged (a malformed page).
    pub fn is_malformed(&self) -> bool {
        is_malformed(&self.0)
    }

    /// The reason the store's own reader gave when a row did not decode
    /// (a damaged store: the user's input, not asof's failure).
    pub fn undecodable(&self) -> Option<String> {
        match &self.0 {
            rusqlite::Error::FromSqlConversionFailure(_, _, reason) => Some(reason.to_string()),
            _ => None,
        }
    }
}

/// What every command says of a store SQLite reports damaged.
pub const MALFORMED: &str = "SQLite reports the file damaged (database disk image is malformed); `asof check` on it names the one command that recovers it";

impl StoreError {
    /// `e`, met opening or reading the store at `path`: [`StoreError::Malformed`]
    /// when SQLite reports the file damaged, else [`StoreError::Damaged`] with
    /// the reason (asof's own, without SQLite's prefix, when a row did not
    /// decode).
    pub(crate) fn damaged(path: &std::path::Path, e: rusqlite::Error) -> StoreError {
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

/// A store operation's result.
pub type Result<T> = std::result::Result<T, StoreError>;

/// Whether SQLite reported the file damaged (a malformed page, or no
/// database at all where one was).
pub(crate) fn is_malformed(e: &rusqlite::Error) -> bool {
    e.sqlite_error_code() == Some(rusqlite::ErrorCode::DatabaseCorrupt)
}

/// Why a load failed: the dataset (found by replay), or the store.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The dataset failed a rule only replay can check.
    #[error(transparent)]
    Dataset(#[from] asof_core::dataset::DatasetErrors),
    /// The store could not be written.
    #[error(transparent)]
    Store(#[from] StoreError),
}
