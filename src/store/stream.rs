//! Loading a JSON Lines dataset without holding it (SPEC §7, issue 6).
//!
//! ```text
//!  reader ─ lines ─▶ 2 parsers ─ events in file order ─▶ check ─▶ log rows
//!                                                                    │
//!             log indexes ◀──────────────────────────────────────────┘
//!                  │
//!  events by (recorded_at, seq) ─▶ replay a slice ─▶ closed versions ─▶ rows
//!                                     ▲      │
//!                                     └──────┘ held versions carried over
//! ```
//!
//! The file is read a few batches at a time and every event is written to the
//! log as soon as it is checked; the log is then read back in replay order and
//! replayed a slice at a time (cut between recorded instants, so
//! [`engine::resume_from`] sees what a whole replay would), writing each
//! slice's closed versions and carrying only the held ones. What stays in
//! memory is the held set, one small entry per event id (for references), the
//! current slice, and SQLite's page cache — not the log and not its versions.

use super::read::{self, EVENT_COLUMNS};
use super::schema::{DERIVED_INDEXES, LOG_INDEXES};
use super::write::{self, AssertionRef, LogWriter};
use super::{LoadError, StoreError, write_atomically};
use crate::dataset::jsonl::{self, ParsedEvent, Sink};
use crate::dataset::raw::RawHeader;
use crate::dataset::validate::{Incremental, Positions, UNMATCHED_RETRACTION};
use crate::dataset::{DatasetError, DatasetErrors, Location};
use crate::engine::answers::{self, Stint, Truth};
use crate::engine::{self, Effect, Replay};
use crate::model::{Event, EventBody, EventKind, Header, Name, Names};
use crate::time::{Micros, OPEN};
use rusqlite::{Connection, Transaction, params};
use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet};
use std::path::Path;

/// Events replayed per slice (a slice ends between two recorded instants).
pub(super) const SLICE: usize = 1 << 16;

/// What a streamed load wrote.
#[derive(Debug, Clone, Default)]
pub struct Loaded {
    pub file: String,
    /// Events by kind: evidence, assertions, retractions.
    pub evidence: usize,
    pub assertions: usize,
    pub retractions: usize,
    pub agents: usize,
    pub topics: usize,
    pub versions: usize,
}

/// "N events (E evidence, A assertions, R retractions), G agents, T topics, V
/// belief versions": what `load` and `validate` report.
impl std::fmt::Display for Loaded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} events ({} evidence, {} assertions, {} retractions), {} agents, {} topics, {} belief versions",
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
    pub fn events(&self) -> usize {
        self.evidence + self.assertions + self.retractions
    }

    /// The counts of a dataset read whole, with the versions its replay derived.
    pub fn of(parsed: &crate::dataset::Parsed, versions: usize) -> Self {
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
        }
    }
}

/// Validates and loads the JSON Lines dataset at `dataset` into a new store at
/// `path`, atomically (see [`write_atomically`]), holding neither the file nor
/// its log nor its versions. The same checks as [`crate::dataset::read_path`]
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
    let (name, input) = open(dataset)?;
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
        load_into(
            &tx,
            &name,
            std::io::BufReader::new(input),
            slice,
            &mut loaded,
        )?;
        tx.commit().map_err(StoreError::from)?;
        conn.close().map_err(|(_, e)| StoreError::from(e))?;
        Ok(())
    })?;
    Ok(loaded)
}

fn load_into(
    tx: &Transaction,
    name: &str,
    input: impl std::io::BufRead + Send,
    slice: usize,
    loaded: &mut Loaded,
) -> Result<(), LoadError> {
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
            // The last slice replays while the log's indexes are built.
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
    tx.execute_batch(LOG_INDEXES).map_err(sql)?;
    let derived = match inline {
        Some(inline) => inline.finish(|closed| closed.write(tx)).map_err(sql)?,
        None => derive(tx, &header, slice).map_err(sql)?,
    };
    unmatched(name, &lines, derived.unmatched)?;
    finish_derived(tx, &header).map_err(sql)?;
    loaded.versions = derived.versions;
    loaded.agents = header.agents.len();
    loaded.topics = header.topics.len();
    Ok(())
}

