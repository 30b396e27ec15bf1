//! Following a JSON Lines dataset that is still being written (design.md §6).
//!
//! ```text
//!   file ──complete new lines──▶ check (every rule, as if the file ended there)
//!                                   │
//!   store ◀── one transaction ──────┘ log rows · versions · truths · scrub · how far
//!              per batch              (a batch after the last replayed instant resumes
//!                                      the replay's held set; one at or before it is
//!                                      replayed again from a kept replay, rewind.rs)
//! ```
//!
//! The store is at every commit what a fresh load of the file's complete lines
//! would give, row for row: the first lines are loaded as `load` loads them;
//! later batches go through the same rules and the same sliced replay. A line
//! that makes the file invalid, a truncated or replaced file, stops the follow;
//! what was committed stays. The store records how far it has read (bytes,
//! lines and a SHA-256 of them), so a follow started again on the same store
//! and file goes on where the last one stopped.

use super::derive::SLICE;
use super::stream::{Lines, load_jsonl_upto, unmatched};
use super::write::LogWriter;
use super::{LoadError, Store, StoreError};
use asof_core::dataset::jsonl::{self, ParsedEvent, Sink};
use asof_core::dataset::raw::RawHeader;
use asof_core::dataset::validate::Incremental;
use asof_core::dataset::{DatasetError, DatasetErrors, Location, MAX_JSONL_LINE};
use asof_core::model::{Event, EventKind};
use replayed::{Change, Replayed};
use rusqlite::{Connection, OptionalExtension, params};
use sha2::{Digest, Sha256};
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

mod replayed;
mod restart;
mod rewind;
mod series;
mod trace;
mod truths;
pub use series::{read_again, unread};
pub use trace::{Converted, Grown, Growth, Suffix, follow_whole};

/// What one batch applied.
#[derive(Debug, Clone, Default)]
pub struct Batch {
    /// Events this batch added (0: nothing new).
    pub events: usize,
    /// Events in the store now.
    pub total: usize,
    /// The last line read.
    pub line: usize,
    /// Bytes of the file applied (up to the end of the last line read).
    pub offset: u64,
    /// Lines this batch read.
    pub lines: usize,
    /// Records the conversion of a trace left out, in all (0 for a dataset).
    pub skipped: usize,
    /// Whether the batch went back before the last replayed instant (it was
    /// replayed again from a kept replay before its first instant).
    pub replayed: bool,
    /// Events already in the store that the batch changed or removed (a
    /// trace's later spans can change what earlier ones meant: a result's
    /// recorded instant, and so the evidence ids after it), written again.
    pub rewritten: usize,
    /// The store was written again whole (a trace whose conversion was
    /// taken whole: a retraction it now leaves out, another file).
    pub whole: bool,
    /// The trace's agents or topics changed (a new topic or agent, or an
    /// agent span naming who made earlier calls): the events from the
    /// first that changed written again, and every version derived again.
    pub header: bool,
    /// Traces converted again since the follow started, because spans read
    /// later changed what their earlier spans meant (an OTLP trace; none
    /// for a dataset).
    pub converted_again: Again,
}

/// How often, since a follow started, a trace was converted again because
/// spans read later changed what earlier ones meant: from a checkpoint a
/// few batches back, or (none was early enough) from its start.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Again {
    /// Taken up from the state before one of its last batches.
    pub from_checkpoint: usize,
    /// Converted again from its first span.
    pub from_start: usize,
    /// Every line converted again (read again from the file): a span fell
    /// into a run the import had let go, or a batch reached before what it
    /// let go.
    pub whole: usize,
}

impl Again {
    /// What the status lines add: `traces taken up from a checkpoint 12
    /// times, converted again from the start once`, then `every line
    /// converted again twice`, or nothing when none happened. A count of
    /// times, not of traces: one trace may be taken up at many batches.
    pub fn describe(&self) -> Option<String> {
        let times = |n: usize| match n {
            1 => "once".to_owned(),
            2 => "twice".to_owned(),
            n => format!("{n} times"),
        };
        let (c, s) = (self.from_checkpoint, self.from_start);
        let traces = match (c, s) {
            (0, 0) => None,
            (c, 0) => Some(format!("taken up from a checkpoint {}", times(c))),
            (0, s) => Some(format!("converted again from the start {}", times(s))),
            (c, s) => Some(format!(
                "taken up from a checkpoint {}, converted again from the start {}",
                times(c),
                times(s)
            )),
        };
        let whole =
            (self.whole > 0).then(|| format!("every line converted again {}", times(self.whole)));
        match (traces, whole) {
            (None, None) => None,
            (Some(t), None) => Some(format!("traces {t}")),
            (None, Some(w)) => Some(w),
            (Some(t), Some(w)) => Some(format!("traces {t}; {w}")),
        }
    }
}

