//! Computing the scrub index from the store's rows, and growing it batch by
//! batch as a follow appends (`Growing`).

use super::*;

/// The index of the log and versions stored in `conn`.
pub(crate) fn compute(conn: &Connection, header: &Header) -> rusqlite::Result<ScrubIndex> {
    compute_with(conn, header, CHECKPOINT)
}

/// [`compute`] with checkpoints every `stride` versions (tests use short ones).
pub(crate) fn compute_with(
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
    pub(crate) index: ScrubIndex,
    /// Stored claim code → its position in `index.claims`.
    pub(crate) claim_code: HashMap<i64, u32, ShortKeys>,
    /// Evidence seq → its position in `index.evidence` (each citation adds
    /// to its `cited`, [`cite`]).
    pub(crate) evidence_at: HashMap<i64, usize, ShortKeys>,
    /// The last event seq seen (events are appended in seq order).
    pub(crate) last_seq: i64,
    /// How many versions are still held.
    pub(crate) held: usize,
    /// The parts as this index last stored them (`None`: not stored yet).
    pub(crate) written: Option<HashMap<&'static str, Vec<u8>>>,
    /// What grew since the index was last stored (`None`: anything may
    /// have changed, or it was not stored whole: every part is compared).
    pub(crate) grown: Option<Grown>,
    /// The marks and evidence items let go from the index's front: the
    /// store holds them, and a batch that reaches them takes them back.
    pub(crate) let_go: LetGo,
}

/// The marks, and the evidence widths, a follow's index let go from its
/// front once no batch is expected to change them (design.md §7, "What a
/// follow holds of the store"): `index.marks[i]` is the stored part's mark
/// `marks + i`, `index.evidence[j]` its item `evidence + j`, and the parts
/// as last stored (`Growing::written`) are held from byte `bytes[k]` of
/// the `marks` (k = 0) and `evidence` (k = 1) parts on, at a chunk's start.
/// A batch that would change what was let go — a mark to go before them, a
/// citation of an item among them, a mark let go whose replay may differ —
/// first reads them back from the store ([`Growing::take_back`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct LetGo {
    pub(crate) marks: usize,
    pub(crate) evidence: usize,
    pub(crate) bytes: [usize; 2],
    /// The key, (recorded_at, seq), of the last mark let go.
    pub(crate) last: Option<(Micros, u64)>,
    /// The largest seq let go.
    pub(crate) seq: u64,
    /// The latest instant of a replayed mark (not evidence) let go.
    pub(crate) replayed: Option<Micros>,
}

/// The fewest marks a follow's index lets go at a time (a release build
/// also waits until they are half of those held: each time, the marks and
/// items left are moved to the front of their lists). In a debug build, as
/// the tests run, one — so that every follow test lets go and takes back
/// along the way.
const LET_GO_AT_LEAST: usize = if cfg!(debug_assertions) { 1 } else { 1 << 14 };

/// What grew in a [`Growing`] index since it was last stored, so storing it
/// encodes and writes only that: for each part that grows record by record,
/// the first record that may differ, and the versions before those whose
/// closing instant changed in place.
#[derive(Debug, Clone)]
pub(crate) struct Grown {
    pub(crate) versions: usize,
    pub(crate) by_recorded: usize,
    pub(crate) by_superseded: usize,
    pub(crate) marks: usize,
    pub(crate) closed: Vec<usize>,
    /// The first evidence item whose widths may differ, and those before
    /// it whose widths changed in place (a citation).
    pub(crate) evidence: usize,
    pub(crate) widths: Vec<usize>,
    /// The versions were replaced anywhere (a rewrite replayed the log
    /// again): their parts are encoded and compared whole, the marks' part
    /// still written from its first record that may differ.
    pub(crate) versions_whole: bool,
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
            evidence: index.evidence.len(),
            widths: Vec::new(),
            versions_whole: false,
        }
    }
}

/// Stored events a follow's batch wrote again (design.md §7, "Live
/// ingestion").
#[derive(Debug, Clone, Default)]
pub(crate) struct Rewrote {
    /// The events after this seq were deleted and written anew: every one,
    /// or only those `only` lists.
    pub(crate) after: u64,
    /// The seqs after `after` deleted or written anew, sorted (`None`: every
    /// one; a run's end changes the agent of its own events only, not of
    /// its neighbours').
    pub(crate) only: Option<Vec<u64>>,
    /// Claim codes below this name the texts they named before.
    pub(crate) claims_kept: usize,
    /// The evidence the events deleted or written cite (its widths of
    /// what cites it may change).
    pub(crate) cited: Vec<String>,
}

