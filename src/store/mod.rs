//! The SQLite store: one incident's canonical event log and its derived versions.
//!
//! Stores are created atomically (written to a temporary file beside the target,
//! synced, then linked into place), opened read-only by every command that does
//! not write them, and refused with a clear reason when foreign, damaged or newer.

pub(crate) mod read;
mod schema;
mod write;

use crate::dataset::Parsed;
use crate::engine::{self, Replay};
use crate::model::{Dataset, Header};
use rusqlite::{Connection, OpenFlags};
use std::path::{Path, PathBuf};

pub use schema::{APPLICATION_ID, FORMAT_VERSION};

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

/// What a new store holds: a log, what replay derived from it, where it came
/// from, and extra `meta` rows (a fork's lineage).
pub struct Contents<'a> {
    pub dataset: &'a Dataset,
    pub replay: &'a Replay,
    pub source: &'a str,
    pub meta: Vec<(&'static str, String)>,
}

/// An open store. `label` is what the user called it (a path, or `demo`).
pub struct Store {
    conn: Connection,
    label: String,
    header: Header,
    /// Header positions by id, for ordering rows as people read them.
    ranks: Ranks,
}

#[derive(Debug, Default)]
struct Ranks {
    topics: std::collections::HashMap<String, usize>,
    agents: std::collections::HashMap<String, usize>,
}

impl Ranks {
    fn of(header: &Header) -> Ranks {
        Ranks {
            topics: header
                .topics
                .iter()
                .enumerate()
                .map(|(i, t)| (t.id.clone(), i))
                .collect(),
            agents: header
                .agents
                .iter()
                .enumerate()
                .map(|(i, a)| (a.id.clone(), i))
                .collect(),
        }
    }
}

impl Store {
    /// Opens an existing store read-only, refusing foreign, damaged and newer files.
    pub fn open(path: &Path) -> Result<Store> {
        Self::open_with(
            path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
    }

    /// Opens an existing store for writing (`rebuild`).
    pub fn open_for_write(path: &Path) -> Result<Store> {
        Self::open_with(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
    }

    fn open_with(path: &Path, flags: OpenFlags) -> Result<Store> {
        if !path.is_file() {
            return Err(StoreError::NotFound(path.to_owned()));
        }
        let damaged = |e: rusqlite::Error| StoreError::Damaged {
            path: path.to_owned(),
            reason: e.to_string(),
        };
        let conn = Connection::open_with_flags(path, flags).map_err(damaged)?;
        conn.busy_timeout(std::time::Duration::from_secs(5))
            .map_err(damaged)?;
        let app: i32 = conn
            .query_row("PRAGMA application_id", [], |r| r.get(0))
            .map_err(damaged)?;
        if app != APPLICATION_ID {
            return Err(StoreError::Foreign(path.to_owned()));
        }
        let version: i32 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(damaged)?;
        if version > FORMAT_VERSION {
            return Err(StoreError::Newer {
                path: path.to_owned(),
                found: version,
            });
        }
        if version < FORMAT_VERSION {
            return Err(StoreError::Damaged {
                path: path.to_owned(),
                reason: format!("format version {version} is not one asof wrote"),
            });
        }
        let header = read::header(&conn).map_err(damaged)?;
        Ok(Store {
            conn,
            label: path.display().to_string(),
            ranks: Ranks::of(&header),
            header,
        })
    }

    /// Builds an in-memory store from a parsed dataset (a dataset given as SOURCE,
    /// the bundled demo).
    pub fn in_memory(label: &str, dataset: &Dataset, replay: &Replay) -> Result<Store> {
        let mut conn = Connection::open_in_memory()?;
        let contents = Contents {
            dataset,
            replay,
            source: label,
            meta: Vec::new(),
        };
        write::write_all(&mut conn, &contents)?;
        let header = read::header(&conn)?;
        Ok(Store {
            conn,
            label: label.to_owned(),
            ranks: Ranks::of(&header),
            header,
        })
    }

    /// Loads a validated dataset into a new store file at `path`, atomically: on any
    /// error nothing is left at `path` (or the file already there is untouched).
    pub fn create(path: &Path, parsed: &Parsed, replay: &Replay, force: bool) -> Result<()> {
        let contents = Contents {
            dataset: &parsed.dataset,
            replay,
            source: &parsed.file,
            meta: Vec::new(),
        };
        Self::create_with(path, &contents, force)
    }

    /// Writes `contents` into a new store file at `path`, atomically (see [`Store::create`]).
    pub fn create_with(path: &Path, contents: &Contents, force: bool) -> Result<()> {
        if path.exists() && !force {
            return Err(StoreError::Exists(path.to_owned()));
        }
        let io = |source| StoreError::Io {
            path: path.to_owned(),
            source,
        };
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_owned(),
            _ => PathBuf::from("."),
        };
        let mut builder = tempfile::Builder::new();
        builder.prefix(".asof-load-").suffix(".tmp");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            builder.permissions(std::fs::Permissions::from_mode(0o644));
        }
        let tmp = builder.tempfile_in(&dir).map_err(io)?;
        {
            let mut conn = Connection::open(tmp.path())?;
            conn.execute_batch("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;")?;
            write::write_all(&mut conn, contents)?;
            conn.close().map_err(|(_, e)| e)?;
        }
        tmp.as_file().sync_all().map_err(io)?;
        if force {
            tmp.persist(path).map_err(|e| io(e.error))?;
        } else {
            tmp.persist_noclobber(path).map_err(|e| {
                if e.error.kind() == std::io::ErrorKind::AlreadyExists {
                    StoreError::Exists(path.to_owned())
                } else {
                    io(e.error)
                }
            })?;
        }
        Ok(())
    }

