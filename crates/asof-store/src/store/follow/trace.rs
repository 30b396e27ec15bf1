//! Following a file whose store is a function of all its complete lines: an
//! OpenTelemetry trace in JSON Lines, as the Collector's file exporter or
//! `asof serve`'s archive writes it, where a span written later can change
//! what an earlier one meant (a tool call's result, the agent span that
//! names who made a model call).
//!
//! ```text
//!   file ──complete new lines──▶ Growth::feed (reads only them)
//!                                     │ Growth::grow: the log from the first event the
//!                                     │ lines changed (Suffix), or every line converted
//!                                     ▼ again (Converted)
//!   store ◀── one transaction ── the events after those kept written again, and
//!                                what the replay derives from their earliest instant
//!                                on (replayed.rs); a changed header, or a retraction
//!                                that finds nothing: the whole conversion, every
//!                                event from the first that differs
//! ```
//!
//! So the store is, at every commit, what importing the lines so far gives,
//! and a reader (a TUI in WAL) sees the old store or the new one. A trace's
//! log is in recorded order, so what new spans change is mostly the end of
//! it: a batch costs the events from the first one that changed, not a
//! rewrite of the store. An event's seq is its place in the conversion's
//! log, with gaps where a retraction that found nothing to retract was left
//! out, as a fresh import numbers it. The store records its position (bytes,
//! lines, the SHA-256 of those bytes, hashed as they are read) as a JSON
//! Lines follow does, so a follow started again goes on, and a file
//! truncated, replaced or rewritten before that position stops it.

use super::replayed::{Change, Replayed};
use super::restart::{CatchUp, same_calls};
use super::series::Series;
use super::{Again, Batch, Position, Stop, not_followed, open_writer, recorded, wait_for};
use crate::store::scrub::Rewrote;
use crate::store::write::{self, LogWriter};
use crate::store::{Contents, Store};
use asof_core::dataset::Parsed;
use asof_core::engine::Replay;
use asof_core::model::{Dataset, Event, EventBody, EventKind, IdSet};
use asof_core::time::Micros;
use rusqlite::{Connection, OptionalExtension, params};

use std::path::Path;

