//! A store opened for scrubbing: the TUI's data (design.md §8, §12).
//!
//! At open only the store's scrub index ([`crate::store::scrub`]) is read:
//! every version's key, the held-set checkpoints and every event's mark, a few
//! dozen bytes per row. What a row says beyond its key (a version's
//! confidence and citations, an event's id, an evidence item's summary) is
//! read from the store when something first needs it — the rows on screen, a
//! popup, the plane of one topic — and kept in a small cache. A million-event
//! store then opens in the time it takes to read the index, and scrubbing
//! costs a binary search and a scan of the held keys, with no SQL per step.
//!
//! ```text
//!  scrub index (in memory)            store (on demand, cached)
//!  ├ version keys  ─ held(t), closed_at(t), topic lists ─→ belief(i)
//!  ├ marks         ─ next/prev event, counts per lane    ─→ marks_at(t)
//!  └ evidence      ─ known at t, column widths           ─→ evidence_item(i)
//! ```
//!
//! `believed` here answers exactly what the SQL `query::believed` answers (both
//! use the held-at rule and the half-open valid interval); a test holds them
//! to it on the demo and on generated data.

use super::{Belief, Cited, EvidenceItem, Filter};
use crate::store::scrub::{EvidenceWidths, MarkKey, NONE, ScrubIndex, VersionKey};
use crate::store::{Store, StoreError};
use asof_core::engine::EffectKind;
use asof_core::engine::quality::Ledger;
use asof_core::model::{Evidence, Header, Name, Names, Origin, Version};
use asof_core::time::{Interval, Micros, OPEN};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

pub use crate::store::scrub::MarkKind;

/// One event of the log, as the timeline shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct Mark {
    /// Its seq.
    pub seq: u64,
    /// Its id.
    pub id: String,
    /// What kind of mark.
    pub kind: MarkKind,
    /// When it was recorded.
    pub recorded_at: Micros,
    /// The agent (a verification's: who judged).
    pub agent: Option<Name>,
    /// The topic (a retraction of an assertion: that assertion's).
    pub topic: Option<Name>,
    /// The claim (a verification's: the state it gave).
    pub claim: Option<Name>,
    /// The evidence it cites (a verification's: the item it judges).
    pub cites: Cited,
    /// The replay outcome (`applied`, `reconfirmed`, `zero_width`, ...).
    pub effect: EffectKind,
    /// For reconfirmations: the versions that covered the assertion.
    pub covering: Vec<u64>,
}

/// Rows read from the store are kept up to this many of each kind; past it
/// the cache starts again (what is on screen is read back at once).
const CACHE: usize = 20_000;

/// Rows read from the store, by position, [`CACHE`] of them at most (past it
/// the cache starts again).
struct Rows<T>(HashMap<u32, Arc<T>>);

impl<T> Rows<T> {
    fn new() -> Self {
        Rows(HashMap::new())
    }

    /// The positions among `wanted` (those below `len`) not read yet; makes
    /// room for them.
    fn missing(&mut self, wanted: &[usize], len: usize) -> Vec<usize> {
        let missing: Vec<usize> = wanted
            .iter()
            .copied()
            .filter(|&i| i < len && !self.0.contains_key(&(i as u32)))
            .collect();
        if self.0.len() + missing.len() > CACHE {
            self.0.clear();
        }
        missing
    }

    fn get(&self, i: usize) -> Option<Arc<T>> {
        self.0.get(&(i as u32)).cloned()
    }

    fn insert(&mut self, i: u32, row: T) {
        self.0.insert(i, Arc::new(row));
    }
}

/// `?,?,…,?`: the parameters of an `IN (...)` list of `n` values.
/// What a failure to read rows says on the status line: SQLite's own words
/// for its failures, the store's for the rest.
fn said(e: StoreError) -> String {
    match e {
        StoreError::Sqlite(failure) => failure.to_string(),
        e => e.to_string(),
    }
}

/// What a live screen keeps of the store its timeline was read from, to read
/// again only what changed ([`Timeline::read_again`]): the scrub index's
/// parts as read.
#[derive(Debug, Default)]
pub struct Kept {
    held: crate::store::scrub::Held,
}

/// The store a timeline reads rows from, and the rows it has read.
struct Detail {
    store: Store,
    beliefs: Rows<Belief>,
    marks: Rows<Mark>,
    evidence: Rows<EvidenceItem>,
    /// Per evidence item (recorded order): its searchable fields, lower-case,
    /// joined by U+001F (read by the first evidence filter).
    search: Option<Vec<Box<str>>>,
    names: Names,
    decoder: crate::store::read::Decoder,
    /// The first failure to read a row (the store vanished or broke while open).
    error: Option<String>,
    /// A what-if fork's store lives in a temporary directory kept as long as
    /// its timeline.
    _dir: Option<tempfile::TempDir>,
}

