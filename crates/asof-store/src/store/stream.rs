//! Loading a JSON Lines dataset without holding it (design.md §9, issue 6).
//!
//! ```text
//!  reader ─ lines ─▶ 2 parsers ─ events in file order ─▶ check ─▶ log rows
//!                                                          │
//!                          a slice at a time (recorded order)
//!                                                          ▼
//!          replay thread:  replay a slice ─▶ closed versions packed as rows
//!                            ▲      │                      │
//!                            └──────┘ held versions        ▼
//!                                     carried over     version rows
//!
//!  then, once both are committed:
//!    writing connection   the derived indexes (committed), the log's other indexes
//!    second connection    the scrub index
//!    third connection     the version pages, then the truths (once the
//!                         derived indexes are committed)
//! ```
//!
//! The file is read a few batches at a time and every event is written to the
//! log as soon as it is checked. While the file comes in recorded order (as a
//! log appended over time does), its events also go to a replay thread a slice
//! at a time (cut between recorded instants, so [`asof_core::engine::Slices`] sees
//! what a whole replay would). That thread carries only the held versions from
//! slice to slice and hands back what each slice closed packed as rows
//! (`write::Ready`), so the connection's thread, the load's limit, only
//! inserts them. A file out of recorded order is replayed a slice at a time on
//! the connection's thread once its log is written, read back by
//! `(recorded_at, seq)`. What stays in memory is the held set, one small entry
//! per event id (for references), the current slice, and SQLite's page cache —
//! not the log and not its versions — and, at the end, the scrub index, which
//! is computed whole before it is stored. Once
//! the log (with its indexes by id and by cited evidence) and the versions are
//! committed, the derived indexes and the log's other indexes are built while
//! a second connection computes the scrub index and a third the version pages
//! and then the truths (`derive::finish_derived_beside`). While it runs, a
//! load keeps the memory it frees committed (the guard the program installs
//! with [`super::on_bulk_load`]).

use super::Ranks;
use super::derive::{Derived, SLICE, Sliced, derive, finish_derived_beside};
use super::schema::{LOG_INDEXES_FIRST, LOG_INDEXES_LATER};
use super::write::{self, LogWriter, Ready};
use super::{LoadError, StoreError, write_atomically};
use asof_core::dataset::jsonl::{self, ParsedEvent, Sink};
use asof_core::dataset::raw::RawHeader;
use asof_core::dataset::validate::{Incremental, Positions, UNMATCHED_RETRACTION};
use asof_core::dataset::{DatasetError, DatasetErrors, Location};
use asof_core::model::{Event, EventBody, EventKind, Header};
use asof_core::time::Micros;
use rusqlite::{Connection, Transaction, params};
use std::cell::{Cell, RefCell};
use std::path::Path;

/// What a streamed load wrote.
#[derive(Debug, Clone, Default)]
pub struct Loaded {
    /// The file, as named.
    pub file: String,
    /// Evidence items written (then the other kinds, one count each).
    pub evidence: usize,
    /// Assertions written.
    pub assertions: usize,
    /// Retractions written.
    pub retractions: usize,
    /// Verifications written.
    pub verifications: usize,
    /// Agents in the header.
    pub agents: usize,
    /// Topics in the header.
    pub topics: usize,
    /// Belief versions derived.
    pub versions: usize,
}

/// "N events (E evidence, A assertions, R retractions), G agents, T topics, V
/// belief versions": what `load` and `validate` report.
impl std::fmt::Display for Loaded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let verifications = match self.verifications {
            0 => String::new(),
            n => format!(", {n} verifications"),
        };
        write!(
            f,
            "{} events ({} evidence, {} assertions, {} retractions{verifications}), {} agents, {} topics, {} belief versions",
            self.events(),
            self.evidence,
            self.assertions,
            self.retractions,
            self.agents,
            self.topics,
            self.versions
        )
    }
}

impl Loaded {
    /// Events written, of every kind.
    pub fn events(&self) -> usize {
        self.evidence + self.assertions + self.retractions + self.verifications
    }

