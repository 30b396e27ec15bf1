//! Following a file whose store is a function of all its complete lines: an
//! OpenTelemetry trace in JSON Lines, as the Collector's file exporter writes
//! it, where a span written later can change what an earlier one meant (a
//! tool call's result, the agent span that names who made a model call).
//!
//! ```text
//!   file ──complete new lines──▶ prefix (every complete line so far) ──convert──▶ dataset
//!                                                                                   │
//!   store ◀── one transaction: every table dropped and written again ──────────────┘
//! ```
//!
//! So the store is, at every commit, what importing the prefix gives, and a
//! reader (a TUI in WAL) sees the old store or the new one. Each batch costs a
//! whole conversion of the prefix: a trace is thousands of spans, not
//! millions of events (docs/decisions.md). The store records its position as
//! a JSON Lines follow does, so a follow started again goes on, and a file
//! truncated, replaced or rewritten before that position stops it.

use super::{
    Batch, LINES, OFFSET, SHA256, Stop, TAIL, hex, identity, io, not_followed, open_writer,
    read_on, recorded, replaced, wait_for_a_line,
};
use crate::dataset::Parsed;
use crate::engine::Replay;
use crate::store::{Contents, Store, write};
use rusqlite::Connection;
use sha2::{Digest, Sha256};
use std::io::Read;
use std::path::Path;

/// What converting the complete lines so far gave.
pub struct Converted {
    pub parsed: Parsed,
    /// The replay of `parsed.dataset` (checked here before it is written).
    pub replay: Replay,
    /// Rows for the store's meta table (the import summary).
    pub meta: Vec<(&'static str, String)>,
    /// Records the conversion left out, for the batch's line.
    pub skipped: usize,
}

/// Follows `dataset` into `store` (created, or, when it was written by an
/// earlier follow of the same bytes, converted again with today's `convert`
/// and continued): every batch of complete new lines converts the whole
/// prefix again and writes it over the store in one transaction, until
/// `go_on` returns false (`Ok`) or the file stops the follow (`Err`). A
/// prefix over `max` bytes stops it too.
pub fn follow_whole(
    dataset: &Path,
    store: &Path,
    force: bool,
    poll: std::time::Duration,
    max: u64,
    mut convert: impl FnMut(&[u8]) -> Result<Converted, Stop>,
    mut go_on: impl FnMut(&Batch) -> bool,
) -> Result<(), Stop> {
    let started = identity(&std::fs::metadata(dataset).map_err(|e| io(dataset, e))?);
    let name = dataset.display().to_string();
    let mut f = if !store.exists() || force {
        let Some(len) = wait_for_a_line(dataset, poll, &mut go_on)? else {
            return Ok(());
        };
        let prefix = read_start(&name, dataset, started, len, max)?;
        let converted = convert(&prefix)?;
        converted.parsed.check_replay(&converted.replay)?;
        let mut meta = converted.meta.clone();
        meta.extend(position(&prefix));
        Store::create_with(
            store,
            &Contents {
                dataset: &converted.parsed.dataset,
                replay: &converted.replay,
                source: &converted.parsed.file,
                meta,
            },
            force,
        )?;
        Rewriter {
            name: &name,
            path: dataset,
            identity: started,
            max,
            conn: open_writer(store)?,
            events: converted.parsed.dataset.events.len(),
            skipped: converted.skipped,
            line: prefix.iter().filter(|&&b| b == b'\n').count(),
            prefix,
        }
    } else {
        let conn = open_writer(store)?;
        let (offset, _, sha) = recorded(&conn, store, &name)?;
        let prefix = read_start(&name, dataset, started, offset, max)
            .ok()
            .filter(|prefix| prefix.len() as u64 == offset && hex(&Sha256::digest(prefix)) == sha)
            .ok_or_else(|| not_followed(&name, store, offset))?;
        let mut f = Rewriter {
            name: &name,
            path: dataset,
            identity: started,
            max,
            conn,
            events: 0,
            skipped: 0,
            line: prefix.iter().filter(|&&b| b == b'\n').count(),
            prefix,
        };
        // Converted again, so the options given now are the ones it holds.
        let converted = convert(&f.prefix)?;
        f.write(&converted)?;
        f
    };
    // A store and its format are checked as every command checks them.
    Store::open(store)?;
    let mut batch = f.batch(0, 0);
    loop {
        if !go_on(&batch) {
            return Ok(());
        }
        std::thread::sleep(poll);
        batch = f.poll(&mut convert)?;
    }
}

/// The first `len` bytes of the file being followed, read from the file that
/// was at the path when the follow started.
fn read_start(
    name: &str,
    path: &Path,
    started: (u64, u64),
    len: u64,
    max: u64,
) -> Result<Vec<u8>, Stop> {
    if len > max {
        return Err(over(name, len, max));
    }
    let file = std::fs::File::open(path).map_err(|e| io(path, e))?;
    if identity(&file.metadata().map_err(|e| io(path, e))?) != started {
        return Err(replaced(name));
    }
    let mut prefix = Vec::new();
    file.take(len)
        .read_to_end(&mut prefix)
        .map_err(|e| io(path, e))?;
    Ok(prefix)
}

fn over(name: &str, len: u64, max: u64) -> Stop {
    Stop::File(format!(
        "{name}: its complete lines are {len} bytes, over the {max}-byte limit of a trace"
    ))
}

/// The meta rows that record how far a store has read its file.
fn position(prefix: &[u8]) -> [(&'static str, String); 3] {
    let lines = prefix.iter().filter(|&&b| b == b'\n').count();
    [
        (OFFSET, prefix.len().to_string()),
        (LINES, lines.to_string()),
        (SHA256, hex(&Sha256::digest(prefix))),
    ]
}

/// The state a whole-prefix follow carries between batches.
struct Rewriter<'a> {
    name: &'a str,
    path: &'a Path,
    /// The device and inode of the file followed.
    identity: (u64, u64),
    max: u64,
    conn: Connection,
    /// Every complete line applied, and how many lines that is.
    prefix: Vec<u8>,
    line: usize,
    /// Events and skipped records in the store now.
    events: usize,
    skipped: usize,
}

impl Rewriter<'_> {
    /// Writes what the prefix converted to over the store, with the position.
    fn write(&mut self, converted: &Converted) -> Result<(), Stop> {
        converted.parsed.check_replay(&converted.replay)?;
        let mut meta = converted.meta.clone();
        meta.extend(position(&self.prefix));
        write::rewrite(
            &mut self.conn,
            &converted.parsed.dataset,
            &converted.parsed.file,
            &converted.replay,
            &meta,
        )?;
        self.events = converted.parsed.dataset.events.len();
        self.skipped = converted.skipped;
        Ok(())
    }

