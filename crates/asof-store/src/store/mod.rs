//! The SQLite store: one incident's canonical event log and its derived versions.
//!
//! Stores are created atomically (written to a temporary file beside the target,
//! synced, then linked into place), opened read-only by every command that does
//! not write them, and refused with a clear reason when foreign, damaged or newer.

mod atomic;
pub(crate) mod batches;
mod bytes;
pub(crate) mod codec;
mod derive;
pub(crate) mod digest;
mod error;
mod file;
pub mod follow;
pub(crate) mod fork_file;
pub mod health;
pub(crate) mod lookup;
mod packed_header;
pub(crate) mod pages;
pub(crate) mod read;
mod redacted;
mod schema;
pub mod scrub;
pub mod stream;
pub(crate) mod write;

use asof_core::dataset::Parsed;
use asof_core::engine::answers::{self, Truth};
use asof_core::engine::{self, Replay};
use asof_core::model::{Dataset, Header, Name, Version};
use rusqlite::{Connection, OpenFlags};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

pub use atomic::copy_store;
pub(crate) use atomic::*;
pub use batches::Since;
pub use error::{LoadError, MALFORMED, Result, SqlFailure, StoreError};
pub use file::is_sqlite_file;
use file::{check_file_header, pragmas};
pub use read::Seqs;
pub use schema::{APPLICATION_ID, FORMAT_VERSION};

/// What a new store holds: a log, what replay derived from it, where it came
/// from, and extra `meta` rows (a fork's lineage).
pub struct Contents<'a> {
    /// The validated log.
    pub dataset: &'a Dataset,
    /// Its replay.
    pub replay: &'a Replay,
    /// Where it came from (a path, `demo`), as the meta's `source`.
    pub source: &'a str,
    /// More `meta` rows.
    pub meta: Vec<(&'static str, String)>,
}

/// Refuses a file that is not an asof store of this format: another
/// application's SQLite file, a newer format, an older one (to load again).
/// `in_header` is what the file's header already said ([`check_file_header`]);
/// without it SQLite is asked. Shared by opening and by `check`.
fn identify(path: &Path, in_header: Option<(i32, i32)>, conn: &Connection) -> Result<()> {
    // The file's header names an asof store of this format: SQLite need
    // not be asked (two statements of a 3 ms `believed`). Anything else,
    // SQLite's answer is the one that counts.
    let (app, version) = match in_header {
        Some(ours @ (APPLICATION_ID, FORMAT_VERSION)) => ours,
        _ => pragmas(conn).map_err(|e| StoreError::damaged(path, e))?,
    };
    if app != APPLICATION_ID {
        return Err(StoreError::Foreign(path.to_owned()));
    }
    if version > FORMAT_VERSION {
        return Err(StoreError::Newer {
            path: path.to_owned(),
            found: version,
        });
    }
    if version < FORMAT_VERSION {
        return Err(StoreError::Damaged {
            path: path.to_owned(),
            reason: format!(
                "store format version {version} is older than this asof's ({FORMAT_VERSION}): load it again from its dataset (`asof load DATASET --db STORE`)"
            ),
        });
    }
    Ok(())
}

/// A store's review table ([`Store::review`]).
#[derive(Debug, Clone, PartialEq)]
pub struct StoredReview {
    /// The review file it was loaded from, as named then.
    pub file: String,
    /// The SHA-256 of that file's bytes.
    pub sha256: String,
    /// The findings, in file order.
    pub findings: Vec<asof_core::review::Finding>,
}

/// An open store. `label` is what the user called it (a path, or `demo`).
pub struct Store {
    conn: Connection,
    label: String,
    header: Header,
    /// Header positions by id, for ordering rows as people read them. Made
    /// when first asked for: a short command (one topic's answer) needs at
    /// most one look-up, which a walk of the header answers sooner.
    ranks: std::cell::OnceCell<Ranks>,
    /// The header's agent and topic ids by position (the codes of version
    /// rows), made when a first row is decoded.
    coded: std::cell::OnceCell<read::CodedNames>,
    /// Rows and bytes to make room for when reading the next answer from the
    /// version pages (see [`pages::held_at`]); a capacity, never a limit.
    held_room: std::cell::Cell<(usize, usize)>,
    /// Whether reads are memory-mapped: from the open for a snapshot
    /// ([`Store::open_snapshot`]), else turned on by the first answer read
    /// from the version pages (see [`Store::held_at`]).
    mapped: std::cell::Cell<bool>,
}

/// How much of a store a connection maps once an answer for all topics is
/// asked for: more than any store (SQLite caps it at its own maximum).
const MAPPED_BYTES: u64 = 1 << 40;

