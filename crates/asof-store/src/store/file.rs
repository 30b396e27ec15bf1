//! A store file's own header, read before SQLite opens it: SQLite's magic,
//! the application id and format version, and a truncated file refused.

use super::{Result, StoreError};
use rusqlite::Connection;
use std::path::Path;

/// The application id and format version SQLite reads for the store on `conn`.
pub(crate) fn pragmas(conn: &Connection) -> rusqlite::Result<(i32, i32)> {
    Ok((
        conn.query_row("PRAGMA application_id", [], |r| r.get(0))?,
        conn.query_row("PRAGMA user_version", [], |r| r.get(0))?,
    ))
}

/// SQLite's magic: the first 16 bytes of every SQLite file.
pub(crate) const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";

/// Whether the file at `path` is a SQLite file (by its first bytes; it is not
/// read further): the one check of the format, which front ends ask before
/// deciding how to read a SOURCE.
pub fn is_sqlite_file(path: &Path) -> bool {
    use std::io::Read;
    let mut magic = [0u8; 16];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .is_ok_and(|()| &magic == SQLITE_MAGIC)
}

/// Refuses a SQLite file shorter than its header says it is (a truncated copy or
/// an interrupted download), before SQLite reads it and fails somewhere later.
/// Returns the application id and format version the header holds when the
/// file's header is the store's last committed one (no write-ahead log
/// beside it), so that opening it need not ask SQLite for them again.
pub(crate) fn check_file_header(path: &Path) -> Result<Option<(i32, i32)>> {
    use std::io::Read;
    let io = |source| StoreError::Io {
        path: path.to_owned(),
        source,
    };
    let mut file = std::fs::File::open(path).map_err(io)?;
    let length = file.metadata().map_err(io)?.len();
    let mut header = [0u8; 100];
    if file.read_exact(&mut header).is_err() || header[..16] != SQLITE_MAGIC[..] {
        // Not SQLite at all: SQLite's own refusal says so.
        return Ok(None);
    }
    let page_size = match u16::from_be_bytes([header[16], header[17]]) {
        1 => 65_536,
        n => u64::from(n),
    };
    let pages = u64::from(u32::from_be_bytes([
        header[28], header[29], header[30], header[31],
    ]));
    // The page count is valid only when "version-valid-for" equals the change
    // counter, and not while a WAL store is being written: a checkpoint writes
    // the header's page first and the pages after it later (`load --follow`).
    let wal = header[18] == 2 && {
        let mut wal = path.as_os_str().to_owned();
        wal.push("-wal");
        Path::new(&wal).exists()
    };
    let valid = header[92..96] == header[24..28] && !wal;
    if valid && pages > 0 && length < pages * page_size {
        return Err(StoreError::Damaged {
            path: path.to_owned(),
            reason: format!(
                "the file is truncated: its header says {} bytes ({pages} pages of {page_size}), but it has {length}",
                pages * page_size
            ),
        });
    }
    let int = |at: usize| {
        i32::from_be_bytes([header[at], header[at + 1], header[at + 2], header[at + 3]])
    };
    // SQLite's file header: the user version at offset 60, the application id at 68.
    Ok(valid.then(|| (int(68), int(60))))
}