/// What converting the complete lines so far gave.
pub struct Converted {
    /// The dataset they make.
    pub parsed: Parsed,
    /// The replay of `parsed.dataset` (checked here before it is written).
    pub replay: Replay,
    /// Rows for the store's meta table (the import summary).
    pub meta: Vec<(&'static str, String)>,
    /// Records the conversion left out, for the batch's line.
    pub skipped: usize,
    /// The places in the conversion's own log of the events the store
    /// leaves out (retractions that find nothing to retract), in order.
    pub dropped: Vec<usize>,
    /// A trace's model calls in order (also in `meta` as `model_calls`, for
    /// a store written whole).
    pub calls: Vec<asof_core::model::ModelCall>,
}

/// What converting the lines fed since the last conversion gave.
pub enum Grown {
    /// Everything, converted again.
    Whole(Converted),
    /// The log from a place on: the events before it are as the last
    /// conversion gave them.
    From(Suffix),
}

/// The end of a conversion's log, from the first event a batch changed.
pub struct Suffix {
    /// The events of the conversion's own log before it (those the store
    /// leaves out included).
    pub keep: usize,
    /// The header of the whole log.
    pub header: asof_core::model::Header,
    /// The events from `keep` on, checked on their own rules (their seqs
    /// are set as they are stored).
    pub events: Vec<Event>,
    /// Rows for the store's meta table (the import summary).
    pub meta: Vec<(&'static str, String)>,
    /// Records the conversion left out, for the batch's line.
    pub skipped: usize,
    /// The model calls before `calls`, as the store holds them.
    pub calls_from: usize,
    /// A trace's model calls from `calls_from` on, in order: the store
    /// writes them again.
    pub calls: Vec<asof_core::model::ModelCall>,
}

/// A conversion that grows with the file it reads: fed each run of complete
/// lines once, in order, it converts everything fed so far.
pub trait Growth {
    /// Reads complete lines appended to what was fed before.
    fn feed(&mut self, lines: &[u8]) -> Result<(), Stop>;
    /// What feeding lines needs of no state (a trace: each line's request
    /// parsed).
    type Ahead: Send;
    /// Makes what feeding `lines` needs of no state, on another thread
    /// while the lines before them are fed ([`Growth::feed_ahead`]).
    fn ahead(lines: &[u8]) -> Self::Ahead;
    /// [`Growth::feed`], with what [`Growth::ahead`] made of `lines`.
    fn feed_ahead(&mut self, lines: &[u8], ahead: Self::Ahead) -> Result<(), Stop>;
    /// What every line fed so far converts to.
    fn convert(&mut self) -> Result<Converted, Stop>;
    /// What the lines fed since the last conversion changed: by default,
    /// everything converted again.
    fn grow(&mut self) -> Result<Grown, Stop> {
        Ok(Grown::Whole(self.convert()?))
    }
    /// What a file with no line yet converts to, when the format gives
    /// something for it (a trace: its run with nothing in it), so the store
    /// exists before the first line; `None` waits for that line.
    fn nothing_yet(&mut self) -> Option<Result<Converted, Stop>> {
        None
    }
    /// How often, since it started, a part of what it converts was
    /// converted again (from a checkpoint, or from its start) because lines
    /// read later changed what earlier ones meant.
    fn converted_again(&self) -> Again {
        Again::default()
    }
    /// The store took what was converted: what the conversion keeps only
    /// so the next batch can change it may go (a trace's import retires
    /// the runs that are over).
    fn taken(&mut self) {}
    /// How many events of the conversion's own log, and how many model
    /// calls, no later batch gives again (a suffix's `keep` and
    /// `calls_from` are at least these) — but for a conversion of every
    /// line again, which gives them all again and may change them (a trace's
    /// import: a span that falls into a run it let go): what a restart
    /// compares with its store and lets go as it feeds. By default none.
    fn settled(&self) -> (usize, usize) {
        (0, 0)
    }
}

/// Follows `dataset` into `store` (created, or, when it was written by an
/// earlier follow of the same bytes, converted again with today's `growth`
/// and continued): every batch of complete new lines is fed to `growth`,
/// converted, and the store brought to what it converted to in one
/// transaction, until `go_on` returns false (`Ok`) or the file stops the
/// follow (`Err`). A line over `max` bytes (one request: a file of them
/// has no limit of its own) stops it too.
pub fn follow_whole(
    dataset: &Path,
    store: &Path,
    force: bool,
    poll: std::time::Duration,
    max: u64,
    growth: &mut impl Growth,
    mut go_on: impl FnMut(&Batch) -> bool,
) -> Result<(), Stop> {
    let name = dataset.display().to_string();
    let mut series = Series::open(&name, dataset)?;
    // A new store holding `converted`, the file read up to `read`, and the
    // rewriter that carries it on.
    let create = |converted: Converted, read: Position, series| -> Result<Rewriter, Stop> {
        let mut meta = converted.meta.clone();
        meta.extend(read.meta());
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
        let mut f = Rewriter::new(&name, series, max, open_writer(store)?, read);
        f.took(converted)?;
        Ok(f)
    };
    // The file's complete lines now, read once: a store made from them, or
    // (a file with none yet, when the format gives something for it) an
    // empty store a follower or a query started early attaches to.
    let ready = match !store.exists() || force {
        true => Some(series.complete_len()?),
        false => None,
    };
    let empty = match ready {
        Some(None) => growth.nothing_yet(),
        _ => None,
    };
    let mut f = if let Some(empty) = empty {
        create(empty?, Position::new(), series)?
    } else if let Some(ready) = ready {
        let len = match ready {
            Some(len) => len,
            None => match wait_for(|| series.complete_len(), poll, &mut go_on)? {
                Some(len) => len,
                None => return Ok(()),
            },
        };
        let read = feed_start(&name, &mut series, len, max, growth, |_| Ok(()))?;
        let converted = growth.convert()?;
        converted.parsed.check_replay(&converted.replay)?;
        create(converted, read, series)?
    } else {
        let conn = open_writer(store)?;
        let (offset, sha) = recorded(&conn, store, &name)?;
        // The applied bytes are read once, fed and hashed together, and
        // what they convert to compared with the store as it settles
        // (restart.rs); a file that is not the one followed is said so
        // even when feeding it failed first (then its hash is read on its
        // own).
        let mut caught = CatchUp::new(&conn)?;
        let fed = |growth: &mut _| caught.fed(&conn, growth);
        let read = match feed_start(&name, &mut series, offset, max, growth, fed) {
            Ok(read) => read,
            Err(stop) => {
                if Position::of_series(dataset, offset)?.sha256() != sha {
                    return Err(not_followed(&name, store, offset));
                }
                return Err(stop);
            }
        };
        if read.offset != offset || read.sha256() != sha {
            return Err(not_followed(&name, store, offset));
        }
        let nothing_read = read.offset == 0;
        let mut f = Rewriter::new(&name, series, max, conn, read);
        // Converted again, so the options given now are the ones it holds.
        match nothing_read.then(|| growth.nothing_yet()).flatten() {
            Some(empty) => f.write(empty?, &[])?,
            None => f.take_up(growth, caught)?,
        }
        f
    };
    // A store and its format are checked as every command checks them.
    Store::open(store)?;
    let mut batch = f.batch(0, 0);
    growth.taken();
    f.let_go(growth.settled().0)?;
    loop {
        if !go_on(&batch) {
            return Ok(());
        }
        if batch.lines > 0 {
            growth.taken();
            f.let_go(growth.settled().0)?;
        }
        // A batch takes time in proportion to the trace, and lines written
        // while it ran are read at once: the wait is only for a file that
        // did not grow.
        if batch.lines == 0 {
            std::thread::sleep(poll);
        }
        batch = f.poll(growth)?;
    }
}

/// How many bytes of lines a live batch takes at most (a follow far behind
/// takes what was written a batch of this size at a time). In a debug
/// build, as the tests run, 64 KiB: so that tests see batches cut.
const BATCH: usize = if cfg!(debug_assertions) {
    64 << 10
} else {
    32 << 20
};

/// How much of the file's start is fed at a time.
const CHUNK: usize = if cfg!(debug_assertions) {
    4 << 10
} else {
    32 << 20
};

/// Feeds the first `len` bytes of the file being followed (complete lines,
/// across its segments), a few megabytes at a time, calling `fed` after
/// each: the file is never held whole. Each run of lines is hashed and
/// made ready ([`Growth::ahead`]) on another thread while the run before
/// it is fed — one thread for every run, so that what it allocates is
/// reused, not a new thread's heap each run.
fn feed_start<G: Growth>(
    name: &str,
    series: &mut Series,
    len: u64,
    max: u64,
    growth: &mut G,
    mut fed: impl FnMut(&mut G) -> Result<(), Stop>,
) -> Result<Position, Stop> {
    std::thread::scope(|scope| {
        // At most one run is made ready while the one before it is fed.
        let (hand, runs) = std::sync::mpsc::sync_channel::<(Vec<u8>, Position)>(0);
        let (made, ready) = std::sync::mpsc::sync_channel(1);
        let thread = scope.spawn(move || {
            for (lines, mut at) in runs {
                at.read(&lines);
                let ahead = G::ahead(&lines);
                // The feeding stopped (an error): nothing more is wanted.
                if made.send((lines, at, ahead)).is_err() {
                    break;
                }
            }
        });
        let read = feed_runs(name, series, len, max, growth, &mut fed, &hand, &ready);
        // Joined here whatever happened, so that a thread ahead that failed
        // is this follow's stop, not the scope's panic.
        drop((hand, ready));
        match (read, thread.join()) {
            (Ok(_), Err(_)) => Err(ahead_failed(name)),
            (read, _) => read,
        }
    })
}

/// [`feed_start`]'s runs of lines, each handed (`hand`) to the thread
/// ahead, and fed once it is `ready`.
#[allow(clippy::too_many_arguments)]
fn feed_runs<G: Growth>(
    name: &str,
    series: &mut Series,
    len: u64,
    max: u64,
    growth: &mut G,
    fed: &mut impl FnMut(&mut G) -> Result<(), Stop>,
    hand: &std::sync::mpsc::SyncSender<(Vec<u8>, Position)>,
    ready: &std::sync::mpsc::Receiver<(Vec<u8>, Position, G::Ahead)>,
) -> Result<Position, Stop> {
    let joined = |handed| joined(name, handed, ready);
    let mut handed = Handed::At(Position::new());
    // Lines handed on so far.
    let mut line = 0;
    let mut pending: Vec<u8> = Vec::with_capacity(CHUNK + (1 << 20));
    // How much of `pending` holds no newline: the start of a line longer
    // than a run, not searched again as the next reads arrive.
    let mut searched = 0;
    // Feeds the run made ready, if any, and hands `lines` on.
    let mut take = |lines: Vec<u8>, handed, line: &mut usize, growth: &mut G| {
        let over = within(name, &lines, *line, 0, max);
        *line += lines.iter().filter(|&&b| b == b'\n').count();
        let (ready, at) = joined(handed)?;
        let next = match over {
            Ok(()) => {
                hand.send((lines, at)).map_err(|_| ahead_failed(name))?;
                Handed::Ahead
            }
            Err(_) => Handed::At(at),
        };
        if let Some((lines, made)) = ready {
            growth.feed_ahead(&lines, made)?;
            fed(growth)?;
        }
        over.map(|()| next)
    };
    series.read(0, Some(len), |bytes| {
        pending.extend_from_slice(bytes);
        // Runs of whole lines of about CHUNK bytes, whatever the reads.
        while pending.len() >= CHUNK {
            let from = (CHUNK - 1).max(searched);
            let end = match pending[from..].iter().position(|&b| b == b'\n') {
                Some(end) => Some(from + end),
                // A line that goes on past it: the lines before that line.
                None => pending[..from].iter().rposition(|&b| b == b'\n'),
            };
            // A line still going on: it may not pass the limit either.
            let Some(end) = end else {
                within(name, &[], line, pending.len(), max)?;
                searched = pending.len();
                break;
            };
            searched = 0;
            // The rest goes on in a buffer of a run's size, not grown
            // (and copied) again from a few bytes on each run.
            let mut rest = Vec::with_capacity(CHUNK + (1 << 20));
            rest.extend_from_slice(&pending[end + 1..]);
            pending.truncate(end + 1);
            let lines = std::mem::replace(&mut pending, rest);
            let now = std::mem::replace(&mut handed, Handed::At(Position::new()));
            handed = take(lines, now, &mut line, growth)?;
        }
        Ok(())
    })?;
    if let Some(end) = pending.iter().rposition(|&b| b == b'\n') {
        pending.truncate(end + 1);
        let now = std::mem::replace(&mut handed, Handed::At(Position::new()));
        handed = take(pending, now, &mut line, growth)?;
    }
    let (ready, at) = joined(handed)?;
    if let Some((lines, made)) = ready {
        growth.feed_ahead(&lines, made)?;
        fed(growth)?;
    }
    Ok(at)
}

/// Where the lines handed on to be fed end, or that the run of them is
/// being made ready on the thread ahead.
enum Handed {
    At(Position),
    Ahead,
}

/// A run of lines with what was made of it ahead.
type Ready<A> = (Vec<u8>, A);

/// The run made ready, if one was handed on (`ready` gives it, with where
/// it ends), and where the lines handed on end.
fn joined<A>(
    name: &str,
    handed: Handed,
    ready: &std::sync::mpsc::Receiver<(Vec<u8>, Position, A)>,
) -> Result<(Option<Ready<A>>, Position), Stop> {
    match handed {
        Handed::At(at) => Ok((None, at)),
        Handed::Ahead => {
            let (lines, at, made) = ready.recv().map_err(|_| ahead_failed(name))?;
            Ok((Some((lines, made)), at))
        }
    }
}

fn ahead_failed(name: &str) -> Stop {
    Stop::File(format!("{name}: reading the file ahead failed"))
}

/// Whether the complete lines `lines` (after line `before`) and a line of
/// `pending` bytes still being written are each at most `max` bytes long;
/// else the stop that says which is not.
fn within(name: &str, lines: &[u8], before: usize, pending: usize, max: u64) -> Result<(), Stop> {
    // No line is longer than the bytes read: nothing to look for.
    if (lines.len().max(pending) as u64) <= max {
        return Ok(());
    }
    let mut n = 0;
    for line in lines.split(|&b| b == b'\n') {
        if line.len() as u64 > max {
            return Err(over(name, before + n + 1, line.len() as u64, max));
        }
        n += 1;
    }
    // The split's last piece is what follows the last newline: nothing.
    match pending as u64 > max {
        true => Err(over(name, before + n.max(1), pending as u64, max)),
        false => Ok(()),
    }
}

fn over(name: &str, line: usize, len: u64, max: u64) -> Stop {
    Stop::File(format!(
        "{name}:{line}: the line is {len} bytes or more, over the {max}-byte limit of one request"
    ))
}

/// The state a whole-file follow carries between batches.
struct Rewriter<'a> {
    name: &'a str,
    /// The file followed, in its segments.
    series: Series,
    max: u64,
    conn: Connection,
    position: Position,
    /// What the store holds, as a batch needs it, and its replay's state
    /// (`None` until the first write, and after a batch that failed).
    written: Option<(Written, Replayed)>,
    /// Records the last conversion left out.
    skipped: usize,
    /// What the last write did to the events already stored.
    rewritten: usize,
    whole: bool,
    /// Whether the last write changed the header.
    header: bool,
    /// The growth's conversions made again, so far.
    again: Again,
    /// The places in the conversion's log of the events left out of the
    /// store, and each claim the store holds (in code order) with the
    /// place of the event that first made it.
    dropped: Vec<usize>,
    codes: Vec<(usize, String)>,
}

impl<'a> Rewriter<'a> {
    fn new(
        name: &'a str,
        series: Series,
        max: u64,
        conn: Connection,
        position: Position,
    ) -> Rewriter<'a> {
        Rewriter {
            name,
            series,
            max,
            conn,
            position,
            written: None,
            skipped: 0,
            rewritten: 0,
            whole: false,
            header: false,
            again: Again::default(),
            dropped: Vec::new(),
            codes: Vec::new(),
        }
    }

