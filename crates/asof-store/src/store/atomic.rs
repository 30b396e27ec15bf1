//! Writing a store atomically: a temporary file beside the target, renamed
//! over it only once complete (no failure leaves a partial store), and the
//! sweeping of temporaries a killed process left behind.

use super::{Result, StoreError};
use rusqlite::{Connection, OpenFlags};
use std::path::Path;

/// Removes SQLite's companion files of the store at `path` (`-wal`, `-shm`,
/// `-journal`) before a new store is linked there: left by a store that was
/// deleted, or by the one being replaced, SQLite would take them for the new
/// store's and write another file's pages into it (found when a deleted
/// store's `--follow` left its write-ahead log beside the path).
pub(crate) fn remove_companions(path: &Path) -> std::io::Result<()> {
    for suffix in ["-wal", "-shm", "-journal"] {
        let mut companion = path.as_os_str().to_owned();
        companion.push(suffix);
        match std::fs::remove_file(&companion) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
    }
    Ok(())
}

/// Creates the file at `path` atomically: `fill` writes a temporary file beside it,
/// which is synced and then linked into place (replacing an existing file only
/// with `force`). On any error nothing is left at `path`, or what was there stays.
pub(crate) fn write_atomically<E: From<StoreError>>(
    path: &Path,
    force: bool,
    fill: impl FnOnce(&mut tempfile::NamedTempFile) -> std::result::Result<(), E>,
) -> std::result::Result<(), E> {
    if path.exists() && !force {
        return Err(StoreError::Exists(path.to_owned()).into());
    }
    let io = |source| StoreError::Io {
        path: path.to_owned(),
        source,
    };
    let dir = directory_of(path);
    #[cfg(unix)]
    remove_stale_temporaries(dir);
    let mut tmp = temporary_in(dir).map_err(io)?;
    fill(&mut tmp)?;
    tmp.as_file().sync_all().map_err(io)?;
    remove_companions(path).map_err(io)?;
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

/// The directory a file at `path` is in (`.` for a bare file name).
pub(crate) fn directory_of(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// A new temporary file in `dir`, named and locked so that the sweep of a
/// later write ([`remove_stale_temporaries`]) removes it if its writer is
/// killed before it is linked into place or dropped.
pub(crate) fn temporary_in(dir: &Path) -> std::io::Result<tempfile::NamedTempFile> {
    let mut builder = tempfile::Builder::new();
    builder.prefix(TEMPORARY_PREFIX).suffix(TEMPORARY_SUFFIX);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o644));
    }
    let tmp = builder.tempfile_in(dir)?;
    // Held until the file is linked into place or dropped: a temporary nobody
    // holds was left by a killed writer (see `remove_stale_temporaries`).
    // Advisory on Unix (SQLite's own locks are separate); elsewhere locks are
    // mandatory and would stop SQLite writing, so there is no sweep there.
    #[cfg(unix)]
    tmp.as_file().try_lock().map_err(std::io::Error::from)?;
    Ok(tmp)
}

pub(crate) const TEMPORARY_PREFIX: &str = ".asof-new-";

pub(crate) const TEMPORARY_SUFFIX: &str = ".tmp";

/// A temporary untouched this long and locked by nobody was left by a killed
/// writer. (A writer locks its temporary right after creating it; the age
/// keeps a sweep from taking one in that instant.)
pub(crate) const STALE_AFTER: std::time::Duration = std::time::Duration::from_secs(60);

/// Removes the temporaries that writers killed mid-way left in `dir`: those no
/// live writer holds a lock on and that have not changed for a minute, with
/// the write-ahead log and shared memory SQLite kept beside them. Best
/// effort: anything it cannot read, lock or remove stays.
#[cfg(unix)]
pub(crate) fn remove_stale_temporaries(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let unchanged_a_while = |path: &Path| {
        std::fs::metadata(path)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age >= STALE_AFTER)
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if !name.starts_with(TEMPORARY_PREFIX) {
            continue;
        }
        // A load derives in write-ahead-log mode for a while (decisions.md):
        // a temporary's log and shared memory go with it, or once it is gone.
        let base = (name
            .strip_suffix("-wal")
            .or_else(|| name.strip_suffix("-shm")))
        .filter(|base| base.ends_with(TEMPORARY_SUFFIX));
        if let Some(base) = base {
            if !dir.join(base).exists() && unchanged_a_while(&entry.path()) {
                let _ = std::fs::remove_file(entry.path());
            }
            continue;
        }
        if !name.ends_with(TEMPORARY_SUFFIX) {
            continue;
        }
        let Ok(file) = std::fs::File::open(entry.path()) else {
            continue;
        };
        if unchanged_a_while(&entry.path()) && file.try_lock().is_ok() {
            let _ = std::fs::remove_file(entry.path());
            for sidecar in ["-wal", "-shm"] {
                let _ = std::fs::remove_file(dir.join(format!("{name}{sidecar}")));
            }
        }
    }
}

/// A clean copy of the store file at `from` as a new store at `to` (the
/// TUI's `s`: a fork kept in a temporary file, saved), written atomically:
/// `to` must not exist, and nothing is left there on failure.
pub fn copy_store(from: &Path, to: &Path) -> Result<()> {
    write_atomically(to, false, |file| -> Result<()> {
        let conn = Connection::open_with_flags(from, OpenFlags::SQLITE_OPEN_READ_ONLY)?;
        // A clean copy of the whole store, into the empty temporary file.
        conn.execute("VACUUM INTO ?1", [file.path().to_string_lossy()])?;
        Ok(())
    })
}