/// A follow's batch did not only append (a version changed other than by
/// being closed, or ids or instants went back): compute the index afresh.
#[derive(Debug)]
pub(crate) struct NotAppended;

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
            evidence_at: HashMap::default(),
            last_seq: i64::MIN,
            held: 0,
            written: None,
            grown: None,
            let_go: LetGo::default(),
        };
        match growing.grow_or_not(conn, header, Some(i64::MIN)) {
            Ok(Ok(())) => Ok(growing),
            Err(e) => Err(e),
            // A growth from nothing only appends: unreachable, but never a panic.
            Ok(Err(NotAppended)) => Err(crate::store::read::damaged(
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
            evidence_at,
            last_seq: last_seq.unwrap_or(i64::MIN),
            held,
            grown: None,
            let_go: LetGo::default(),
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
    /// ([`store_grown`]). Returns the rows written or deleted.
    pub(crate) fn store(&mut self, conn: &Connection) -> rusqlite::Result<Vec<String>> {
        let mut out = Chunks::new(conn);
        if self.grown.is_none() || self.written.is_none() {
            // Encoded whole: the marks let go are needed.
            self.take_back(conn)?;
        }
        if let (Some(grown), Some(written)) = (&self.grown, self.written.as_mut()) {
            store_grown(&mut out, &self.index, grown, written, &self.let_go)?;
        } else {
            let parts: HashMap<&'static str, Vec<u8>> = encode(&self.index).into_iter().collect();
            if self.written.is_none() {
                self.read_stored(conn)?;
            }
            store_parts(&mut out, &parts, self.written.as_ref())?;
            self.written = Some(parts);
        }
        self.grown = Some(Grown::from(&self.index));
        Ok(out.rows)
    }

    /// Lets go the marks from the index's front through the last of those
    /// whose seqs are at most `seq` (the log a follow's later batches are
    /// not expected to write again), with their evidence items' widths and
    /// the stored bytes of both ([`LetGo`]) — once they are at least
    /// [`LET_GO_AT_LEAST`] marks and, in a release build, half of those
    /// held (so that moving those left costs no more than those let go).
    /// Only right after the index was stored; otherwise nothing is let go.
    pub(crate) fn let_go_through(&mut self, seq: u64) {
        let (Some(_), Some(written)) = (&self.grown, self.written.as_mut()) else {
            return;
        };
        let marks = &self.index.marks;
        let n = marks
            .iter()
            .position(|m| m.seq > seq)
            .unwrap_or(marks.len());
        if n < LET_GO_AT_LEAST || (!cfg!(debug_assertions) && n < marks.len() / 2) {
            return;
        }
        let gone = &marks[..n];
        let evidence = gone.iter().filter(|m| m.kind == MarkKind::Evidence).count();
        let go = &mut self.let_go;
        go.replayed = (gone.iter())
            .filter(|m| m.kind != MarkKind::Evidence)
            .map(|m| m.recorded_at)
            .max()
            .max(go.replayed);
        go.seq = gone.iter().map(|m| m.seq).max().unwrap_or(0).max(go.seq);
        go.last = gone.last().map(|m| (m.recorded_at, m.seq));
        go.marks += n;
        go.evidence += evidence;
        drain_front(&mut self.index.marks, n);
        drain_front(&mut self.index.evidence, evidence);
        self.evidence_at
            .retain(|_, at| match at.checked_sub(evidence) {
                Some(kept) => {
                    *at = kept;
                    true
                }
                None => false,
            });
        // The parts as stored, held from the chunk of the first record kept.
        let parts = [
            ("marks", MARK_BYTES, go.marks),
            ("evidence", WIDTHS_BYTES, go.evidence),
        ];
        for (k, (name, width, first)) in parts.into_iter().enumerate() {
            let Some(data) = written.get_mut(name) else {
                continue;
            };
            let gone = (first * width / CHUNK * CHUNK).saturating_sub(go.bytes[k]);
            let gone = gone.min(data.len());
            drain_front(data, gone);
            go.bytes[k] += gone;
        }
        self.grown = Some(Grown::from(&self.index));
    }

    /// Takes back from the store what the index let go from its front
    /// ([`LetGo`]): the `marks` and `evidence` parts as stored (no batch
    /// writes them before what is held) read and decoded, and the records
    /// let go put back before those held — the work of reading two parts,
    /// not of computing the index. A batch does it before it changes what
    /// was let go, and before the index is stored whole.
    pub(crate) fn take_back(&mut self, conn: &Connection) -> rusqlite::Result<()> {
        let go = self.let_go;
        if go == LetGo::default() {
            return Ok(());
        }
        let mut parts = stored_parts_of(conn, |name| MARK_PARTS.contains(&name))?;
        let damaged = || {
            crate::store::read::damaged(
                "the scrub index's marks as stored are not those this follow let go".to_owned(),
            )
        };
        let (mut marks, mut evidence) = decode_marks(&parts).map_err(|_| damaged())?;
        if marks.len() < go.marks || evidence.len() < go.evidence {
            return Err(damaged());
        }
        marks.truncate(go.marks);
        evidence.truncate(go.evidence);
        marks.append(&mut self.index.marks);
        evidence.append(&mut self.index.evidence);
        (self.index.marks, self.index.evidence) = (marks, evidence);
        self.evidence_at = evidence_positions(&self.index);
        if let Some(written) = &mut self.written {
            for name in MARK_PARTS {
                written.insert(name, parts.remove(name).unwrap_or_default());
            }
        }
        if let Some(grown) = &mut self.grown {
            grown.marks += go.marks;
            grown.evidence += go.evidence;
            grown.widths.iter_mut().for_each(|at| *at += go.evidence);
        }
        self.let_go = LetGo::default();
        Ok(())
    }

    /// Whether a mark keyed `key` would go before those let go.
    fn before_let_go(&self, key: (Micros, u64)) -> bool {
        self.let_go.last.is_some_and(|last| key <= last)
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

    /// Brings the index up to date after a follow's batch wrote the stored
    /// log again after a seq (a trace's later spans changed what earlier
    /// ones meant, design.md §7): the events after `rewrote.after` (or those
    /// of them `rewrote.only` lists) were deleted and written anew, claims coded from `rewrote.claims_kept` on
    /// with them, and, when `from` is given, the log was replayed again from
    /// that instant. The marks of the events written again, and of those
    /// replayed again, are taken as stored; so are the versions closed at or
    /// after `from` and those held, and the widths of the evidence the old
    /// and new events cite — the work of what was written, plus a pass over
    /// the index in memory. On any sign the store is otherwise, the index is
    /// computed afresh. `first` is the batch's earliest changed instant
    /// replayed (`None`: evidence only).
    pub(crate) fn rewritten(
        self,
        conn: &Connection,
        header: &Header,
        (first, from): (Option<Micros>, Option<Micros>),
        rewrote: &Rewrote,
    ) -> rusqlite::Result<Growing> {
        let stride = self.index.stride;
        let mut growing = self;
        // What was let go is taken back when the batch may change it: a seq
        // let go written again, or a replayed mark let go at or after the
        // batch's first change (`first`, the earliest instant replayed
        // among the events it added, changed or removed).
        let go = growing.let_go;
        let replays_let_go = from.is_some()
            && go
                .replayed
                .is_some_and(|t| first.is_none_or(|first| t >= first));
        if rewrote.after < go.seq || replays_let_go {
            growing.take_back(conn)?;
        }
        match growing.rewrite(conn, header, from, rewrote)? {
            Ok(()) => Ok(growing),
            Err(NotAppended) => Self::compute_with(conn, header, stride),
        }
    }

    fn rewrite(
        &mut self,
        conn: &Connection,
        header: &Header,
        from: Option<Micros>,
        rewrote: &Rewrote,
    ) -> rusqlite::Result<Result<(), NotAppended>> {
        let after = rewrote.after as i64;
        let written = |seq: i64| {
            seq > after
                && (rewrote.only.as_ref())
                    .is_none_or(|only| only.binary_search(&(seq as u64)).is_ok())
        };
        // Codes from `claims_kept` on may name other texts now.
        self.claim_code
            .retain(|&code, _| code < rewrote.claims_kept as i64);
        // What was stored last, for the marks; the versions compared whole.
        let grown = self.grown.take();
        if let Some(from) = from
            && let Err(e) = self.replace_versions_since(conn, header, from)?
        {
            return Ok(Err(e));
        }
        let last: i64 = conn
            .query_row("SELECT max(seq) FROM events", [], |r| {
                r.get::<_, Option<i64>>(0)
            })?
            .unwrap_or(i64::MIN);
        // The other events replayed again since `from` keep their marks but
        // for what replaying them did; a retraction's mark names its
        // target's topic, which a target written again may change: read
        // again, as is every seq written (as it was and as it is).
        if let Some(from) = from {
            self.effects_since(conn, from, &written)?;
        }
        let replaced = |m: &MarkKey| {
            written(m.seq as i64)
                || from.is_some_and(|from| m.recorded_at >= from && m.kind == MarkKind::Retraction)
        };
        // The marks before the first replaced stay where they are; those
        // recorded since `from` may have had their effects taken again.
        let first = self.index.marks.iter().position(replaced);
        let since = from.map_or(self.index.marks.len(), |from| {
            self.index.marks.partition_point(|m| m.recorded_at < from)
        });
        let unchanged = first.unwrap_or(self.index.marks.len()).min(since);
        let mut again: Vec<u64> = (self.index.marks[first.unwrap_or(self.index.marks.len())..])
            .iter()
            .filter(|m| replaced(m))
            .map(|m| m.seq)
            .collect();
        match &rewrote.only {
            Some(only) => again.extend(only),
            None => again.extend((after + 1..=last).map(|seq| seq as u64)),
        }
        again.sort_unstable();
        again.dedup();
        let cited: Vec<&str> = rewrote.cited.iter().map(String::as_str).collect();
        let fresh = fresh_marks(conn, header, &again, &cited)?;
        // A new mark before those let go, or a width of an item let go:
        // taken back (the places above move by what comes back).
        let mut first = first.unwrap_or(self.index.marks.len());
        let mut unchanged = unchanged;
        if self.let_go != LetGo::default() && self.reaches_let_go(&fresh) {
            let back = self.let_go.marks;
            self.take_back(conn)?;
            (first, unchanged) = (first + back, unchanged + back);
        }
        let (evidence, widths) = self.replace_marks_from(&fresh, first);
        self.grown = grown.map(|mut grown| {
            grown.marks = grown.marks.min(unchanged);
            grown.evidence = grown.evidence.min(evidence);
            grown.widths.extend(widths);
            grown.versions_whole |= from.is_some();
            grown
        });
        debug_assert_eq!(
            self.evidence_at,
            evidence_positions(&self.index),
            "the evidence positions kept up are those of the marks"
        );
        self.last_seq = last;
        Ok(Ok(()))
    }

    /// Takes what replaying did again to the events recorded since `from`
    /// that were not `written` (their stored outcomes): an assertion's or a
    /// verification's effect, and whether an assertion reconfirmed — the
    /// rest of a mark is its event's, which did not change. One read of the
    /// outcomes from the first such event's seq on, not two per event.
    fn effects_since(
        &mut self,
        conn: &Connection,
        from: Micros,
        written: &impl Fn(i64) -> bool,
    ) -> rusqlite::Result<()> {
        let at = self.index.marks.partition_point(|m| m.recorded_at < from);
        let taken = |m: &MarkKey| {
            !written(m.seq as i64) && !matches!(m.kind, MarkKind::Evidence | MarkKind::Retraction)
        };
        let tail = &mut self.index.marks[at..];
        let Some(low) = tail.iter().filter(|m| taken(m)).map(|m| m.seq).min() else {
            return Ok(());
        };
        let mut effects: HashMap<u64, EffectKind, ShortKeys> = HashMap::default();
        let mut stmt = conn.prepare_cached("SELECT seq, effect FROM outcomes WHERE seq >= ?1")?;
        let mut q = stmt.query([low as i64])?;
        while let Some(r) = q.next()? {
            let seq: i64 = r.get(0)?;
            effects.insert(seq as u64, EffectKind::parse(r.get_ref(1)?.as_str()?));
        }
        for m in tail.iter_mut().filter(|m| taken(m)) {
            // The stored kind, as far as a mark tells it.
            let kind = match m.kind {
                MarkKind::Verification => "verify",
                _ => "believe",
            };
            m.effect = (effects.get(&m.seq).copied()).unwrap_or(MarkKind::unrecorded(kind));
            m.kind = MarkKind::of(kind, m.effect);
        }
        Ok(())
    }

    /// Whether replacing marks with `fresh` reaches what was let go: a
    /// mark to go before those let go, or the widths of an item let go
    /// (one neither held nor among the marks `fresh` brings).
    fn reaches_let_go(&self, fresh: &FreshMarks) -> bool {
        let key = |m: &MarkKey| (m.recorded_at, m.seq);
        if (fresh.again.first()).is_some_and(|m| self.before_let_go(key(m))) {
            return true;
        }
        let held = |seq: &u64| self.evidence_at.contains_key(&(*seq as i64));
        let mut unheld = fresh.widths.keys().filter(|seq| !held(seq)).peekable();
        if unheld.peek().is_none() {
            return false;
        }
        let brought: HashSet<u64> = fresh.again.iter().map(|m| m.seq).collect();
        unheld.any(|seq| !brought.contains(seq))
    }

    /// [`ScrubIndex::apply_marks`] for a batch that replaced marks from
    /// place `first` on only: the marks before it stay in place (only the
    /// widths of the evidence `fresh` names change among them), those from
    /// it on are merged with `fresh.again`, and the evidence positions
    /// follow — the work of the tail, not of the index. A new mark that
    /// would go before `first` makes it the whole merge. Returns the first
    /// evidence item whose widths may differ, and those before it whose
    /// widths changed in place.
    fn replace_marks_from(&mut self, fresh: &FreshMarks, first: usize) -> (usize, Vec<usize>) {
        let key = |m: &MarkKey| (m.recorded_at, m.seq);
        let index = &mut self.index;
        let before = |first: usize| {
            first > 0
                && fresh
                    .again
                    .first()
                    .is_some_and(|a| key(a) < key(&index.marks[first - 1]))
        };
        let first = if before(first) { 0 } else { first };
        let tail = index.marks.split_off(first);
        // The evidence before `first`: its count is the place of the tail's
        // first evidence item.
        let kept = match tail.iter().find(|m| m.kind == MarkKind::Evidence) {
            Some(m) => self.evidence_at.get(&(m.seq as i64)).copied(),
            None => Some(index.evidence.len()),
        };
        let Some(kept) = kept.filter(|&k| k <= index.evidence.len()) else {
            // Positions that do not hold: every mark merged again.
            index.marks.extend(tail);
            index.apply_marks(fresh);
            self.evidence_at = evidence_positions(index);
            return (0, Vec::new());
        };
        let old_widths = index.evidence.split_off(kept);
        for m in tail.iter().filter(|m| m.kind == MarkKind::Evidence) {
            self.evidence_at.remove(&(m.seq as i64));
        }
        // Citations changed the widths of evidence kept in place.
        let mut widths = Vec::new();
        for (&seq, &w) in &fresh.widths {
            if let Some(&at) = self.evidence_at.get(&(seq as i64))
                && at < kept
            {
                index.evidence[at] = w;
                widths.push(at);
            }
        }
        let evidence_at = &mut self.evidence_at;
        let mut push = |m: MarkKey, was: Option<EvidenceWidths>| {
            if m.kind == MarkKind::Evidence {
                let w = fresh.widths.get(&m.seq).copied().or(was);
                evidence_at.insert(m.seq as i64, index.evidence.len());
                index.evidence.push(w.unwrap_or_default());
            }
            index.marks.push(m);
        };
        merge_marks(tail, &mut old_widths.into_iter(), fresh, &mut push);
        (kept, widths)
    }

    fn rewind(
        &mut self,
        conn: &Connection,
        header: &Header,
        from: Micros,
    ) -> rusqlite::Result<Result<(), NotAppended>> {
        // Versions and marks are replaced anywhere: store every part.
        self.take_back(conn)?;
        self.grown = None;
        if let Err(e) = self.replace_versions_since(conn, header, from)? {
            return Ok(Err(e));
        }
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

    /// Replaces the versions a replay again from `from` may have changed by
    /// what the store holds of them now: those closed at or after it, and
    /// those held that were recorded at or after it — a held version
    /// recorded before it is held as it was (its event did not change; the
    /// follow leaves its row in place, replayed.rs) or closed since, and so
    /// among those read — and those the index had closed since that are no
    /// longer (held again: what closed them changed), read by id. The held
    /// versions grow with the log: reading them all each batch was most of
    /// the index's share of a batch.
    fn replace_versions_since(
        &mut self,
        conn: &Connection,
        header: &Header,
        from: Micros,
    ) -> rusqlite::Result<Result<(), NotAppended>> {
        let mut rows = versions_changed_since(conn, header, from)?;
        let read: HashSet<u64> = rows.iter().map(|(v, _)| v.id).collect();
        let reopened = (self.index.versions.iter())
            .filter(|v| v.superseded_at != OPEN && v.superseded_at >= from && !read.contains(&v.id))
            .map(|v| v.id);
        let mut by_id =
            conn.prepare_cached(&format!("SELECT {VERSION_KEY} FROM versions WHERE id = ?1"))?;
        for id in reopened.collect::<Vec<u64>>() {
            if let Some(row) = by_id
                .query_row([id as i64], |r| version_key(r, header))
                .optional()?
            {
                rows.push(row);
            }
        }
        let mut new = Vec::with_capacity(rows.len());
        for (mut v, code) in rows {
            v.claim = self.claim(conn, code)?;
            new.push(v);
        }
        let mut ids: Vec<u64> = new.iter().map(|v| v.id).collect();
        ids.sort_unstable();
        let replaced = |v: &VersionKey| match v.superseded_at {
            OPEN => v.recorded_at >= from || ids.binary_search(&v.id).is_ok(),
            closed => closed >= from,
        };
        let Some(number) = self.index.replace_versions(replaced, new) else {
            return Ok(Err(NotAppended));
        };
        self.claim_code.retain(|_, c| {
            *c = number[*c as usize];
            *c != u32::MAX
        });
        self.held = (self.index.versions.iter())
            .filter(|v| v.superseded_at == OPEN)
            .count();
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
        let after = self.last_seq;
        // The new events' seqs and id widths, in seq order.
        let mut id_widths: Vec<(i64, u16)> = Vec::new();
        let mut marks = Vec::new();
        // The new evidence items' widths, and their seqs by id.
        let mut fresh: HashMap<i64, EvidenceWidths, ShortKeys> = HashMap::default();
        let mut fresh_seq: HashMap<String, i64, ShortKeys> = HashMap::default();
        marks_between(
            conn,
            header,
            (after.saturating_add(1), i64::MAX),
            |seq, read| {
                id_widths.push((seq, read.id_width));
                if let Some((id, own)) = read.evidence {
                    fresh_seq.insert(id, seq);
                    fresh.insert(seq, own);
                }
                marks.push(read.mark);
            },
        )?;
        // An item cited from before the batch is looked up in the store by
        // its unique id: no map of every item's id is kept, which grew with
        // the log (design.md §7, "What is not bounded yet").
        let mut stored_seq =
            conn.prepare_cached("SELECT seq FROM events WHERE id = ?1 AND kind = 'evidence'")?;
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
            let id = r.get_ref(1)?.as_str()?;
            let cited = match fresh_seq.get(id) {
                Some(&seq) => seq,
                None => match stored_seq.query_row([id], |r| r.get(0)).optional()? {
                    Some(seq) => seq,
                    None => continue,
                },
            };
            if !self.evidence_at.contains_key(&cited) && !fresh.contains_key(&cited) {
                // An item let go: taken back, to count this citation.
                self.take_back(conn)?;
            }
            let known = self.evidence_at.get(&cited).copied();
            let w = match known.and_then(|at| Some((at, self.index.evidence.get_mut(at)?))) {
                Some((at, w)) => {
                    if let Some(grown) = &mut self.grown {
                        grown.widths.push(at);
                    }
                    w
                }
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
        if marks
            .first()
            .is_some_and(|m| self.before_let_go((m.recorded_at, m.seq)))
        {
            self.take_back(conn)?;
        }
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
            // A mark went in before others: the evidence from the first
            // mark merged on again, in marks order (those before keep their
            // places) — the work of the tail, not of the index.
            let kept = (self.index.marks[..at].iter())
                .filter(|m| m.kind == MarkKind::Evidence)
                .count()
                .min(self.index.evidence.len());
            if let Some(grown) = &mut self.grown {
                grown.evidence = grown.evidence.min(kept);
            }
            let old = self.index.evidence.split_off(kept);
            let tail = (self.index.marks[at..].iter()).filter(|m| m.kind == MarkKind::Evidence);
            for (n, m) in tail.enumerate() {
                let seq = m.seq as i64;
                let was = (self.evidence_at.get(&seq))
                    .and_then(|&p| old.get(p.checked_sub(kept)?))
                    .copied();
                let w = fresh.remove(&seq).or(was).unwrap_or_default();
                self.evidence_at.insert(seq, kept + n);
                self.index.evidence.push(w);
            }
            debug_assert_eq!(
                self.evidence_at,
                evidence_positions(&self.index),
                "the evidence positions kept up are those of the marks"
            );
        }
        Ok(())
    }
}

/// Each evidence item's position in `index.evidence`, by seq: the evidence
/// marks' order.
pub(crate) fn evidence_positions(index: &ScrubIndex) -> HashMap<i64, usize, ShortKeys> {
    (index.marks.iter())
        .filter(|m| m.kind == MarkKind::Evidence)
        .enumerate()
        .map(|(at, m)| (m.seq as i64, at))
        .collect()
}

/// Versions closed at or after `since` and those still held, as stored,
/// each with its stored claim code: one range per lifespan of the versions
/// table's key.
pub(crate) fn versions_since(
    conn: &Connection,
    header: &Header,
    since: Micros,
) -> rusqlite::Result<Vec<(VersionKey, i64)>> {
    versions_closed_or_held(conn, header, since, Micros::MIN)
}

/// Versions closed at or after `since`, and those held recorded at or
/// after it, as stored, each with its stored claim code.
pub(crate) fn versions_changed_since(
    conn: &Connection,
    header: &Header,
    since: Micros,
) -> rusqlite::Result<Vec<(VersionKey, i64)>> {
    versions_closed_or_held(conn, header, since, since)
}

/// The columns a version's key is read from ([`version_key`]).
pub(crate) const VERSION_KEY: &str =
    "id, topic, agent, claim, recorded_at, superseded_at, valid_from";

/// Versions closed at or after `closed`, and those held recorded at or
/// after `held`, as stored, each with its stored claim code: one range per
/// lifespan of the versions table's key (the held ones', lifespan 64, by
/// recorded time).
fn versions_closed_or_held(
    conn: &Connection,
    header: &Header,
    closed: Micros,
    held: Micros,
) -> rusqlite::Result<Vec<(VersionKey, i64)>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {VERSION_KEY} FROM versions WHERE lifespan = ?1 AND superseded_at >= ?2"
    ))?;
    let mut rows = Vec::new();
    for lifespan in 1..=63i64 {
        let mut q = stmt.query(params![lifespan, closed])?;
        while let Some(r) = q.next()? {
            rows.push(version_key(r, header)?);
        }
    }
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {VERSION_KEY} FROM versions
          WHERE lifespan = 64 AND superseded_at = {OPEN} AND recorded_at >= ?1"
    ))?;
    let mut q = stmt.query([held])?;
    while let Some(r) = q.next()? {
        rows.push(version_key(r, header)?);
    }
    Ok(rows)
}