    /// Takes `converted` as what the store holds (written by its creation),
    /// with the state of its replay.
    fn took(&mut self, converted: Converted) -> Result<(), Stop> {
        let dataset = converted.parsed.dataset;
        let replayed = self.replayed(dataset.header.clone())?;
        self.skipped = converted.skipped;
        self.dropped = converted.dropped;
        self.codes = codes_of(&dataset.events);
        self.written = Some((Written::of(dataset), replayed));
        Ok(())
    }

    /// The replay state of the log the store holds, replayed again.
    fn replayed(&self, header: asof_core::model::Header) -> Result<Replayed, Stop> {
        let tx = self.conn.unchecked_transaction()?;
        let replayed = Replayed::read(&tx, header)?;
        tx.finish()?;
        Ok(replayed)
    }

    /// Brings the store to what `converted` holds, the position moved on
    /// past `read` (the lines it converted last), in one transaction: from
    /// the first event that changed when the header did not; else every
    /// table again.
    fn write(&mut self, converted: Converted, read: &[u8]) -> Result<(), Stop> {
        converted.parsed.check_replay(&converted.replay)?;
        // Where the store will be once this write commits.
        let mut position = self.position.clone();
        position.read(read);
        let mut meta = converted.meta.clone();
        meta.extend(position.meta());
        let new = &converted.parsed.dataset;
        let codes = codes_of(&new.events);
        match self.written.take() {
            Some((old, mut replayed)) if old.header == new.header => {
                let tx = self.conn.transaction()?;
                // The stored log, read back to be compared whole (a rare
                // batch: the conversion was taken whole).
                let stored = crate::store::read::events(&tx)?;
                let (kept, derived) = rewrite_from_change(&tx, &stored, new, &mut replayed)?;
                (self.rewritten, self.whole, self.header) = (old.len() - kept, false, false);
                write_meta(&tx, &meta)?;
                write::write_calls(&tx, 0, &converted.calls)?;
                tx.commit()?;
                replayed.committed(derived);
                self.written = Some((Written::of(converted.parsed.dataset), replayed));
            }
            old => {
                (self.rewritten, self.whole, self.header) =
                    (old.map_or(0, |(w, _)| w.len()), true, false);
                write::rewrite(
                    &mut self.conn,
                    new,
                    &converted.parsed.file,
                    &converted.replay,
                    &meta,
                )?;
                let replayed = self.replayed(new.header.clone())?;
                self.written = Some((Written::of(converted.parsed.dataset), replayed));
            }
        }
        self.codes = codes;
        self.dropped = converted.dropped;
        self.position = position;
        self.skipped = converted.skipped;
        Ok(())
    }

