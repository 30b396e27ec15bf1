//! The scrub index: what the TUI's timeline needs to open a store without
//! reading every row (design.md §9), derived from the stored log and versions and
//! kept in the `scrub` table: each part's blob in chunks of `CHUNK` bytes,
//! chunk 0 under the part's name and chunk k under "name/k" (store format 8),
//! so a follow's batch writes again only the chunks it changed.
//!
//! ```text
//! part           one entry per           holds
//! versions       version, by id          id, recorded, valid from,
//!                                        topic · agent (header positions), claim
//! superseded     version, by id          its closing instant (apart: the one
//!                                        field a follow changes in place)
//! claims         distinct claim          its text (codes above index this list)
//! by_recorded    version                 position, ordered by (recorded_at, id)
//! by_superseded  closed version          position, ordered by (superseded_at, id)
//! checkpoints    CHECKPOINT versions     the positions held just after each
//!                of by_recorded          stride (a stabbing query reads one
//!                                        checkpoint plus < CHECKPOINT versions)
//! marks          event, by (recorded_at, seq, kind, outcome, topic, agent
//!                seq)
//! evidence       evidence item, in       display widths of its id, its source
//!                the marks' order        and the ids of what cites it
//! ```
//!
//! Every writer of derived rows (load, rebuild, fork) calls [`write()`] once the
//! versions are final, and a follow grows the index it keeps (`Growing`);
//! `check` compares the stored index with [`compute`] on the same tables,
//! byte for byte, and `rebuild` writes it afresh. The blobs
//! are little-endian fixed-width records; a blob of the wrong length is a
//! damaged store, never a panic.

use crate::engine::EffectKind;
use crate::model::{Header, ShortKeys};
use crate::time::{Micros, OPEN};
use rusqlite::{Connection, OptionalExtension, params};
use std::collections::{HashMap, HashSet};

/// Versions per checkpoint stride, in recorded order.
pub const CHECKPOINT: usize = 8192;

/// "No header position": a mark without a topic or agent, or one not in the header.
pub const NONE: u32 = u32::MAX;

/// What kind of mark an event leaves on the timeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MarkKind {
    Evidence,
    Assertion,
    Reconfirmation,
    Retraction,
    /// A verify event (design.md §4): its agent is who judged, its claim the state,
    /// and it cites the evidence judged.
    Verification,
}

impl MarkKind {
    pub const ALL: [MarkKind; 5] = [
        MarkKind::Evidence,
        MarkKind::Assertion,
        MarkKind::Reconfirmation,
        MarkKind::Retraction,
        MarkKind::Verification,
    ];

    pub fn index(self) -> usize {
        match self {
            MarkKind::Evidence => 0,
            MarkKind::Assertion => 1,
            MarkKind::Reconfirmation => 2,
            MarkKind::Retraction => 3,
            MarkKind::Verification => 4,
        }
    }

    /// The mark an event of stored `kind` leaves, given what replaying it did.
    pub fn of(kind: &str, effect: EffectKind) -> MarkKind {
        match (kind, effect) {
            ("evidence", _) => MarkKind::Evidence,
            ("retract", _) => MarkKind::Retraction,
            ("verify", _) => MarkKind::Verification,
            (_, EffectKind::Reconfirmed) => MarkKind::Reconfirmation,
            _ => MarkKind::Assertion,
        }
    }
}

const EFFECTS: [EffectKind; 5] = [
    EffectKind::Recorded,
    EffectKind::Applied,
    EffectKind::Reconfirmed,
    EffectKind::ZeroWidth,
    EffectKind::NoMatch,
];

/// One version as the timeline indexes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VersionKey {
    pub id: u64,
    pub recorded_at: Micros,
    pub superseded_at: Micros,
    pub valid_from: Micros,
    pub topic: u32,
    pub agent: u32,
    pub claim: u32,
}

impl VersionKey {
    /// Held at recorded instant `at`.
    pub fn held_at(&self, at: Micros) -> bool {
        self.recorded_at <= at && at < self.superseded_at
    }
}

/// One event as the timeline indexes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MarkKey {
    pub seq: u64,
    pub recorded_at: Micros,
    pub kind: MarkKind,
    pub effect: EffectKind,
    /// For a retraction of an assertion, that assertion's topic.
    pub topic: u32,
    /// For a verification, who judged (when it is an agent of the header).
    pub agent: u32,
}

/// Display widths (characters) of an evidence item's columns in the TUI.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EvidenceWidths {
    pub id: u16,
    pub source: u16,
    /// The ids of the events citing it, comma-separated.
    pub cited: u16,
}

/// The whole index, decoded.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScrubIndex {
    /// Versions per checkpoint stride ([`CHECKPOINT`] in a store).
    pub stride: usize,
    pub versions: Vec<VersionKey>,
    pub claims: Vec<String>,
    pub by_recorded: Vec<u32>,
    pub by_superseded: Vec<u32>,
    pub checkpoints: Vec<Vec<u32>>,
    pub marks: Vec<MarkKey>,
    /// One per evidence mark, in the order of `marks`.
    pub evidence: Vec<EvidenceWidths>,
}

/// The index of the log and versions stored in `conn`.
pub fn compute(conn: &Connection, header: &Header) -> rusqlite::Result<ScrubIndex> {
    compute_with(conn, header, CHECKPOINT)
}

/// [`compute`] with checkpoints every `stride` versions (tests use short ones).
pub fn compute_with(
    conn: &Connection,
    header: &Header,
    stride: usize,
) -> rusqlite::Result<ScrubIndex> {
    Ok(Growing::compute_with(conn, header, stride)?.index)
}

/// The index with what it takes to bring it up to date as a follow appends
/// to the log (design.md §6), in time proportional to what was appended, not to
/// the store: [`Growing::grow`] reads only the events after the last seq it
/// has seen and the versions closed since the batch's first replayed
/// instant (and those still held). [`compute`] is a growth from nothing, so
/// a grown index equals a fresh computation by construction; the follow
/// tests hold it to a fresh load's as well.
pub(crate) struct Growing {
    index: ScrubIndex,
    /// Stored claim code → its position in `index.claims`.
    claim_code: HashMap<i64, u32, ShortKeys>,
    /// Evidence id → its seq.
    evidence_seq: HashMap<String, i64, ShortKeys>,
    /// Evidence seq → its position in `index.evidence` (each citation adds
    /// to its `cited`, [`cite`]).
    evidence_at: HashMap<i64, usize, ShortKeys>,
    /// The last event seq seen (events are appended in seq order).
    last_seq: i64,
    /// How many versions are still held.
    held: usize,
    /// The parts as this index last stored them (`None`: not stored yet).
    written: Option<HashMap<&'static str, Vec<u8>>>,
    /// What grew since the index was last stored (`None`: anything may
    /// have changed, or it was not stored whole: every part is compared).
    grown: Option<Grown>,
}

/// What grew in a [`Growing`] index since it was last stored, so storing it
/// encodes and writes only that: for each part that grows record by record,
/// the first record that may differ, and the versions before those whose
/// closing instant changed in place.
#[derive(Debug, Clone)]
struct Grown {
    versions: usize,
    by_recorded: usize,
    by_superseded: usize,
    marks: usize,
    closed: Vec<usize>,
}

impl Grown {
    /// Nothing grew yet in an index of these lengths.
    fn from(index: &ScrubIndex) -> Grown {
        Grown {
            versions: index.versions.len(),
            by_recorded: index.by_recorded.len(),
            by_superseded: index.by_superseded.len(),
            marks: index.marks.len(),
            closed: Vec::new(),
        }
    }
}

/// A follow's batch did not only append (a version changed other than by
/// being closed, or ids or instants went back): compute the index afresh.
#[derive(Debug)]
struct NotAppended;

impl Growing {
    /// The index of the store, from nothing.
    pub(crate) fn compute(conn: &Connection, header: &Header) -> rusqlite::Result<Growing> {
        Self::compute_with(conn, header, CHECKPOINT)
    }

    fn compute_with(
        conn: &Connection,
        header: &Header,
        stride: usize,
    ) -> rusqlite::Result<Growing> {
        let mut index = ScrubIndex {
            stride: stride.max(1),
            ..ScrubIndex::default()
        };
        index.checkpoints.push(Vec::new());
        let mut growing = Growing {
            index,
            claim_code: HashMap::default(),
            evidence_seq: HashMap::default(),
            evidence_at: HashMap::default(),
            last_seq: i64::MIN,
            held: 0,
            written: None,
            grown: None,
        };
        match growing.grow_or_not(conn, header, Some(i64::MIN)) {
            Ok(Ok(())) => Ok(growing),
            Err(e) => Err(e),
            // A growth from nothing only appends: unreachable, but never a panic.
            Ok(Err(NotAppended)) => Err(super::read::damaged(
                "the scrub index does not follow from the stored versions".to_owned(),
            )),
        }
    }

    /// The index the store holds, with what it takes to grow it, read rather
    /// than computed (a follow taking a store up: its index was written with
    /// its rows, by the load or the batch before): the parts decoded, the
    /// claims' stored codes and the evidence items' seqs read. The first
    /// store compares every part. An index that does not decode, or names a
    /// claim the store lacks, is computed afresh.
    pub(crate) fn stored(conn: &Connection, header: &Header) -> rusqlite::Result<Growing> {
        let mut parts = stored_parts(conn)?;
        let index = match decode(&parts) {
            Ok(index) if index.stride == CHECKPOINT => index,
            _ => return Self::computed_over_stored(conn, header),
        };
        let mut codes: HashMap<String, i64> = HashMap::new();
        let mut stmt = conn.prepare("SELECT text, code FROM claims")?;
        let mut q = stmt.query([])?;
        while let Some(r) = q.next()? {
            codes.insert(r.get(0)?, r.get(1)?);
        }
        let claim_code: Option<HashMap<i64, u32, ShortKeys>> = (index.claims.iter().enumerate())
            .map(|(at, text)| Some((*codes.get(text)?, at as u32)))
            .collect();
        let evidence_at = evidence_positions(&index);
        let (Some(claim_code), true) = (claim_code, evidence_at.len() == index.evidence.len())
        else {
            return Self::computed_over_stored(conn, header);
        };
        let mut evidence_seq = HashMap::default();
        let mut stmt = conn.prepare("SELECT id, seq FROM events WHERE kind = 'evidence'")?;
        let mut q = stmt.query([])?;
        while let Some(r) = q.next()? {
            evidence_seq.insert(r.get(0)?, r.get(1)?);
        }
        let last_seq: Option<i64> =
            conn.query_row("SELECT max(seq) FROM events", [], |r| r.get(0))?;
        let held = (index.versions.iter())
            .filter(|v| v.superseded_at == OPEN)
            .count();
        Ok(Growing {
            written: PARTS
                .iter()
                .map(|&name| parts.remove(name).map(|data| (name, data)))
                .collect(),
            index,
            claim_code,
            evidence_seq,
            evidence_at,
            last_seq: last_seq.unwrap_or(i64::MIN),
            held,
            grown: None,
        })
    }