    /// Reads what was written since the last poll; when it completed a line,
    /// converts the whole prefix again and writes it over the store.
    fn poll(
        &mut self,
        convert: &mut impl FnMut(&[u8]) -> Result<Converted, Stop>,
    ) -> Result<Batch, Stop> {
        let offset = self.prefix.len() as u64;
        let tail = &self.prefix[self.prefix.len().saturating_sub(TAIL)..];
        let (complete, pending) = read_on(self.name, self.path, self.identity, offset, tail)?;
        let whole = offset + complete.len() as u64;
        if whole + pending as u64 > self.max {
            return Err(over(self.name, whole + pending as u64, self.max));
        }
        if complete.is_empty() {
            return Ok(self.batch(0, 0));
        }
        let lines = complete.iter().filter(|&&b| b == b'\n').count();
        let before = self.events;
        let applied = self.prefix.len();
        self.prefix.extend_from_slice(&complete);
        let written = convert(&self.prefix).and_then(|converted| self.write(&converted));
        if let Err(stop) = written {
            // What the store holds is still the prefix before this batch.
            self.prefix.truncate(applied);
            return Err(stop);
        }
        self.line += lines;
        Ok(self.batch(self.events.saturating_sub(before), lines))
    }

    fn batch(&self, events: usize, lines: usize) -> Batch {
        Batch {
            events,
            total: self.events,
            line: self.line,
            lines,
            skipped: self.skipped,
            replayed: false,
        }
    }
}