    /// Takes up the store an earlier follow left, the lines it applied fed
    /// again and compared with it as they settled (`caught`, restart.rs):
    /// the rest of what they convert to now is compared with what it holds,
    /// an event at a time, and only what differs is written (nothing, when
    /// the options and the importer are those that wrote it) — not every
    /// table again.
    fn take_up(&mut self, growth: &mut impl Growth, mut caught: CatchUp) -> Result<(), Stop> {
        let mut suffix = match caught.last.take() {
            Some(suffix) if !caught.whole => suffix,
            _ => return self.write(growth.convert()?, &[]),
        };
        let tx = self.conn.unchecked_transaction()?;
        let stored: i64 = tx.query_row("SELECT count(*) FROM events", [], |r| r.get(0))?;
        let stored = stored as usize;
        // The events stored as the conversion gives them (a seq left out
        // by a retraction that found nothing is a difference too), and the
        // claims they make first.
        caught.compare(&tx, usize::MAX)?;
        let CatchUp {
            mut written,
            first,
            pending,
            calls_kept,
            mut calls,
            ..
        } = caught;
        let kept = written.len();
        // The claims are coded in the order the log first makes them: those
        // of the events kept come first; the others go with the events after.
        let claims: Vec<String> = tx
            .prepare("SELECT text FROM claims ORDER BY code")?
            .query_map([], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        self.codes = claims
            .into_iter()
            .enumerate()
            .map(|(code, claim)| (first.get(code).copied().unwrap_or(kept), claim))
            .collect();
        // What the events after those kept are does not matter: they are
        // removed.
        // A restart's comparison lets nothing go.
        let last = written.replayed_by(kept).flatten();
        written.pad(stored, last);
        // The model calls stored as the conversion lists them.
        let same = same_calls(&tx, calls_kept, &calls)?;
        calls.drain(..same);
        (suffix.calls_from, suffix.calls) = (calls_kept + same, calls);
        (suffix.keep, suffix.events) = (kept, pending);
        let replayed = Replayed::read(&tx, written.header.clone())?;
        tx.finish()?;
        self.dropped = Vec::new();
        self.written = Some((written, replayed));
        if !self.write_from(suffix, &[])? {
            self.write(growth.convert()?, &[])?;
        }
        Ok(())
    }

    /// Brings the store to `suffix` in one transaction: the events from its
    /// first on written again, what the replay derives taken on from their
    /// earliest instant, the position moved past `read`. Returns false,
    /// writing nothing, when it cannot: the header changed, or a retraction
    /// of the suffix finds nothing to retract (the conversion is then taken
    /// whole, which leaves such retractions out and says so).
    fn write_from(&mut self, suffix: Suffix, read: &[u8]) -> Result<bool, Stop> {
        let Some((mut old, mut replayed)) = self.written.take() else {
            return Ok(false);
        };
        let cut = self.dropped.partition_point(|&d| d < suffix.keep);
        let kept = suffix.keep - cut;
        if kept > old.len() {
            self.written = Some((old, replayed));
            return Ok(false);
        }
        // New agents or topics (or one gone): the events name them, the
        // versions number them in the header's order — those are derived
        // again, the events only from the first that changed.
        let header = old.header != suffix.header;
        // An event's seq is its place in the conversion's log (those left
        // out leave gaps), as a fresh import numbers it.
        let mut events = suffix.events;
        for (j, e) in events.iter_mut().enumerate() {
            e.seq = (suffix.keep + j + 1) as u64;
        }
        let claims_kept = self.codes.partition_point(|(at, _)| *at < kept);
        for (_, claim) in &self.codes[claims_kept..] {
            replayed.claims.remove(claim);
        }
        let last = match old.replayed_by(kept) {
            Some(last) => last,
            None => replayed_through(&self.conn, kept)?,
        };
        // The claims the suffix makes first (the claims kept are those
        // `replayed` holds now), with the place of the event that does.
        let mut fresh: IdSet<&str> = IdSet::default();
        let added: Vec<(usize, String)> = events
            .iter()
            .enumerate()
            .filter_map(|(j, e)| match &e.body {
                EventBody::Believe(a)
                    if !replayed.claims.contains(&a.claim) && fresh.insert(a.claim.as_str()) =>
                {
                    Some((kept + j, a.claim.clone()))
                }
                _ => None,
            })
            .collect();
        let mut position = self.position.clone();
        position.read(read);
        let mut meta = suffix.meta;
        meta.extend(position.meta());
        let tx = self.conn.transaction()?;
        let after = suffix.keep as u64;
        // The claims after those kept are coded as stored when the suffix
        // makes them first in the stored order.
        let codes_kept = cut == self.dropped.len()
            && (self.codes[claims_kept..].iter().map(|(_, c)| c)).eq(added.iter().map(|(_, c)| c));
        let stored = match old.len() - kept {
            n if codes_kept && (1..=COMPARED).contains(&n) => stored_after(&tx, after, n)?,
            _ => None,
        };
        let change = match &stored {
            Some(stored) => {
                for (_, claim) in &added {
                    replayed.claims.insert(claim.clone());
                }
                let (only, gone, new) = differing(stored, &events);
                Rewrite {
                    after,
                    only: Some(only),
                    claims_kept: claims_kept + added.len(),
                    removed: Removed::of(gone.into_iter()),
                    new,
                    last: last.max(replayed_at(&events).max()),
                }
            }
            None => Rewrite {
                after,
                only: None,
                claims_kept,
                removed: Removed::stored_after(&tx, after, old.len() - kept)?,
                new: events.iter().collect(),
                last,
            },
        };
        let rewritten = change.removed.count;
        let new_header = header.then_some(&suffix.header);
        let derived = rewrite_suffix(&tx, change, new_header, &mut replayed)?;
        if !replayed.replay.unmatched().is_empty() {
            // Rolled back; the replay's state is read again with the whole.
            drop(tx);
            return Ok(false);
        }
        write_meta(&tx, &meta)?;
        write::write_calls(&tx, suffix.calls_from, &suffix.calls)?;
        tx.commit()?;
        replayed.committed(derived);
        (self.rewritten, self.whole, self.header) = (rewritten, false, header);
        self.dropped.truncate(cut);
        old.header = suffix.header;
        self.codes.truncate(claims_kept);
        self.codes.extend(added);
        old.truncate(kept, last);
        old.extend(&events);
        self.written = Some((old, replayed));
        self.position = position;
        self.skipped = suffix.skipped;
        Ok(true)
    }

    /// Lets go what the store's side holds of the events the conversion's
    /// first `entries` log entries became, which no later batch is expected
    /// to write again ([`Growth::settled`]): their instants replayed
    /// (`Written`) and their marks in the scrub index. A batch that writes
    /// them again after all (a conversion of every line) reads back from
    /// the store what it needs of them.
    fn let_go(&mut self, entries: usize) -> Result<(), Stop> {
        let Some((written, replayed)) = &mut self.written else {
            return Ok(());
        };
        // An event's seq is its place in the conversion's log, plus one;
        // those left out of the store are not counted among those stored.
        let instant: Option<Micros> = self
            .conn
            .query_row(
                "SELECT recorded_at FROM events WHERE seq <= ?1 ORDER BY seq DESC LIMIT 1",
                [entries as i64],
                |r| r.get(0),
            )
            .optional()?;
        replayed.let_go_through(entries as u64, instant);
        written.let_go(entries - self.dropped.partition_point(|&d| d < entries));
        Ok(())
    }

    /// Reads what was written since the last poll; when it completed lines,
    /// feeds and converts them and brings the store to the result.
    fn poll(&mut self, growth: &mut impl Growth) -> Result<Batch, Stop> {
        let offset = self.position.offset;
        // A follow far behind (a receiver flooded, a file written faster
        // than it is converted) takes what was written a batch at a time:
        // at most about BATCH bytes of lines, and the next read at once.
        let most = Some(BATCH as u64);
        let (complete, pending) = self.series.read_on(offset, &self.position.tail, most)?;
        within(self.name, &complete, self.position.line, pending, self.max)?;
        if complete.is_empty() {
            (self.rewritten, self.whole, self.header) = (0, false, false);
            return Ok(self.batch(0, 0));
        }
        let lines = complete.iter().filter(|&&b| b == b'\n').count();
        let before = self.events();
        growth.feed(&complete)?;
        let grown = growth.grow()?;
        self.again = growth.converted_again();
        match grown {
            Grown::Whole(converted) => self.write(converted, &complete)?,
            Grown::From(suffix) => {
                if !self.write_from(suffix, &complete)? {
                    let converted = growth.convert()?;
                    self.write(converted, &complete)?;
                }
            }
        }
        Ok(self.batch(self.events().saturating_sub(before), lines))
    }

    /// Events in the store now.
    fn events(&self) -> usize {
        self.written.as_ref().map_or(0, |(w, _)| w.len())
    }

    fn batch(&self, events: usize, lines: usize) -> Batch {
        Batch {
            events,
            total: self.events(),
            line: self.position.line,
            offset: self.position.offset,
            lines,
            skipped: self.skipped,
            replayed: false,
            rewritten: self.rewritten,
            whole: self.whole,
            header: self.header,
            converted_again: self.again,
        }
    }
}

/// Brings the log stored in `tx` from `old` to `new` (one header): keeps the
/// events up to the first that differs, writes the rest again, and derives
/// what the replay gives from the earliest instant replayed among the events
/// removed or written (its state before kept in `replayed`). Returns how many
/// events were kept.
fn rewrite_from_change(
    tx: &rusqlite::Transaction,
    old: &[Event],
    new: &Dataset,
    replayed: &mut Replayed,
) -> Result<(usize, super::replayed::Derived), Stop> {
    let kept = old
        .iter()
        .zip(&new.events)
        .take_while(|(a, b)| a == b)
        .count();
    // A claim's code is its order of first appearance in the log.
    let mut claims = IdSet::default();
    for e in &new.events[..kept] {
        if let EventBody::Believe(a) = &e.body
            && !claims.contains(&a.claim)
        {
            claims.insert(a.claim.clone());
        }
    }
    let claims_kept = claims.len();
    if kept < old.len() {
        replayed.claims = claims;
    }
    let change = Rewrite {
        after: kept.checked_sub(1).map_or(0, |k| new.events[k].seq),
        only: None,
        claims_kept,
        removed: Removed::of(old[kept..].iter()),
        new: new.events[kept..].iter().collect(),
        last: replayed_at(&new.events[..kept]).max(),
    };
    Ok((kept, rewrite_suffix(tx, change, None, replayed)?))
}

/// What the store holds, as a batch needs it — not the events themselves
/// (a follow's memory would grow with them): the header, and for each
/// stored event, in log order, the latest instant replayed up to it — but
/// for the first `base`, let go once no batch is expected to write them
/// again ([`Written::let_go`]), of which only the latest instant replayed
/// among them is kept.
pub(super) struct Written {
    pub(super) header: asof_core::model::Header,
    base: usize,
    base_replayed: Option<Micros>,
    replayed_by: Vec<Option<Micros>>,
}

impl Written {
    /// Nothing stored yet, under `header`.
    pub(super) fn new(header: asof_core::model::Header) -> Written {
        Written {
            header,
            base: 0,
            base_replayed: None,
            replayed_by: Vec::new(),
        }
    }