/// What the index gives once decoded, computed at open.
#[derive(Debug, PartialEq)]
struct Lists {
    /// Per topic (header order): version positions, ordered by `(recorded_at, id)`.
    by_topic: Vec<Vec<u32>>,
    /// Per mark kind: sorted recorded instants, for counting marks in a range
    /// (the evidence kind's are the evidence items' instants, in list order).
    times: [Vec<Micros>; 5],
    /// Mark positions of the evidence items, in recorded order.
    evidence: Vec<u32>,
    /// (seq, mark position), sorted by seq.
    mark_of_seq: Vec<(u64, u32)>,
}

impl Lists {
    /// The lists of `index` (of a store with `header`): made afresh, or,
    /// given `before` — the lists of an index whose marks before
    /// `marks_from` are this one's — carried on from them (what a live
    /// screen's read again does: the marks a batch changed are at the end).
    fn of(
        header: &Header,
        index: &ScrubIndex,
        before: Option<(&Lists, &ScrubIndex, usize)>,
    ) -> Lists {
        let mut by_topic = vec![Vec::new(); header.topics.len()];
        for &i in &index.by_recorded {
            if let Some(list) = by_topic.get_mut(index.versions[i as usize].topic as usize) {
                list.push(i);
            }
        }
        let (from, mut times, mut evidence, kept) = match before {
            Some((lists, old, from)) if from <= old.marks.len() && from <= index.marks.len() => {
                // The marks from `from` on, as they were, leave the lists.
                let mut gone = [0usize; 5];
                for m in &old.marks[from..] {
                    gone[m.kind.index()] += 1;
                }
                let times: [Vec<Micros>; 5] = std::array::from_fn(|k| {
                    let list = &lists.times[k];
                    list[..list.len().saturating_sub(gone[k])].to_vec()
                });
                let evidence = &lists.evidence;
                let evidence =
                    evidence[..evidence.partition_point(|&p| (p as usize) < from)].to_vec();
                (
                    from,
                    times,
                    evidence,
                    Some((&lists.mark_of_seq, &old.marks[from..])),
                )
            }
            _ => (0, Default::default(), Vec::new(), None),
        };
        // The mark of each seq, sorted by seq: as it was below the least seq
        // a changed mark has (before or after), the rest merged.
        let mut fresh: Vec<(u64, u32)> = (index.marks[from..].iter().enumerate())
            .map(|(i, m)| (m.seq, (from + i) as u32))
            .collect();
        fresh.sort_unstable();
        let mut mark_of_seq = Vec::with_capacity(index.marks.len());
        if let Some((list, gone)) = kept {
            let low = (gone.iter().map(|m| m.seq))
                .chain(fresh.first().map(|&(seq, _)| seq))
                .min()
                .unwrap_or(u64::MAX);
            let cut = list.partition_point(|&(seq, _)| seq < low);
            mark_of_seq.extend_from_slice(&list[..cut]);
            let mut rest = (list[cut..].iter().copied())
                .filter(|&(_, p)| (p as usize) < from)
                .peekable();
            let mut new = fresh.iter().copied().peekable();
            loop {
                let next = match (rest.peek(), new.peek()) {
                    (Some(a), Some(b)) if a <= b => rest.next(),
                    (Some(_), Some(_)) => new.next(),
                    _ => break,
                };
                mark_of_seq.extend(next);
            }
            mark_of_seq.extend(rest.chain(new));
        } else {
            mark_of_seq = fresh;
        }
        for (i, m) in index.marks[from..].iter().enumerate() {
            times[m.kind.index()].push(m.recorded_at);
            if m.kind == MarkKind::Evidence {
                evidence.push((from + i) as u32);
            }
        }
        Lists {
            by_topic,
            times,
            evidence,
            mark_of_seq,
        }
    }
}

/// A store opened for scrubbing: its scrub index in memory, its rows read on demand (see the
/// module's notes).
#[derive(Clone)]
pub struct Timeline {
    /// The store as the user named it.
    pub label: String,
    /// The store's header.
    pub header: Header,
    /// What belief quality needs (design.md §4), read once.
    pub ledger: Ledger,
    /// Evaluations an imported trace made of its evidence and assertions
    /// (`gen_ai.evaluation.result`), by id, one line each; read once.
    pub evaluations: Arc<std::collections::BTreeMap<String, Vec<String>>>,
    /// A trace's model calls in order (`asof calls`), read the first time
    /// they are asked for ([`Timeline::calls`]): a following TUI reads its
    /// store again at every change, and a long run makes many calls.
    calls: Arc<std::sync::OnceLock<Option<Arc<Vec<asof_core::model::ModelCall>>>>>,
    /// A reviewer's findings (docs/review.md), kept apart from the log:
    /// shown beside what the agent knew, never read into it.
    pub review: Arc<asof_core::review::Review>,
    index: Arc<ScrubIndex>,
    lists: Arc<Lists>,
    detail: Arc<Mutex<Detail>>,
}