    /// The counts of a dataset read whole, with the versions its replay derived.
    pub fn of(parsed: &asof_core::dataset::Parsed, versions: usize) -> Self {
        let mut loaded = Loaded {
            file: parsed.file.clone(),
            agents: parsed.dataset.header.agents.len(),
            topics: parsed.dataset.header.topics.len(),
            versions,
            ..Loaded::default()
        };
        for event in &parsed.dataset.events {
            loaded.count(event);
        }
        loaded
    }

    fn count(&mut self, event: &Event) {
        match event.kind() {
            EventKind::Evidence => self.evidence += 1,
            EventKind::Believe => self.assertions += 1,
            EventKind::Retract => self.retractions += 1,
            EventKind::Verify => self.verifications += 1,
        }
    }
}

/// Validates and loads the JSON Lines dataset at `dataset` into a new store at
/// `path`, atomically (see `write_atomically`), holding neither the file nor
/// its log nor its versions. The same checks as [`asof_core::dataset::read_path`]
/// and the same rows as [`super::Store::load`].
pub fn load_jsonl(dataset: &Path, path: &Path, force: bool) -> Result<Loaded, LoadError> {
    load_jsonl_sliced(dataset, path, force, SLICE)
}

/// [`load_jsonl`] replaying at least `slice` events at a time (tests cut the
/// log at every instant with 1).
#[doc(hidden)]
pub fn load_jsonl_sliced(
    dataset: &Path,
    path: &Path,
    force: bool,
    slice: usize,
) -> Result<Loaded, LoadError> {
    load_jsonl_upto(dataset, u64::MAX, path, force, slice)
}

/// [`load_jsonl_sliced`] of the dataset's first `len` bytes (a file still being
/// written, cut after its last complete line).
pub(super) fn load_jsonl_upto(
    dataset: &Path,
    len: u64,
    path: &Path,
    force: bool,
    slice: usize,
) -> Result<Loaded, LoadError> {
    use std::io::Read as _;
    let _kept = super::bulk_load_guard();
    let (name, input) = open(dataset)?;
    let input = input.take(len);
    let mut loaded = Loaded {
        file: name.clone(),
        ..Loaded::default()
    };
    write_atomically(path, force, |file| -> Result<(), LoadError> {
        let mut conn = Connection::open(file.path()).map_err(StoreError::from)?;
        // No in-memory temp store: index builds sort within the page cache and
        // spill to a file beyond it, so memory stays bounded whatever the size.
        conn.execute_batch(
            "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;
             PRAGMA cache_size = -131072; PRAGMA threads = 2;",
        )
        .map_err(StoreError::from)?;
        let tx = conn.transaction().map_err(StoreError::from)?;
        let (header, log_indexes_left) = load_into(
            &tx,
            &name,
            std::io::BufReader::new(input),
            slice,
            &mut loaded,
        )?;
        tx.commit().map_err(StoreError::from)?;
        // The rest is derived from what is committed: the scrub index is
        // computed by a second connection beside the log's other indexes and
        // the derived ones.
        finish_derived_beside(&mut conn, file.path(), &header, log_indexes_left)
            .map_err(StoreError::from)?;
        conn.close().map_err(|(_, e)| StoreError::from(e))?;
        Ok(())
    })?;
    Ok(loaded)
}