    fn of(dataset: Dataset) -> Written {
        let mut written = Written::new(dataset.header);
        written.replayed_by.reserve(dataset.events.len());
        written.extend(&dataset.events);
        written
    }

    /// Events stored.
    pub(super) fn len(&self) -> usize {
        self.base + self.replayed_by.len()
    }

    /// The latest instant replayed among the first `kept` events (`None`
    /// within: none replayed); `None` when some of them were let go and
    /// the store must say ([`replayed_through`]).
    pub(super) fn replayed_by(&self, kept: usize) -> Option<Option<Micros>> {
        match kept.checked_sub(self.base) {
            Some(0) => Some(self.base_replayed),
            Some(k) => Some(self.replayed_by.get(k - 1).copied().flatten()),
            None => None,
        }
    }

    /// Keeps the first `kept` events, the latest instant replayed among
    /// them being `last` (what [`Written::replayed_by`] or the store says).
    pub(super) fn truncate(&mut self, kept: usize, last: Option<Micros>) {
        match kept.checked_sub(self.base) {
            Some(k) => self.replayed_by.truncate(k),
            None => {
                (self.base, self.base_replayed) = (kept, last);
                self.replayed_by.clear();
            }
        }
    }

    /// Takes events stored after the first `stored` as replaying nothing
    /// later than `last` (those a restart found stored past what its
    /// conversion gives: they are removed).
    pub(super) fn pad(&mut self, stored: usize, last: Option<Micros>) {
        let held = stored.saturating_sub(self.base);
        self.replayed_by
            .resize(held.max(self.replayed_by.len()), last);
    }