/// Why a follow stopped. Everything committed before stays in the store.
#[derive(Debug, thiserror::Error)]
pub enum Stop {
    /// The file was truncated, replaced or turned invalid.
    #[error("{0}")]
    File(String),
    /// The lines so far are not a valid dataset.
    #[error(transparent)]
    Dataset(#[from] DatasetErrors),
    /// The store could not be written.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<rusqlite::Error> for Stop {
    fn from(e: rusqlite::Error) -> Self {
        Stop::Store(StoreError::from(e))
    }
}

/// Meta keys recording how far the store has read its file.
const OFFSET: &str = "follow_offset";
const LINES: &str = "follow_lines";
const SHA256: &str = "follow_sha256";

/// How far a store written by a follow (or `asof serve`) has read its
/// file: the bytes applied, as its meta records them; `None` for a store no
/// follow wrote.
pub fn applied(store: &Store) -> crate::store::Result<Option<u64>> {
    Ok(store.meta(OFFSET)?.and_then(|o| o.parse().ok()))
}

/// What a followed store has not taken in yet of the file it follows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Behind {
    /// The file followed.
    pub file: std::path::PathBuf,
    /// Its bytes past those applied.
    pub bytes: u64,
    /// The complete lines among them.
    pub lines: u64,
}

/// What the store at `path` has not taken in of the file it follows (the
/// one its meta names, as named when the follow ran, else the file of that
/// name beside the store, where `asof serve` keeps its archive); `None` when
/// no follow wrote it or its file is not there. With `verify`, the file's
/// applied bytes are hashed and must be the ones the store recorded: a file
/// of that name that is not the one followed is not there (`asof check`;
/// the TUI, asking every second, does not read them again).
pub fn behind(store: &Store, path: &Path, verify: bool) -> crate::store::Result<Option<Behind>> {
    let Some(applied) = applied(store)? else {
        return Ok(None);
    };
    let Some(named) = store.meta("source")? else {
        return Ok(None);
    };
    let named = Path::new(&named);
    let file = match (named.is_file(), path.parent(), named.file_name()) {
        (true, _, _) => named.to_owned(),
        (false, Some(dir), Some(name)) if dir.join(name).is_file() => dir.join(name),
        _ => return Ok(None),
    };
    if verify {
        let recorded = store.meta(SHA256)?;
        let read = match Position::of_series(&file, applied) {
            Ok(read) => read,
            Err(Stop::Store(e)) => return Err(e),
            Err(_) => return Ok(None),
        };
        if read.offset != applied || Some(read.sha256()) != recorded {
            return Ok(None);
        }
    }
    let (bytes, lines) = unread(&file, applied).map_err(|source| StoreError::Io {
        path: file.clone(),
        source,
    })?;
    Ok(Some(Behind { file, bytes, lines }))
}

/// Folds a followed store's write-ahead log into the store's file and
/// empties it, so that the `.db` copied alone holds every commit: what a
/// follow or `asof serve` does as it stops. `Ok(false)` when another process
/// reading the store kept part of the log from being folded (the commits
/// are safe in the `-wal` beside the file, which that reader's close folds).
pub fn settle(store: &Path) -> crate::store::Result<bool> {
    let conn = Connection::open(store)?;
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    let busy: i64 = conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| r.get(0))?;
    conn.close().map_err(|(_, e)| e)?;
    Ok(busy == 0)
}