    /// [`Growing::compute`], taking what the store holds as last stored.
    fn computed_over_stored(conn: &Connection, header: &Header) -> rusqlite::Result<Growing> {
        let mut growing = Self::compute(conn, header)?;
        growing.read_stored(conn)?;
        Ok(growing)
    }

    /// Takes what the store holds as what this index last stored, if every
    /// part of it is stored whole (a follow does it as it starts, so its
    /// first batch does not read the stored index on a line's way in).
    pub(crate) fn read_stored(&mut self, conn: &Connection) -> rusqlite::Result<()> {
        let mut stored = stored_parts(conn)?;
        self.written = PARTS
            .iter()
            .map(|&name| stored.remove(name).map(|data| (name, data)))
            .collect();
        // What is stored need not be this index: compare every part once.
        self.grown = None;
        Ok(())
    }

    /// Stores the index, writing only the chunks whose bytes differ from
    /// what it stored last — the first time, from what the store holds (if
    /// every part of it is stored whole; else the whole index in its place).
    /// After a growth, only what grew is encoded and written
    /// ([`store_grown`]).
    pub(crate) fn store(&mut self, conn: &Connection) -> rusqlite::Result<()> {
        if let (Some(grown), Some(written)) = (&self.grown, self.written.as_mut()) {
            store_grown(conn, &self.index, grown, written)?;
        } else {
            let parts: HashMap<&'static str, Vec<u8>> = encode(&self.index).into_iter().collect();
            if self.written.is_none() {
                self.read_stored(conn)?;
            }
            store_parts(conn, &parts, self.written.as_ref())?;
            self.written = Some(parts);
        }
        self.grown = Some(Grown::from(&self.index));
        Ok(())
    }

    /// Brings the index up to date after a follow's batch appended events
    /// and, if `since` is given, replayed from that instant on: every version
    /// closed at or after it, and every one still held, is as the batch left
    /// it (`None`: the versions did not change). The batch must have
    /// replayed after every instant replayed before, as an appending writer's
    /// does; otherwise (or on any sign it did not) the index is computed
    /// afresh.
    pub(crate) fn grow(
        self,
        conn: &Connection,
        header: &Header,
        since: Option<Micros>,
    ) -> rusqlite::Result<Growing> {
        let stride = self.index.stride;
        let mut growing = self;
        match growing.grow_or_not(conn, header, since)? {
            Ok(()) => Ok(growing),
            Err(NotAppended) => Self::compute_with(conn, header, stride),
        }
    }

    fn grow_or_not(
        &mut self,
        conn: &Connection,
        header: &Header,
        since: Option<Micros>,
    ) -> rusqlite::Result<Result<(), NotAppended>> {
        if let Some(since) = since
            && let Err(e) = self.versions(conn, header, since)?
        {
            return Ok(Err(e));
        }
        self.events(conn, header)?;
        Ok(Ok(()))
    }

    /// The position in the index's claims of stored claim `code`, its text
    /// added at the end the first time.
    fn claim(&mut self, conn: &Connection, code: i64) -> rusqlite::Result<u32> {
        if let Some(&c) = self.claim_code.get(&code) {
            return Ok(c);
        }
        let mut texts = conn.prepare_cached("SELECT text FROM claims WHERE code = ?1")?;
        let text: Option<String> = texts.query_row([code], |r| r.get(0)).optional()?;
        let next = self.index.claims.len() as u32;
        self.index.claims.push(text.unwrap_or_default());
        self.claim_code.insert(code, next);
        Ok(next)
    }

    /// Brings the index up to date after a follow's batch went back before
    /// the last instant replayed (design.md §6: a line recorded earlier than
    /// events applied) and replayed from `from` again: every version closed
    /// at or after it, and every one still held, was deleted and written
    /// anew, and the events recorded since were replayed again. Those
    /// versions and marks are taken again, then the new events as
    /// [`Growing::grow`] takes them — the work of what was replayed, plus a
    /// pass over the index in memory. On any sign the store is otherwise,
    /// the index is computed afresh.
    pub(crate) fn rewound(
        self,
        conn: &Connection,
        header: &Header,
        from: Micros,
    ) -> rusqlite::Result<Growing> {
        let stride = self.index.stride;
        let mut growing = self;
        match growing.rewind(conn, header, from)? {
            Ok(()) => {
                growing.events(conn, header)?;
                Ok(growing)
            }
            Err(NotAppended) => Self::compute_with(conn, header, stride),
        }
    }

    fn rewind(
        &mut self,
        conn: &Connection,
        header: &Header,
        from: Micros,
    ) -> rusqlite::Result<Result<(), NotAppended>> {
        // Versions and marks are replaced anywhere: store every part.
        self.grown = None;
        let rows = versions_since(conn, header, from)?;
        let mut new = Vec::with_capacity(rows.len());
        for (mut v, code) in rows {
            v.claim = self.claim(conn, code)?;
            new.push(v);
        }
        let Some(number) = self
            .index
            .replace_versions(|v| v.superseded_at >= from, new)
        else {
            return Ok(Err(NotAppended));
        };
        self.claim_code.retain(|_, c| {
            *c = number[*c as usize];
            *c != u32::MAX
        });
        self.held = (self.index.versions.iter())
            .filter(|v| v.superseded_at == OPEN)
            .count();
        // The events seen before and recorded since `from`: replayed again
        // (evidence is not replayed; its marks and widths stay).
        let at = self.index.marks.partition_point(|m| m.recorded_at < from);
        let again: Vec<u64> = (self.index.marks[at..].iter())
            .filter(|m| m.kind != MarkKind::Evidence)
            .map(|m| m.seq)
            .collect();
        self.index.replace_marks(conn, header, &again, &[])?;
        self.evidence_at = evidence_positions(&self.index);
        Ok(Ok(()))
    }

    /// Versions closed at or after `since` and those still held, as stored.
    fn versions(
        &mut self,
        conn: &Connection,
        header: &Header,
        since: Micros,
    ) -> rusqlite::Result<Result<(), NotAppended>> {
        let mut rows = versions_since(conn, header, since)?;
        rows.sort_unstable_by_key(|(v, _)| v.id);
        let known = self.index.versions.len();
        let last_id = self.index.versions.last().map(|v| v.id);
        let split = rows.partition_point(|(v, _)| last_id.is_some_and(|last| v.id <= last));
        // The versions known before: only those still held may change, by
        // being closed, and every one of them was written again.
        let mut closed: Vec<u32> = Vec::new();
        let mut held_again = 0;
        for (v, stored) in &rows[..split] {
            let Ok(at) = self.index.versions.binary_search_by_key(&v.id, |k| k.id) else {
                return Ok(Err(NotAppended));
            };
            let old = &mut self.index.versions[at];
            let claim = self.claim_code.get(stored).copied();
            let same = old.recorded_at == v.recorded_at
                && old.valid_from == v.valid_from
                && (old.topic, old.agent, Some(old.claim)) == (v.topic, v.agent, claim);
            if !same || (old.superseded_at != OPEN && old.superseded_at != v.superseded_at) {
                return Ok(Err(NotAppended));
            }
            if old.superseded_at == OPEN {
                held_again += 1;
                if v.superseded_at != OPEN {
                    old.superseded_at = v.superseded_at;
                    closed.push(at as u32);
                    self.held -= 1;
                }
            }
        }
        if held_again != self.held + closed.len() {
            return Ok(Err(NotAppended));
        }
        // New versions, numbering their new claims in order of id.
        self.index.versions.reserve(rows.len() - split);
        closed.reserve(rows.len() - split);
        for (mut v, stored) in rows.drain(split..) {
            v.claim = self.claim(conn, stored)?;
            let at = self.index.versions.len() as u32;
            if v.superseded_at == OPEN {
                self.held += 1;
            } else {
                closed.push(at);
            }
            self.index.versions.push(v);
        }
        let versions = &self.index.versions;
        let recorded = |i: &u32| (versions[*i as usize].recorded_at, versions[*i as usize].id);
        let superseded = |i: &u32| {
            (
                versions[*i as usize].superseded_at,
                versions[*i as usize].id,
            )
        };
        let mut by_recorded: Vec<u32> = (known as u32..versions.len() as u32).collect();
        by_recorded.sort_unstable_by_key(recorded);
        closed.sort_unstable_by_key(superseded);
        let after = |list: &[u32], new: &[u32], key: &dyn Fn(&u32) -> (Micros, u64)| matches!((list.last(), new.first()), (Some(a), Some(b)) if key(a) > key(b));
        if after(&self.index.by_recorded, &by_recorded, &recorded)
            || after(&self.index.by_superseded, &closed, &superseded)
        {
            return Ok(Err(NotAppended));
        }
        if let Some(grown) = &mut self.grown {
            grown.versions = grown.versions.min(known);
            grown.by_recorded = grown.by_recorded.min(self.index.by_recorded.len());
            grown.by_superseded = grown.by_superseded.min(self.index.by_superseded.len());
            let before = closed
                .iter()
                .map(|&at| at as usize)
                .filter(|&at| at < known);
            grown.closed.extend(before);
        }
        self.index.by_recorded.extend(by_recorded);
        self.index.by_superseded.extend(closed);
        let index = &mut self.index;
        extend_checkpoints(
            &index.versions,
            &index.by_recorded,
            index.stride,
            &mut index.checkpoints,
        );
        Ok(Ok(()))
    }