    pub(super) fn extend(&mut self, events: &[Event]) {
        let mut last = self.replayed_by(self.len()).flatten();
        for e in events {
            if e.kind() != EventKind::Evidence {
                last = last.max(Some(e.recorded_at()));
            }
            self.replayed_by.push(last);
        }
    }

    /// Lets go the first `n` events (no batch is expected to write them
    /// again), once they are at least as many as those held after them —
    /// and a debug build's tests, any.
    pub(super) fn let_go(&mut self, n: usize) {
        let n = n.min(self.len()).saturating_sub(self.base);
        let few = !cfg!(debug_assertions) && n < (1 << 14).max(self.replayed_by.len() / 2);
        if n == 0 || few {
            return;
        }
        self.base_replayed = self.replayed_by[n - 1];
        self.replayed_by.drain(..n);
        if self.replayed_by.capacity() > 4 * self.replayed_by.len() + 4096 {
            self.replayed_by.shrink_to_fit();
        }
        self.base += n;
    }
}

/// The latest instant replayed among the first `kept` events the store
/// holds (in seq order): what [`Written`] let go, read back.
fn replayed_through(conn: &Connection, kept: usize) -> rusqlite::Result<Option<Micros>> {
    conn.query_row(
        "SELECT max(recorded_at) FROM
           (SELECT recorded_at, kind FROM events ORDER BY seq LIMIT ?1)
         WHERE kind <> 'evidence'",
        [kept as i64],
        |r| r.get(0),
    )
}

/// How many stored events at most a batch that changes them reads back to
/// write only those that differ (a run's end names the agent of the run's
/// own events, not of its neighbours'); past it, every event from the first
/// change on is written again.
const COMPARED: usize = 1 << 16;

/// The `count` stored events after seq `after`, each whole, when their seqs
/// follow it without a gap (`None` otherwise: a seq left out by a retraction
/// that found nothing).
fn stored_after(
    tx: &rusqlite::Transaction,
    after: u64,
    count: usize,
) -> rusqlite::Result<Option<Vec<Event>>> {
    let mut stored: Vec<Event> = Vec::with_capacity(count);
    crate::store::read::each_event_after(tx, after as i64, |e| {
        stored.push(e);
        true
    })?;
    let follows =
        stored.len() == count && (stored.iter().zip(after + 1..)).all(|(e, s)| e.seq == s);
    Ok(follows.then_some(stored))
}

/// Where `new` differs from `stored` (both in seq order, numbered alike):
/// the seqs removed or written, sorted; the stored events removed; the new
/// events written.
fn differing<'e>(
    stored: &'e [Event],
    new: &'e [Event],
) -> (Vec<u64>, Vec<&'e Event>, Vec<&'e Event>) {
    let (mut only, mut gone, mut written) = (Vec::new(), Vec::new(), Vec::new());
    let mut new = new.iter().peekable();
    for old in stored {
        while let Some(n) = new.next_if(|n| n.seq < old.seq) {
            only.push(n.seq);
            written.push(n);
        }
        match new.next_if(|n| n.seq == old.seq) {
            Some(n) if n == old => {}
            n => {
                only.push(old.seq);
                gone.push(old);
                written.extend(n);
            }
        }
    }
    for n in new {
        only.push(n.seq);
        written.push(n);
    }
    (only, gone, written)
}

/// The stored events a rewrite removes, as it needs them: how many, the
/// evidence they cite, and the earliest instant replayed among them.
struct Removed {
    count: usize,
    cited: Vec<String>,
    first: Option<Micros>,
}

impl Removed {
    fn of<'e>(events: impl Iterator<Item = &'e Event> + Clone) -> Removed {
        Removed {
            count: events.clone().count(),
            cited: (events.clone())
                .flat_map(|e| e.cites().iter().cloned())
                .collect(),
            first: replayed_at(events).min(),
        }
    }

    /// The `count` stored events after seq `after`, read from the store.
    fn stored_after(
        tx: &rusqlite::Transaction,
        after: u64,
        count: usize,
    ) -> rusqlite::Result<Removed> {
        if count == 0 {
            return Ok(Removed {
                count,
                cited: Vec::new(),
                first: None,
            });
        }
        let after = after as i64;
        // The instants read over the seqs (a `min()` here would walk an
        // index of instants from the log's start instead).
        let instants = tx
            .prepare("SELECT recorded_at FROM events WHERE seq > ?1 AND kind <> 'evidence'")?
            .query_map([after], |r| r.get(0))?
            .collect::<rusqlite::Result<Vec<Micros>>>()?;
        let cited = tx
            .prepare("SELECT DISTINCT evidence FROM citations WHERE seq > ?1")?
            .query_map([after], |r| r.get(0))?
            .collect::<rusqlite::Result<Vec<String>>>()?;
        Ok(Removed {
            count,
            cited,
            first: instants.into_iter().min(),
        })
    }
}