/// Loads the complete lines of the JSON Lines file `dataset` into `store`
/// (created as `load` creates it, or, when it was written by an earlier
/// follow of the same file, continued), then applies each batch of complete
/// new lines as it is written, polling every `poll`, until `go_on` returns
/// false after a batch (`Ok`) or the file stops the follow (`Err(Stop)`).
pub fn follow(
    dataset: &Path,
    store: &Path,
    force: bool,
    poll: std::time::Duration,
    mut go_on: impl FnMut(&Batch) -> bool,
) -> Result<(), Stop> {
    // The file followed is the one at `dataset` now: one renamed over it
    // later, even while the first load runs, is another file.
    let started = identity(&std::fs::metadata(dataset).map_err(|e| io(dataset, e))?);
    // What a load of the first lines did, when this follow began with one.
    let mut first = None;
    if !store.exists() || force {
        let len = wait_for_a_line(dataset, poll, &mut go_on)?;
        let Some(len) = len else {
            return Ok(());
        };
        let loaded = load_jsonl_upto(dataset, len, store, force, SLICE).map_err(|e| match e {
            LoadError::Dataset(d) => Stop::Dataset(d),
            LoadError::Store(s) => Stop::Store(s),
        })?;
        let conn = Connection::open(store)?;
        conn.query_row("PRAGMA journal_mode = WAL", [], |_| Ok(()))?;
        let position = Position::of_start(dataset, len)?;
        let tx = conn.unchecked_transaction()?;
        position.write(&tx)?;
        tx.commit()?;
        let lines = position.line;
        let events = loaded.events();
        first = Some(Batch {
            events,
            total: events,
            line: lines,
            offset: position.offset,
            lines,
            ..Batch::default()
        });
    }
    // A store and its format are checked as every command checks them.
    Store::open(store)?;
    let name = dataset.display().to_string();
    let lines = Lines::default();
    let mut f = match Follower::resume(&name, dataset, started, store, &lines, first.is_some()) {
        Ok(f) => f,
        Err(stop) => {
            // The store holds the first lines, loaded above: said before the
            // stop (the file replaced at once, say), so the stop says what
            // the store keeps.
            if let Some(first) = first {
                go_on(&first);
            }
            return Err(stop);
        }
    };
    let mut batch = Batch {
        total: f.events,
        line: f.position.line,
        offset: f.position.offset,
        ..Batch::default()
    };
    loop {
        if !go_on(&batch) {
            return Ok(());
        }
        std::thread::sleep(poll);
        batch = f.poll()?;
    }
}

/// The length of `dataset`'s complete lines now, if it holds one.
pub(crate) fn complete_len(dataset: &Path) -> Result<Option<u64>, Stop> {
    // Read back from its end: a file is not read whole to find its last line.
    let whole = std::fs::File::open(dataset)
        .and_then(|mut f| {
            let len = f.metadata()?.len();
            asof_core::segments::whole_lines(&mut f, len)
        })
        .map_err(|e| io(dataset, e))?;
    Ok((whole > 0).then_some(whole))
}

/// Waits until `dataset` holds a complete first line; returns the length of
/// its complete lines (`None` when `go_on` said stop first).
pub fn wait_for_a_line(
    dataset: &Path,
    poll: std::time::Duration,
    go_on: &mut impl FnMut(&Batch) -> bool,
) -> Result<Option<u64>, Stop> {
    wait_for(|| complete_len(dataset), poll, go_on)
}

/// Waits until `complete` gives the length of a complete first line (of a
/// file, or of a series of segments); `None` when `go_on` said stop first.
pub(crate) fn wait_for(
    mut complete: impl FnMut() -> Result<Option<u64>, Stop>,
    poll: std::time::Duration,
    go_on: &mut impl FnMut(&Batch) -> bool,
) -> Result<Option<u64>, Stop> {
    loop {
        if let Some(len) = complete()? {
            return Ok(Some(len));
        }
        if !go_on(&Batch::default()) {
            return Ok(None);
        }
        std::thread::sleep(poll);
    }
}

fn io(path: &Path, source: std::io::Error) -> Stop {
    Stop::Store(StoreError::Io {
        path: path.to_owned(),
        source,
    })
}

/// How far a follow has read: bytes and lines, the SHA-256 of those bytes
/// and the last of them (to notice a file rewritten in place).
#[derive(Clone)]
struct Position {
    offset: u64,
    line: usize,
    sha: Sha256,
    tail: Vec<u8>,
}

