//! Deriving versions from a stored log a slice at a time (design.md §3 over the
//! log as stored): the streamed load, `rebuild` and the slice replay beside a
//! reading all call [`derive`], which reads the log back in (recorded_at, seq)
//! order, replays each slice with one [`asof_core::engine::Slices`], which keeps
//! only the held versions, and writes what each slice closes; [`finish_derived`]
//! then computes each pair's time to the truth one topic at a time.

use super::read::{self, EVENT_COLUMN_COUNT, EVENT_COLUMNS};
use super::schema::DERIVED_INDEXES;
use super::write::{self, AssertionRef};
use asof_core::engine::answers::{self, Stint, Truth};
use asof_core::engine::{self, Effect, Replay};
use asof_core::model::{Event, EventBody, Header, IdMap, IdSet, Name, Names};
use asof_core::time::{Micros, OPEN};
use rusqlite::Transaction;
use std::collections::HashMap;
use std::sync::Arc;

/// Events replayed per slice (a slice ends between two recorded instants).
pub(super) const SLICE: usize = 1 << 16;

/// What replaying a log derived, beyond the rows it wrote.
#[derive(Clone, Default)]
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
    let replay = replay_log(tx, header, slice_len, Write::Rows, None, |_, _| {})?;
    let (last, derived) = replay.finish();
    last.write(tx)?;
    Ok(derived)
}

/// What [`replay_log`] does with the versions each slice closes.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Write {
    /// Nothing (the replay is wanted for its held versions).
    Not,
    /// Inserts them.
    Rows,
    /// Inserts each in place of its row as a held version, if the store has
    /// one (a follow's batch that replays after every instant replayed
    /// before leaves the held rows in place).
    OverHeld,
}

/// Replays the log stored in `tx` as [`derive`] does — or, given `from`
/// (an instant and the replay of every event recorded before it), only the
/// events recorded at or after that instant, onto that replay — writing what
/// each slice closes as `write` says. Calls `cut(instant, replay)` with the replay
/// of the events recorded before `instant` at each slice's end and before the
/// newest instant (a follow keeps some, to replay again from there). Returns
/// the replay with the versions still held (not written).
pub(super) fn replay_log(
    tx: &Transaction,
    header: &Header,
    slice_len: usize,
    write: Write,
    from: Option<(Micros, Sliced)>,
    mut cut: impl FnMut(Micros, &Sliced),
) -> rusqlite::Result<Sliced> {
    let (start, mut replay) = from.unwrap_or_else(|| (Micros::MIN, Sliced::new(header)));
    let mut stmt = tx.prepare(&log_query(
        "AND recorded_at >= ?1 ORDER BY recorded_at, seq",
    ))?;
    let mut rows = stmt.query([start])?;
    let mut slice: Vec<Event> = Vec::with_capacity(slice_len.min(SLICE));
    let flush = |replay: &mut Sliced, slice: &mut Vec<Event>| {
        let closed = replay.slice(slice);
        match write {
            Write::Not => Ok(()),
            Write::Rows => closed.write(tx),
            Write::OverHeld => closed.write_over_held(tx),
        }
    };
    while let Some(r) = rows.next()? {
        let event = read::event(r, crate::store::codec::split(r.get(EVENT_COLUMN_COUNT)?))?;
        if slice.len() >= slice_len
            && slice.last().map(Event::recorded_at) != Some(event.recorded_at())
        {
            flush(&mut replay, &mut slice)?;
            cut(event.recorded_at(), &replay);
        }
        slice.push(event);
    }
    // The newest instant on its own, after the replay before it is cut.
    if let Some(newest) = slice.last().map(Event::recorded_at) {
        let mut at_newest = slice.split_off(slice.partition_point(|e| e.recorded_at() < newest));
        if !slice.is_empty() {
            flush(&mut replay, &mut slice)?;
        }
        cut(newest, &replay);
        flush(&mut replay, &mut at_newest)?;
    }
    Ok(replay)
}

/// A query of the replayed events of the stored log (evidence is not
/// replayed) with their citations, as [`read::event`] reads them, narrowed
/// and ordered by `rest`.
pub(super) fn log_query(rest: &str) -> String {
    format!(
        "SELECT {EVENT_COLUMNS},
            (SELECT group_concat(c.evidence, char(31) ORDER BY c.pos) FROM citations c
              WHERE c.seq = events.seq)
         FROM events WHERE kind <> 'evidence' {rest}"
    )
}

/// The derived indexes, the truths table (read through the topic index) and
/// the read indexes, once every version is written.
pub(super) fn finish_derived(tx: &Transaction, header: &Header) -> rusqlite::Result<()> {
    super::schema::build_indexes(tx, DERIVED_INDEXES)?;
    write::write_truths(tx, &truths(tx, header)?)?;
    super::write_read_indexes(tx, header)
}