    /// Events after the last seq seen: their marks, and their citations'
    /// share of the evidence widths.
    fn events(&mut self, conn: &Connection, header: &Header) -> rusqlite::Result<()> {
        let reader = MarkReader::new(header);
        let after = self.last_seq;
        // Absent from `outcomes`: recorded (evidence, verify) or applied.
        let mut effects: HashMap<i64, EffectKind> = HashMap::new();
        let mut stmt = conn.prepare_cached("SELECT seq, effect FROM outcomes WHERE seq > ?1")?;
        let mut q = stmt.query([after])?;
        while let Some(r) = q.next()? {
            effects.insert(r.get(0)?, EffectKind::parse(r.get_ref(1)?.as_str()?));
        }
        let mut stmt =
            conn.prepare_cached(&format!("{MARK_QUERY} WHERE e.seq > ?1 ORDER BY e.seq"))?;
        // The new events' seqs and id widths, in seq order.
        let mut id_widths: Vec<(i64, u16)> = Vec::new();
        let mut marks = Vec::new();
        // The new evidence items' widths.
        let mut fresh: HashMap<i64, EvidenceWidths, ShortKeys> = HashMap::default();
        let mut q = stmt.query([after])?;
        while let Some(r) = q.next()? {
            let seq: i64 = r.get(0)?;
            let read = reader.read(r, effects.get(&seq).copied())?;
            id_widths.push((seq, read.id_width));
            if let Some((id, own)) = read.evidence {
                self.evidence_seq.insert(id, seq);
                fresh.insert(seq, own);
            }
            marks.push(read.mark);
        }
        if let Some(&(last, _)) = id_widths.last() {
            self.last_seq = last;
        }
        let mut stmt = conn.prepare_cached("SELECT seq, evidence FROM citations WHERE seq > ?1")?;
        let mut q = stmt.query([after])?;
        while let Some(r) = q.next()? {
            let seq: i64 = r.get(0)?;
            let Ok(citing) = id_widths.binary_search_by_key(&seq, |&(s, _)| s) else {
                continue;
            };
            let Some(&cited) = self.evidence_seq.get(r.get_ref(1)?.as_str()?) else {
                continue;
            };
            let known = self.evidence_at.get(&cited);
            let w = match known.and_then(|&at| self.index.evidence.get_mut(at)) {
                Some(w) => w,
                None => match fresh.get_mut(&cited) {
                    Some(w) => w,
                    None => continue,
                },
            };
            w.cited = cite(w.cited, id_widths[citing].1);
        }
        // New marks into their place by (recorded_at, seq): at the end, for
        // a log written in recorded order; so are the new evidence items'
        // widths, which follow the evidence marks' order.
        marks.sort_unstable_by_key(|m| (m.recorded_at, m.seq));
        let old = std::mem::take(&mut self.index.marks);
        let at = marks.first().map_or(old.len(), |first| {
            old.partition_point(|m| (m.recorded_at, m.seq) < (first.recorded_at, first.seq))
        });
        if let Some(grown) = &mut self.grown {
            grown.marks = grown.marks.min(at);
        }
        let appended = at == old.len();
        self.index.marks = merge_by_key(old, marks, |m| (m.recorded_at, m.seq));
        if appended {
            let new = self.index.marks[at..].iter();
            for m in new.filter(|m| m.kind == MarkKind::Evidence) {
                if let Some(w) = fresh.remove(&(m.seq as i64)) {
                    self.evidence_at
                        .insert(m.seq as i64, self.index.evidence.len());
                    self.index.evidence.push(w);
                }
            }
        } else {
            // A mark went in before others: the list again, in marks order.
            let old = std::mem::take(&mut self.index.evidence);
            let evidence = (self.index.marks.iter())
                .filter(|m| m.kind == MarkKind::Evidence)
                .filter_map(|m| {
                    let seq = m.seq as i64;
                    fresh.remove(&seq).or_else(|| {
                        let at = *self.evidence_at.get(&seq)?;
                        old.get(at).copied()
                    })
                })
                .collect();
            self.index.evidence = evidence;
            self.evidence_at = evidence_positions(&self.index);
        }
        Ok(())
    }
}

/// Each evidence item's position in `index.evidence`, by seq: the evidence
/// marks' order.
fn evidence_positions(index: &ScrubIndex) -> HashMap<i64, usize, ShortKeys> {
    (index.marks.iter())
        .filter(|m| m.kind == MarkKind::Evidence)
        .enumerate()
        .map(|(at, m)| (m.seq as i64, at))
        .collect()
}

/// Versions closed at or after `since` and those still held, as stored,
/// each with its stored claim code: one range per lifespan of the versions
/// table's key.
fn versions_since(
    conn: &Connection,
    header: &Header,
    since: Micros,
) -> rusqlite::Result<Vec<(VersionKey, i64)>> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, topic, agent, claim, recorded_at, superseded_at, valid_from FROM versions
          WHERE lifespan = ?1 AND superseded_at >= ?2",
    )?;
    let mut rows = Vec::new();
    for lifespan in 1..=64i64 {
        let mut q = stmt.query(params![lifespan, since])?;
        while let Some(r) = q.next()? {
            rows.push(version_key(r, header)?);
        }
    }
    Ok(rows)
}

/// A version's key from a row of (id, topic, agent, claim, recorded_at,
/// superseded_at, valid_from), with its stored claim code beside it (its
/// claim is left 0).
fn version_key(r: &rusqlite::Row, header: &Header) -> rusqlite::Result<(VersionKey, i64)> {
    let code = |c: i64, n: usize| u32::try_from(c).ok().filter(|&c| (c as usize) < n);
    let key = VersionKey {
        id: r.get::<_, i64>(0)? as u64,
        topic: code(r.get(1)?, header.topics.len()).unwrap_or(NONE),
        agent: code(r.get(2)?, header.agents.len()).unwrap_or(NONE),
        claim: 0,
        recorded_at: r.get(4)?,
        superseded_at: r.get(5)?,
        valid_from: r.get(6)?,
    };
    Ok((key, r.get(3)?))
}

/// The columns an event's mark is read from ([`MarkReader::read`]). A
/// retraction of an assertion takes that assertion's topic; a
/// verification's agent is who judged.
const MARK_QUERY: &str = "SELECT e.seq, e.kind, e.recorded_at, e.agent, e.source,
        COALESCE(e.topic, (SELECT a.topic FROM events a
                            WHERE e.kind = 'retract' AND a.id = e.assertion
                              AND a.kind = 'believe')),
        e.id
 FROM events e";

/// An event's mark, read from a row of [`MARK_QUERY`].
struct MarkRead {
    mark: MarkKey,
    /// The display width of the event's id.
    id_width: u16,
    /// For evidence, its id and the widths of its own columns.
    evidence: Option<(String, EvidenceWidths)>,
}

/// Turns rows of [`MARK_QUERY`] into marks, naming topics and agents by
/// header position.
struct MarkReader<'a> {
    topics: Positions<'a>,
    agents: Positions<'a>,
}

impl<'a> MarkReader<'a> {
    fn new(header: &'a Header) -> Self {
        MarkReader {
            topics: positions(header.topics.iter().map(|t| t.id.as_str())),
            agents: positions(header.agents.iter().map(|a| a.id.as_str())),
        }
    }

    /// The mark of the event in `r`, whose stored outcome is `outcome`.
    fn read(&self, r: &rusqlite::Row, outcome: Option<EffectKind>) -> rusqlite::Result<MarkRead> {
        let position =
            |map: &Positions, s: Option<&str>| s.and_then(|s| map.get(s).copied()).unwrap_or(NONE);
        let seq: i64 = r.get(0)?;
        let kind = r.get_ref(1)?.as_str()?;
        let id = r.get_ref(6)?.as_str()?;
        let evidence = (kind == "evidence").then(|| -> rusqlite::Result<_> {
            let own = EvidenceWidths {
                id: width(id),
                source: width(r.get_ref(4)?.as_str_or_null()?.unwrap_or("")),
                cited: 0,
            };
            Ok((id.to_owned(), own))
        });
        // Absent from `outcomes`: recorded (evidence, verify) or applied.
        let effect = outcome.unwrap_or(match kind {
            "evidence" | "verify" => EffectKind::Recorded,
            _ => EffectKind::Applied,
        });
        let mark = MarkKind::of(kind, effect);
        let agent = if mark == MarkKind::Verification { 4 } else { 3 };
        Ok(MarkRead {
            mark: MarkKey {
                seq: seq as u64,
                recorded_at: r.get(2)?,
                kind: mark,
                effect,
                topic: position(&self.topics, r.get_ref(5)?.as_str_or_null()?),
                agent: position(&self.agents, r.get_ref(agent)?.as_str_or_null()?),
            },
            id_width: width(id),
            evidence: evidence.transpose()?,
        })
    }
}

/// A string's display width in the TUI's columns (characters, capped).
fn width(s: &str) -> u16 {
    s.chars().count().min(usize::from(u16::MAX)) as u16
}

/// The width of the ids citing an evidence item, comma-separated, once one
/// more id of width `id` cites it: the list's width `cited`, a comma and
/// the id (capped). Ids are never empty (validation refuses them), so a
/// width of 0 is a list of none, and the width is the list's whatever order
/// the ids come in.
fn cite(cited: u16, id: u16) -> u16 {
    match cited {
        0 => id,
        _ => cited.saturating_add(1).saturating_add(id),
    }
}

/// `a` and `b`, each in order of `key`, merged into one in that order (`a`
/// first among equals); appended when `b` starts after `a` ends.
fn merge_by_key<T, K: Ord>(a: Vec<T>, b: Vec<T>, key: impl Fn(&T) -> K) -> Vec<T> {
    if a.last()
        .zip(b.first())
        .is_none_or(|(x, y)| key(x) <= key(y))
    {
        let mut a = a;
        a.extend(b);
        return a;
    }
    let mut merged = Vec::with_capacity(a.len() + b.len());
    let (mut a, mut b) = (a.into_iter().peekable(), b.into_iter().peekable());
    while let (Some(x), Some(y)) = (a.peek(), b.peek()) {
        let next = if key(x) <= key(y) { a.next() } else { b.next() };
        merged.extend(next);
    }
    merged.extend(a);
    merged.extend(b);
    merged
}

impl ScrubIndex {
    /// Positions of the versions held at recorded instant `at`: one checkpoint
    /// plus fewer than `stride` versions recorded after it, in no set order.
    pub fn held(&self, at: Micros) -> Vec<u32> {
        let key = |i: u32| &self.versions[i as usize];
        let upto = self
            .by_recorded
            .partition_point(|&i| key(i).recorded_at <= at);
        let c = (upto / self.stride).min(self.checkpoints.len().saturating_sub(1));
        let Some(checkpoint) = self.checkpoints.get(c) else {
            return Vec::new();
        };
        checkpoint
            .iter()
            .chain(&self.by_recorded[(c * self.stride).min(upto)..upto])
            .copied()
            .filter(|&i| key(i).held_at(at))
            .collect()
    }
}

