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
use crate::dataset::validate::{Incremental, Positions};
use crate::dataset::{DatasetError, DatasetErrors, Location};
use crate::engine::{self, Effect, Replay};
use crate::model::{Event, EventBody, EventKind, Header, Name, Names};
use crate::query::answers::{self, Stint, Truth};
use crate::time::{Micros, OPEN};
use rusqlite::{Connection, Transaction, params};
use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet};
use std::path::Path;

/// Events replayed per slice (a slice ends between two recorded instants).
const SLICE: usize = 1 << 16;

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

impl Loaded {
    pub fn events(&self) -> usize {
        self.evidence + self.assertions + self.retractions
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
    let name = dataset.display().to_string();
    let input = std::fs::File::open(dataset).map_err(|e| {
        DatasetErrors(vec![DatasetError {
            file: name.clone(),
            location: None,
            event: None,
            message: format!("cannot open the file: {e}"),
        }])
    })?;
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
    let lines = Lines::default();
    let (streamed, checker, failure) = {
        let mut sink = LogSink {
            name,
            tx,
            lines: &lines,
            checker: None,
            log: None,
            failure: None,
            loaded,
        };
        let streamed = jsonl::stream(name, input, &mut sink);
        (streamed, sink.checker.take(), sink.failure.take())
    };
    streamed?;
    let checker = checker.ok_or_else(|| StoreError::Sqlite(rusqlite::Error::InvalidQuery))?;
    let (header, agents) = checker.finish()?;
    if let Some(e) = failure {
        return Err(StoreError::from(e).into());
    }
    let sql = |e: rusqlite::Error| LoadError::Store(StoreError::from(e));
    let mut fill = tx
        .prepare("UPDATE events SET agent = ?2 WHERE seq = ?1")
        .map_err(sql)?;
    for (seq, agent) in agents {
        fill.execute(params![seq as i64, agent]).map_err(sql)?;
    }
    tx.execute_batch(LOG_INDEXES).map_err(sql)?;

    let derived = derive(tx, &header, slice).map_err(sql)?;
    if !derived.unmatched.is_empty() {
        let errors = derived
            .unmatched
            .into_iter()
            .map(|(seq, id)| DatasetError {
                file: name.to_owned(),
                location: lines.line(seq as usize - 1).map(Location::line),
                event: Some(id),
                message: "the retraction matches no belief held at its recorded time".to_owned(),
            })
            .collect();
        return Err(DatasetErrors(errors).into());
    }
    loaded.versions = derived.versions;
    loaded.agents = header.agents.len();
    loaded.topics = header.topics.len();
    Ok(())
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

/// Checks each event as it is read and appends it to the log until a rule is
/// broken; after that it only checks, to report every error.
struct LogSink<'a> {
    name: &'a str,
    tx: &'a Transaction<'a>,
    lines: &'a Lines,
    checker: Option<Incremental<'a>>,
    log: Option<LogWriter<'a>>,
    /// The first store error; the rest of the file is still checked.
    failure: Option<rusqlite::Error>,
    loaded: &'a mut Loaded,
}

impl Sink for LogSink<'_> {
    fn header(&mut self, header: RawHeader, line: usize) {
        self.lines.header.set(line);
        let checker = Incremental::new(self.name, header, self.lines);
        if !checker.failed() {
            let written = write::write_head(self.tx, checker.header(), self.name, &[])
                .and_then(|()| LogWriter::new(self.tx));
            match written {
                Ok(log) => self.log = Some(log),
                Err(e) => self.failure = Some(e),
            }
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
        match event.kind() {
            EventKind::Evidence => self.loaded.evidence += 1,
            EventKind::Believe => self.loaded.assertions += 1,
            EventKind::Retract => self.loaded.retractions += 1,
        }
        if checker.failed() || self.failure.is_some() {
            self.log = None;
            return;
        }
        if let Some(log) = self.log.as_mut()
            && let Err(e) = log.write(&event)
        {
            self.failure = Some(e);
        }
    }
}

/// What replaying a stored log derived.
pub(super) struct Derived {
    pub versions: usize,
    /// Retractions that matched nothing: seq and id.
    pub unmatched: Vec<(u64, String)>,
}

/// Replays the log stored in `tx` a slice at a time and writes what it derives
/// (versions, outcomes, reconfirmations, truths) and the derived indexes.
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
    let mut replay = Sliced {
        header,
        held: Vec::new(),
        next_id: 1,
        origins: HashMap::new(),
        derived: Derived {
            versions: 0,
            unmatched: Vec::new(),
        },
    };
    let mut slice: Vec<Event> = Vec::with_capacity(slice_len.min(SLICE));
    while let Some(r) = rows.next()? {
        let event = read::event(r, crate::query::split(r.get(19)?))?;
        if slice.len() >= slice_len
            && slice.last().map(Event::recorded_at) != Some(event.recorded_at())
        {
            replay.slice(tx, &mut slice)?;
        }
        slice.push(event);
    }
    replay.slice(tx, &mut slice)?;
    let derived = replay.finish(tx)?;
    tx.execute_batch(DERIVED_INDEXES)?;
    write::write_truths(tx, &truths(tx, header)?)?;
    Ok(derived)
}

/// A replay going through the log a slice at a time.
struct Sliced<'h> {
    header: &'h Header,
    /// Versions held after the last slice.
    held: Vec<crate::model::Version>,
    next_id: u64,
    /// Seq and citations of the assertions of held versions (and of the slice).
    origins: HashMap<String, (i64, Vec<String>)>,
    derived: Derived,
}

impl Sliced<'_> {
    fn slice(&mut self, tx: &Transaction, slice: &mut Vec<Event>) -> rusqlite::Result<()> {
        let held = std::mem::take(&mut self.held);
        let (replay, next_id) =
            engine::resume_from(self.header, held, self.next_id, slice.iter().collect());
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
        let (held, closed): (Vec<_>, Vec<_>) = replay
            .versions
            .into_iter()
            .partition(|v| v.superseded_at == OPEN);
        self.derived.versions += closed.len();
        self.write(
            tx,
            &Replay {
                versions: closed,
                outcomes: replay.outcomes,
            },
        )?;
        let keep: HashSet<&str> = held.iter().map(|v| &*v.assertion).collect();
        self.origins.retain(|id, _| keep.contains(id.as_str()));
        self.held = held;
        slice.clear();
        Ok(())
    }

    fn write(&self, tx: &Transaction, replay: &Replay) -> rusqlite::Result<()> {
        let origins: HashMap<&str, AssertionRef> = self
            .origins
            .iter()
            .map(|(id, (seq, cites))| (id.as_str(), AssertionRef { seq: *seq, cites }))
            .collect();
        write::replayed(tx, replay, 0, &origins)
    }

    /// Writes the versions still held at the end of the log.
    fn finish(mut self, tx: &Transaction) -> rusqlite::Result<Derived> {
        let held = Replay {
            versions: std::mem::take(&mut self.held),
            outcomes: Vec::new(),
        };
        self.derived.versions += held.versions.len();
        self.write(tx, &held)?;
        Ok(self.derived)
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