/// [`finish_derived`] for a new store at `path` that `conn` alone writes,
/// its log, the log's id index and its versions committed; `log_indexes`
/// are the log's indexes still to build. The scrub index (which reads the log
/// through its id index) is computed on a second connection, and the version
/// pages on a third, while `conn` builds the derived indexes, commits them,
/// then builds those of the log; once the derived ones are committed and the
/// pages written, the third connection computes the truths (through the
/// topic index). The pages go into a temporary store of their own, moved in
/// whole at the end (a reader cannot write them in place). Meanwhile the
/// store is in write-ahead-log mode, so the readers see the committed rows
/// as the writer adds to them. The store leaves that mode (its log
/// checkpointed and removed) before the truths, the pages and the scrub
/// index are written.
pub(super) fn finish_derived_beside(
    conn: &mut rusqlite::Connection,
    path: &std::path::Path,
    header: &Header,
    log_indexes: &str,
) -> rusqlite::Result<()> {
    // Whether the journal mode is now `to` (SQLite keeps the old one when it cannot).
    let set_mode = |conn: &rusqlite::Connection, to: &str| -> rusqlite::Result<bool> {
        let now: String =
            conn.query_row(&format!("PRAGMA journal_mode = {to}"), [], |r| r.get(0))?;
        Ok(now.eq_ignore_ascii_case(to))
    };
    // A file system without the shared memory that mode needs: one connection.
    if !set_mode(conn, "WAL")? {
        let tx = conn.transaction()?;
        super::schema::build_indexes(&tx, log_indexes)?;
        finish_derived(&tx, header)?;
        return tx.commit();
    }
    conn.execute_batch("PRAGMA wal_autocheckpoint = 0;")?;
    // The pages are written apart, beside the store (removed when dropped).
    let pages_apart = super::temporary_in(super::directory_of(path)).map_err(|e| {
        rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_CANTOPEN),
            Some(format!("a temporary file beside the new store: {e}")),
        )
    })?;
    let (computed, truths) = std::thread::scope(|s| -> rusqlite::Result<_> {
        let computing =
            s.spawn(|| reading(path, |snapshot| super::scrub::compute(snapshot, header)));
        // Told once the derived indexes are committed.
        let (indexed, derived_indexes) = std::sync::mpsc::channel::<()>();
        let apart = pages_apart.path();
        let pages_then_truths = s.spawn(move || {
            reading(path, |snapshot| super::pages::write_apart(snapshot, apart))?;
            // Then the truths, read through the topic index. Dropped unsent,
            // the writer failed: its error is the load's.
            match derived_indexes.recv() {
                Ok(()) => reading(path, |snapshot| truths(snapshot, header)),
                Err(_) => Ok(Vec::new()),
            }
        });
        let tx = conn.transaction()?;
        super::schema::build_indexes(&tx, DERIVED_INDEXES)?;
        tx.commit()?;
        // The pages' thread may have failed and gone: its error is joined below.
        let _ = indexed.send(());
        let tx = conn.transaction()?;
        super::schema::build_indexes(&tx, log_indexes)?;
        tx.commit()?;
        let truths = pages_then_truths
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))?;
        let computed = computing
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))?;
        Ok((computed, truths))
    })?;
    // The readers are closed: nothing stops the checkpoint.
    if !set_mode(conn, "OFF")? {
        return Err(rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_BUSY),
            Some("the new store could not leave write-ahead-log mode".to_owned()),
        ));
    }
    let tx = conn.transaction()?;
    write::write_truths(&tx, &truths)?;
    super::scrub::store(&tx, &computed)?;
    tx.commit()?;
    super::pages::take_apart(conn, pages_apart.path())
}

/// What `compute` makes of the store at `path` on a read-only connection of
/// its own, in one snapshot.
fn reading<T>(
    path: &std::path::Path,
    compute: impl FnOnce(&Transaction) -> rusqlite::Result<T>,
) -> rusqlite::Result<T> {
    use rusqlite::OpenFlags;
    let reader = rusqlite::Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    let snapshot = reader.unchecked_transaction()?;
    let made = compute(&snapshot)?;
    snapshot.finish()?;
    Ok(made)
}

/// A replay going through the log a slice at a time.
#[derive(Clone)]
pub(super) struct Sliced {
    /// The replay so far, holding the versions held after the last slice.
    replaying: engine::Slices,
    /// The assertions of held versions (and of the slice), by id (a copy
    /// of the replay copies the ids: most are short enough to be held
    /// inline, without an allocation each).
    origins: IdMap<Name, Arc<Origin>>,
    derived: Derived,
}