/// The dataset file and the name its errors carry.
fn open(dataset: &Path) -> Result<(String, std::fs::File), DatasetErrors> {
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
fn unmatched(
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
    closed: std::sync::mpsc::Receiver<Closed>,
    replaying: std::thread::JoinHandle<Derived>,
}

impl Inline {
    fn start(header: Header, slice_len: usize) -> Self {
        let (to_replay, slices) = std::sync::mpsc::sync_channel::<Vec<Event>>(1);
        let (send_closed, closed) = std::sync::mpsc::channel();
        let replaying = std::thread::spawn(move || {
            let mut replay = Sliced::new(header);
            for mut slice in slices {
                if send_closed.send(replay.slice(&mut slice)).is_err() {
                    break;
                }
            }
            let (last, derived) = replay.finish();
            let _ = send_closed.send(last);
            derived
        });
        Inline {
            slice: Vec::new(),
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
        on_closed: impl FnMut(Closed) -> rusqlite::Result<()>,
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
        let slice = std::mem::take(&mut self.slice);
        if let Some(to_replay) = &self.to_replay {
            // The replay thread only stops early by panicking, which join reports.
            let _ = to_replay.send(slice);
        }
    }

    /// Sends the last slice: the log is complete.
    fn flush(&mut self) {
        self.send();
        self.to_replay = None;
    }

    /// Hands everything still to come to `on_closed` once the last slice is
    /// replayed.
    fn finish(
        mut self,
        on_closed: impl FnMut(Closed) -> rusqlite::Result<()>,
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
struct Lines {
    header: Cell<usize>,
    runs: RefCell<Vec<(usize, usize)>>,
}

impl Lines {
    fn push(&self, index: usize, line: usize) {
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

/// What replaying a log derived, beyond the rows it wrote.
#[derive(Default)]
pub(super) struct Derived {
    pub versions: usize,
    /// Retractions that matched nothing: seq and id.
    pub unmatched: Vec<(u64, String)>,
}

/// Replays the log stored in `tx` a slice at a time, reading it back in
/// (recorded_at, seq) order, and writes what it derives.
pub(super) fn derive(
    tx: &Transaction,
    header: &Header,
    slice_len: usize,
) -> rusqlite::Result<Derived> {
    let mut stmt = tx.prepare(&format!(
        "SELECT {EVENT_COLUMNS},
            (SELECT group_concat(c.evidence, char(31) ORDER BY c.pos) FROM citations c
              WHERE c.seq = events.seq)
         FROM events WHERE kind <> 'evidence' ORDER BY recorded_at, seq"
    ))?;
    let mut rows = stmt.query([])?;
    let mut replay = Sliced::new(header.clone());
    let mut slice: Vec<Event> = Vec::with_capacity(slice_len.min(SLICE));
    while let Some(r) = rows.next()? {
        let event = read::event(r, crate::store::codec::split(r.get(19)?))?;
        if slice.len() >= slice_len
            && slice.last().map(Event::recorded_at) != Some(event.recorded_at())
        {
            replay.slice(&mut slice).write(tx)?;
        }
        slice.push(event);
    }
    replay.slice(&mut slice).write(tx)?;
    let (last, derived) = replay.finish();
    last.write(tx)?;
    Ok(derived)
}

/// The derived indexes and the truths table, once every version is written.
pub(super) fn finish_derived(tx: &Transaction, header: &Header) -> rusqlite::Result<()> {
    tx.execute_batch(DERIVED_INDEXES)?;
    write::write_truths(tx, &truths(tx, header)?)
}

/// A replay going through the log a slice at a time.
struct Sliced {
    header: Header,
    /// Versions held after the last slice.
    held: Vec<crate::model::Version>,
    next_id: u64,
    /// Seq and citations of the assertions of held versions (and of the slice).
    origins: HashMap<String, (i64, Vec<String>)>,
    derived: Derived,
}

/// What one slice closed, ready to write.
struct Closed {
    replay: Replay,
    /// Seq and citations of the closed versions' assertions.
    origins: HashMap<String, (i64, Vec<String>)>,
}

impl Closed {
    fn write(&self, tx: &Transaction) -> rusqlite::Result<()> {
        let origins: HashMap<&str, AssertionRef> = self
            .origins
            .iter()
            .map(|(id, (seq, cites))| (id.as_str(), AssertionRef { seq: *seq, cites }))
            .collect();
        write::replayed(tx, &self.replay, 0, &origins)
    }
}

impl Sliced {
    fn new(header: Header) -> Self {
        Sliced {
            header,
            held: Vec::new(),
            next_id: 1,
            origins: HashMap::new(),
            derived: Derived::default(),
        }
    }

    /// Replays `slice` (events in replay order, ending between two recorded
    /// instants) and empties it.
    fn slice(&mut self, slice: &mut Vec<Event>) -> Closed {
        let held = std::mem::take(&mut self.held);
        let (replay, next_id) =
            engine::resume_from(&self.header, held, self.next_id, slice.iter().collect());
        self.next_id = next_id;
        for e in slice.iter() {
            if let EventBody::Believe(a) = &e.body {
                self.origins
                    .insert(a.id.clone(), (e.seq as i64, a.supported_by.clone()));
            }
        }
        for o in &replay.outcomes {
            if o.effect == Effect::NoMatch
                && let Some(e) = slice.iter().find(|e| e.seq == o.seq)
            {
                self.derived.unmatched.push((o.seq, e.id().to_owned()));
            }
        }
        slice.clear();
        let (held, closed): (Vec<_>, Vec<_>) = replay
            .versions
            .into_iter()
            .partition(|v| v.superseded_at == OPEN);
        self.held = held;
        let closed = self.closing(closed, replay.outcomes);
        let keep: HashSet<&str> = self.held.iter().map(|v| &*v.assertion).collect();
        self.origins.retain(|id, _| keep.contains(id.as_str()));
        closed
    }

    fn closing(
        &mut self,
        versions: Vec<crate::model::Version>,
        outcomes: Vec<engine::Outcome>,
    ) -> Closed {
        self.derived.versions += versions.len();
        let origins = versions
            .iter()
            .filter_map(|v| {
                let (id, origin) = self.origins.get_key_value(&*v.assertion)?;
                Some((id.clone(), origin.clone()))
            })
            .collect();
        Closed {
            replay: Replay { versions, outcomes },
            origins,
        }
    }

    /// The versions still held at the end of the log, and the totals.
    fn finish(mut self) -> (Closed, Derived) {
        let held = std::mem::take(&mut self.held);
        let last = self.closing(held, Vec::new());
        (last, self.derived)
    }
}

/// What the working answer reads of a version, from the topic index.
struct Piece {
    recorded_at: Micros,
    superseded_at: Micros,
    valid_from: Micros,
    id: u64,
    claim: Name,
}

impl Stint for Piece {
    fn recorded_at(&self) -> Micros {
        self.recorded_at
    }
    fn superseded_at(&self) -> Micros {
        self.superseded_at
    }
    fn valid_from(&self) -> Micros {
        self.valid_from
    }
    fn id(&self) -> u64 {
        self.id
    }
    fn claim(&self) -> &Name {
        &self.claim
    }
}

/// Each (agent, topic)'s convergence on its topic's resolution, read one topic
/// at a time from the covering topic index.
fn truths(tx: &Transaction, header: &Header) -> rusqlite::Result<Vec<((String, String), Truth)>> {
    let span = read::span(tx)?.unwrap_or((0, 0));
    let mut stmt = tx.prepare(
        "SELECT topic, agent, claim, valid_from, recorded_at, superseded_at, id FROM versions
         WHERE topic IN (SELECT id FROM topics WHERE resolution IS NOT NULL) ORDER BY topic",
    )?;
    let mut rows = stmt.query([])?;
    let mut names = Names::default();
    let mut out = Vec::new();
    let mut topic: Option<Name> = None;
    let mut by_agent: HashMap<Name, Vec<Piece>> = HashMap::new();
    let mut flush = |topic: &Option<Name>, by_agent: &mut HashMap<Name, Vec<Piece>>| {
        let Some(topic) = topic else { return };
        let Some(resolution) = header.topic(topic).and_then(|t| t.resolution.as_deref()) else {
            return;
        };
        for (agent, pieces) in by_agent.drain() {
            let list: Vec<&Piece> = pieces.iter().collect();
            let truth = answers::truth(&answers::steps_of(&list), resolution, span);
            out.push(((agent.to_string(), topic.to_string()), truth));
        }
    };
    while let Some(r) = rows.next()? {
        let this = names.get(r.get_ref(0)?.as_str()?);
        if topic.as_ref() != Some(&this) {
            flush(&topic, &mut by_agent);
            topic = Some(this);
        }
        let agent = names.get(r.get_ref(1)?.as_str()?);
        by_agent.entry(agent).or_default().push(Piece {
            claim: names.get(r.get_ref(2)?.as_str()?),
            valid_from: r.get(3)?,
            recorded_at: r.get(4)?,
            superseded_at: r.get(5)?,
            id: r.get::<_, i64>(6)? as u64,
        });
    }
    flush(&topic, &mut by_agent);
    Ok(out)
}