/// The evaluations kept in the store ([`super::evaluations`]), each said in
/// one line: `relevance 0.9 “relevant” — The pod status answers the
/// question asked.`
fn evaluations(
    store: &Store,
) -> crate::store::Result<std::collections::BTreeMap<String, Vec<String>>> {
    let said = |e: &serde_json::Value| {
        let field = |k: &str| match e.get(k) {
            Some(serde_json::Value::String(s)) => Some(s.clone()),
            Some(serde_json::Value::Null) | None => None,
            Some(other) => Some(other.to_string()),
        };
        let mut line = field("name").unwrap_or_else(|| "evaluation".into());
        if let Some(v) = field("score_value") {
            line.push_str(&format!(" {v}"));
        }
        if let Some(l) = field("score_label") {
            line.push_str(&format!(" “{l}”"));
        }
        if let Some(x) = field("explanation") {
            line.push_str(&format!(" — {x}"));
        }
        line
    };
    Ok(super::evaluations(store)?
        .into_iter()
        .map(|(id, list)| (id, list.iter().map(said).collect()))
        .collect())
}

impl std::fmt::Debug for Timeline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Timeline")
            .field("label", &self.label)
            .field("versions", &self.index.versions.len())
            .field("marks", &self.index.marks.len())
            .finish()
    }
}

impl Timeline {
    /// Opens `store` for scrubbing: reads its scrub index and the ledger, and
    /// keeps the store to read rows from as they are needed. A damaged index
    /// refuses the store, naming the part.
    pub fn load(store: Store) -> Result<Timeline, StoreError> {
        let index = Self::index(&store)?;
        Self::with_index(store, index, None)
    }

    /// [`Timeline::load`] of a store that lives in `dir` (a what-if fork's),
    /// which is removed when the last clone of the timeline is dropped.
    pub fn load_in(store: Store, dir: tempfile::TempDir) -> Result<Timeline, StoreError> {
        let index = Self::index(&store)?;
        Self::with_index(store, index, Some(dir))
    }

    fn index(store: &Store) -> Result<ScrubIndex, StoreError> {
        Self::damaged(store, store.scrub_index()?)
    }

    /// [`Timeline::load`] with the index computed afresh from the stored rows
    /// instead of read, with checkpoints every `stride` versions (tests compare
    /// it with the stored index and try short strides).
    pub fn load_computing_index(store: Store, stride: usize) -> crate::store::Result<Timeline> {
        let index = store.scrub_index_with(stride)?;
        Self::with_index(store, index, None)
    }

    fn with_index(
        store: Store,
        index: ScrubIndex,
        dir: Option<tempfile::TempDir>,
    ) -> crate::store::Result<Timeline> {
        let ledger = super::quality::ledger(&store)?;
        let evaluations = evaluations(&store)?;
        Ok(Self::assemble(store, index, None, ledger, evaluations, dir))
    }

    /// A timeline of `store` from what was read of it: its index, the
    /// index's lists (made afresh when `None`), its ledger, its evaluations.
    fn assemble(
        store: Store,
        index: ScrubIndex,
        lists: Option<Lists>,
        ledger: Ledger,
        evaluations: std::collections::BTreeMap<String, Vec<String>>,
        dir: Option<tempfile::TempDir>,
    ) -> Timeline {
        let lists = lists.unwrap_or_else(|| Lists::of(store.header(), &index, None));
        let header = store.header().clone();
        let decoder = store.decoder(true);
        Timeline {
            label: store.label().to_owned(),
            header,
            ledger,
            evaluations: Arc::new(evaluations),
            calls: Arc::default(),
            review: Arc::default(),
            index: Arc::new(index),
            lists: Arc::new(lists),
            detail: Arc::new(Mutex::new(Detail {
                store,
                beliefs: Rows::new(),
                marks: Rows::new(),
                evidence: Rows::new(),
                search: None,
                names: Names::default(),
                decoder,
                error: None,
                _dir: dir,
            })),
        }
    }

    /// [`Timeline::load`] for a live screen (design.md §6): with what it
    /// keeps of the store to read again, after the store's follow wrote
    /// more, only what its batches changed ([`Timeline::read_again`]).
    pub fn load_live(store: Store) -> Result<(Timeline, Kept), StoreError> {
        let (index, held, ledger, evaluations) = store.reading(|| {
            let (index, held) = Self::damaged(&store, store.scrub_index_held()?)?;
            let ledger = super::quality::ledger(&store)?;
            Ok::<_, StoreError>((index, held, ledger, evaluations(&store)?))
        })?;
        let timeline = Self::assemble(store, index, None, ledger, evaluations, None);
        Ok((timeline, Kept { held }))
    }