impl Position {
    fn new() -> Position {
        Position {
            offset: 0,
            line: 0,
            sha: Sha256::new(),
            tail: Vec::new(),
        }
    }

    /// The first `len` bytes of `dataset`, read (a file cut shorter since is
    /// told by the caller, which compares the hash or the length).
    fn of_start(dataset: &Path, len: u64) -> Result<Position, Stop> {
        let file = std::fs::File::open(dataset).map_err(|e| io(dataset, e))?;
        let mut input = file.take(len);
        let mut buf = vec![0u8; 1 << 16];
        let mut position = Position::new();
        loop {
            let n = input.read(&mut buf).map_err(|e| io(dataset, e))?;
            if n == 0 {
                return Ok(position);
            }
            position.read(&buf[..n]);
        }
    }

    /// The first `len` bytes of the series of segments at `first`
    /// (series.rs), read.
    fn of_series(first: &Path, len: u64) -> Result<Position, Stop> {
        let mut series = series::Series::open(&first.display().to_string(), first)?;
        let mut position = Position::new();
        series.read(0, Some(len), |bytes| {
            position.read(bytes);
            Ok(())
        })?;
        Ok(position)
    }

    /// Moves on past `bytes`.
    fn read(&mut self, bytes: &[u8]) {
        self.offset += bytes.len() as u64;
        self.line += bytes.iter().filter(|&&b| b == b'\n').count();
        self.sha.update(bytes);
        let keep = bytes.len().min(TAIL);
        self.tail.extend_from_slice(&bytes[bytes.len() - keep..]);
        let extra = self.tail.len().saturating_sub(TAIL);
        self.tail.drain(..extra);
    }