/// An assertion's seq and the evidence it cites, taken from its event once
/// and shared by the versions it derives.
struct Origin {
    seq: i64,
    cites: Vec<String>,
}

/// What one slice closed, ready to write.
pub(super) struct Closed {
    replay: Replay,
    /// The origin of each closed version's assertion, in the versions' order.
    origins: Vec<Option<Arc<Origin>>>,
}

impl Closed {
    pub(super) fn write(&self, tx: &Transaction) -> rusqlite::Result<()> {
        let codes = write::Codes::load(tx)?;
        self.ready(&codes.header).write_with(tx, codes)
    }

    /// These rows ready to insert (see [`write::Ready`]), agents and topics
    /// coded by `codes`.
    pub(super) fn ready(&self, codes: &super::Ranks) -> write::Ready {
        let origin = |i: usize, _: &asof_core::model::Version| {
            let o = self.origins.get(i)?.as_deref()?;
            Some(AssertionRef {
                seq: o.seq,
                cites: &o.cites,
            })
        };
        write::Ready::of(&self.replay, 0, origin, codes)
    }

    /// Writes these versions, each in place of the store's row of it as a
    /// held version (if any): one key look-up per version.
    pub(super) fn write_over_held(&self, tx: &Transaction) -> rusqlite::Result<()> {
        let keys = self.replay.versions.iter().map(|v| (v.recorded_at, v.id));
        delete_held(tx, keys)?;
        self.write(tx)
    }
}

/// Deletes the rows of the held versions keyed (recorded_at, id), if the
/// store has them: one key look-up each.
pub(super) fn delete_held(
    tx: &Transaction,
    keys: impl IntoIterator<Item = (Micros, u64)>,
) -> rusqlite::Result<()> {
    let mut delete = tx.prepare_cached(&format!(
        "DELETE FROM versions WHERE lifespan = 64 AND superseded_at = {OPEN}
           AND recorded_at = ?1 AND id = ?2"
    ))?;
    for (recorded_at, id) in keys {
        delete.execute(rusqlite::params![recorded_at, id as i64])?;
    }
    Ok(())
}

impl Sliced {
    /// How much a copy of it holds: the replay's held versions and known
    /// claims, and the assertions of the held versions.
    pub(super) fn size(&self) -> usize {
        self.replaying.size() + self.origins.len()
    }

    pub(super) fn new(header: &Header) -> Self {
        Sliced {
            replaying: engine::Slices::new(header),
            origins: IdMap::default(),
            derived: Derived::default(),
        }
    }

    /// Replays `slice` (events in replay order, ending between two recorded
    /// instants) and empties it.
    pub(super) fn slice(&mut self, slice: &mut Vec<Event>) -> Closed {
        let replay = self.replaying.replay(slice.iter().collect());
        for o in &replay.outcomes {
            if o.effect == Effect::NoMatch
                && let Some(e) = slice.iter().find(|e| e.seq == o.seq)
            {
                self.derived.unmatched.push((o.seq, e.id().to_owned()));
            }
        }
        // The slice's events are done with: their assertions' ids and
        // citations move into the origins.
        self.origins.reserve(slice.len());
        for e in slice.drain(..) {
            if let EventBody::Believe(a) = e.body {
                let origin = Origin {
                    seq: e.seq as i64,
                    cites: a.supported_by,
                };
                self.origins.insert(Name::from(a.id), Arc::new(origin));
            }
        }
        let closed = self.closing(replay.versions, replay.outcomes);
        let keep: IdSet<&str> = (self.replaying.held()).map(|v| &*v.assertion).collect();
        self.origins.retain(|id, _| keep.contains(id.as_str()));
        closed
    }

    fn closing(
        &mut self,
        versions: Vec<asof_core::model::Version>,
        outcomes: Vec<engine::Outcome>,
    ) -> Closed {
        self.derived.versions += versions.len();
        self.ready(versions, outcomes)
    }

    /// `versions` and `outcomes` ready to write, with the seqs and citations
    /// of the versions' assertions.
    fn ready(
        &self,
        versions: Vec<asof_core::model::Version>,
        outcomes: Vec<engine::Outcome>,
    ) -> Closed {
        let origins = (versions.iter())
            .map(|v| self.origins.get(&*v.assertion).cloned())
            .collect();
        Closed {
            replay: Replay { versions, outcomes },
            origins,
        }
    }

    /// The versions held now, ready to write (the replay goes on).
    pub(super) fn held(&self) -> Closed {
        self.ready(self.replaying.held().cloned().collect(), Vec::new())
    }