/// Reads, checks and writes the log at `input` and the versions its replay
/// derives, with the log's first indexes; returns the header and the log's indexes
/// still to build (all of them when the log was replayed back from the store,
/// which reads it through them). Those and what is derived from the versions
/// are left to [`finish_derived_beside`].
fn load_into(
    tx: &Transaction,
    name: &str,
    input: impl std::io::BufRead + Send,
    slice: usize,
    loaded: &mut Loaded,
) -> Result<(Header, &'static str), LoadError> {
    let sql = |e: rusqlite::Error| LoadError::Store(StoreError::from(e));
    let lines = Lines::default();
    let Read {
        header,
        agents,
        inline,
    } = read(name, input, &lines, Some(tx), slice, loaded)?;
    // The replay that ran beside the reading holds if the whole file came in
    // recorded order; otherwise its rows go and the log is replayed from the store.
    let inline = match inline {
        Some(mut inline) if !inline.abandoned => {
            // The last slice replays while the log's first indexes are built.
            inline.flush();
            Some(inline)
        }
        Some(inline) => {
            inline.abandon();
            tx.execute_batch(
                "DELETE FROM versions; DELETE FROM outcomes; DELETE FROM reconfirmations;",
            )
            .map_err(sql)?;
            None
        }
        None => None,
    };
    let mut fill = tx
        .prepare("UPDATE events SET agent = ?2 WHERE seq = ?1")
        .map_err(sql)?;
    for (seq, agent) in agents {
        fill.execute(params![seq as i64, agent]).map_err(sql)?;
    }
    // The last slice replays while the id index (what the scrub index's
    // marks need) and the cited-evidence index are built; the others are
    // built beside the scrub index.
    super::schema::build_indexes(tx, LOG_INDEXES_FIRST).map_err(sql)?;
    let (derived, left) = match inline {
        Some(inline) => (
            inline.finish(|closed| closed.write(tx)).map_err(sql)?,
            LOG_INDEXES_LATER,
        ),
        None => {
            super::schema::build_indexes(tx, LOG_INDEXES_LATER).map_err(sql)?;
            (derive(tx, &header, slice).map_err(sql)?, "")
        }
    };
    unmatched(name, &lines, derived.unmatched)?;
    loaded.versions = derived.versions;
    loaded.agents = header.agents.len();
    loaded.topics = header.topics.len();
    Ok((header, left))
}

/// The dataset file and the name its errors carry.
pub(super) fn open(dataset: &Path) -> Result<(String, std::fs::File), DatasetErrors> {
    let name = dataset.display().to_string();
    match std::fs::File::open(dataset) {
        Ok(file) => Ok((name, file)),
        Err(e) => Err(DatasetErrors(vec![DatasetError {
            file: name,
            location: None,
            event: None,
            message: format!("cannot open the file: {e}"),
        }])),
    }
}

/// Refuses a dataset whose retractions (seq, id) matched nothing.
pub(super) fn unmatched(
    name: &str,
    lines: &Lines,
    retractions: Vec<(u64, String)>,
) -> Result<(), DatasetErrors> {
    if retractions.is_empty() {
        return Ok(());
    }
    let errors = retractions
        .into_iter()
        .map(|(seq, id)| DatasetError {
            file: name.to_owned(),
            location: lines.line(seq as usize - 1).map(Location::line),
            event: Some(id),
            message: UNMATCHED_RETRACTION.to_owned(),
        })
        .collect();
    Err(DatasetErrors(errors))
}

/// Checks the JSON Lines dataset at `dataset` as [`load_jsonl`] would, without
/// writing a store: every rule, and replay (for retractions that match
/// nothing) a slice at a time beside the reading. `Ok(None)` when the file is
/// not in recorded order: replaying it then needs the whole log (or a store).
pub fn validate_jsonl(dataset: &Path) -> Result<Option<Loaded>, LoadError> {
    let (name, input) = open(dataset)?;
    let mut loaded = Loaded {
        file: name.clone(),
        ..Loaded::default()
    };
    let lines = Lines::default();
    let input = std::io::BufReader::new(input);
    let Read { header, inline, .. } = read(&name, input, &lines, None, SLICE, &mut loaded)?;
    let Some(inline) = inline.filter(|i| !i.abandoned) else {
        return Ok(None);
    };
    // Nothing is written, so handing over what slices closed cannot fail.
    let Ok(derived) = inline.finish(|_| Ok(())) else {
        return Ok(None);
    };
    unmatched(&name, &lines, derived.unmatched)?;
    loaded.versions = derived.versions;
    loaded.agents = header.agents.len();
    loaded.topics = header.topics.len();
    Ok(Some(loaded))
}

/// A dataset read through [`Reading`], every rule checked.
struct Read {
    header: Header,
    /// Agents to fill into retractions that named an assertion further on, by seq.
    agents: Vec<(u64, String)>,
    /// The replay that ran beside the reading (abandoned if the file left
    /// recorded order).
    inline: Option<Inline>,
}