/// Each agent's and topic's position in the header, by id: the codes version
/// rows name them by, and the order answers are read in.
#[derive(Debug, Default)]
pub(crate) struct Ranks {
    topics: std::collections::HashMap<String, usize, asof_core::model::ShortKeys>,
    agents: std::collections::HashMap<String, usize, asof_core::model::ShortKeys>,
}

impl Ranks {
    pub(crate) fn of(header: &Header) -> Ranks {
        Ranks {
            topics: (header.topics.iter().enumerate())
                .map(|(i, t)| (t.id.clone(), i))
                .collect(),
            agents: (header.agents.iter().enumerate())
                .map(|(i, a)| (a.id.clone(), i))
                .collect(),
        }
    }

    /// A topic's code in version rows (-1 for one not in the header, which
    /// validation prevents).
    pub(crate) fn topic(&self, id: &str) -> i64 {
        self.topics.get(id).map_or(-1, |&i| i as i64)
    }

    /// An agent's code in version rows (see [`Ranks::topic`]).
    pub(crate) fn agent(&self, id: &str) -> i64 {
        self.agents.get(id).map_or(-1, |&i| i as i64)
    }
}

impl Store {
    /// Opens an existing store read-only, refusing foreign, damaged and newer files.
    pub fn open(path: &Path) -> Result<Store> {
        Self::open_with(
            path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
            false,
        )
    }

    /// [`Store::open`], reading in one transaction for as long as the store is
    /// open: its header and every answer come from one state of the file,
    /// whatever a `--follow` commits meanwhile, and SQLite takes its shared
    /// lock and looks for a journal once instead of around every statement
    /// (eight system calls each time; a one-topic `believed` read in eight
    /// such transactions). Its reads are memory-mapped from the start (fewer
    /// page faults; docs/performance-log.md).
    ///
    /// For a command that asks and exits: while the store is open a writer
    /// cannot commit, and nothing may begin a transaction on its connection.
    pub fn open_snapshot(path: &Path) -> Result<Store> {
        Self::open_with(
            path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
            true,
        )
    }

    /// Opens an existing store for writing (`rebuild`).
    pub fn open_for_write(path: &Path) -> Result<Store> {
        Self::open_with(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
            false,
        )
    }

    fn open_with(path: &Path, flags: OpenFlags, snapshot: bool) -> Result<Store> {
        if !path.is_file() {
            return Err(StoreError::NotFound(path.to_owned()));
        }
        let damaged = |e: rusqlite::Error| StoreError::damaged(path, e);
        let in_header = check_file_header(path)?;
        let conn = Connection::open_with_flags(path, flags).map_err(damaged)?;
        conn.busy_timeout(std::time::Duration::from_secs(5))
            .map_err(damaged)?;
        if snapshot {
            // Pages read in place from the file's mapping, not copied into
            // SQLite's cache (fresh memory, a page fault per 4 KiB): a short
            // command reads its few dozen pages once (see `open_snapshot`).
            conn.execute_batch(&format!("PRAGMA mmap_size = {MAPPED_BYTES}"))
                .map_err(damaged)?;
            // Deferred: the read transaction starts with the first read below.
            conn.execute_batch("BEGIN").map_err(damaged)?;
        }
        identify(path, in_header, &conn)?;
        // `rebuild`, the one writer of an open store, packs the header again
        // from its rows, so it reads them: a damaged packed row is mended, not
        // in the way.
        let header = if flags.contains(OpenFlags::SQLITE_OPEN_READ_WRITE) {
            read::header_from_rows(&conn)
        } else {
            read::header(&conn)
        };
        let header = header.map_err(damaged)?;
        let store = Store::of(conn, path.display().to_string(), header);
        store.mapped.set(snapshot);
        Ok(store)
    }

    /// A store on `conn` with `header`, and what is derived from it.
    fn of(conn: Connection, label: String, header: Header) -> Store {
        Store {
            conn,
            label,
            ranks: std::cell::OnceCell::new(),
            coded: std::cell::OnceCell::new(),
            held_room: std::cell::Cell::new((0, 0)),
            mapped: std::cell::Cell::new(false),
            header,
        }
    }

    /// Builds an in-memory store from a parsed dataset (a dataset given as SOURCE,
    /// the bundled demo).
    pub fn in_memory(label: &str, dataset: &Dataset, replay: &Replay) -> Result<Store> {
        Self::in_memory_with(label, dataset, replay, Vec::new())
    }