    /// The meta rows that record it.
    fn meta(&self) -> [(&'static str, String); 3] {
        [
            (OFFSET, self.offset.to_string()),
            (LINES, self.line.to_string()),
            (SHA256, self.sha256()),
        ]
    }

    /// The SHA-256 of the bytes read, in hex.
    fn sha256(&self) -> String {
        asof_core::text::hex(&self.sha.clone().finalize())
    }

    /// Records the position in the store's meta, inside `tx`: its rows go in
    /// together or not at all (a follow killed between them left an offset
    /// without its hash, a store no follow could take up again).
    fn write(&self, tx: &rusqlite::Transaction) -> rusqlite::Result<()> {
        let mut set =
            tx.prepare_cached("INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)")?;
        for (key, value) in self.meta() {
            set.execute(params![key, value])?;
        }
        Ok(())
    }
}

/// The page cache of a follow's writer, in KiB. A batch looks rows up by
/// key all over a store that grows past a gigabyte (the items a run's end
/// writes again, the versions it closes); with SQLite's default 2 MiB most
/// of those look-ups read their pages again from the file (at 20,000
/// spans/s, a fifth of the follow's time was `pread` by the end of a
/// minute: docs/performance-log.md, session 49).
const WRITER_CACHE_KIB: i64 = 32 << 10;

/// A connection that writes a followed store: WAL, so readers (a TUI) see
/// each batch's commit whole and are never blocked.
fn open_writer(store: &Path) -> Result<Connection, Stop> {
    let conn = Connection::open(store)?;
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    conn.query_row("PRAGMA journal_mode = WAL", [], |_| Ok(()))?;
    conn.execute_batch(&format!("PRAGMA cache_size = -{WRITER_CACHE_KIB}"))?;
    Ok(conn)
}

/// The follow position `store` records: bytes applied and their SHA-256
/// (the lines are counted again as the bytes are read, and checked to be a
/// number).
fn recorded(conn: &Connection, store: &Path, name: &str) -> Result<(u64, String), Stop> {
    let meta = |key: &str| -> rusqlite::Result<Option<String>> {
        conn.query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
            .optional()
    };
    let (Some(offset), Some(line), Some(sha)) = (meta(OFFSET)?, meta(LINES)?, meta(SHA256)?) else {
        return Err(Stop::File(format!(
            "{}: was not written by a follow (`asof load --follow`); pass --force to load {name} into it again",
            store.display()
        )));
    };
    let (Ok(offset), Ok(_)) = (offset.parse::<u64>(), line.parse::<usize>()) else {
        return Err(Stop::Store(StoreError::Damaged {
            path: store.to_owned(),
            reason: "its follow position does not read as numbers".to_owned(),
        }));
    };
    Ok((offset, sha))
}

fn truncated(name: &str, len: u64, offset: u64) -> Stop {
    Stop::File(format!(
        "{name}: was truncated to {len} bytes after {offset} were applied"
    ))
}

fn not_followed(name: &str, store: &Path, offset: u64) -> Stop {
    Stop::File(format!(
        "{name}: is not the file {} was following (its first {offset} bytes differ); pass --force to load it again",
        store.display()
    ))
}

/// What was written after the `offset` bytes applied, up to its last complete
/// line, once the file is checked to be the one followed: the same file
/// (`followed`), no shorter, and still holding `tail` just before `offset`.
/// Returns those bytes (none when no line was completed) and the length of
/// the incomplete line after them.
fn read_on(
    name: &str,
    path: &Path,
    followed: (u64, u64),
    offset: u64,
    tail: &[u8],
) -> Result<(Vec<u8>, usize), Stop> {
    // Open first and ask the open file: a rename between a stat of the path
    // and the open would otherwise read the new file as the old one.
    let unreadable = |e: std::io::Error| Stop::File(format!("{name}: can no longer be read ({e})"));
    let mut file = std::fs::File::open(path).map_err(unreadable)?;
    let meta = file.metadata().map_err(unreadable)?;
    if identity(&meta) != followed {
        return Err(replaced(name));
    }
    if meta.len() < offset {
        return Err(truncated(name, meta.len(), offset));
    }
    let from = offset - tail.len() as u64;
    file.seek(SeekFrom::Start(from)).map_err(|e| io(path, e))?;
    let mut bytes = Vec::new();
    file.take(meta.len() - from)
        .read_to_end(&mut bytes)
        .map_err(|e| io(path, e))?;
    complete_after(name, bytes, tail, offset)
}

/// `bytes`, read from just before byte `offset` (where `tail` must still
/// be), split after `tail`: the complete lines that follow it (none when no
/// line was completed) and the length of the incomplete line after them.
fn complete_after(
    name: &str,
    mut bytes: Vec<u8>,
    tail: &[u8],
    offset: u64,
) -> Result<(Vec<u8>, usize), Stop> {
    if !bytes.starts_with(tail) {
        return Err(Stop::File(format!(
            "{name}: was rewritten before byte {offset}"
        )));
    }
    let mut new = bytes.split_off(tail.len());
    match new.iter().rposition(|&b| b == b'\n') {
        Some(end) => {
            let pending = new.len() - end - 1;
            new.truncate(end + 1);
            Ok((new, pending))
        }
        None => Ok((Vec::new(), new.len())),
    }
}

/// The state a follow carries between batches.
struct Follower<'a> {
    name: &'a str,
    path: &'a Path,
    lines: &'a Lines,
    conn: Connection,
    checker: Incremental<'a>,
    replayed: Replayed,
    /// How far it has applied the file.
    position: Position,
    /// The device and inode of the file followed.
    identity: (u64, u64),
    events: usize,
}

/// How many applied bytes are compared on each poll.
const TAIL: usize = 4096;