/// Reads a JSON Lines dataset through [`Reading`], or returns every error.
fn read<'a>(
    name: &'a str,
    input: impl std::io::BufRead + Send,
    lines: &'a Lines,
    tx: Option<&'a Transaction<'a>>,
    slice: usize,
    loaded: &'a mut Loaded,
) -> Result<Read, LoadError> {
    let mut reading = Reading {
        name,
        lines,
        tx,
        checker: None,
        log: None,
        failure: None,
        inline: None,
        slice,
        loaded,
    };
    let streamed = jsonl::stream(name, input, &mut reading);
    let (checker, failure, inline) = (
        reading.checker.take(),
        reading.failure.take(),
        reading.inline.take(),
    );
    streamed?;
    // A stream that ends well has read a header.
    let checker = checker.ok_or_else(|| DatasetErrors(vec![jsonl::empty(name)]))?;
    let (header, agents) = checker.finish()?;
    if let Some(e) = failure {
        return Err(StoreError::from(e).into());
    }
    Ok(Read {
        header,
        agents,
        inline,
    })
}

/// A replay on its own thread, fed slices of the log as it is read, for as long
/// as the file comes in recorded order (as a log appended over time does). The
/// versions each slice closes come back to be written on the reading side.
struct Inline {
    slice: Vec<Event>,
    slice_len: usize,
    /// The last event's recorded instant.
    last: Option<Micros>,
    /// The file left recorded order (or named an assertion before it): the
    /// store replays the log once it is written.
    abandoned: bool,
    to_replay: Option<std::sync::mpsc::SyncSender<Vec<Event>>>,
    /// What each slice closed, packed into rows on the replay thread.
    closed: std::sync::mpsc::Receiver<Ready>,
    replaying: std::thread::JoinHandle<Derived>,
}

impl Inline {
    fn start(header: Header, slice_len: usize) -> Self {
        let (to_replay, slices) = std::sync::mpsc::sync_channel::<Vec<Event>>(1);
        let (send_closed, closed) = std::sync::mpsc::channel();
        let replaying = std::thread::spawn(move || {
            let codes = Ranks::of(&header);
            let mut replay = Sliced::new(&header);
            for mut slice in slices {
                let ready = replay.slice(&mut slice).ready(&codes);
                if send_closed.send(ready).is_err() {
                    break;
                }
            }
            let (last, derived) = replay.finish();
            let _ = send_closed.send(last.ready(&codes));
            derived
        });
        Inline {
            slice: Vec::with_capacity(slice_len),
            slice_len,
            last: None,
            abandoned: false,
            to_replay: Some(to_replay),
            closed,
            replaying,
        }
    }

    /// Takes the next event in file order; hands what finished slices closed to
    /// `on_closed`.
    fn push(
        &mut self,
        event: Event,
        on_closed: impl FnMut(Ready) -> rusqlite::Result<()>,
    ) -> rusqlite::Result<()> {
        let recorded_at = event.recorded_at();
        let unresolved = matches!(&event.body, EventBody::Retract(r) if r.agent.is_empty());
        if self.last.is_some_and(|last| recorded_at < last) || unresolved {
            self.abandoned = true;
            self.to_replay = None;
            self.slice = Vec::new();
            return Ok(());
        }
        if self.slice.len() >= self.slice_len && self.last != Some(recorded_at) {
            self.send();
        }
        self.last = Some(recorded_at);
        if event.kind() != EventKind::Evidence {
            self.slice.push(event);
        }
        self.closed.try_iter().try_for_each(on_closed)
    }

    fn send(&mut self) {
        // The next slice gets room for a slice at once, not grown by doubling.
        let slice = std::mem::replace(&mut self.slice, Vec::with_capacity(self.slice_len));
        self.hand_over(slice);
    }

    fn hand_over(&self, slice: Vec<Event>) {
        if let Some(to_replay) = &self.to_replay {
            // The replay thread only stops early by panicking, which join reports.
            let _ = to_replay.send(slice);
        }
    }