type Positions<'a> = HashMap<&'a str, u32, crate::model::ShortKeys>;

fn positions<'a>(ids: impl Iterator<Item = &'a str>) -> Positions<'a> {
    ids.enumerate().map(|(i, id)| (id, i as u32)).collect()
}

/// `checkpoints[c]`: the positions among the first `c · stride` of
/// `by_recorded` still held just after the last of them was recorded, in
/// recorded order. Any instant at or after that one finds every version it
/// holds from that prefix in this set.
pub fn checkpoints(versions: &[VersionKey], by_recorded: &[u32], stride: usize) -> Vec<Vec<u32>> {
    let mut out = vec![Vec::new()];
    extend_checkpoints(versions, by_recorded, stride, &mut out);
    out
}

/// Adds to `checkpoints` (at least the first, empty) those of the strides of
/// `by_recorded` it lacks, carrying on from its last.
fn extend_checkpoints(
    versions: &[VersionKey],
    by_recorded: &[u32],
    stride: usize,
    checkpoints: &mut Vec<Vec<u32>>,
) {
    let done = checkpoints.len().saturating_sub(1);
    let mut alive: Vec<u32> = checkpoints.last().cloned().unwrap_or_default();
    let rest = by_recorded.get(done * stride..).unwrap_or_default();
    for chunk in rest.chunks_exact(stride) {
        alive.extend_from_slice(chunk);
        let t = versions[chunk[stride - 1] as usize].recorded_at;
        alive.retain(|&i| versions[i as usize].superseded_at > t);
        checkpoints.push(alive.clone());
    }
}

/// Replaces the stored index with a fresh computation.
pub fn write(conn: &Connection, header: &Header) -> rusqlite::Result<()> {
    store(conn, &compute(conn, header)?)
}

/// What a fork changed in the copy of its parent's store
/// (crates/asof-store/src/fork/copy.rs), for `patch`.
#[derive(Debug, Default)]
pub struct Replaced<'a> {
    /// The (topic, agent) header positions of the pairs replayed again:
    /// every version of theirs was deleted and written anew, with ids after
    /// every other version's.
    pub pairs: HashSet<(u32, u32)>,
    /// The seqs of the events deleted or replayed again.
    pub events: Vec<u64>,
    /// The ids of the evidence items whose citations may have changed.
    pub cited: Vec<&'a str>,
}

/// Brings the index stored in a copy of a parent store up to date with what
/// a fork `replaced` in the copy: the parent's index, less the replaced
/// pairs' versions and the events' marks, plus what the copy now holds of
/// them — the same index as a fresh [`compute`], at the cost of decoding
/// and encoding the index and of the pairs and events read, rather than of
/// every row. What the copy holds of them is read first; then the versions'
/// parts change on this thread while the marks' change on another, and only
/// the chunks that changed are written. An index that does not decode, or
/// where a new version's id is taken, is computed afresh (then it returns
/// `false`).
pub(crate) fn patch(
    conn: &Connection,
    header: &Header,
    replaced: &Replaced,
) -> rusqlite::Result<bool> {
    let new = versions_of_pairs(conn, header, &replaced.pairs)?;
    let fresh = fresh_marks(conn, header, &replaced.events, &replaced.cited)?;
    let is_marks = |name: &str| MARK_PARTS.contains(&name);
    let marks_stored = stored_parts_of(conn, is_marks)?;
    let mut pairs: Vec<(u32, u32)> = replaced.pairs.iter().copied().collect();
    pairs.sort_unstable();
    let (versions_stored, versions, marks) = std::thread::scope(|scope| {
        let marks = scope.spawn(|| {
            let (marks, evidence) = decode_marks(&marks_stored).ok()?;
            let mut index = ScrubIndex {
                marks,
                evidence,
                ..ScrubIndex::default()
            };
            index.apply_marks(&fresh);
            Some(encode_marks(&index))
        });
        let stored = stored_parts_of(conn, |name| !is_marks(name))?;
        // The checkpoints are computed again: the stored ones are not decoded.
        let versions = (|| {
            let mut index = decode_versions(&stored, false)
                .ok()
                .filter(|index| index.stride == CHECKPOINT)?;
            let new = index.with_claims(new);
            index.replace_versions(|v| pairs.binary_search(&(v.topic, v.agent)).is_ok(), new)?;
            Some(encode_versions(&index))
        })();
        let marks = marks
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        Ok::<_, rusqlite::Error>((stored, versions, marks))
    })?;
    let (Some(versions), Some(marks)) = (versions, marks) else {
        return write(conn, header).map(|()| false);
    };
    let mut stored = versions_stored;
    stored.extend(marks_stored);
    let before: HashMap<&'static str, Vec<u8>> = PARTS
        .iter()
        .filter_map(|&name| stored.remove(name).map(|data| (name, data)))
        .collect();
    let parts: HashMap<&'static str, Vec<u8>> = versions.into_iter().chain(marks).collect();
    store_parts(conn, &parts, Some(&before))?;
    Ok(true)
}

/// The versions of `pairs` as `conn` stores them, each with its claim's text.
fn versions_of_pairs(
    conn: &Connection,
    header: &Header,
    pairs: &HashSet<(u32, u32)>,
) -> rusqlite::Result<Vec<(VersionKey, String)>> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, topic, agent, claim, recorded_at, superseded_at, valid_from
           FROM versions WHERE topic = ?1 AND agent = ?2",
    )?;
    let mut texts = conn.prepare_cached("SELECT text FROM claims WHERE code = ?1")?;
    let mut new = Vec::new();
    for &(topic, agent) in pairs {
        let mut q = stmt.query(params![topic, agent])?;
        while let Some(r) = q.next()? {
            let (v, code) = version_key(r, header)?;
            let text: Option<String> = texts.query_row([code], |r| r.get(0)).optional()?;
            new.push((v, text.unwrap_or_default()));
        }
    }
    Ok(new)
}

/// What the store now holds of the events a change replaced (deleted or
/// written again), read before the index changes so that the change itself
/// needs no connection ([`ScrubIndex::apply_marks`]).
struct FreshMarks {
    /// The replaced events' seqs, sorted.
    events: Vec<u64>,
    /// The marks of those still stored, in (recorded_at, seq) order.
    again: Vec<MarkKey>,
    /// By seq, the widths of the evidence items whose citations may have
    /// changed: those named, and those among the events.
    widths: HashMap<u64, EvidenceWidths, ShortKeys>,
}