    pub fn label(&self) -> &str {
        &self.label
    }

    pub fn header(&self) -> &Header {
        &self.header
    }

    /// A topic's position in the header (unknown ids sort last).
    pub fn topic_rank(&self, id: &str) -> usize {
        self.ranks.topics.get(id).copied().unwrap_or(usize::MAX)
    }

    /// An agent's position in the header (unknown ids sort last).
    pub fn agent_rank(&self, id: &str) -> usize {
        self.ranks.agents.get(id).copied().unwrap_or(usize::MAX)
    }

    pub fn connection(&self) -> &Connection {
        &self.conn
    }

    /// A value from the `meta` table.
    pub fn meta(&self, key: &str) -> Result<Option<String>> {
        read::meta(&self.conn, key).map_err(StoreError::from)
    }

    /// The canonical log, in file order.
    pub fn log(&self) -> Result<Dataset> {
        let events = read::events(&self.conn)?;
        Ok(Dataset {
            header: self.header.clone(),
            events,
        })
    }

    /// Every stored version, by id.
    pub fn versions(&self) -> Result<Vec<crate::model::Version>> {
        read::versions(&self.conn).map_err(StoreError::from)
    }

    /// Replays the log from scratch.
    pub fn replay(&self) -> Result<Replay> {
        let log = self.log()?;
        Ok(engine::replay(&log.header, &log.events))
    }

    /// Re-derives versions, outcomes and reconfirmations from the log, in one
    /// transaction. Returns how many versions the store now holds.
    pub fn rebuild(&mut self) -> Result<usize> {
        let replay = self.replay()?;
        let tx = self.conn.transaction()?;
        tx.execute_batch(
            "DELETE FROM versions; DELETE FROM outcomes; DELETE FROM reconfirmations;",
        )?;
        write::derived(&tx, &replay)?;
        tx.commit()?;
        Ok(replay.versions.len())
    }

    /// Re-derives versions from the log and compares them with the stored ones.
    pub fn check(&self) -> Result<CheckReport> {
        let fresh = self.replay()?;
        let stored = read::versions(&self.conn)?;
        let mut differences = Vec::new();
        let mut stored_iter = stored.iter().peekable();
        let mut fresh_iter = fresh.versions.iter().peekable();
        loop {
            match (stored_iter.peek(), fresh_iter.peek()) {
                (None, None) => break,
                (Some(s), Some(f)) if s.id == f.id => {
                    if s != f {
                        differences.push(format!(
                            "version {} differs from its replay: stored {:?}, replayed {:?}",
                            s.id, s, f
                        ));
                    }
                    stored_iter.next();
                    fresh_iter.next();
                }
                (Some(s), Some(f)) if s.id < f.id => {
                    differences.push(format!(
                        "version {} is stored but replay does not derive it",
                        s.id
                    ));
                    stored_iter.next();
                }
                (Some(s), None) => {
                    differences.push(format!(
                        "version {} is stored but replay does not derive it",
                        s.id
                    ));
                    stored_iter.next();
                }
                (_, Some(f)) => {
                    differences.push(format!(
                        "version {} is derived by replay but missing from the store",
                        f.id
                    ));
                    fresh_iter.next();
                }
            }
        }
        Ok(CheckReport {
            versions: fresh.versions.len(),
            differences,
        })
    }
}

/// What `check` found.
#[derive(Debug, Clone)]
pub struct CheckReport {
    pub versions: usize,
    pub differences: Vec<String>,
}