/// A version's key from a row of (id, topic, agent, claim, recorded_at,
/// superseded_at, valid_from), with its stored claim code beside it (its
/// claim is left 0).
pub(crate) fn version_key(
    r: &rusqlite::Row,
    header: &Header,
) -> rusqlite::Result<(VersionKey, i64)> {
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
pub(crate) const MARK_QUERY: &str = "SELECT e.seq, e.kind, e.recorded_at, e.agent, e.source,
        COALESCE(e.topic, (SELECT a.topic FROM events a
                            WHERE e.kind = 'retract' AND a.id = e.assertion
                              AND a.kind = 'believe')),
        e.id
 FROM events e";

/// The marks of the stored events with seqs from `low` to `high`, each
/// handed to `each` with its seq in seq order: one pass over the events and
/// one over their outcomes (an event absent from `outcomes` was recorded —
/// evidence, a verification — or applied).
pub(crate) fn marks_between(
    conn: &Connection,
    header: &Header,
    (low, high): (i64, i64),
    mut each: impl FnMut(i64, MarkRead),
) -> rusqlite::Result<()> {
    let reader = MarkReader::new(header);
    let mut effects: HashMap<i64, EffectKind, ShortKeys> = HashMap::default();
    let mut stmt =
        conn.prepare_cached("SELECT seq, effect FROM outcomes WHERE seq BETWEEN ?1 AND ?2")?;
    let mut q = stmt.query([low, high])?;
    while let Some(r) = q.next()? {
        effects.insert(r.get(0)?, EffectKind::parse(r.get_ref(1)?.as_str()?));
    }
    let mut stmt = conn.prepare_cached(&format!(
        "{MARK_QUERY} WHERE e.seq BETWEEN ?1 AND ?2 ORDER BY e.seq"
    ))?;
    let mut q = stmt.query([low, high])?;
    while let Some(r) = q.next()? {
        let seq: i64 = r.get(0)?;
        each(seq, reader.read(r, effects.get(&seq).copied())?);
    }
    Ok(())
}

/// An event's mark, read from a row of [`MARK_QUERY`].
pub(crate) struct MarkRead {
    pub(crate) mark: MarkKey,
    /// The display width of the event's id.
    pub(crate) id_width: u16,
    /// For evidence, its id and the widths of its own columns.
    pub(crate) evidence: Option<(String, EvidenceWidths)>,
}

/// Turns rows of [`MARK_QUERY`] into marks, naming topics and agents by
/// header position.
pub(crate) struct MarkReader<'a> {
    topics: Positions<'a>,
    agents: Positions<'a>,
}