/// The marks of `events` as stored now, and the widths of the evidence
/// items `cited` names (and of the evidence among `events`), as their
/// citations now stand.
fn fresh_marks(
    conn: &Connection,
    header: &Header,
    events: &[u64],
    cited: &[&str],
) -> rusqlite::Result<FreshMarks> {
    let mut events = events.to_vec();
    events.sort_unstable();
    events.dedup();
    let reader = MarkReader::new(header);
    let mut mark = conn.prepare_cached(&format!("{MARK_QUERY} WHERE e.seq = ?1"))?;
    let mut outcome = conn.prepare_cached("SELECT effect FROM outcomes WHERE seq = ?1")?;
    let mut again = Vec::new();
    // Each evidence item once, however many events cite it.
    let mut evidence: HashSet<String> = cited.iter().map(|&id| id.to_owned()).collect();
    for &seq in &events {
        let effect: Option<String> = outcome.query_row([seq as i64], |r| r.get(0)).optional()?;
        let effect = effect.as_deref().map(EffectKind::parse);
        if let Some(read) = mark
            .query_row([seq as i64], |r| reader.read(r, effect))
            .optional()?
        {
            evidence.extend(read.evidence.map(|(id, _)| id));
            again.push(read.mark);
        }
    }
    again.sort_unstable_by_key(|m| (m.recorded_at, m.seq));
    let mut item =
        conn.prepare_cached("SELECT seq, source FROM events WHERE id = ?1 AND kind = 'evidence'")?;
    let mut citing = conn.prepare_cached(
        "SELECT e.id FROM citations c JOIN events e ON e.seq = c.seq WHERE c.evidence = ?1",
    )?;
    let mut widths = HashMap::default();
    for id in &evidence {
        let found: Option<(i64, Option<String>)> = item
            .query_row([id], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?;
        let Some((seq, source)) = found else { continue };
        let mut cited = 0;
        let mut q = citing.query([id])?;
        while let Some(r) = q.next()? {
            cited = cite(cited, width(r.get_ref(0)?.as_str()?));
        }
        let w = EvidenceWidths {
            id: width(id),
            source: width(source.as_deref().unwrap_or("")),
            cited,
        };
        widths.insert(seq as u64, w);
    }
    Ok(FreshMarks {
        events,
        again,
        widths,
    })
}

impl ScrubIndex {
    /// `new` with each claim's text as its position in `claims` (texts it
    /// lacks added at its end).
    fn with_claims(&mut self, new: Vec<(VersionKey, String)>) -> Vec<VersionKey> {
        let mut by_text: HashMap<String, u32> = (self.claims.iter().cloned()).zip(0..).collect();
        new.into_iter()
            .map(|(mut v, text)| {
                v.claim = *by_text.entry(text).or_insert_with_key(|text| {
                    self.claims.push(text.clone());
                    self.claims.len() as u32 - 1
                });
                v
            })
            .collect()
    }

    /// Drops the versions `gone` selects and puts `new` (claims as
    /// positions in `claims`) in their places by id; every order, the
    /// checkpoints and the claims' numbering follow. Returns each old claim
    /// position's new one (`u32::MAX`: no version has it now), or `None`
    /// when a new id is already taken (the index is then left unusable).
    fn replace_versions(
        &mut self,
        gone: impl Fn(&VersionKey) -> bool,
        mut new: Vec<VersionKey>,
    ) -> Option<Vec<u32>> {
        new.sort_unstable_by_key(|v| v.id);
        // Old position → new (`u32::MAX`: dropped), and where the new ones went.
        let old = std::mem::take(&mut self.versions);
        let mut remap = vec![u32::MAX; old.len()];
        let mut added: Vec<u32> = Vec::with_capacity(new.len());
        let mut versions = Vec::with_capacity(old.len() + new.len());
        let mut new = new.into_iter().peekable();
        for (i, v) in old.into_iter().enumerate() {
            if gone(&v) {
                continue;
            }
            while let Some(n) = new.next_if(|n| n.id < v.id) {
                added.push(versions.len() as u32);
                versions.push(n);
            }
            remap[i] = versions.len() as u32;
            versions.push(v);
        }
        for n in new {
            added.push(versions.len() as u32);
            versions.push(n);
        }
        if versions.windows(2).any(|w| w[0].id >= w[1].id) {
            return None;
        }
        // Claims numbered in order of first use by id, as a fresh computation does.
        let mut number = vec![u32::MAX; self.claims.len()];
        let mut claims = Vec::new();
        for v in &mut versions {
            let n = &mut number[v.claim as usize];
            if *n == u32::MAX {
                *n = claims.len() as u32;
                claims.push(std::mem::take(&mut self.claims[v.claim as usize]));
            }
            v.claim = *n;
        }
        self.claims = claims;
        let kept = |list: &[u32]| -> Vec<u32> {
            list.iter()
                .map(|&i| remap[i as usize])
                .filter(|&i| i != u32::MAX)
                .collect()
        };
        let recorded = |i: &u32| (versions[*i as usize].recorded_at, versions[*i as usize].id);
        let superseded = |i: &u32| {
            let v = &versions[*i as usize];
            (v.superseded_at, v.id)
        };
        let mut closed: Vec<u32> = (added.iter().copied())
            .filter(|&i| versions[i as usize].superseded_at != OPEN)
            .collect();
        added.sort_unstable_by_key(recorded);
        self.by_recorded = merge_by_key(kept(&self.by_recorded), added, recorded);
        closed.sort_unstable_by_key(superseded);
        self.by_superseded = merge_by_key(kept(&self.by_superseded), closed, superseded);
        self.checkpoints = checkpoints(&versions, &self.by_recorded, self.stride);
        self.versions = versions;
        Some(number)
    }

    /// Drops the marks of `events` and adds those still stored, as stored,
    /// and takes the widths of the evidence items `cited` names again.
    fn replace_marks(
        &mut self,
        conn: &Connection,
        header: &Header,
        events: &[u64],
        cited: &[&str],
    ) -> rusqlite::Result<()> {
        let fresh = fresh_marks(conn, header, events, cited)?;
        self.apply_marks(&fresh);
        Ok(())
    }

    /// Drops the marks of `fresh.events`, adds `fresh.again` in their
    /// places, and takes the evidence widths `fresh.widths` gives.
    fn apply_marks(&mut self, fresh: &FreshMarks) {
        let old = std::mem::take(&mut self.marks);
        let mut old_widths = std::mem::take(&mut self.evidence).into_iter();
        let mut marks = Vec::with_capacity(old.len() + fresh.again.len());
        let mut evidence = Vec::with_capacity(old_widths.len() + fresh.again.len());
        let mut push = |m: MarkKey, was: Option<EvidenceWidths>| {
            if m.kind == MarkKind::Evidence {
                let w = fresh.widths.get(&m.seq).copied().or(was);
                evidence.push(w.unwrap_or_default());
            }
            marks.push(m);
        };
        let key = |m: &MarkKey| (m.recorded_at, m.seq);
        let mut again = fresh.again.iter().peekable();
        for m in old {
            let was = (m.kind == MarkKind::Evidence)
                .then(|| old_widths.next())
                .flatten();
            if fresh.events.binary_search(&m.seq).is_ok() {
                continue;
            }
            while let Some(a) = again.next_if(|a| key(a) < key(&m)) {
                push(*a, None);
            }
            push(m, was);
        }
        again.for_each(|a| push(*a, None));
        self.marks = marks;
        self.evidence = evidence;
    }
}

/// Replaces the stored index with `index`.
pub(crate) fn store(conn: &Connection, index: &ScrubIndex) -> rusqlite::Result<()> {
    store_parts(conn, &encode(index).into_iter().collect(), None)
}

/// Stores encoded `parts` as chunks: given what was stored `before` (encoded
/// the same way), only the chunks that differ from it, and the chunks it had
/// beyond a part's new end are deleted; otherwise in place of every row.
fn store_parts(
    conn: &Connection,
    parts: &HashMap<&'static str, Vec<u8>>,
    before: Option<&HashMap<&'static str, Vec<u8>>>,
) -> rusqlite::Result<()> {
    if before.is_none() {
        conn.execute("DELETE FROM scrub", [])?;
    }
    for name in PARTS {
        let data = parts.get(name).map_or(&[][..], Vec::as_slice);
        let old = before.and_then(|b| b.get(name)).map(Vec::as_slice);
        store_part(conn, name, data, old)?;
    }
    Ok(())
}

/// Stores part `name` as chunks: those that differ from what was stored
/// `old` (all, if `None`), deleting the chunks `old` had past its new end.
fn store_part(
    conn: &Connection,
    name: &str,
    data: &[u8],
    old: Option<&[u8]>,
) -> rusqlite::Result<()> {
    let mut delete = conn.prepare_cached("DELETE FROM scrub WHERE part = ?1")?;
    let old: Vec<(String, &[u8])> = match old {
        Some(old) => chunks(name, old).collect(),
        None => Vec::new(),
    };
    let new: Vec<(String, &[u8])> = chunks(name, data).collect();
    for (k, (row, chunk)) in new.iter().enumerate() {
        match old.get(k) {
            Some((_, was)) if was == chunk => {}
            was => put_chunk(conn, row, chunk, was.map(|(_, was)| was.len()))?,
        }
    }
    for (row, _) in old.iter().skip(new.len()) {
        delete.execute([row])?;
    }
    Ok(())
}

/// Writes a chunk under `row`, whose stored chunk is `stored` bytes long
/// (`None`: there is none). A chunk as long as the one stored is written
/// over it in place (incremental blob I/O): no row is deleted and no page
/// freed (with `secure_delete`, zeroed) and taken again. Otherwise the row
/// is replaced.
fn put_chunk(
    conn: &Connection,
    row: &str,
    chunk: &[u8],
    stored: Option<usize>,
) -> rusqlite::Result<()> {
    if stored == Some(chunk.len()) && !chunk.is_empty() {
        let rowid: Option<i64> = conn
            .prepare_cached("SELECT rowid FROM scrub WHERE part = ?1 AND typeof(data) = 'blob'")?
            .query_row([row], |r| r.get(0))
            .optional()?;
        if let Some(rowid) = rowid {
            let mut blob = conn.blob_open(rusqlite::MAIN_DB, "scrub", "data", rowid, false)?;
            if blob.len() == chunk.len() {
                return blob.write_at(chunk, 0);
            }
        }
    }
    conn.prepare_cached("INSERT OR REPLACE INTO scrub (part, data) VALUES (?1, ?2)")?
        .execute(params![row, chunk])?;
    Ok(())
}

/// Stores what changed in `index` since `written` (the parts as last
/// stored, brought up to date in place), as `grown` tells: each part that
/// grows record by record encoded from its first changed record on, with
/// the closing instants changed in place; the small parts (claims,
/// checkpoints, evidence) encoded whole and compared. Only the chunks that
/// hold a changed byte are written.
fn store_grown(
    conn: &Connection,
    index: &ScrubIndex,
    grown: &Grown,
    written: &mut HashMap<&'static str, Vec<u8>>,
) -> rusqlite::Result<()> {
    for (name, data) in encode_small(index) {
        store_part(conn, name, &data, written.get(name).map(Vec::as_slice))?;
        written.insert(name, data);
    }
    let (versions, marks) = (&index.versions, &index.marks);
    let (recorded, superseded) = (&index.by_recorded, &index.by_superseded);
    let u32_at = |list: &[u32], i: usize, out: &mut Vec<u8>| {
        out.extend_from_slice(&list[i].to_le_bytes());
    };
    let parts: [GrowingPart; 5] = [
        (
            "versions",
            VERSION_BYTES,
            grown.versions,
            versions.len(),
            &[],
            &|i, out| {
                put_version(out, &versions[i]);
            },
        ),
        (
            "superseded",
            8,
            grown.versions,
            versions.len(),
            &grown.closed,
            &|i, out| {
                out.extend_from_slice(&versions[i].superseded_at.to_le_bytes());
            },
        ),
        (
            "by_recorded",
            4,
            grown.by_recorded,
            recorded.len(),
            &[],
            &|i, out| {
                u32_at(recorded, i, out);
            },
        ),
        (
            "by_superseded",
            4,
            grown.by_superseded,
            superseded.len(),
            &[],
            &|i, out| {
                u32_at(superseded, i, out);
            },
        ),
        (
            "marks",
            MARK_BYTES,
            grown.marks,
            marks.len(),
            &[],
            &|i, out| {
                put_mark(out, &marks[i]);
            },
        ),
    ];
    for (name, width, from, count, touched, put) in parts {
        let data = written.entry(name).or_default();
        grow_part(conn, name, data, width, (from, count), touched, put)?;
    }
    Ok(())
}

/// A part that grows record by record, as [`store_grown`] stores it: its
/// name, record width, first changed record, record count, records changed
/// in place before that, and how record i is encoded.
type GrowingPart<'a> = (
    &'static str,
    usize,
    usize,
    usize,
    &'a [usize],
    &'a dyn Fn(usize, &mut Vec<u8>),
);

/// Brings part `name` as stored (`data`, records of `width` bytes) up to
/// date with `count` records: those from `from` on, and those at `touched`,
/// encoded again by `put`. Writes the chunks holding a byte that changed and
/// deletes those past the part's new end. A part whose stored length is not
/// what its records take is encoded and written whole.
fn grow_part(
    conn: &Connection,
    name: &str,
    data: &mut Vec<u8>,
    width: usize,
    (from, count): (usize, usize),
    touched: &[usize],
    put: &dyn Fn(usize, &mut Vec<u8>),
) -> rusqlite::Result<()> {
    let mut record = Vec::with_capacity(width);
    let old_len = data.len();
    let from_byte = from.saturating_mul(width);
    let grows = from <= count && old_len.is_multiple_of(width) && old_len >= from_byte;
    if !grows {
        // Not stored as whole records up to `from`: encoded and compared whole.
        let mut whole = Vec::with_capacity(count * width);
        (0..count).for_each(|i| put(i, &mut whole));
        let before = std::mem::replace(data, whole);
        return store_part(conn, name, data, Some(&before));
    }
    data.truncate(from_byte);
    (from..count).for_each(|i| put(i, data));
    let mut changed: Vec<usize> = Vec::new();
    for &i in touched.iter().filter(|&&i| i < from) {
        record.clear();
        put(i, &mut record);
        let Some(place) = data.get_mut(i * width..(i + 1) * width) else {
            continue;
        };
        place.copy_from_slice(&record);
        changed.push(i * width / CHUNK);
    }
    let chunks_of = |len: usize| len.div_ceil(CHUNK).max(1);
    let (old_chunks, new_chunks) = (chunks_of(old_len), chunks_of(data.len()));
    changed.extend(from_byte / CHUNK..new_chunks);
    changed.sort_unstable();
    changed.dedup();
    for k in changed.into_iter().filter(|&k| k < new_chunks) {
        let chunk = data
            .get(k * CHUNK..((k + 1) * CHUNK).min(data.len()))
            .unwrap_or(&[]);
        let stored = (k < old_chunks).then(|| old_len.min((k + 1) * CHUNK) - k * CHUNK);
        put_chunk(conn, &chunk_row(name, k), chunk, stored)?;
    }
    let mut delete = conn.prepare_cached("DELETE FROM scrub WHERE part = ?1")?;
    for k in new_chunks..old_chunks {
        delete.execute([chunk_row(name, k)])?;
    }
    Ok(())
}