/// The end of a stored log written again: the seq after which events go
/// (the last one kept; a log may skip seqs) — every one, or only those
/// `only` lists (sorted) —, the claims their codes keep, the events removed
/// and those written, and the latest instant replayed among those kept (at
/// least).
struct Rewrite<'a> {
    after: u64,
    only: Option<Vec<u64>>,
    claims_kept: usize,
    removed: Removed,
    new: Vec<&'a Event>,
    last: Option<Micros>,
}

/// Removes the stored events after seq `after` (`old`; or those of the seqs
/// `only` lists), writes `new` in their place, and derives what the replay
/// gives from the earliest instant replayed among them (the claims of
/// `replayed` are those kept: with `only`, every claim stored). With a new
/// `header` (agents or topics changed), its rows are written too and every
/// version derived again: the versions number agents and topics in the
/// header's order.
fn rewrite_suffix(
    tx: &rusqlite::Transaction,
    change: Rewrite,
    header: Option<&asof_core::model::Header>,
    replayed: &mut Replayed,
) -> Result<super::replayed::Derived, Stop> {
    if let Some(header) = header {
        write::write_header(tx, header)?;
        replayed.header_changed(header.clone());
    }
    let Rewrite {
        after,
        only,
        claims_kept,
        removed,
        new,
        last,
    } = change;
    let mut rewrote = None;
    if removed.count > 0 {
        for table in [
            "outcomes",
            "reconfirmations",
            "citations",
            "contents",
            "assumptions",
            "events",
        ] {
            match &only {
                None => {
                    tx.execute(
                        &format!("DELETE FROM {table} WHERE seq > ?1"),
                        [after as i64],
                    )?;
                }
                Some(only) => {
                    let mut delete =
                        tx.prepare_cached(&format!("DELETE FROM {table} WHERE seq = ?1"))?;
                    for &seq in only {
                        delete.execute([seq as i64])?;
                    }
                }
            }
        }
        if only.is_none() {
            tx.execute("DELETE FROM claims WHERE code >= ?1", [claims_kept as i64])?;
        }
        let mut cited: Vec<String> = (removed.cited.iter().cloned())
            .chain(new.iter().flat_map(|e| e.cites().iter().cloned()))
            .collect();
        cited.sort_unstable();
        cited.dedup();
        rewrote = Some(Rewrote {
            after,
            only,
            claims_kept,
            cited,
        });
    }
    let mut log = LogWriter::with_claims(tx, std::mem::take(&mut replayed.claims))?;
    let written = new.iter().try_for_each(|e| log.write(e));
    replayed.claims = log.into_claims();
    written?;
    let change = Change {
        first: [removed.first, replayed_at(new.iter().copied()).min()]
            .into_iter()
            .flatten()
            .min(),
        rewrote,
        whole: header.is_some(),
        last: last.max(replayed_at(new.iter().copied()).max()),
    };
    Ok(replayed.apply(tx, change)?)
}