impl<'a> Follower<'a> {
    /// Takes up a follow from what `store` records: checks that `dataset`
    /// still begins with what was applied (re-reading it through the rules)
    /// and replays the stored log for the held versions. `loaded_here`: this
    /// process loaded the store from `dataset` (the file `started` names).
    fn resume(
        name: &'a str,
        dataset: &'a Path,
        started: (u64, u64),
        store: &Path,
        lines: &'a Lines,
        loaded_here: bool,
    ) -> Result<Self, Stop> {
        let conn = open_writer(store)?;
        let (offset, sha) = recorded(&conn, store, name)?;
        let file = std::fs::File::open(dataset).map_err(|e| io(dataset, e))?;
        let opened = file.metadata().map_err(|e| io(dataset, e))?;
        if identity(&opened) != started {
            return Err(replaced(name));
        }
        // Shorter now than what was applied (checked again when the bytes
        // differ: it may have been cut while read here): the file this
        // process loaded was truncated; a file an earlier follow applied
        // may be that file truncated or another one.
        let shorter = |len: u64| {
            if loaded_here {
                return truncated(name, len, offset);
            }
            Stop::File(format!(
                "{name}: was truncated to {len} bytes after {offset} were applied, or is not the file {} was following; pass --force to load it again",
                store.display()
            ))
        };
        let changed = || match std::fs::metadata(dataset) {
            Ok(now) if now.len() < offset => shorter(now.len()),
            _ => not_followed(name, store, offset),
        };
        if opened.len() < offset {
            return Err(shorter(opened.len()));
        }
        // Every rule over what was applied, to carry the checker's state on.
        let mut hashed = Hashing {
            input: std::io::BufReader::new(file).take(offset),
            position: Position::new(),
        };
        let mut check = Check {
            name,
            lines,
            checker: None,
            events: 0,
        };
        let read = jsonl::stream(name, &mut hashed, &mut check);
        // Drain what the rules did not read (a file that is not the one
        // followed may stop them early), so the hash covers the whole prefix.
        std::io::copy(&mut hashed, &mut std::io::sink()).map_err(|e| io(dataset, e))?;
        let position = hashed.position;
        if position.sha256() != sha {
            return Err(changed());
        }
        read?;
        let Some(mut checker) = check.checker else {
            return Err(changed());
        };
        checker.settle()?;
        let header = checker.header().clone();
        let tx = conn.unchecked_transaction()?;
        let replayed = Replayed::read(&tx, header)?;
        let stored: i64 = tx.query_row("SELECT count(*) FROM events", [], |r| r.get(0))?;
        tx.finish()?;
        if stored as usize != check.events {
            return Err(changed());
        }
        Ok(Follower {
            name,
            path: dataset,
            lines,
            checker,
            replayed,
            position,
            identity: started,
            events: check.events,
            conn,
        })
    }

    /// Reads what was written since the last poll and applies its complete lines.
    fn poll(&mut self) -> Result<Batch, Stop> {
        let (complete, pending) = read_on(
            self.name,
            self.path,
            self.identity,
            self.position.offset,
            &self.position.tail,
        )?;
        if complete.is_empty() {
            if pending > MAX_JSONL_LINE {
                return Err(self.too_long(self.position.line + 1));
            }
            return Ok(self.batch(0, 0, false));
        }
        let checked = self.check(&complete)?;
        let mut next = self.position.clone();
        next.read(&complete);
        let replayed = self.apply(&checked, &next)?;
        self.position = next;
        self.events += checked.events.len();
        Ok(self.batch(checked.events.len(), checked.lines, replayed))
    }

    fn batch(&self, events: usize, lines: usize, replayed: bool) -> Batch {
        Batch {
            events,
            total: self.events,
            line: self.position.line,
            offset: self.position.offset,
            lines,
            skipped: 0,
            replayed,
            ..Batch::default()
        }
    }

    fn too_long(&self, line: usize) -> Stop {
        let error = DatasetError {
            file: self.name.to_owned(),
            location: Some(Location::line(line)),
            event: None,
            message: format!("line is longer than {MAX_JSONL_LINE} bytes"),
        };
        Stop::Dataset(DatasetErrors(vec![error]))
    }

    /// Checks complete new lines; returns their events, how many lines they
    /// were and the agents to fill into retractions (by seq), or every error
    /// (the follow stops).
    fn check(&mut self, complete: &[u8]) -> Result<Checked, Stop> {
        let mut events = Vec::new();
        let mut count = 0;
        let mut index = self.events;
        for raw in complete.split_inclusive(|&b| b == b'\n') {
            count += 1;
            let line = self.position.line + count;
            let raw = raw.strip_suffix(b"\n").unwrap_or(raw);
            if raw.len() > MAX_JSONL_LINE {
                return Err(self.too_long(line));
            }
            let Ok(text) = std::str::from_utf8(raw) else {
                return Err(Stop::Dataset(DatasetErrors(vec![DatasetError {
                    file: self.name.to_owned(),
                    location: Some(Location::line(line)),
                    event: None,
                    message: "the line is not valid UTF-8".to_owned(),
                }])));
            };
            if text.trim().is_empty() {
                continue;
            }
            self.lines.push(index, line);
            let parsed = jsonl::parse_event(text, line);
            if let Some(event) = self.checker.event(index, parsed) {
                events.push(event);
            }
            index += 1;
            if self.checker.failed() {
                break;
            }
        }
        // References to events not written yet break the rules now.
        let filled = self.checker.settle()?;
        Ok(Checked {
            events,
            lines: count,
            filled,
        })
    }