/// A part of the stored index that is missing or does not decode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the scrub index's part {0:?} is missing or malformed; run `asof rebuild`")]
pub struct Malformed(pub &'static str);

/// The stored index, decoded; a missing or malformed part is a [`Malformed`]
/// naming it.
pub fn read(conn: &Connection) -> rusqlite::Result<Result<ScrubIndex, Malformed>> {
    Ok(decode(&stored_parts(conn)?).map_err(Malformed))
}

/// The stored parts whose chunks are whole (0, 1, … without a gap, each but
/// the last full), each chunks' bytes joined; a part stored otherwise is left
/// out, as if missing.
fn stored_parts(conn: &Connection) -> rusqlite::Result<HashMap<String, Vec<u8>>> {
    stored_parts_of(conn, |_| true)
}

/// [`stored_parts`], of the parts `wanted` names only.
fn stored_parts_of(
    conn: &Connection,
    wanted: impl Fn(&str) -> bool,
) -> rusqlite::Result<HashMap<String, Vec<u8>>> {
    // Two reads of the table, of one state of it (a follow may commit between).
    let _snapshot = match conn.is_autocommit() {
        true => Some(conn.unchecked_transaction()?),
        false => None,
    };
    // Which parts are whole, and how long, from the chunks' names and
    // lengths alone (SQLite reads a blob's length without its bytes).
    let mut chunks: HashMap<String, Vec<(usize, usize, i64)>> = HashMap::new();
    let mut stmt =
        conn.prepare("SELECT part, typeof(data) = 'blob', length(data), rowid FROM scrub")?;
    let mut q = stmt.query([])?;
    while let Some(r) = q.next()? {
        let row = r.get_ref(0)?.as_str()?;
        let (name, k) = chunk_of(row);
        if !wanted(name) {
            continue;
        }
        // A chunk stored as anything but a blob, or numbered oddly, does not decode.
        let chunk = match (k, r.get::<_, bool>(1)?) {
            (Some(k), true) => (k, r.get::<_, i64>(2)? as usize, r.get(3)?),
            _ => (usize::MAX, 0, 0),
        };
        chunks.entry(name.to_owned()).or_default().push(chunk);
    }
    // Then each whole part's chunks, each read straight into its place
    // (incremental blob I/O: no copy of the value in between).
    let mut parts = HashMap::new();
    let mut blob: Option<rusqlite::blob::Blob> = None;
    for (name, mut list) in chunks {
        list.sort_unstable_by_key(|&(k, _, _)| k);
        let whole = list
            .iter()
            .enumerate()
            .all(|(i, &(k, len, _))| k == i && (i + 1 == list.len() || len == CHUNK));
        if !whole {
            continue;
        }
        let mut data = vec![0; list.iter().map(|&(_, len, _)| len).sum()];
        for (k, len, rowid) in list {
            let blob = match &mut blob {
                Some(blob) => {
                    blob.reopen(rowid)?;
                    blob
                }
                None => {
                    blob.insert(conn.blob_open(rusqlite::MAIN_DB, "scrub", "data", rowid, true)?)
                }
            };
            let place = data.get_mut(k * CHUNK..k * CHUNK + len);
            match place {
                Some(place) if blob.len() == len => blob.read_at_exact(place, 0)?,
                _ => {
                    return Err(super::read::damaged(format!(
                        "the scrub index's chunk {k} of part {name:?} is not as long as its row says"
                    )));
                }
            }
        }
        parts.insert(name, data);
    }
    Ok(parts)
}

/// The part a stored chunk's row belongs to and its number (`None`: not a
/// chunk number).
fn chunk_of(row: &str) -> (&str, Option<usize>) {
    match row.split_once('/') {
        None => (row, Some(0)),
        Some((name, k)) => (name, k.parse().ok().filter(|&k| k > 0)),
    }
}

/// Bytes per stored chunk of a part: a follow's batch writes again only the
/// chunks whose bytes changed (most parts grow at their end).
const CHUNK: usize = 1 << 18;

/// The rows a part is stored as: chunk 0 under its name, chunk k under
/// "name/k"; an empty part is one empty chunk.
fn chunks<'a>(name: &str, data: &'a [u8]) -> impl Iterator<Item = (String, &'a [u8])> {
    let empty: &[u8] = &[];
    let pieces: Vec<&[u8]> = if data.is_empty() {
        vec![empty]
    } else {
        data.chunks(CHUNK).collect()
    };
    let name = name.to_owned();
    pieces
        .into_iter()
        .enumerate()
        .map(move |(k, piece)| (chunk_row(&name, k), piece))
}

/// The row chunk `k` of part `name` is stored under.
fn chunk_row(name: &str, k: usize) -> String {
    if k == 0 {
        name.to_owned()
    } else {
        format!("{name}/{k}")
    }
}

/// The parts a fork's patch changes on its second thread ([`patch`]).
const MARK_PARTS: [&str; 2] = ["marks", "evidence"];

const PARTS: [&str; 8] = [
    "versions",
    "superseded",
    "claims",
    "by_recorded",
    "by_superseded",
    "checkpoints",
    "marks",
    "evidence",
];

fn encode(index: &ScrubIndex) -> Vec<(&'static str, Vec<u8>)> {
    let mut parts = encode_versions(index);
    parts.extend(encode_marks(index));
    parts
}

/// The parts of the versions: all but the marks and the evidence widths.
fn encode_versions(index: &ScrubIndex) -> Vec<(&'static str, Vec<u8>)> {
    // A version's closing instant on its own: the one field a follow's
    // batch changes in place (as it closes held versions anywhere in the log).
    let mut versions = Vec::with_capacity(index.versions.len() * VERSION_BYTES);
    let mut superseded = Vec::with_capacity(index.versions.len() * 8);
    for v in &index.versions {
        put_version(&mut versions, v);
        superseded.extend_from_slice(&v.superseded_at.to_le_bytes());
    }
    let [p0, p1, p2, p3, p4, p5, _, _] = PARTS;
    vec![
        (p0, versions),
        (p1, superseded),
        (p2, claims_bytes(index)),
        (p3, u32s(&index.by_recorded)),
        (p4, u32s(&index.by_superseded)),
        (p5, checkpoints_bytes(index)),
    ]
}