/// Sets `meta` rows; a trace's model calls handed over as a meta row are
/// written by [`write::write_calls`] instead.
fn write_meta(tx: &rusqlite::Transaction, meta: &[(&'static str, String)]) -> rusqlite::Result<()> {
    let mut set = tx.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)")?;
    for (key, value) in meta.iter().filter(|(k, _)| *k != write::MODEL_CALLS) {
        set.execute(params![key, value])?;
    }
    Ok(())
}

/// Each claim of `events` in the order it first appears (its code), with
/// the place of the event that first made it.
fn codes_of(events: &[Event]) -> Vec<(usize, String)> {
    let mut known: IdSet<&str> = IdSet::default();
    let mut codes = Vec::new();
    for (i, e) in events.iter().enumerate() {
        if let EventBody::Believe(a) = &e.body
            && known.insert(a.claim.as_str())
        {
            codes.push((i, a.claim.clone()));
        }
    }
    codes
}

/// The recorded instants of the events a replay replays (all but evidence).
fn replayed_at<'e>(events: impl IntoIterator<Item = &'e Event>) -> impl Iterator<Item = Micros> {
    (events.into_iter())
        .filter(|e| e.kind() != EventKind::Evidence)
        .map(Event::recorded_at)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A conversion whose work ahead fails on a run of lines that starts
    /// with `boom`.
    struct Boom;

    impl Growth for Boom {
        fn feed(&mut self, _: &[u8]) -> Result<(), Stop> {
            Ok(())
        }
        type Ahead = ();
        fn ahead(lines: &[u8]) {
            assert!(
                !lines.starts_with(b"boom"),
                "a run that cannot be made ready"
            );
        }
        fn feed_ahead(&mut self, _: &[u8], (): ()) -> Result<(), Stop> {
            Ok(())
        }
        fn convert(&mut self) -> Result<Converted, Stop> {
            Err(Stop::File("converts nothing".into()))
        }
    }

    /// The thread that makes runs ready ahead failing is the follow's stop,
    /// said in a sentence, not the process's panic; a file it reads whole is
    /// read to its end.
    #[test]
    fn a_failure_ahead_is_the_follows_stop_not_a_panic() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("t.jsonl");
        for (text, stops) in [("fine\nlines\n", false), ("boom\nlines\n", true)] {
            std::fs::write(&path, text).expect("writes");
            let mut series = Series::open("t.jsonl", &path).expect("opens");
            let read = feed_start(
                "t.jsonl",
                &mut series,
                text.len() as u64,
                1 << 20,
                &mut Boom,
                |_| Ok(()),
            );
            match read {
                Err(Stop::File(why)) if stops => {
                    assert_eq!(why, "t.jsonl: reading the file ahead failed");
                }
                Ok(at) if !stops => assert_eq!(at.offset, text.len() as u64),
                other => panic!("{text:?}: {:?}", other.map(|at| at.offset)),
            }
        }
    }

    /// A followed file has no limit of its own: each of its lines (one
    /// request) has, the one still being written too, and the stop names it.
    #[test]
    fn each_line_is_held_to_the_limit_not_the_file() {
        let said = |r: Result<(), Stop>| match r {
            Err(Stop::File(why)) => why,
            other => format!("{other:?}"),
        };
        assert!(within("t.jsonl", b"abc\nde\n", 10, 2, 3).is_ok());
        assert!(within("t.jsonl", &b"ab\n".repeat(1000), 0, 0, 2).is_ok());
        assert_eq!(
            said(within("t.jsonl", b"abc\ndefgh\ni\n", 10, 0, 4)),
            "t.jsonl:12: the line is 5 bytes or more, over the 4-byte limit of one request"
        );
        assert_eq!(
            said(within("t.jsonl", b"abc\n", 10, 9, 4)),
            "t.jsonl:12: the line is 9 bytes or more, over the 4-byte limit of one request"
        );
    }

    /// A store a follow wrote of a generated log of `events` events over
    /// `topics` topics and two agents, opened (with its directory).
    fn followed(events: u64, topics: u32, seed: u64) -> (tempfile::TempDir, Connection) {
        let dir = tempfile::tempdir().expect("a directory");
        let (file, store) = (dir.path().join("live.jsonl"), dir.path().join("live.db"));
        let mut text = Vec::new();
        let config = asof_synth::GenConfig {
            events,
            topics,
            agents: 2,
            seed,
        };
        asof_synth::generate(config, &mut text).expect("generated");
        std::fs::write(&file, &text).expect("written");
        super::super::follow(&file, &store, false, std::time::Duration::ZERO, |_| false)
            .expect("followed");
        let conn = Connection::open(&store).expect("opens");
        (dir, conn)
    }

    /// What a rewrite removes, read from the store after a seq, is what the
    /// events themselves give: their count, the evidence they cite and the
    /// earliest instant replayed among them.
    #[test]
    fn the_events_removed_read_from_the_store_are_those_of_the_log() {
        let (_dir, mut conn) = followed(300, 5, 11);
        let tx = conn.transaction().expect("a transaction");
        let events = crate::store::read::events(&tx).expect("the log");
        assert!(events.iter().any(|e| !e.cites().is_empty()), "citations");
        let sorted = |mut r: Removed| {
            r.cited.sort_unstable();
            r.cited.dedup();
            (r.count, r.cited, r.first)
        };
        for k in [0usize, 1, 150, 299, 300] {
            let after = k.checked_sub(1).map_or(0, |k| events[k].seq);
            let stored = Removed::stored_after(&tx, after, events.len() - k).expect("read");
            assert_eq!(
                sorted(stored),
                sorted(Removed::of(events[k..].iter())),
                "after {k} events"
            );
        }
    }

    /// What a follow let go of its events' latest instants replayed is read
    /// back from the store as it was held: at every place, before, at and
    /// after the events let go, and once a cut before them takes it back.
    #[test]
    fn the_instants_let_go_are_read_back_as_they_were_held() {
        let (_dir, conn) = followed(300, 5, 11);
        let events = crate::store::read::events(&conn).expect("the log");
        let header = crate::store::read::header(&conn).expect("the header");
        let dataset = |events: &[Event]| Dataset {
            header: header.clone(),
            events: events.to_vec(),
        };
        let whole = Written::of(dataset(&events));
        let replayed = (events.iter()).filter(|e| e.kind() != EventKind::Evidence);
        assert!(replayed.count() > 10, "replayed events");
        let mut held = Written::of(dataset(&events));
        held.let_go(200);
        assert_eq!((held.base, held.len()), (200, 300));
        for kept in 0..=300 {
            let read = match held.replayed_by(kept) {
                Some(last) => last,
                None => replayed_through(&conn, kept).expect("read back"),
            };
            assert_eq!(Some(read), whole.replayed_by(kept), "the first {kept}");
        }
        // A cut before what was let go, and the events after it again.
        let last = replayed_through(&conn, 120).expect("read back");
        held.truncate(120, last);
        held.extend(&events[120..]);
        for kept in 120..=300 {
            assert_eq!(held.replayed_by(kept), whole.replayed_by(kept), "{kept}");
        }
    }

    /// A batch that changes some stored events (a run's end names the agent
    /// of its own events) writes those alone: the seqs whose event differs,
    /// those stored no more and those new, each once and in order.
    #[test]
    fn only_the_events_that_differ_are_written() {
        let config = asof_synth::GenConfig {
            events: 120,
            topics: 3,
            agents: 2,
            seed: 7,
        };
        let (log, _) = asof_synth::log_of(config);
        let stored: Vec<Event> = log.events[40..].to_vec();
        let mut new = stored.clone();
        new.truncate(new.len() - 3);
        let mut changed = Vec::new();
        for e in new.iter_mut().step_by(7) {
            if let EventBody::Believe(a) = &mut e.body {
                a.agent = "the-agent-named-last".to_owned();
                changed.push(e.seq);
            }
        }
        assert!(changed.len() >= 3, "{changed:?}");
        let mut appended = stored[stored.len() - 1].clone();
        appended.seq += 1;
        new.push(appended);
        let (only, gone, written) = differing(&stored, &new);
        let gone: Vec<u64> = gone.iter().map(|e| e.seq).collect();
        let written: Vec<u64> = written.iter().map(|e| e.seq).collect();
        let cut: Vec<u64> = stored[stored.len() - 3..].iter().map(|e| e.seq).collect();
        let last = cut[2];
        assert_eq!(only, [&changed[..], &cut, &[last + 1]].concat());
        assert_eq!(gone, [&changed[..], &cut].concat());
        assert_eq!(written, [&changed[..], &[last + 1]].concat());
        assert_eq!(differing(&stored, &stored), (vec![], vec![], vec![]));
    }

    /// The stored events after a seq are read back whole, as written, only
    /// when their seqs follow it without a gap.
    #[test]
    fn the_events_after_a_seq_are_read_back_when_their_seqs_follow_it() {
        let (_dir, mut conn) = followed(200, 4, 3);
        let tx = conn.transaction().expect("a transaction");
        let events = crate::store::read::events(&tx).expect("the log");
        let after = events[149].seq;
        let read = stored_after(&tx, after, events.len() - 150).expect("read");
        assert_eq!(read.as_deref(), Some(&events[150..]));
        tx.execute(
            "DELETE FROM events WHERE seq = ?1",
            [events[160].seq as i64],
        )
        .expect("a seq left out");
        let read = stored_after(&tx, after, events.len() - 151).expect("read");
        assert_eq!(read, None, "a gap");
    }
}