    /// Sends the last slice: the log is complete.
    fn flush(&mut self) {
        let last = std::mem::take(&mut self.slice);
        self.hand_over(last);
        self.to_replay = None;
    }

    /// Hands everything still to come to `on_closed` once the last slice is
    /// replayed.
    fn finish(
        mut self,
        on_closed: impl FnMut(Ready) -> rusqlite::Result<()>,
    ) -> rusqlite::Result<Derived> {
        self.flush();
        self.closed.iter().try_for_each(on_closed)?;
        Ok(self
            .replaying
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
    }

    fn abandon(mut self) {
        self.to_replay = None;
        drop(self.closed);
        // Its result is not wanted; a panic would still surface here.
        if let Err(panic) = self.replaying.join() {
            std::panic::resume_unwind(panic);
        }
    }
}

/// Event line numbers as runs: an event's line is its run's first line plus
/// its distance from the run's first event, so a file without blank lines
/// costs one entry.
#[derive(Default)]
pub(super) struct Lines {
    pub(super) header: Cell<usize>,
    runs: RefCell<Vec<(usize, usize)>>,
}

impl Lines {
    pub(super) fn push(&self, index: usize, line: usize) {
        let mut runs = self.runs.borrow_mut();
        match runs.last() {
            Some(&(first, first_line)) if first_line + (index - first) == line => {}
            _ => runs.push((index, line)),
        }
    }

    fn line(&self, index: usize) -> Option<usize> {
        let runs = self.runs.borrow();
        let run = runs.partition_point(|&(first, _)| first <= index);
        let (first, first_line) = runs.get(run.checked_sub(1)?)?;
        Some(first_line + (index - first))
    }
}

impl Positions for Lines {
    fn event(&self, index: usize) -> Option<Location> {
        self.line(index).map(Location::line)
    }

    fn field(&self, index: usize, _kind: &str, _field: &str) -> Option<Location> {
        self.event(index)
    }

    fn header(&self, _path: &str) -> Option<Location> {
        Some(Location::line(self.header.get()))
    }
}

/// Checks each event as it is read, appends it to the log (when there is a
/// store) and feeds the replay beside the reading, until a rule is broken;
/// after that it only checks, to report every error.
struct Reading<'a> {
    name: &'a str,
    lines: &'a Lines,
    /// The store the log goes to; `None` when only checking.
    tx: Option<&'a Transaction<'a>>,
    checker: Option<Incremental<'a>>,
    log: Option<LogWriter<'a>>,
    /// The first store error; the rest of the file is still checked.
    failure: Option<rusqlite::Error>,
    inline: Option<Inline>,
    slice: usize,
    loaded: &'a mut Loaded,
}

impl Sink for Reading<'_> {
    fn header(&mut self, header: RawHeader, line: usize) {
        self.lines.header.set(line);
        let checker = Incremental::new(self.name, header, self.lines);
        if !checker.failed() {
            if let Some(tx) = self.tx {
                let written = write::write_head(tx, checker.header(), self.name, &[])
                    .and_then(|()| LogWriter::new(tx));
                match written {
                    Ok(log) => self.log = Some(log),
                    Err(e) => self.failure = Some(e),
                }
            }
            self.inline = Some(Inline::start(checker.header().clone(), self.slice));
        }
        self.checker = Some(checker);
    }

    fn event(&mut self, index: usize, line: usize, event: ParsedEvent) {
        self.lines.push(index, line);
        let Some(checker) = self.checker.as_mut() else {
            return;
        };
        let Some(event) = checker.event(index, event) else {
            return;
        };
        self.loaded.count(&event);
        if checker.failed() || self.failure.is_some() {
            self.log = None;
            self.inline = None;
            return;
        }
        if let Some(log) = self.log.as_mut()
            && let Err(e) = log.write(&event)
        {
            self.failure = Some(e);
            return;
        }
        let Some(inline) = self.inline.as_mut().filter(|i| !i.abandoned) else {
            return;
        };
        let tx = self.tx;
        let pushed = inline.push(event, |closed| tx.map_or(Ok(()), |tx| closed.write(tx)));
        if let Err(e) = pushed {
            self.failure = Some(e);
        }
    }
}