    /// This timeline's store as it is now, `store` opened again after its
    /// follow wrote more: of what this timeline read, only what the
    /// follow's batches since changed is read again (the scrub index's
    /// chunks they wrote, the ledger's rows of the events they wrote),
    /// with `kept` what [`Timeline::load_live`] or the last call kept. Read
    /// whole when the store cannot say what changed (another writer, a
    /// new header, or too many batches since).
    pub fn read_again(&self, store: Store, kept: &mut Kept) -> Result<Timeline, StoreError> {
        let again = store.reading(|| {
            if *store.header() != self.header {
                return Ok(None);
            }
            let Some(since) = store.batches_since(&kept.held)? else {
                return Ok(None);
            };
            let mut index = ScrubIndex::clone(&self.index);
            let Some(read) = store.scrub_index_again(&mut index, &mut kept.held, &since)? else {
                return Ok(None);
            };
            let mut ledger = self.ledger.clone();
            super::quality::read_again(&store, &mut ledger, &since.log)?;
            Ok::<_, StoreError>(Some((index, read.marks_from, ledger, evaluations(&store)?)))
        })?;
        match again {
            Some((index, marks_from, ledger, evaluations)) => {
                let before = (&*self.lists, &*self.index, marks_from);
                let lists = Lists::of(store.header(), &index, Some(before));
                Ok(Self::assemble(
                    store,
                    index,
                    Some(lists),
                    ledger,
                    evaluations,
                    None,
                ))
            }
            None => {
                let (timeline, fresh) = Self::load_live(store)?;
                *kept = fresh;
                Ok(timeline)
            }
        }
    }

    fn damaged<T>(
        store: &Store,
        read: std::result::Result<T, crate::store::scrub::Malformed>,
    ) -> Result<T, StoreError> {
        read.map_err(|malformed| StoreError::Damaged {
            path: store.label().into(),
            reason: malformed.to_string(),
        })
    }

    /// The scrub index the timeline was read with (what a live screen's
    /// reads again are held to: the index a whole read gives).
    pub fn scrub_index(&self) -> &ScrubIndex {
        &self.index
    }

    /// The position of the mark of event `seq`.
    fn mark_of(&self, seq: i64) -> Option<usize> {
        let seq = u64::try_from(seq).ok()?;
        let list = &self.lists.mark_of_seq;
        let i = list.binary_search_by_key(&seq, |&(s, _)| s).ok()?;
        Some(list[i].1 as usize)
    }