impl<'a> MarkReader<'a> {
    pub(crate) fn new(header: &'a Header) -> Self {
        MarkReader {
            topics: positions(header.topics.iter().map(|t| t.id.as_str())),
            agents: positions(header.agents.iter().map(|a| a.id.as_str())),
        }
    }

    /// The mark of the event in `r`, whose stored outcome is `outcome`.
    pub(crate) fn read(
        &self,
        r: &rusqlite::Row,
        outcome: Option<EffectKind>,
    ) -> rusqlite::Result<MarkRead> {
        let position =
            |map: &Positions, s: Option<&str>| s.and_then(|s| map.get(s).copied()).unwrap_or(NONE);
        let seq: i64 = r.get(0)?;
        let kind = r.get_ref(1)?.as_str()?;
        let id = r.get_ref(6)?.as_str()?;
        let evidence = (kind == "evidence").then(|| -> rusqlite::Result<_> {
            let own = EvidenceWidths::own(id, r.get_ref(4)?.as_str_or_null()?);
            Ok((id.to_owned(), own))
        });
        let effect = outcome.unwrap_or(MarkKind::unrecorded(kind));
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
pub(crate) fn width(s: &str) -> u16 {
    s.chars().count().min(usize::from(u16::MAX)) as u16
}

/// The width of the ids citing an evidence item, comma-separated, once one
/// more id of width `id` cites it: the list's width `cited`, a comma and
/// the id (capped). Ids are never empty (validation refuses them), so a
/// width of 0 is a list of none, and the width is the list's whatever order
/// the ids come in.
pub(crate) fn cite(cited: u16, id: u16) -> u16 {
    match cited {
        0 => id,
        _ => cited.saturating_add(1).saturating_add(id),
    }
}

/// `a` and `b`, each in order of `key`, merged into one in that order (`a`
/// first among equals); appended when `b` starts after `a` ends.
pub(crate) fn merge_by_key<T, K: Ord>(a: Vec<T>, b: Vec<T>, key: impl Fn(&T) -> K) -> Vec<T> {
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

/// Removes the first `n` items of `list`, giving back its memory when it
/// holds far fewer than it has room for.
fn drain_front<T>(list: &mut Vec<T>, n: usize) {
    list.drain(..n.min(list.len()));
    if list.capacity() > 4 * list.len() + 4096 {
        list.shrink_to_fit();
    }
}