/// The parts of the marks: the marks and the evidence widths.
fn encode_marks(index: &ScrubIndex) -> [(&'static str, Vec<u8>); 2] {
    let mut marks = Vec::with_capacity(index.marks.len() * MARK_BYTES);
    for m in &index.marks {
        put_mark(&mut marks, m);
    }
    let [_, _, _, _, _, _, p6, p7] = PARTS;
    [(p6, marks), (p7, evidence_bytes(index))]
}

/// The parts a follow's batch encodes whole: claims, checkpoints, evidence.
fn encode_small(index: &ScrubIndex) -> [(&'static str, Vec<u8>); 3] {
    let [_, _, p2, _, _, p5, _, p7] = PARTS;
    [
        (p2, claims_bytes(index)),
        (p5, checkpoints_bytes(index)),
        (p7, evidence_bytes(index)),
    ]
}

fn claims_bytes(index: &ScrubIndex) -> Vec<u8> {
    index.claims.join("\u{1f}").into_bytes()
}

fn checkpoints_bytes(index: &ScrubIndex) -> Vec<u8> {
    let ids: usize = index.checkpoints.iter().map(Vec::len).sum();
    let mut out = Vec::with_capacity(4 * (2 + index.checkpoints.len() + ids));
    out.extend(u32s(&[index.stride as u32, index.checkpoints.len() as u32]));
    for c in &index.checkpoints {
        out.extend_from_slice(&(c.len() as u32).to_le_bytes());
    }
    for c in &index.checkpoints {
        out.extend(u32s(c));
    }
    out
}

fn evidence_bytes(index: &ScrubIndex) -> Vec<u8> {
    (index.evidence.iter())
        .flat_map(|w| [w.id, w.source, w.cited])
        .flat_map(u16::to_le_bytes)
        .collect()
}

fn u32s(list: &[u32]) -> Vec<u8> {
    list.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// The bytes of a version's record in the `versions` part ([`put_version`]).
const VERSION_BYTES: usize = 36;
/// The bytes of a mark's record in the `marks` part ([`put_mark`]).
const MARK_BYTES: usize = 26;

/// A version's record in the `versions` part ([`VERSION_BYTES`]; its
/// closing instant is in `superseded`).
fn put_version(out: &mut Vec<u8>, v: &VersionKey) {
    out.extend_from_slice(&v.id.to_le_bytes());
    for t in [v.recorded_at, v.valid_from] {
        out.extend_from_slice(&t.to_le_bytes());
    }
    for c in [v.topic, v.agent, v.claim] {
        out.extend_from_slice(&c.to_le_bytes());
    }
}

/// A mark's record in the `marks` part ([`MARK_BYTES`]).
fn put_mark(out: &mut Vec<u8>, m: &MarkKey) {
    out.extend_from_slice(&m.seq.to_le_bytes());
    out.extend_from_slice(&m.recorded_at.to_le_bytes());
    out.push(m.kind.index() as u8);
    out.push(EFFECTS.iter().position(|&e| e == m.effect).unwrap_or(1) as u8);
    out.extend_from_slice(&m.topic.to_le_bytes());
    out.extend_from_slice(&m.agent.to_le_bytes());
}

/// A little-endian reader over one blob; `None` when it runs out.
struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn take<const N: usize>(&mut self) -> Option<[u8; N]> {
        let (head, rest) = self.0.split_first_chunk::<N>()?;
        self.0 = rest;
        Some(*head)
    }
    fn u8(&mut self) -> Option<u8> {
        self.take::<1>().map(|[b]| b)
    }
    fn u16(&mut self) -> Option<u16> {
        self.take().map(u16::from_le_bytes)
    }
    fn u32(&mut self) -> Option<u32> {
        self.take().map(u32::from_le_bytes)
    }
    fn u64(&mut self) -> Option<u64> {
        self.take().map(u64::from_le_bytes)
    }
    fn i64(&mut self) -> Option<i64> {
        self.take().map(i64::from_le_bytes)
    }
    /// Fixed-width records until the blob ends exactly.
    fn records<T>(
        mut self,
        width: usize,
        mut one: impl FnMut(&mut Self) -> Option<T>,
    ) -> Option<Vec<T>> {
        if !self.0.len().is_multiple_of(width) {
            return None;
        }
        let mut out = Vec::with_capacity(self.0.len() / width);
        while !self.0.is_empty() {
            out.push(one(&mut self)?);
        }
        Some(out)
    }
}

fn decode(parts: &HashMap<String, Vec<u8>>) -> Result<ScrubIndex, &'static str> {
    let index = decode_versions(parts, true)?;
    let (marks, evidence) = decode_marks(parts)?;
    Ok(ScrubIndex {
        marks,
        evidence,
        ..index
    })
}

/// The parts of the versions (all but the marks and the evidence widths),
/// decoded and checked against each other; the marks are left empty, and so
/// are the checkpoints unless `checkpoints` (only their stride is read).
fn decode_versions(
    parts: &HashMap<String, Vec<u8>>,
    checkpoints: bool,
) -> Result<ScrubIndex, &'static str> {
    let part = |name: &'static str| parts.get(name).map(|b| Bytes(b)).ok_or(name);
    let superseded = part("superseded")?
        .records(8, |b| b.i64())
        .ok_or("superseded")?;
    let versions = part("versions")?
        .records(VERSION_BYTES, |b| {
            Some(VersionKey {
                id: b.u64()?,
                recorded_at: b.i64()?,
                valid_from: b.i64()?,
                topic: b.u32()?,
                agent: b.u32()?,
                claim: b.u32()?,
                superseded_at: OPEN,
            })
        })
        .ok_or("versions")?;
    if superseded.len() != versions.len() {
        return Err("superseded");
    }
    let versions: Vec<VersionKey> = versions
        .into_iter()
        .zip(superseded)
        .map(|(v, superseded_at)| VersionKey { superseded_at, ..v })
        .collect();
    let claims = parts.get("claims").ok_or("claims")?;
    let claims: Vec<String> = match std::str::from_utf8(claims).map_err(|_| "claims")? {
        "" if versions.is_empty() => Vec::new(),
        text => text.split('\u{1f}').map(str::to_owned).collect(),
    };
    let n = versions.len();
    let position = |i: u32| (i as usize) < n;
    let u32s = |name: &'static str| {
        part(name)?
            .records(4, |b| b.u32().filter(|&i| position(i)))
            .ok_or(name)
    };
    let by_recorded = u32s("by_recorded")?;
    let by_superseded = u32s("by_superseded")?;
    let mut b = part("checkpoints")?;
    let stride = b.u32().filter(|&s| s > 0).ok_or("checkpoints")? as usize;
    let claims_ok = versions.iter().all(|v| (v.claim as usize) < claims.len());
    if !claims_ok || by_recorded.len() != n {
        return Err("versions");
    }
    let checkpoints = match checkpoints {
        true => decode_checkpoints(b, n, stride)?,
        false => Vec::new(),
    };
    Ok(ScrubIndex {
        stride,
        versions,
        claims,
        by_recorded,
        by_superseded,
        checkpoints,
        marks: Vec::new(),
        evidence: Vec::new(),
    })
}

/// The checkpoints' lists (`b`: the part after its stride), each a list of
/// positions among `n` versions, one per `stride` of them and one more.
fn decode_checkpoints(
    mut b: Bytes<'_>,
    n: usize,
    stride: usize,
) -> Result<Vec<Vec<u32>>, &'static str> {
    let count = b.u32().ok_or("checkpoints")? as usize;
    let lens: Vec<usize> = (0..count)
        .map(|_| b.u32().map(|l| l as usize))
        .collect::<Option<_>>()
        .ok_or("checkpoints")?;
    let checkpoints: Vec<Vec<u32>> = lens
        .iter()
        .map(|&len| {
            (0..len)
                .map(|_| b.u32().filter(|&i| (i as usize) < n))
                .collect()
        })
        .collect::<Option<_>>()
        .filter(|_| b.0.is_empty())
        .ok_or("checkpoints")?;
    if checkpoints.len() != n / stride + 1 {
        return Err("checkpoints");
    }
    Ok(checkpoints)
}