    fn detail(&self) -> MutexGuard<'_, Detail> {
        self.detail.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The header position of the agent a filter names (`Some(None)`: no
    /// agent named; `None`: one the header lacks, so nothing matches).
    fn agent_filter(&self, agent: Option<&str>) -> Option<Option<u32>> {
        match agent {
            None => Some(None),
            Some(a) => {
                let p = self.header.agent_position(a)?;
                Some(Some(p as u32))
            }
        }
    }

    /// The first failure to read a row from the store since the last call
    /// (the TUI shows it in its status line).
    pub fn take_error(&self) -> Option<String> {
        self.detail().error.take()
    }

    /// A trace's model calls in order (`asof calls`); `None` when the store
    /// was not read from a trace (or could not be read: then
    /// [`Timeline::take_error`] says why).
    pub fn calls(&self) -> Option<Arc<Vec<asof_core::model::ModelCall>>> {
        self.calls
            .get_or_init(|| {
                let mut detail = self.detail();
                match super::model_calls(&detail.store) {
                    Ok(calls) => calls.map(Arc::new),
                    Err(e) => {
                        detail.error.get_or_insert(e.to_string());
                        None
                    }
                }
            })
            .clone()
    }

    /// Whether some event of the log has this id.
    pub fn has_event(&self, id: &str) -> bool {
        self.event_seq(id, false).is_some()
    }

    /// When `b`'s agent began holding its claim: [`super::held_since`], the
    /// one rule the CLI's SINCE follows too (a failure is kept for the status
    /// line, and the row's own recorded time stands in).
    pub fn held_since(&self, b: &Belief) -> Micros {
        let mut detail = self.detail();
        match super::held_since(&detail.store, std::slice::from_ref(b)) {
            Ok(since) => since.first().copied().unwrap_or(b.version.recorded_at),
            Err(e) => {
                detail
                    .error
                    .get_or_insert(format!("cannot read events: {}", said(e)));
                b.version.recorded_at
            }
        }
    }

    /// The seq of the event (the evidence item, if `evidence_only`) `id`; a
    /// failure is kept for the status line.
    fn event_seq(&self, id: &str, evidence_only: bool) -> Option<i64> {
        let mut detail = self.detail();
        let found = detail.store.seq_of(id, evidence_only);
        match found {
            Ok(seq) => seq,
            Err(e) => {
                detail
                    .error
                    .get_or_insert(format!("cannot read events: {}", said(e)));
                None
            }
        }
    }

    /// How many events the log holds.
    pub fn mark_count(&self) -> usize {
        self.index.marks.len()
    }

    /// How many versions the store holds.
    pub fn version_count(&self) -> usize {
        self.index.versions.len()
    }

    /// First and last recorded instants, if the log has events.
    pub fn span(&self) -> Option<(Micros, Micros)> {
        let marks = &self.index.marks;
        Some((marks.first()?.recorded_at, marks.last()?.recorded_at))
    }

    /// The key of the version at position `i`.
    pub fn key(&self, i: usize) -> &VersionKey {
        &self.index.versions[i]
    }

    /// Positions of the versions held at `at`, in reading order: topic and
    /// agent in header order, then `valid_from`, `recorded_at`, id.
    pub fn held(&self, at: Micros) -> Vec<usize> {
        let mut out: Vec<usize> = self
            .index
            .held(at)
            .into_iter()
            .map(|i| i as usize)
            .collect();
        out.sort_unstable_by_key(|&i| self.reading_key(i));
        out
    }

    fn reading_key(&self, i: usize) -> (u32, u32, Micros, Micros, u64) {
        let v = &self.index.versions[i];
        (v.topic, v.agent, v.valid_from, v.recorded_at, v.id)
    }

    /// The header positions of a version's topic and agent.
    pub fn topic_agent(&self, i: usize) -> (usize, usize) {
        let v = &self.index.versions[i];
        (v.topic as usize, v.agent as usize)
    }

    /// A version's agent id ("" when it is not in the header).
    pub fn agent_of(&self, i: usize) -> &str {
        self.header
            .agents
            .get(self.index.versions[i].agent as usize)
            .map_or("", |a| a.id.as_str())
    }

    /// A version's claim.
    pub fn claim_of(&self, i: usize) -> &str {
        self.claim_text(self.index.versions[i].claim)
    }

    /// A version's claim code (see [`Timeline::claim_text`]).
    pub fn claim_code_of(&self, i: usize) -> u32 {
        self.index.versions[i].claim
    }

    /// The text of a claim code.
    pub fn claim_text(&self, code: u32) -> &str {
        self.index
            .claims
            .get(code as usize)
            .map_or("", String::as_str)
    }

    /// Positions of the versions closed at exactly `at`, in reading order.
    pub fn closed_at(&self, at: Micros) -> Vec<usize> {
        let key = |&i: &u32| self.index.versions[i as usize].superseded_at;
        let list = &self.index.by_superseded;
        let from = list.partition_point(|i| key(i) < at);
        let to = list.partition_point(|i| key(i) <= at);
        let mut out: Vec<usize> = list[from..to].iter().map(|&i| i as usize).collect();
        out.sort_unstable_by_key(|&i| self.reading_key(i));
        out
    }

    /// The version at position `i`, read from the store the first time.
    pub fn belief(&self, i: usize) -> Arc<Belief> {
        self.beliefs(&[i]).pop().unwrap_or_else(|| self.stand_in(i))
    }

    /// The version at position `i` if it has been read (never reads: for drawing).
    pub fn cached_belief(&self, i: usize) -> Option<Arc<Belief>> {
        self.detail().beliefs.get(i)
    }

    /// The versions at `positions`, in that order, reading the ones not yet
    /// read in batches.
    pub fn beliefs(&self, positions: &[usize]) -> Vec<Arc<Belief>> {
        let mut detail = self.detail();
        let missing = detail.beliefs.missing(positions, self.index.versions.len());
        if let Err(e) = self.read_beliefs(&mut detail, &missing) {
            detail
                .error
                .get_or_insert(format!("cannot read versions: {}", said(e)));
        }
        positions
            .iter()
            .map(|&i| detail.beliefs.get(i).unwrap_or_else(|| self.stand_in(i)))
            .collect()
    }

    fn read_beliefs(&self, detail: &mut Detail, positions: &[usize]) -> Result<(), StoreError> {
        let by_id: HashMap<u64, u32> = positions
            .iter()
            .map(|&i| (self.index.versions[i].id, i as u32))
            .collect();
        let ids: Vec<i64> = by_id.keys().map(|&id| id as i64).collect();
        let Detail {
            store,
            beliefs,
            decoder,
            ..
        } = detail;
        for (version, supported_by) in store.versions_with_ids(&ids, decoder)? {
            if let Some(&p) = by_id.get(&version.id) {
                beliefs.insert(
                    p,
                    Belief {
                        version,
                        supported_by,
                    },
                );
            }
        }
        Ok(())
    }

    /// What a row that could not be read shows: its key, and the failure.
    fn stand_in(&self, i: usize) -> Arc<Belief> {
        let k = self.index.versions.get(i).copied().unwrap_or(VersionKey {
            id: 0,
            recorded_at: 0,
            superseded_at: OPEN,
            valid_from: 0,
            topic: NONE,
            agent: NONE,
            claim: NONE,
        });
        let topic = self
            .header
            .topics
            .get(k.topic as usize)
            .map_or("", |t| t.id.as_str());
        let unreadable: Name = "(unreadable)".into();
        Arc::new(Belief {
            version: Version {
                id: k.id,
                agent: self.agent_of_key(&k).into(),
                topic: topic.into(),
                claim: self.claim_text(k.claim).into(),
                confidence: 0.0,
                valid: Interval {
                    from: k.valid_from,
                    to: OPEN,
                },
                recorded_at: k.recorded_at,
                superseded_at: k.superseded_at,
                assertion: unreadable,
                origin: Origin::Asserted,
                created_by: 0,
                closed: None,
                clipped_by: None,
                requested_valid_to: OPEN,
                supported_at: k.recorded_at,
                reconfirmed: Vec::new(),
            },
            supported_by: Vec::new().into(),
        })
    }

    fn agent_of_key(&self, k: &VersionKey) -> &str {
        self.header
            .agents
            .get(k.agent as usize)
            .map_or("", |a| a.id.as_str())
    }

    /// The version with this id, if the store holds it.
    pub fn belief_by_id(&self, id: u64) -> Option<Arc<Belief>> {
        let p = self
            .index
            .versions
            .binary_search_by_key(&id, |v| v.id)
            .ok()?;
        Some(self.belief(p))
    }

    /// The same answer as `query::believed` (SQL), in reading order.
    pub fn believed(&self, at: Micros, about: Option<Micros>, filter: &Filter) -> Vec<Arc<Belief>> {
        let Some(agent) = self.agent_filter(filter.agent.as_deref()) else {
            return Vec::new();
        };
        let positions: Vec<usize> = match &filter.topic {
            // One topic: scan only its versions recorded so far.
            Some(topic) => {
                let Some(t) = self.header.topic_position(topic) else {
                    return Vec::new();
                };
                let list = &self.lists.by_topic[t];
                let key = |i: u32| &self.index.versions[i as usize];
                let upto = list.partition_point(|&i| key(i).recorded_at <= at);
                let mut found: Vec<usize> = list[..upto]
                    .iter()
                    .filter(|&&i| key(i).held_at(at))
                    .map(|&i| i as usize)
                    .collect();
                found.sort_unstable_by_key(|&i| self.reading_key(i));
                found
            }
            None => self.held(at),
        };
        let positions: Vec<usize> = positions
            .into_iter()
            .filter(|&i| agent.is_none_or(|a| self.index.versions[i].agent == a))
            .filter(|&i| about.is_none_or(|t| self.index.versions[i].valid_from <= t))
            .collect();
        self.beliefs(&positions)
            .into_iter()
            .filter(|b| about.is_none_or(|t| b.version.valid.contains(t)))
            .collect()
    }

    /// Positions of one topic's versions (all agents), ordered by `recorded_at`.
    pub fn topic_positions(&self, topic: usize) -> &[u32] {
        self.lists.by_topic.get(topic).map_or(&[], Vec::as_slice)
    }

    /// Every version of one topic (all agents, or one), ordered by `recorded_at`.
    pub fn topic_versions(&self, topic: usize, agent: Option<&str>) -> Vec<Arc<Belief>> {
        let positions: Vec<usize> = self
            .topic_positions(topic)
            .iter()
            .map(|&i| i as usize)
            .filter(|&i| agent.is_none_or(|a| self.agent_of(i) == a))
            .collect();
        self.beliefs(&positions)
    }

    /// `answer(agent, topic, at)`: the claim of the held version with the greatest
    /// `valid_from` (ties: the later `recorded_at`).
    pub fn answer(&self, agent: &str, topic: &str, at: Micros) -> Option<String> {
        let filter = Filter {
            agent: Some(agent.to_owned()),
            topic: Some(topic.to_owned()),
        };
        self.believed(at, None, &filter)
            .into_iter()
            .max_by_key(|b| (b.version.valid.from, b.version.recorded_at, b.version.id))
            .map(|b| b.version.claim.to_string())
    }

    /// How many marks (in recorded order) are recorded before `t`, or at
    /// or before it with `inclusive`.
    fn marks_before(&self, t: Micros, inclusive: bool) -> usize {
        self.index
            .marks
            .partition_point(|m| m.recorded_at < t || inclusive && m.recorded_at == t)
    }

    /// The first event instant strictly after `t`.
    pub fn next_event(&self, t: Micros) -> Option<Micros> {
        let i = self.marks_before(t, true);
        self.index.marks.get(i).map(|m| m.recorded_at)
    }

    /// The last event instant strictly before `t`.
    pub fn prev_event(&self, t: Micros) -> Option<Micros> {
        let i = self.marks_before(t, false).checked_sub(1)?;
        Some(self.index.marks[i].recorded_at)
    }

    /// How many events are recorded at or before `t`.
    pub fn events_upto(&self, t: Micros) -> usize {
        self.marks_before(t, true)
    }

    /// The marks recorded at exactly `t`.
    pub fn marks_at(&self, t: Micros) -> Vec<Arc<Mark>> {
        self.marks((self.marks_before(t, false)..self.marks_before(t, true)).collect())
    }

    /// The marks of the last event instant at or before `t` (what "just happened").
    pub fn latest_marks(&self, t: Micros) -> Vec<Arc<Mark>> {
        match self.marks_before(t, true).checked_sub(1) {
            Some(last) => self.marks_at(self.index.marks[last].recorded_at),
            None => Vec::new(),
        }
    }

    /// The marks of one topic, of one agent's events (`None`: every agent's),
    /// in recorded order; `keep` chooses by the mark's key first.
    pub fn topic_marks(
        &self,
        topic: usize,
        agent: Option<&str>,
        keep: impl Fn(&MarkKey) -> bool,
    ) -> Vec<Arc<Mark>> {
        let Some(agent) = self.agent_filter(agent) else {
            return Vec::new();
        };
        let positions = self
            .index
            .marks
            .iter()
            .enumerate()
            .filter(|(_, m)| m.topic as usize == topic && m.topic != NONE)
            .filter(|(_, m)| agent.is_none_or(|a| m.agent == a))
            .filter(|(_, m)| keep(m))
            .map(|(p, _)| p)
            .collect();
        self.marks(positions)
    }

    /// The event with this id, if the log has one.
    pub fn mark_by_id(&self, id: &str) -> Option<Arc<Mark>> {
        let seq = self.event_seq(id, false)?;
        let p = self.mark_of(seq)?;
        self.marks(vec![p]).pop()
    }

    /// The marks at `positions`, reading the ones not yet read.
    fn marks(&self, positions: Vec<usize>) -> Vec<Arc<Mark>> {
        let mut detail = self.detail();
        let missing = detail.marks.missing(&positions, self.index.marks.len());
        if let Err(e) = self.read_marks(&mut detail, &missing) {
            detail
                .error
                .get_or_insert(format!("cannot read events: {}", said(e)));
        }
        positions
            .iter()
            .filter_map(|&p| detail.marks.get(p))
            .collect()
    }

    fn read_marks(&self, detail: &mut Detail, positions: &[usize]) -> Result<(), StoreError> {
        let seqs: Vec<i64> = positions
            .iter()
            .map(|&p| self.index.marks[p].seq as i64)
            .collect();
        let Detail {
            store,
            marks: cache,
            names,
            ..
        } = detail;
        for row in store.mark_rows(&seqs, names)? {
            let Some(p) = self.mark_of(row.seq) else {
                continue;
            };
            let p = p as u32;
            let Some(key) = self.index.marks.get(p as usize) else {
                continue;
            };
            // A retraction of an assertion takes that assertion's topic.
            let header_topic = self.header.topics.get(key.topic as usize);
            let topic = match row.topic {
                Some(t) => Some(t),
                None => header_topic.map(|t| Name::from(t.id.as_str())),
            };
            let (agent, claim, cites) = match key.kind {
                MarkKind::Verification => {
                    let cites: Cited = row.verifies.into_iter().map(Name::from).collect();
                    (row.source, row.state, cites)
                }
                _ => (
                    row.agent,
                    row.claim,
                    row.cites.into_iter().map(Name::from).collect(),
                ),
            };
            cache.insert(
                p,
                Mark {
                    seq: row.seq as u64,
                    id: row.id,
                    kind: key.kind,
                    recorded_at: key.recorded_at,
                    agent,
                    topic,
                    claim,
                    cites,
                    effect: key.effect,
                    covering: row.covering,
                },
            );
        }
        Ok(())
    }

    /// How many marks of `kind` fall in `[from, to)`.
    pub fn count(&self, kind: MarkKind, from: Micros, to: Micros) -> usize {
        let times = &self.lists.times[kind.index()];
        times.partition_point(|&x| x < to) - times.partition_point(|&x| x < from)
    }

    /// How many evidence items the log holds.
    pub fn evidence_count(&self) -> usize {
        self.lists.evidence.len()
    }

    /// How many evidence items are recorded at or before `t`.
    pub fn evidence_known(&self, t: Micros) -> usize {
        self.evidence_times().partition_point(|&x| x <= t)
    }

    /// When evidence item `i` (recorded order) was recorded.
    pub fn evidence_recorded(&self, i: usize) -> Micros {
        self.evidence_times()[i]
    }

    /// Every evidence item's recorded instant, in list order.
    fn evidence_times(&self) -> &[Micros] {
        &self.lists.times[MarkKind::Evidence.index()]
    }

    /// Display widths of evidence item `i`'s columns.
    pub fn evidence_widths(&self, i: usize) -> EvidenceWidths {
        self.index.evidence.get(i).copied().unwrap_or_default()
    }

    /// Evidence item `i` (recorded order), read from the store the first time.
    pub fn evidence_item(&self, i: usize) -> Arc<EvidenceItem> {
        self.evidence_items(&[i])
            .pop()
            .unwrap_or_else(|| Arc::new(self.evidence_stand_in(i)))
    }

    /// Evidence item `i` if it has been read (never reads: for drawing).
    pub fn cached_evidence(&self, i: usize) -> Option<Arc<EvidenceItem>> {
        self.detail().evidence.get(i)
    }

    /// Evidence items at `positions` (recorded order), in that order.
    pub fn evidence_items(&self, positions: &[usize]) -> Vec<Arc<EvidenceItem>> {
        let mut detail = self.detail();
        let missing = detail
            .evidence
            .missing(positions, self.lists.evidence.len());
        let seqs: Vec<i64> = missing
            .iter()
            .map(|&i| self.index.marks[self.lists.evidence[i] as usize].seq as i64)
            .collect();
        let at: HashMap<i64, u32> = seqs
            .iter()
            .zip(&missing)
            .map(|(&s, &i)| (s, i as u32))
            .collect();
        match detail.store.evidence_items_at(&seqs) {
            Ok(items) => {
                for item in items {
                    if let Some(&i) = at.get(&(item.seq as i64)) {
                        detail.evidence.insert(i, item);
                    }
                }
            }
            Err(e) => {
                detail
                    .error
                    .get_or_insert(format!("cannot read evidence: {}", said(e)));
            }
        }
        positions
            .iter()
            .map(|&i| {
                detail
                    .evidence
                    .get(i)
                    .unwrap_or_else(|| Arc::new(self.evidence_stand_in(i)))
            })
            .collect()
    }

    fn evidence_stand_in(&self, i: usize) -> EvidenceItem {
        let recorded_at = self.evidence_times().get(i).copied().unwrap_or(0);
        EvidenceItem {
            seq: 0,
            evidence: Evidence {
                id: "(unreadable)".into(),
                kind: String::new(),
                source: String::new(),
                locator: String::new(),
                observed_at: recorded_at,
                observed_until: None,
                recorded_at,
                reliability: 0.0,
                summary: String::new(),
                content: None,
            },
            cited_by: Vec::new(),
            cited_at: Vec::new(),
        }
    }

    /// The evidence item with this id, if the log has one, and its position.
    pub fn evidence_by_id(&self, id: &str) -> Option<(usize, Arc<EvidenceItem>)> {
        let seq = self.event_seq(id, true)?;
        let p = self.mark_of(seq)? as u32;
        let i = self.lists.evidence.binary_search(&p).ok()?;
        Some((i, self.evidence_item(i)))
    }

    /// Positions (recorded order) of the evidence items whose id, kind,
    /// source, summary or citing ids contain `needle` (already lower-case):
    /// what a filter typed in the evidence panel shows. The first filter reads
    /// every item's searchable text once (docs/performance-log.md has its cost at
    /// scale); each keystroke after it scans that text.
    pub fn evidence_matching(&self, needle: &str) -> Vec<usize> {
        let mut detail = self.detail();
        if detail.search.is_none() {
            match super::evidence(&detail.store) {
                Ok(all) => {
                    let texts = all
                        .iter()
                        .map(|item| {
                            let e = &item.evidence;
                            let mut fields = vec![&e.id, &e.kind, &e.source, &e.summary];
                            fields.extend(&item.cited_by);
                            let joined: Vec<&str> = fields.iter().map(|s| s.as_str()).collect();
                            joined.join("\u{1f}").to_lowercase().into_boxed_str()
                        })
                        .collect();
                    detail.search = Some(texts);
                }
                Err(e) => {
                    detail
                        .error
                        .get_or_insert(format!("cannot read evidence: {}", said(e)));
                    return Vec::new();
                }
            }
        }
        detail.search.as_ref().map_or_else(Vec::new, |texts| {
            texts
                .iter()
                .enumerate()
                .filter(|(_, t)| t.contains(needle))
                .map(|(i, _)| i)
                .collect()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A live screen's lists carried on from those of an index whose marks
    /// before a place are this one's are the lists made afresh, whatever
    /// follows that place: marks cut, marks added, marks written again with
    /// other kinds and other seqs (some below the seqs kept).
    #[test]
    fn lists_carried_on_from_the_marks_kept_are_the_lists_made_afresh() {
        let store = crate::testing::store_of(asof_synth::GenConfig {
            events: 600,
            topics: 5,
            agents: 2,
            seed: 4,
        });
        let header = store.header().clone();
        let old = store.scrub_index().expect("read").expect("decodes");
        let lists = Lists::of(&header, &old, None);
        let n = old.marks.len();
        let top = old.marks.iter().map(|m| m.seq).max().unwrap_or(0);
        for from in [0, 1, n / 3, n / 2, n - 1, n] {
            let cut = old.marks[..from + (n - from) / 2].to_vec();
            let mut grown = old.marks.clone();
            grown.extend((1..=40).map(|i| MarkKey {
                seq: top + i,
                ..old.marks[i as usize % n]
            }));
            let mut rewritten = old.marks[..from].to_vec();
            rewritten.extend(old.marks[from..].iter().enumerate().map(|(i, m)| MarkKey {
                // Half of them moved past every seq, the rest kept.
                seq: if i % 2 == 0 {
                    top + 100 + i as u64
                } else {
                    m.seq
                },
                kind: MarkKind::ALL[(m.kind.index() + 1) % 5],
                ..*m
            }));
            for (what, marks) in [("cut", cut), ("grown", grown), ("rewritten", rewritten)] {
                let index = ScrubIndex {
                    marks,
                    ..old.clone()
                };
                assert_eq!(
                    Lists::of(&header, &index, Some((&lists, &old, from))),
                    Lists::of(&header, &index, None),
                    "{what} from {from}"
                );
            }
        }
    }
}