    /// [`Store::in_memory`] with rows for its `meta` table (an import's
    /// report, as a loaded store keeps it).
    pub fn in_memory_with(
        label: &str,
        dataset: &Dataset,
        replay: &Replay,
        meta: Vec<(&'static str, String)>,
    ) -> Result<Store> {
        let mut conn = Connection::open_in_memory()?;
        let contents = Contents {
            dataset,
            replay,
            source: label,
            meta,
        };
        write::write_all(&mut conn, &contents)?;
        let header = read::header(&conn)?;
        Ok(Store::of(conn, label.to_owned(), header))
    }

    /// Loads a validated dataset into a new store file at `path`, atomically: on any
    /// error nothing is left at `path` (or the file already there is untouched).
    ///
    /// Replay runs on a second thread while the log and its indexes are written;
    /// its result is checked (`Parsed::check_replay`) before anything derived is
    /// written, and returned.
    /// `meta` adds rows to the store's `meta` table (an import's report).
    pub fn load(
        path: &Path,
        parsed: &Parsed,
        force: bool,
        meta: &[(&'static str, String)],
    ) -> std::result::Result<Replay, LoadError> {
        Self::load_reviewed(path, parsed, force, meta, None)
    }

    /// [`Store::load`] with a review's findings in the store's review table
    /// (never in its log): `review` is the review file's name, its SHA-256
    /// and its findings.
    pub fn load_reviewed(
        path: &Path,
        parsed: &Parsed,
        force: bool,
        meta: &[(&'static str, String)],
        review: Option<(&str, &str, &[asof_core::review::Finding])>,
    ) -> std::result::Result<Replay, LoadError> {
        let dataset = &parsed.dataset;
        std::thread::scope(|scope| {
            let replaying = scope.spawn(|| {
                let replay = engine::replay(&dataset.header, &dataset.events);
                let truths = write::truths_of(dataset, &replay);
                (replay, truths)
            });
            let mut replayed = None;
            write_atomically(path, force, |file| -> std::result::Result<(), LoadError> {
                let mut conn = Connection::open(file.path()).map_err(StoreError::from)?;
                conn.execute_batch("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;")
                    .map_err(StoreError::from)?;
                conn.execute_batch(write::BULK).map_err(StoreError::from)?;
                let tx = conn.transaction().map_err(StoreError::from)?;
                write::write_log(&tx, dataset, &parsed.file, meta).map_err(StoreError::from)?;
                if let Some((file, sha256, findings)) = review {
                    write::write_review(&tx, file, sha256, findings).map_err(StoreError::from)?;
                }
                let (replay, truths) = replaying
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
                parsed.check_replay(&replay)?;
                write::write_derived(&tx, dataset, &replay, &truths).map_err(StoreError::from)?;
                tx.commit().map_err(StoreError::from)?;
                conn.close().map_err(|(_, e)| StoreError::from(e))?;
                replayed = Some(replay);
                Ok(())
            })?;
            // write_atomically returns Ok only after its closure did.
            Ok(replayed.unwrap_or_default())
        })
    }

    /// Writes `contents` into a new store file at `path`, atomically: a temporary
    /// file beside it, synced, then linked into place (over an existing file only
    /// with `force`).
    pub fn create_with(path: &Path, contents: &Contents, force: bool) -> Result<()> {
        write_atomically(path, force, |file| -> Result<()> {
            let mut conn = Connection::open(file.path())?;
            conn.execute_batch("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;")?;
            write::write_all(&mut conn, contents)?;
            conn.close().map_err(|(_, e)| e)?;
            Ok(())
        })
    }

    /// What the user called the store (a path, or `demo`).
    pub fn label(&self) -> &str {
        &self.label
    }

    /// The store's header: incident, agents, topics.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// A topic's position in the header (unknown ids sort last).
    pub fn topic_rank(&self, id: &str) -> usize {
        self.ranks().topics.get(id).copied().unwrap_or(usize::MAX)
    }

    /// An agent's position in the header (unknown ids sort last).
    pub fn agent_rank(&self, id: &str) -> usize {
        self.ranks().agents.get(id).copied().unwrap_or(usize::MAX)
    }

    fn ranks(&self) -> &Ranks {
        self.ranks.get_or_init(|| Ranks::of(&self.header))
    }

    /// A topic's code in version rows (its header position; -1, which no row
    /// holds, for an unknown id). Callers look up a few (a query's filter, a
    /// fork's pairs), so the header is walked: no ranks are made for them.
    pub fn topic_code(&self, id: &str) -> i64 {
        self.header.topic_position(id).map_or(-1, |i| i as i64)
    }

    /// An agent's code in version rows (see [`Store::topic_code`]).
    pub fn agent_code(&self, id: &str) -> i64 {
        self.header.agent_position(id).map_or(-1, |i| i as i64)
    }

    /// [`pages::held_at`] on this store, with room made at once for as many
    /// rows as the last answer read, and an eighth more (the next is likely
    /// about as long).
    pub(crate) fn held_at(
        &self,
        at: asof_core::time::Micros,
        about: Option<asof_core::time::Micros>,
        agent: Option<i64>,
    ) -> rusqlite::Result<(Vec<read::VersionRow>, Vec<u8>)> {
        // An answer for all topics reads a few megabytes of pages, a
        // different few each time: read in place from the file's mapping
        // instead of copied through SQLite's cache by a system call per page
        // (docs/performance-log.md, session 21). A short command that never asks
        // one does not map at all, nor does the TUI, which answers from memory.
        if !self.mapped.replace(true) {
            self.conn
                .execute_batch(&format!("PRAGMA mmap_size = {MAPPED_BYTES}"))?;
        }
        let read = pages::held_at(&self.conn, at, about, agent, self.held_room.get())?;
        let more = |n: usize| n.saturating_add(n / 8);
        self.held_room.set((more(read.0.len()), more(read.1.len())));
        Ok(read)
    }

    /// The scrub index as stored (design.md §6), or why its blob is malformed.
    pub fn scrub_index(
        &self,
    ) -> crate::store::Result<std::result::Result<scrub::ScrubIndex, scrub::Malformed>> {
        Ok(scrub::read(&self.conn)?)
    }

    /// [`Store::scrub_index`], with what a reader keeps to read it again
    /// after a follow's batches ([`Store::scrub_index_again`]).
    pub fn scrub_index_held(
        &self,
    ) -> crate::store::Result<std::result::Result<(scrub::ScrubIndex, scrub::Held), scrub::Malformed>>
    {
        Ok(scrub::read_held(&self.conn)?)
    }

    /// What the follow's batches after the one `held` is as of changed
    /// (`None`: the store cannot say; read it whole).
    pub fn batches_since(&self, held: &scrub::Held) -> Result<Option<batches::Since>> {
        Ok(batches::since(&self.conn, held.batch)?)
    }

    /// Brings `index`, read with `held`, up to date with the stored index,
    /// reading only the chunks the batches `since` wrote. Returns what it
    /// read; `None` when that cannot be done (then read the index whole:
    /// `index` may be part way).
    pub fn scrub_index_again(
        &self,
        index: &mut scrub::ScrubIndex,
        held: &mut scrub::Held,
        since: &batches::Since,
    ) -> Result<Option<scrub::ReadAgain>> {
        Ok(scrub::read_again(&self.conn, index, held, since)?)
    }

    /// The scrub index computed from the rows with checkpoints every
    /// `stride` versions (what tests compare the stored one with).
    pub fn scrub_index_with(&self, stride: usize) -> Result<scrub::ScrubIndex> {
        Ok(scrub::compute_with(&self.conn, self.header(), stride)?)
    }

    /// The connection, for the store's own modules: no SQL runs outside `store/`.
    fn connection(&self) -> &Connection {
        &self.conn
    }

    /// A decoder of this store's version rows (`share_ids`: see `read::Decoder`).
    pub fn decoder(&self, share_ids: bool) -> read::Decoder {
        let coded = self.coded.get_or_init(|| read::coded_names(&self.header));
        read::Decoder::new(coded.clone(), share_ids)
    }

    /// A value from the `meta` table.
    pub fn meta(&self, key: &str) -> Result<Option<String>> {
        read::meta(&self.conn, key).map_err(StoreError::from)
    }

    /// The review the store was loaded with (its review table), if any: the
    /// file it came from, that file's SHA-256 and the findings in order.
    pub fn review(&self) -> Result<Option<StoredReview>> {
        let Some(file) = self.meta("review_file")? else {
            return Ok(None);
        };
        let sha256 = self.meta("review_sha256")?.unwrap_or_default();
        let rows = read::review_rows(&self.conn)?;
        let lines: Vec<&str> = rows.iter().map(|(_, _, line)| line.as_str()).collect();
        let text = lines.join("\n");
        let findings =
            asof_core::review::parse_lines(&format!("{}'s review table", self.label), &text)
                .map_err(|e| StoreError::Damaged {
                    path: self.label.clone().into(),
                    reason: e.to_string(),
                })?;
        Ok(Some(StoredReview {
            file,
            sha256,
            findings: findings.into_iter().map(|(_, f)| f).collect(),
        }))
    }

    /// What findings about this store's log may name: its evidence and
    /// assertions with their recorded times, its topics and agents (for
    /// reading what a person typed as a target).
    pub fn subjects(&self) -> Result<asof_core::review::Subjects> {
        read::subjects(&self.conn, &self.header, None).map_err(StoreError::from)
    }

    /// [`Store::subjects`] of just the evidence and assertions with `ids`
    /// (what a review's findings name), read by id: checking a review costs
    /// its findings, not the log.
    pub fn subjects_of<'a>(
        &self,
        ids: impl IntoIterator<Item = &'a str>,
    ) -> Result<asof_core::review::Subjects> {
        let ids: Vec<&str> = ids.into_iter().collect();
        read::subjects(&self.conn, &self.header, Some(&ids)).map_err(StoreError::from)
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
    pub fn versions(&self) -> Result<Vec<asof_core::model::Version>> {
        read::versions(&self.conn).map_err(StoreError::from)
    }

    /// The stored convergence of each (agent, topic) with a resolution
    /// (`truths`: when its working answer settled on the resolution, how long
    /// it was wrong), as derived when the store was written.
    pub fn truths(&self) -> Result<BTreeMap<(String, String), Truth>> {
        read::truths(&self.conn).map_err(StoreError::from)
    }

    /// Replays the log from scratch.
    pub fn replay(&self) -> Result<Replay> {
        let log = self.log()?;
        Ok(engine::replay(&log.header, &log.events))
    }

    /// Re-derives versions, outcomes and reconfirmations from the log, in one
    /// transaction. Returns how many versions the store now holds.
    ///
    /// The log is read back in replay order and replayed a slice at a time, as a
    /// load does, so memory does not grow with the log.
    pub fn rebuild(&mut self) -> Result<usize> {
        // Opened for writing, the store's header is the one its rows hold
        // (see `open_with`), which the packed row is written from again.
        let header = self.header.clone();
        let tx = self.conn.transaction()?;
        tx.execute_batch(
            "DROP INDEX versions_by_topic; DROP INDEX versions_by_id;
             DELETE FROM versions; DELETE FROM outcomes; DELETE FROM reconfirmations;
             DELETE FROM truths;",
        )?;
        packed_header::write(&tx, &header)?;
        let derived = derive::derive(&tx, &header, derive::SLICE)?;
        derive::finish_derived(&tx, &header)?;
        tx.commit()?;
        Ok(derived.versions)
    }

    /// Re-derives everything from the log and compares it with the stored rows:
    /// versions, reconfirmations and truths.
    ///
    /// Versions are matched by what they are (creating event, agent, topic, claim,
    /// valid start), not by id: ids number versions in creation order within one
    /// replay, and a fork re-derives only some pairs and numbers them after the
    /// parent's.
    pub fn check(&self) -> Result<CheckReport> {
        let log = self.log()?;
        let fresh = engine::replay(&log.header, &log.events);
        let stored = read::versions(&self.conn)?;
        let mut differences = Vec::new();

        // (creating event, agent, topic, valid start, n-th such version by id).
        type Key = (u64, Name, Name, i64, usize);
        fn keyed(versions: &[Version]) -> BTreeMap<Key, &Version> {
            let mut seen: HashMap<(u64, &str, &str, i64), usize> = HashMap::new();
            let mut by_id: Vec<&Version> = versions.iter().collect();
            by_id.sort_by_key(|v| v.id);
            by_id
                .into_iter()
                .map(|v| {
                    let n = seen
                        .entry((v.created_by, &v.agent, &v.topic, v.valid.from))
                        .or_default();
                    *n += 1;
                    let key = (
                        v.created_by,
                        v.agent.clone(),
                        v.topic.clone(),
                        v.valid.from,
                        *n,
                    );
                    (key, v)
                })
                .collect()
        }
        let describe = |v: &Version| {
            format!(
                "the version of {}/{} claiming {:?} from {} created by event #{}",
                v.agent,
                v.topic,
                v.claim,
                asof_core::time::format(v.valid.from),
                v.created_by
            )
        };
        let stored_by_key = keyed(&stored);
        let fresh_by_key = keyed(&fresh.versions);
        for (k, f) in &fresh_by_key {
            match stored_by_key.get(k) {
                None => differences.push(format!(
                    "{} is derived by replay but missing from the store",
                    describe(f)
                )),
                Some(s)
                    if Version {
                        id: f.id,
                        ..(*s).clone()
                    } != **f =>
                {
                    differences.push(format!(
                        "{} differs from its replay: {}",
                        describe(f),
                        field_differences(s, f).join("; ")
                    ))
                }
                Some(_) => {}
            }
        }
        for (k, s) in &stored_by_key {
            if !fresh_by_key.contains_key(k) {
                differences.push(format!(
                    "{} is stored but replay does not derive it",
                    describe(s)
                ));
            }
        }

        // Reconfirmations, with version ids translated to keys on both sides.
        let stored_keys: HashMap<u64, &Key> =
            stored_by_key.iter().map(|(k, v)| (v.id, k)).collect();
        let fresh_keys: HashMap<u64, &Key> = fresh_by_key.iter().map(|(k, v)| (v.id, k)).collect();
        let mut stored_reconfirmed = BTreeSet::new();
        {
            let mut stmt = self
                .conn
                .prepare("SELECT seq, version FROM reconfirmations")?;
            let mut rows = stmt.query([])?;
            while let Some(r) = rows.next()? {
                let (seq, id): (i64, i64) = (r.get(0)?, r.get(1)?);
                stored_reconfirmed.insert((seq as u64, stored_keys.get(&(id as u64)).copied()));
            }
        }
        let fresh_keys = &fresh_keys;
        let fresh_reconfirmed: BTreeSet<(u64, Option<&Key>)> = fresh
            .outcomes
            .iter()
            .filter_map(|o| match &o.effect {
                engine::Effect::Reconfirmed { versions } => Some((o.seq, versions)),
                _ => None,
            })
            .flat_map(|(seq, versions)| {
                versions
                    .iter()
                    .map(move |id| (seq, fresh_keys.get(id).copied()))
            })
            .collect();
        for (seq, _) in stored_reconfirmed.symmetric_difference(&fresh_reconfirmed) {
            differences.push(format!(
                "the reconfirmations recorded for event #{seq} differ from its replay"
            ));
        }

        // The packed header, against the rows it packs.
        if read::header_from_rows(&self.conn)? != self.header {
            differences.push(
                "the packed header (table header_packed) differs from the incident, agents and topics rows".into(),
            );
        }

        // Truths.
        let fresh_truths: BTreeMap<(String, String), Truth> = answers::truths(
            &log.header,
            fresh.versions.iter(),
            log.span().unwrap_or((0, 0)),
        )
        .into_iter()
        .collect();
        let stored_truths = read::truths(&self.conn)?;
        if stored_truths != fresh_truths {
            differences.push(
                "the stored convergence on resolutions (truths) differs from the replay's".into(),
            );
        }

        // The scrub index, against a fresh computation from the stored rows.
        let fresh_index = scrub::compute(&self.conn, &self.header)?;
        match scrub::read(&self.conn)? {
            Ok(stored) if stored == fresh_index => {}
            Ok(_) => differences.push(
                "the scrub index (table scrub) differs from a fresh computation from the stored log and versions"
                    .into(),
            ),
            Err(malformed) => differences.push(malformed.to_string()),
        }
        if let Some(difference) = pages::differs(&self.conn)? {
            differences.push(difference);
        }
        Ok(CheckReport {
            versions: fresh.versions.len(),
            differences,
        })
    }
}

/// "claim: stored \"x\", replayed \"y\"" for each field where two versions differ.
fn field_differences(stored: &Version, fresh: &Version) -> Vec<String> {
    let mut out = Vec::new();
    let mut field = |name: &str, a: String, b: String| {
        if a != b {
            out.push(format!("{name}: stored {a}, replayed {b}"));
        }
    };
    let t = |m: i64| asof_core::time::format_opt(m).unwrap_or_else(|| "open".into());
    field(
        "claim",
        format!("{:?}", stored.claim),
        format!("{:?}", fresh.claim),
    );
    field(
        "confidence",
        stored.confidence.to_string(),
        fresh.confidence.to_string(),
    );
    field("valid_to", t(stored.valid.to), t(fresh.valid.to));
    field("recorded_at", t(stored.recorded_at), t(fresh.recorded_at));
    field(
        "superseded_at",
        t(stored.superseded_at),
        t(fresh.superseded_at),
    );
    field(
        "assertion",
        stored.assertion.to_string(),
        fresh.assertion.to_string(),
    );
    field(
        "origin",
        stored.origin.as_str().into(),
        fresh.origin.as_str().into(),
    );
    let closed = |v: &Version| v.closed.as_ref().map_or("open".into(), |c| c.to_string());
    field("closed", closed(stored), closed(fresh));
    field(
        "clipped_by",
        format!("{:?}", stored.clipped_by),
        format!("{:?}", fresh.clipped_by),
    );
    field(
        "requested_valid_to",
        t(stored.requested_valid_to),
        t(fresh.requested_valid_to),
    );
    field(
        "supported_at",
        t(stored.supported_at),
        t(fresh.supported_at),
    );
    let list = |v: &Version| {
        let times: Vec<String> = v.reconfirmed.iter().map(|&m| t(m)).collect();
        format!("[{}]", times.join(", "))
    };
    field("reconfirmed", list(stored), list(fresh));
    out
}

/// Writes afresh what queries read instead of rows — the scrub index and the
/// version pages — from the stored versions: load and rebuild call it once the
/// versions are final (a fork patches both; a follow grows the one and patches
/// the other).
pub(crate) fn write_read_indexes(conn: &Connection, header: &Header) -> rusqlite::Result<()> {
    scrub::write(conn, header)?;
    pages::write(conn)
}

/// What `check` found.
#[derive(Debug, Clone)]
pub struct CheckReport {
    /// Versions compared.
    pub versions: usize,
    /// Each difference between the stored and the replayed, in a sentence.
    pub differences: Vec<String>,
}

/// Watches a store file for commits by another connection (the live view
/// beside a follow or a receiver): a read-only connection and SQLite's
/// `data_version`, which changes when someone else commits.
pub struct Watch {
    conn: Connection,
}

impl Watch {
    /// Watches the store at `path` (read-only).
    pub fn open(path: &Path) -> Result<Watch> {
        let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY)?;
        Ok(Watch { conn })
    }

    /// A number that changes whenever another connection commits.
    pub fn version(&self) -> Result<i64> {
        Ok(self
            .conn
            .query_row("PRAGMA data_version", [], |r| r.get::<_, i64>(0))?)
    }
}

/// What a bulk load holds while it runs, installed by the program (the
/// binary's `runtime` keeps the memory the allocator frees committed during a
/// load; design.md §6, docs/performance-log.md). Nothing by default.
static BULK_LOAD_GUARD: std::sync::OnceLock<fn() -> Box<dyn std::any::Any>> =
    std::sync::OnceLock::new();

/// Installs `guard`, made at the start of every bulk load and dropped at its
/// end. The first call wins; later ones change nothing.
pub fn on_bulk_load(guard: fn() -> Box<dyn std::any::Any>) {
    let _ = BULK_LOAD_GUARD.set(guard);
}

/// The guard [`on_bulk_load`] installed, for another reader that allocates
/// and frees the same large buffers again and again (a live screen's reads
/// of its store: a copy of the scrub index and its lists each time, tens of
/// megabytes at a million events): while it lives, memory freed stays
/// committed, to be reused without faulting it in again.
pub fn freed_memory_kept() -> Option<Box<dyn std::any::Any>> {
    bulk_load_guard()
}

/// The guard a bulk load holds while it runs, if the program installed one.
pub(crate) fn bulk_load_guard() -> Option<Box<dyn std::any::Any>> {
    BULK_LOAD_GUARD.get().map(|make| make())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A WAL-mode SQLite file of several pages, closed (checkpointed).
    fn wal_file(dir: &Path) -> std::path::PathBuf {
        let path = dir.join("s.db");
        let conn = Connection::open(&path).expect("opens");
        conn.query_row("PRAGMA journal_mode = WAL", [], |_| Ok(()))
            .expect("WAL");
        conn.execute_batch(
            "CREATE TABLE t (x TEXT);
             WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000)
             INSERT INTO t SELECT printf('%0200d', i) FROM n;",
        )
        .expect("fills");
        drop(conn);
        path
    }

    fn cut(path: &Path, keep: u64) {
        let file = std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .expect("opens");
        file.set_len(keep).expect("truncates");
    }

    #[test]
    fn a_truncated_file_is_refused_unless_a_wal_beside_it_is_mid_checkpoint() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = wal_file(dir.path());
        check_file_header(&path).expect("a whole file passes");
        let length = std::fs::metadata(&path).expect("metadata").len();
        cut(&path, length / 2);
        let refused = check_file_header(&path).expect_err("a short file is refused");
        assert!(refused.to_string().contains("truncated"), "{refused}");
        // While a writer's -wal exists, a checkpoint may have written the
        // header's page count before the pages: not a truncation.
        let mut wal = path.as_os_str().to_owned();
        wal.push("-wal");
        std::fs::write(&wal, b"").expect("writes the -wal");
        check_file_header(&path).expect("a WAL store being checkpointed passes");
        std::fs::remove_file(&wal).expect("removes the -wal");
        assert!(check_file_header(&path).is_err());
    }

    /// The header's application id and format version spare an open two
    /// statements, only while the file's header is its last committed one.
    #[test]
    fn the_header_names_the_store_unless_a_wal_may_hold_a_newer_one() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = wal_file(dir.path());
        {
            let conn = Connection::open(&path).expect("opens");
            conn.execute_batch("PRAGMA application_id = 1234; PRAGMA user_version = 56;")
                .expect("sets both");
        }
        assert_eq!(
            check_file_header(&path).expect("a whole file passes"),
            Some((1234, 56))
        );
        let mut wal = path.as_os_str().to_owned();
        wal.push("-wal");
        std::fs::write(&wal, b"").expect("writes the -wal");
        assert_eq!(check_file_header(&path).expect("passes"), None);
        std::fs::remove_file(&wal).expect("removes the -wal");
        // Not SQLite: nothing to say.
        let text = dir.path().join("t.db");
        std::fs::write(&text, "not a store").expect("writes");
        assert_eq!(check_file_header(&text).expect("passes"), None);
    }

    /// The codes a query looks up (a walk of the header, which makes no
    /// ranks) are the ones a writer gives rows ([`Ranks`]), for every id and
    /// for an unknown one, before and after the store's ranks are made.
    #[test]
    fn codes_read_by_a_walk_of_the_header_are_the_writers() {
        let store = crate::testing::store_of(asof_synth::GenConfig {
            events: 200,
            topics: 7,
            agents: 3,
            seed: 5,
        });
        let header = store.header().clone();
        let codes = || -> Vec<i64> {
            let topics = header.topics.iter().map(|t| store.topic_code(&t.id));
            let agents = header.agents.iter().map(|a| store.agent_code(&a.id));
            let unknown = [
                store.topic_code("no such topic"),
                store.agent_code("nobody"),
            ];
            topics.chain(agents).chain(unknown).collect()
        };
        let walked = codes();
        assert!(store.ranks.get().is_none(), "a code alone makes no ranks");
        assert_eq!(walked, [0, 1, 2, 3, 4, 5, 6, 0, 1, 2, -1, -1]);
        let ranks = Ranks::of(&header);
        let written: Vec<i64> = (header.topics.iter().map(|t| ranks.topic(&t.id)))
            .chain(header.agents.iter().map(|a| ranks.agent(&a.id)))
            .chain([ranks.topic("no such topic"), ranks.agent("nobody")])
            .collect();
        assert_eq!(walked, written);
        assert_eq!(store.topic_rank(&header.topics[3].id), 3);
        assert!(store.ranks.get().is_some(), "a rank makes them");
        assert_eq!(codes(), walked);
    }

    /// A store opened as a snapshot reads in one transaction until it is
    /// dropped, from the file's mapping: a writer cannot commit meanwhile (so
    /// every answer is of one state), and can once it is gone. A store opened
    /// plainly holds nothing between its reads.
    #[test]
    fn a_snapshot_holds_one_read_transaction_for_the_stores_life() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("s.db");
        let (log, replay) = asof_synth::log_of(asof_synth::GenConfig {
            events: 200,
            topics: 7,
            agents: 3,
            seed: 5,
        });
        let contents = Contents {
            dataset: &log,
            replay: &replay,
            source: "test",
            meta: Vec::new(),
        };
        Store::create_with(&path, &contents, false).expect("writes");
        let write = || {
            let conn = Connection::open(&path).expect("opens to write");
            conn.busy_timeout(std::time::Duration::ZERO)
                .expect("no wait");
            conn.execute("UPDATE meta SET value = value WHERE key = 'source'", [])
        };
        let topic = Some(log.header.topics[0].id.clone());
        let filter = crate::query::Filter { agent: None, topic };
        let (first, _) = crate::query::recorded_span(&Store::open(&path).expect("opens"))
            .expect("span")
            .expect("events");
        for snapshot in [false, true] {
            let store = match snapshot {
                true => Store::open_snapshot(&path),
                false => Store::open(&path),
            }
            .expect("opens");
            crate::query::believed(&store, first, None, &filter).expect("answers");
            assert_eq!(write().is_err(), snapshot, "snapshot: {snapshot}");
            // A snapshot maps the file from the start; a plain open once an
            // answer for all topics is asked for (not here).
            let mapped: i64 = (store.connection())
                .query_row("PRAGMA mmap_size", [], |r| r.get(0))
                .expect("reads the pragma");
            assert_eq!(mapped > 0, snapshot, "snapshot: {snapshot}");
            drop(store);
            write().expect("commits once the store is closed");
        }
    }
}