    /// Writes checked events and what they derive in one transaction; returns
    /// whether it went back before the last replayed instant (a late batch,
    /// replayed again from there). Nothing is written if a retraction matches nothing.
    fn apply(&mut self, checked: &Checked, next: &Position) -> Result<bool, Stop> {
        let tx = self.conn.transaction()?;
        let claims = std::mem::take(&mut self.replayed.claims);
        let mut log = LogWriter::with_claims(&tx, claims)?;
        let written = checked.events.iter().try_for_each(|e| log.write(e));
        self.replayed.claims = log.into_claims();
        written?;
        let mut fill = tx.prepare("UPDATE events SET agent = ?2 WHERE seq = ?1")?;
        for (seq, agent) in &checked.filled {
            fill.execute(params![*seq as i64, agent])?;
        }
        drop(fill);
        let replayed = || {
            checked
                .events
                .iter()
                .filter(|e| e.kind() != EventKind::Evidence)
                .map(Event::recorded_at)
        };
        // A batch naming the agent of earlier retractions replays the whole
        // log again, as a fresh load of this file replays it.
        let change = Change {
            first: replayed().min(),
            rewrote: None,
            whole: !checked.filled.is_empty(),
            last: self.replayed.last.max(replayed().max()),
        };
        let derived = self.replayed.apply(&tx, change)?;
        unmatched(
            self.name,
            self.lines,
            self.replayed.replay.unmatched().to_vec(),
        )?;
        next.write(&tx)?;
        tx.commit()?;
        let late = derived.late;
        self.replayed.committed(derived);
        Ok(late)
    }
}

/// Complete new lines, checked.
struct Checked {
    events: Vec<Event>,
    lines: usize,
    filled: Vec<(u64, String)>,
}

/// Checks a file's first lines as a load would, without writing (a follow
/// taken up again carries the checker on).
struct Check<'a> {
    name: &'a str,
    lines: &'a Lines,
    checker: Option<Incremental<'a>>,
    events: usize,
}

impl<'a> Sink for Check<'a> {
    fn header(&mut self, header: RawHeader, line: usize) {
        self.lines.header.set(line);
        self.checker = Some(Incremental::new(self.name, header, self.lines));
    }

    fn event(&mut self, index: usize, line: usize, event: ParsedEvent) {
        self.lines.push(index, line);
        if let Some(checker) = self.checker.as_mut() {
            checker.event(index, event);
        }
        self.events = index + 1;
    }
}

/// A reader that keeps the [`Position`] of what passes through it.
struct Hashing<R> {
    input: R,
    position: Position,
}

impl<R: std::io::BufRead> Read for Hashing<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.input.read(buf)?;
        self.position.read(&buf[..n]);
        Ok(n)
    }
}

impl<R: std::io::BufRead> std::io::BufRead for Hashing<R> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        self.input.fill_buf()
    }
    fn consume(&mut self, amt: usize) {
        // What is consumed is what the reader had buffered: read it first.
        if let Ok(buf) = self.input.fill_buf() {
            self.position.read(&buf[..amt.min(buf.len())]);
        }
        self.input.consume(amt);
    }
}

#[cfg(unix)]
fn identity(meta: &std::fs::Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (meta.dev(), meta.ino())
}

/// Where files have no inode, a replaced file is noticed by its bytes alone.
#[cfg(not(unix))]
fn identity(_: &std::fs::Metadata) -> (u64, u64) {
    (0, 0)
}