/// The marks and the evidence widths, one per evidence mark.
fn decode_marks(
    parts: &HashMap<String, Vec<u8>>,
) -> Result<(Vec<MarkKey>, Vec<EvidenceWidths>), &'static str> {
    let part = |name: &'static str| parts.get(name).map(|b| Bytes(b)).ok_or(name);
    let marks = part("marks")?
        .records(MARK_BYTES, |b| {
            Some(MarkKey {
                seq: b.u64()?,
                recorded_at: b.i64()?,
                kind: *MarkKind::ALL.get(b.u8()? as usize)?,
                effect: *EFFECTS.get(b.u8()? as usize)?,
                topic: b.u32()?,
                agent: b.u32()?,
            })
        })
        .ok_or("marks")?;
    let evidence = part("evidence")?
        .records(6, |b| {
            Some(EvidenceWidths {
                id: b.u16()?,
                source: b.u16()?,
                cited: b.u16()?,
            })
        })
        .filter(|e| {
            e.len()
                == marks
                    .iter()
                    .filter(|m| m.kind == MarkKind::Evidence)
                    .count()
        })
        .ok_or("evidence")?;
    Ok((marks, evidence))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index(n: usize) -> ScrubIndex {
        let versions: Vec<VersionKey> = (0..n)
            .map(|i| VersionKey {
                id: i as u64 + 1,
                recorded_at: (i as i64 / 3) * 10,
                superseded_at: if i % 2 == 0 {
                    OPEN
                } else {
                    (i as i64 / 3) * 10 + 25
                },
                valid_from: -(i as i64),
                topic: (i % 7) as u32,
                agent: (i % 2) as u32,
                claim: (i % 3) as u32,
            })
            .collect();
        let by_recorded: Vec<u32> = (0..n as u32).collect();
        let by_superseded = (0..n as u32).filter(|i| i % 2 == 1).collect();
        let marks: Vec<MarkKey> = (0..n as u64)
            .map(|s| MarkKey {
                seq: s + 1,
                recorded_at: s as i64,
                kind: MarkKind::ALL[s as usize % 5],
                effect: EFFECTS[s as usize % 5],
                topic: NONE,
                agent: s as u32,
            })
            .collect();
        let evidence = (0..marks
            .iter()
            .filter(|m| m.kind == MarkKind::Evidence)
            .count())
            .map(|i| EvidenceWidths {
                id: i as u16,
                source: 3,
                cited: u16::MAX,
            })
            .collect();
        ScrubIndex {
            evidence,
            stride: CHECKPOINT,
            checkpoints: checkpoints(&versions, &by_recorded, CHECKPOINT),
            versions,
            claims: vec!["a".into(), "b c".into(), "".into()],
            by_recorded,
            by_superseded,
            marks,
        }
    }

    fn parts(index: &ScrubIndex) -> HashMap<String, Vec<u8>> {
        encode(index)
            .into_iter()
            .map(|(p, d)| (p.to_owned(), d))
            .collect()
    }

    #[test]
    fn the_index_round_trips_through_its_blobs() {
        for n in [0, 1, CHECKPOINT - 1, CHECKPOINT, 2 * CHECKPOINT + 5] {
            let index = index(n);
            assert_eq!(decode(&parts(&index)), Ok(index), "{n} versions");
        }
    }

    #[test]
    fn a_malformed_blob_is_refused_by_name_not_a_panic() {
        let good = parts(&index(CHECKPOINT + 3));
        for part in PARTS {
            let mut cut = good.clone();
            cut.get_mut(part).unwrap().pop();
            let mut grown = good.clone();
            grown.get_mut(part).unwrap().extend_from_slice(&[0xff; 4]);
            let mut missing = good.clone();
            missing.remove(part);
            for (how, parts) in [("cut", cut), ("grown", grown), ("missing", missing)] {
                if part == "claims" && how != "missing" {
                    continue; // any UTF-8 is a list of claims; their count is checked below
                }
                assert!(decode(&parts).is_err(), "{part} {how}");
            }
        }
        let mut few = good.clone();
        few.insert("claims".into(), b"a".to_vec());
        assert_eq!(
            decode(&few),
            Err("versions"),
            "a claim code beyond the list"
        );
    }

    fn stored(conn: &Connection) -> Vec<(String, Vec<u8>)> {
        let mut stmt = conn
            .prepare("SELECT part, data FROM scrub ORDER BY part")
            .unwrap();
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap()
    }

    fn scrub_table() -> Connection {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch("CREATE TABLE scrub (part TEXT PRIMARY KEY, data BLOB NOT NULL);")
            .unwrap();
        conn
    }

    /// Parts longer than a chunk are stored as several rows, read back whole;
    /// a follow's store writes only the chunks that changed, and the rows
    /// come out as a store of the new index from scratch would write them.
    #[test]
    fn chunks_round_trip_and_only_changed_ones_are_written() {
        let n = CHUNK / VERSION_BYTES * 2 + 100;
        let before = index(n);
        let conn = scrub_table();
        store(&conn, &before).unwrap();
        let rows = stored(&conn);
        assert!(
            rows.iter().any(|(p, _)| p == "versions/2"),
            "three chunks of versions"
        );
        assert_eq!(read(&conn).unwrap(), Ok(before.clone()));

        // Closed in the first chunk, appended at the end, a part shortened.
        let mut after = before.clone();
        after.versions[5].superseded_at = 99;
        after.versions.truncate(n - 1);
        after.by_recorded.truncate(n - 1);
        after.by_superseded.retain(|&i| (i as usize) < n - 1);
        after.marks.truncate(CHUNK / MARK_BYTES - 3);
        after.evidence = after
            .marks
            .iter()
            .filter(|m| m.kind == MarkKind::Evidence)
            .map(|_| EvidenceWidths::default())
            .collect();
        let old: HashMap<&'static str, Vec<u8>> = encode(&before).into_iter().collect();
        let new: HashMap<&'static str, Vec<u8>> = encode(&after).into_iter().collect();
        let changes_before = conn.total_changes();
        store_parts(&conn, &new, Some(&old)).unwrap();
        let written = conn.total_changes() - changes_before;
        assert_eq!(read(&conn).unwrap(), Ok(after.clone()));
        let fresh = scrub_table();
        store(&fresh, &after).unwrap();
        assert_eq!(
            stored(&conn),
            stored(&fresh),
            "the same rows as written afresh"
        );
        let all = stored(&fresh).len() as u64;
        assert!(
            written < all,
            "{written} rows written or deleted of {all}: unchanged chunks stay"
        );
    }

    /// A chunk as long as the stored one is written over it in place (the
    /// row keeps its rowid); a longer, shorter or new one replaces the row.
    #[test]
    fn a_chunk_of_the_same_length_is_written_in_place() {
        let conn = scrub_table();
        let row = |part: &str| -> (i64, Vec<u8>) {
            conn.query_row(
                "SELECT rowid, data FROM scrub WHERE part = ?1",
                [part],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap()
        };
        put_chunk(&conn, "marks", &[1, 2, 3], None).unwrap();
        put_chunk(&conn, "marks/1", &[9], None).unwrap();
        let (rowid, data) = row("marks");
        assert_eq!(data, [1, 2, 3]);
        put_chunk(&conn, "marks", &[4, 5, 6], Some(3)).unwrap();
        assert_eq!(row("marks"), (rowid, vec![4, 5, 6]), "in place");
        assert_eq!(row("marks/1").1, [9], "the other chunk untouched");
        put_chunk(&conn, "marks", &[7, 8], Some(3)).unwrap();
        let (moved, data) = row("marks");
        assert_eq!(data, [7, 8]);
        assert_ne!(moved, rowid, "a shorter chunk replaces the row");
        // A stored length that is not the row's (a caller's mistake) writes
        // the row anew rather than past its end.
        put_chunk(&conn, "marks", &[1, 1, 1], Some(3)).unwrap();
        assert_eq!(row("marks").1, [1, 1, 1]);
        let count: i64 = conn
            .query_row("SELECT count(*) FROM scrub", [], |r| r.get(0))
            .unwrap();
        assert_eq!(count, 2);
    }

    #[test]
    fn a_missing_or_short_chunk_is_malformed() {
        let index = index(CHUNK / VERSION_BYTES * 2 + 100);
        let conn = scrub_table();
        store(&conn, &index).unwrap();
        conn.execute("DELETE FROM scrub WHERE part = 'versions/1'", [])
            .unwrap();
        assert_eq!(read(&conn).unwrap(), Err(Malformed("versions")));
        store(&conn, &index).unwrap();
        conn.execute(
            "UPDATE scrub SET data = substr(data, 1, 100) WHERE part = 'versions'",
            [],
        )
        .unwrap();
        assert_eq!(read(&conn).unwrap(), Err(Malformed("versions")));
        store(&conn, &index).unwrap();
        conn.execute(
            "UPDATE scrub SET part = 'versions/x' WHERE part = 'versions/2'",
            [],
        )
        .unwrap();
        assert_eq!(read(&conn).unwrap(), Err(Malformed("versions")));
    }

    /// A follow takes a store up by reading its index: what it reads is
    /// what a computation from the rows holds, maps included, and the store
    /// it then makes writes nothing (the first store compares every part).
    #[test]
    fn an_index_read_back_is_the_one_computed() {
        let store = small_store();
        let (conn, header) = (store.connection(), store.header());
        let computed = Growing::compute(conn, header).expect("computes");
        let mut stored = Growing::stored(conn, header).expect("reads");
        assert_eq!(stored.index, computed.index);
        assert_eq!(stored.claim_code, computed.claim_code);
        assert_eq!(stored.evidence_seq, computed.evidence_seq);
        assert_eq!(stored.evidence_at, computed.evidence_at);
        assert_eq!(
            (stored.last_seq, stored.held),
            (computed.last_seq, computed.held)
        );
        assert!(
            stored.grown.is_none(),
            "the first store compares every part"
        );
        let changes = conn.total_changes();
        stored.store(conn).expect("stores");
        assert_eq!(conn.total_changes(), changes, "nothing differed");
    }

    /// A generated store of 3,000 events, 12 topics and 3 agents.
    fn small_store() -> crate::store::Store {
        crate::synth::store_of(crate::synth::GenConfig {
            events: 3000,
            topics: 12,
            agents: 3,
            seed: 5,
        })
    }

    /// What a fork does to its copy of the parent, done by hand: two pairs'
    /// versions written again with later ids (one with a claim no version
    /// had, one version fewer), an evidence item and an assertion deleted
    /// with their citations, an outcome changed. The patched index equals a
    /// fresh computation, and was patched, not computed afresh.
    #[test]
    fn a_patched_index_equals_a_fresh_computation() {
        let store = small_store();
        let (conn, header) = (store.connection(), store.header());
        let one = |sql: &str| -> i64 { conn.query_row(sql, [], |r| r.get(0)).expect(sql) };
        let before = read(conn).expect("reads").expect("decodes");
        let pairs: HashSet<(u32, u32)> = [(0, 0), (3, 1)].into();
        conn.execute_batch(
            "UPDATE versions SET id = id + 1000000 WHERE (topic, agent) IN (VALUES (0, 0), (3, 1));
             DELETE FROM versions WHERE id = (SELECT max(id) FROM versions WHERE topic = 3);
             INSERT INTO claims (code, text) VALUES (999999, 'a claim no version had');
             UPDATE versions SET claim = 999999
              WHERE id = (SELECT min(id) FROM versions WHERE topic = 0 AND agent = 0);",
        )
        .expect("versions written again");
        let evidence = one(
            "SELECT min(e.seq) FROM events e JOIN citations c ON c.evidence = e.id
              WHERE e.kind = 'evidence'",
        );
        let believe = one(
            "SELECT max(e.seq) FROM events e JOIN citations c ON c.seq = e.seq
              WHERE e.kind = 'believe'",
        );
        let applied = one("SELECT min(seq) FROM events WHERE kind = 'believe'
              AND seq NOT IN (SELECT seq FROM outcomes)");
        assert!(applied != believe, "three events");
        let mut cited: Vec<String> = Vec::new();
        for seq in [evidence, believe] {
            let mut stmt = conn
                .prepare("SELECT evidence FROM citations WHERE seq = ?1")
                .expect("prepares");
            let ids = stmt.query_map([seq], |r| r.get(0)).expect("queries");
            cited.extend(ids.map(|id| id.expect("an id")));
        }
        let evidence_id: String = conn
            .query_row("SELECT id FROM events WHERE seq = ?1", [evidence], |r| {
                r.get(0)
            })
            .expect("the evidence id");
        cited.push(evidence_id.clone());
        conn.execute(
            "DELETE FROM events WHERE seq IN (?1, ?2)",
            [evidence, believe],
        )
        .expect("deletes");
        conn.execute(
            "DELETE FROM citations WHERE seq = ?1 OR evidence = ?2",
            params![believe, evidence_id],
        )
        .expect("deletes citations");
        conn.execute(
            "INSERT INTO outcomes (seq, effect, inserted, closed) VALUES (?1, 'reconfirmed', 0, 0)",
            [applied],
        )
        .expect("an outcome");
        let replaced = Replaced {
            pairs,
            events: vec![evidence as u64, believe as u64, applied as u64],
            cited: cited.iter().map(String::as_str).collect(),
        };
        assert!(
            patch(conn, header, &replaced).expect("patches"),
            "patched, not computed afresh"
        );
        let fresh = compute(conn, header).expect("computes");
        assert_ne!(fresh, before, "the changes reach the index");
        assert_ne!(fresh.claims, before.claims, "the claims are numbered again");
        assert_eq!(read(conn).expect("reads"), Ok(fresh));
    }

    /// A stored index whose marks' or versions' side does not decode is not
    /// patched but computed afresh, whichever thread finds it.
    #[test]
    fn an_index_that_does_not_decode_is_computed_afresh_not_patched() {
        for (part, damage) in [
            ("marks", "substr(data, 1, 10)"),
            ("evidence", "substr(data, 1, 3)"),
            ("versions", "substr(data, 1, 7)"),
            ("by_recorded", "x''"),
        ] {
            let store = small_store();
            let (conn, header) = (store.connection(), store.header());
            conn.execute(
                &format!("UPDATE scrub SET data = {damage} WHERE part = ?1"),
                [part],
            )
            .expect("damages");
            assert!(read(conn).expect("reads").is_err(), "{part} damaged");
            let patched = patch(conn, header, &Replaced::default()).expect("patches");
            assert!(!patched, "{part}: computed afresh");
            let fresh = compute(conn, header).expect("computes");
            assert_eq!(read(conn).expect("reads"), Ok(fresh), "{part}");
        }
    }

    /// What a follow's batches do: checkpoints carried on from the last one
    /// as versions are appended equal those computed at once.
    #[test]
    fn checkpoints_carried_on_equal_checkpoints_computed_at_once() {
        let index = index(200);
        for stride in [1, 3, 7, 64] {
            let whole = checkpoints(&index.versions, &index.by_recorded, stride);
            assert!(whole.len() > 2 || stride == 64, "stride {stride}");
            let mut grown = vec![Vec::new()];
            let mut ends = [0, 1, 5, stride, stride + 1, 3 * stride + 2, 150, 200];
            ends.sort_unstable();
            for end in ends {
                let prefix = &index.by_recorded[..end.min(200)];
                extend_checkpoints(&index.versions, prefix, stride, &mut grown);
                assert_eq!(
                    grown,
                    checkpoints(&index.versions, prefix, stride),
                    "stride {stride}, {end} versions"
                );
            }
            assert_eq!(grown, whole, "stride {stride}");
        }
    }

    #[test]
    fn a_checkpoint_holds_what_its_prefix_still_holds() {
        let index = index(3 * CHECKPOINT);
        for (c, held) in index.checkpoints.iter().enumerate() {
            let prefix = &index.by_recorded[..c * CHECKPOINT];
            let Some(&last) = prefix.last() else {
                assert!(held.is_empty());
                continue;
            };
            let t = index.versions[last as usize].recorded_at;
            let expected: Vec<u32> = prefix
                .iter()
                .copied()
                .filter(|&i| index.versions[i as usize].superseded_at > t)
                .collect();
            assert_eq!(held, &expected, "checkpoint {c}");
        }
    }
}