    /// The keys (recorded_at, id) of the versions held recorded at or after
    /// `from`: a replay again from `from` makes them again, maybe under
    /// other ids.
    pub(super) fn held_since(&self, from: Micros) -> Vec<(Micros, u64)> {
        (self.replaying.held())
            .filter(|v| v.recorded_at >= from)
            .map(|v| (v.recorded_at, v.id))
            .collect()
    }

    /// This replay's held versions whose rows change from `before`'s (the
    /// replay the store's held rows are of), ready to write over them:
    /// those `before` did not hold as they are now, and those recorded at
    /// or after `from` (made again by a replay from there, maybe under
    /// other ids; `None`: no replay again — all compared as they are). A
    /// version recorded before `from` was made by an event before it, which
    /// the batch did not change: held as it was, its row is as it was; one
    /// `before` held that is held no more was closed, and its closed row
    /// was written over its held one as the replay closed it.
    pub(super) fn held_changed_from(&self, before: &Sliced, from: Option<Micros>) -> Closed {
        let again = |v: &asof_core::model::Version| from.is_some_and(|from| v.recorded_at >= from);
        let was: HashMap<u64, &asof_core::model::Version> = (before.replaying.held())
            .filter(|v| !again(v))
            .map(|v| (v.id, v))
            .collect();
        let versions = (self.replaying.held())
            .filter(|v| was.get(&v.id) != Some(v))
            .cloned()
            .collect();
        self.ready(versions, Vec::new())
    }

    /// Retractions that matched nothing so far: seq and id.
    pub(super) fn unmatched(&self) -> &[(u64, String)] {
        &self.derived.unmatched
    }

    /// The versions still held at the end of the log, and the totals.
    pub(super) fn finish(mut self) -> (Closed, Derived) {
        let held = self.replaying.take_held();
        let last = self.closing(held, Vec::new());
        (last, self.derived)
    }
}

/// What the working answer reads of a version, from the topic index.
#[derive(Clone, PartialEq)]
pub(super) struct Piece {
    pub(super) recorded_at: Micros,
    pub(super) superseded_at: Micros,
    pub(super) valid_from: Micros,
    pub(super) id: u64,
    pub(super) claim: Name,
}

impl Piece {
    /// The columns [`Piece::read`] reads, then the version's topic and agent
    /// codes, from `versions v JOIN claims c ON c.code = v.claim`.
    pub(super) const COLUMNS: &str =
        "c.text, v.valid_from, v.recorded_at, v.superseded_at, v.id, v.topic, v.agent";

    /// A row selected with [`Piece::COLUMNS`]: the piece, its topic and agent codes.
    pub(super) fn read(
        r: &rusqlite::Row,
        names: &mut Names,
    ) -> rusqlite::Result<(Piece, i64, i64)> {
        let piece = Piece {
            claim: names.get(r.get_ref(0)?.as_str()?),
            valid_from: r.get(1)?,
            recorded_at: r.get(2)?,
            superseded_at: r.get(3)?,
            id: r.get::<_, i64>(4)? as u64,
        };
        Ok((piece, r.get(5)?, r.get(6)?))
    }
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
pub(super) fn truths(
    tx: &Transaction,
    header: &Header,
) -> rusqlite::Result<Vec<((String, String), Truth)>> {
    let span = read::span(tx)?.unwrap_or((0, 0));
    let mut stmt = tx.prepare(&format!(
        "SELECT {} FROM versions v JOIN claims c ON c.code = v.claim
         WHERE v.topic IN (SELECT idx FROM topics WHERE resolution IS NOT NULL) ORDER BY v.topic",
        Piece::COLUMNS
    ))?;
    let mut rows = stmt.query([])?;
    let mut names = Names::default();
    let mut out = Vec::new();
    let mut topic: Option<usize> = None;
    let mut by_agent: HashMap<usize, Vec<Piece>> = HashMap::new();
    let mut flush = |topic: Option<usize>, by_agent: &mut HashMap<usize, Vec<Piece>>| {
        let Some(t) = topic.and_then(|t| header.topics.get(t)) else {
            by_agent.clear();
            return;
        };
        let Some(resolution) = t.resolution.as_deref() else {
            return;
        };
        for (agent, pieces) in by_agent.drain() {
            let Some(a) = header.agents.get(agent) else {
                continue;
            };
            let list: Vec<&Piece> = pieces.iter().collect();
            let truth = answers::truth(&answers::steps_of(&list), resolution, span);
            out.push(((a.id.clone(), t.id.clone()), truth));
        }
    };
    while let Some(r) = rows.next()? {
        let (piece, this, agent) = Piece::read(r, &mut names)?;
        let this = this as usize;
        if topic != Some(this) {
            flush(topic, &mut by_agent);
            topic = Some(this);
        }
        by_agent.entry(agent as usize).or_default().push(piece);
    }
    flush(topic, &mut by_agent);
    Ok(out)
}