fn replaced(name: &str) -> Stop {
    Stop::File(format!("{name}: was replaced by another file"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a file holds past an offset: its bytes and its complete lines,
    /// a line still being written not counted; nothing past its end.
    #[test]
    fn unread_counts_the_complete_lines_past_an_offset() {
        let dir = tempfile::tempdir().expect("temp dir");
        let file = dir.path().join("f.jsonl");
        std::fs::write(&file, "one\ntwo\nthree\nfou").expect("written");
        assert_eq!(unread(&file, 0).expect("read"), (17, 3));
        assert_eq!(unread(&file, 4).expect("read"), (13, 2));
        assert_eq!(unread(&file, 14).expect("read"), (3, 0));
        assert_eq!(unread(&file, 17).expect("read"), (0, 0));
        assert_eq!(unread(&file, 99).expect("read"), (0, 0));
        assert!(unread(&dir.path().join("missing"), 0).is_err());
    }

    use asof_synth::{GenConfig, generate};

    /// A store followed from `file` (its first batch only), then `file` cut
    /// A followed store says what of its file it has not taken in: nothing
    /// when up to date, a line appended after; its file found beside it
    /// when the name it recorded is not there; and, verified, a file of that
    /// name whose applied bytes differ is not its file.
    #[test]
    fn behind_reads_what_the_followed_file_holds_past_the_store() {
        let dir = tempfile::tempdir().expect("a directory");
        let (file, store) = (dir.path().join("live.jsonl"), dir.path().join("live.db"));
        let mut text = Vec::new();
        let config = GenConfig {
            events: 100,
            topics: 3,
            agents: 2,
            seed: 5,
        };
        generate(config, &mut text).expect("generated");
        std::fs::write(&file, &text).expect("written");
        follow(&file, &store, false, std::time::Duration::ZERO, |_| false).expect("followed");
        let opened = Store::open(&store).expect("opens");
        let behind = |verify| behind(&opened, &store, verify).expect("read");
        let up_to_date = behind(true).expect("follows its file");
        assert_eq!(
            (up_to_date.file.clone(), up_to_date.lines),
            (file.clone(), 0)
        );
        let last = text
            .split(|&b| b == b'\n')
            .rev()
            .nth(1)
            .expect("a line")
            .to_vec();
        let mut more = std::fs::OpenOptions::new()
            .append(true)
            .open(&file)
            .expect("opens");
        std::io::Write::write_all(&mut more, &[&last[..], b"\n"].concat()).expect("appended");
        assert_eq!(behind(true).map(|b| b.lines), Some(1));
        // Another file under the same name: the applied bytes differ.
        let mut other = std::fs::read(&file).expect("read");
        other[10] ^= 1;
        std::fs::write(&file, &other).expect("written");
        assert_eq!(behind(true), None);
        assert_eq!(behind(false).map(|b| b.lines), Some(1));
    }

    /// to half: what taking the follow up again says.
    fn taken_up_after_a_cut(loaded_here: bool) -> String {
        let dir = tempfile::tempdir().expect("a directory");
        let (file, store) = (dir.path().join("live.jsonl"), dir.path().join("live.db"));
        let mut text = Vec::new();
        let config = GenConfig {
            events: 200,
            topics: 5,
            agents: 2,
            seed: 3,
        };
        generate(config, &mut text).expect("generated");
        std::fs::write(&file, &text).expect("written");
        follow(&file, &store, false, std::time::Duration::ZERO, |_| false).expect("followed");
        let half = text.len() as u64 / 2;
        let cut = std::fs::OpenOptions::new().write(true).open(&file);
        cut.and_then(|f| f.set_len(half)).expect("cut");
        let started = identity(&std::fs::metadata(&file).expect("the file"));
        let name = file.display().to_string();
        let lines = Lines::default();
        match Follower::resume(&name, &file, started, &store, &lines, loaded_here) {
            Err(Stop::File(message)) => message,
            Err(other) => panic!("another stop: {other}"),
            Ok(_) => panic!("taken up on a file shorter than what was applied"),
        }
    }

    /// The process that loaded the store knows the file was cut (its first
    /// load and the follow read the same file); a later one, with only the
    /// applied bytes' hash, cannot tell a cut file from another.
    #[test]
    fn a_file_cut_before_the_follow_takes_up_is_said_to_be_truncated() {
        let here = taken_up_after_a_cut(true);
        assert!(here.contains("was truncated to"), "{here}");
        assert!(!here.contains("not the file"), "{here}");
        let later = taken_up_after_a_cut(false);
        assert!(
            later.contains("was truncated to") && later.contains("or is not the file"),
            "{later}"
        );
    }
}
