//! The SQL behind the answers of [`crate::query`] (design.md §3): beliefs held
//! at a recorded time, a topic's versions and notes, the versions created and
//! closed in a window, an agent's answer, evidence items, and the rows the
//! scrubbing [`crate::query::timeline::Timeline`] reads on demand. The answer
//! types are defined here, where their rows are read; [`crate::query`] names
//! them for its callers.

use super::{
    Store,
    read::{Decoder, VERSION_COLUMNS, VersionRow},
};
use crate::store::codec::split;
use asof_core::engine::EffectKind;
use asof_core::model::{
    Assumed, Cited, EventKind, Evidence, Name, Names, Verification, VerifyState, Version,
};
use asof_core::time::{Micros, OPEN};
use rusqlite::{OptionalExtension, params_from_iter, types::Value};

/// A version with the evidence its assertion cited.
#[derive(Debug, Clone, PartialEq)]
pub struct Belief {
    /// The version.
    pub version: Version,
    /// The evidence its assertion cited.
    pub supported_by: Cited,
}

/// Restricts a query to one agent and/or one topic.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// Only this agent's, when set.
    pub agent: Option<String>,
    /// Only this topic's, when set.
    pub topic: Option<String>,
}

/// An event listed beside the versions in a history: one that changed no version.
#[derive(Debug, Clone, PartialEq)]
pub struct Note {
    /// The event's seq.
    pub seq: u64,
    /// The event's id.
    pub event: String,
    /// `reconfirmed`, `zero_width` or `no_match`.
    pub effect: EffectKind,
    /// When it was recorded.
    pub recorded_at: Micros,
    /// Its agent.
    pub agent: String,
    /// Its claim (a reconfirmation's), when it has one.
    pub claim: Option<String>,
    /// The evidence it cites.
    pub cites: Vec<String>,
    /// For reconfirmations: the versions that covered the assertion.
    pub versions: Vec<u64>,
}

/// One evidence item with the events that cite it.
#[derive(Debug, Clone, PartialEq)]
pub struct EvidenceItem {
    /// The evidence event's seq.
    pub seq: u64,
    /// The item.
    pub evidence: Evidence,
    /// The events citing the item, in replay order (recorded time, then seq).
    pub cited_by: Vec<String>,
    /// When each of `cited_by` was recorded (so, ascending).
    pub cited_at: Vec<Micros>,
}

impl EvidenceItem {
    /// The events citing the item that were recorded by `at`: what an answer
    /// as of `at` may say cites it.
    pub fn cited_by_at(&self, at: Micros) -> &[String] {
        let known = self.cited_at.partition_point(|&t| t <= at);
        &self.cited_by[..known.min(self.cited_by.len())]
    }
}

/// An event's row as the timeline shows it: its names interned, its
/// citations and (for a reconfirmation) covering versions gathered.
pub(crate) struct MarkRow {
    pub seq: i64,
    pub id: String,
    pub agent: Option<Name>,
    pub topic: Option<Name>,
    pub claim: Option<Name>,
    /// A verification's source, the evidence it judges and its state.
    pub source: Option<Name>,
    pub verifies: Option<String>,
    pub state: Option<Name>,
    pub cites: Vec<String>,
    pub covering: Vec<u64>,
}

/// Ids per `IN (...)` list when rows are read by the batch.
const BATCH: usize = 400;

/// `?,?,…` for `n` parameters.
fn placeholders(n: usize) -> String {
    let mut s = "?,".repeat(n);
    s.pop();
    s
}

/// Versions found by one range of each lifespan's part of the versions table
/// (see its schema): `closed` bounds the rows of lifespans 1–63 (`s.k`), whose
/// `superseded_at` is known; `open`, if given, those of lifespan 64, still held.
/// Each branch ends in `{extra}`, where [`select_beliefs`] adds its clauses.
fn by_lifespan(closed: &str, open: Option<&str>) -> String {
    let mut sql = format!(
        "WITH RECURSIVE lifespans(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM lifespans WHERE k < 63)
         SELECT {{columns}} FROM lifespans s JOIN versions v ON v.lifespan = s.k AND {closed}{{extra}}"
    );
    if let Some(open) = open {
        sql.push_str(&format!(
            " UNION ALL SELECT {{columns}} FROM versions v
               WHERE v.lifespan = 64 AND v.superseded_at = {OPEN} AND {open}{{extra}}"
        ));
    }
    sql
}

/// A version of lifespan `s.k` recorded at or before `?N` was closed before
/// `?N + 2^k` (it was held less than 2^k µs).
fn closed_before(n: u8) -> String {
    format!("v.superseded_at <= min(?{n} + (1 << s.k), {OPEN})")
}

/// The versions held at recorded time `?1`, whatever their topic.
fn held_at() -> String {
    by_lifespan(
        &format!(
            "v.superseded_at > ?1 AND {} AND v.recorded_at <= ?1",
            closed_before(1)
        ),
        Some("v.recorded_at <= ?1"),
    )
}

/// Selects beliefs with `from` (a `SELECT {columns} FROM …` query whose
/// branches end in a condition and `{extra}`) narrowed by `extra` clauses.
fn select_beliefs(from: &str, extra: &[String]) -> String {
    let extra: String = extra.iter().map(|c| format!(" AND {c}")).collect();
    from.replace("{columns}", VERSION_COLUMNS)
        .replace("{extra}", &extra)
}

/// The versions of one topic (the filter names it), narrowed inside the
/// covering topic index before any row is read: on a `WITHOUT ROWID` table
/// SQLite reads the row of every index entry in range before testing the rest
/// of the filter, so the keys are chosen from the index first (one topic's
/// range holds every agent's versions over all time; a few are wanted).
const OF_TOPIC: &str = "SELECT {columns} FROM
    (SELECT v.lifespan, v.superseded_at, v.recorded_at, v.id FROM versions v WHERE 1{extra}) k
    JOIN versions v ON v.lifespan = k.lifespan AND v.superseded_at = k.superseded_at
      AND v.recorded_at = k.recorded_at AND v.id = k.id";

/// Runs a belief query. Agents, topics and claims are shared names (a few
/// thousand of them name a million versions); event ids are copied.
fn run(store: &Store, sql: &str, args: Vec<Value>) -> rusqlite::Result<Vec<Belief>> {
    let (rows, bytes) = read_rows(store, sql, args)?;
    decode_rows(store, &rows, &bytes)
}

/// A belief query's rows, undecoded (their packed fields in the buffer).
fn read_rows(
    store: &Store,
    sql: &str,
    args: Vec<Value>,
) -> rusqlite::Result<(Vec<VersionRow>, Vec<u8>)> {
    let mut stmt = store.connection().prepare_cached(sql)?;
    let mut rows = stmt.query(params_from_iter(args))?;
    let (mut read, mut bytes) = (Vec::new(), Vec::new());
    while let Some(r) = rows.next()? {
        read.push(VersionRow::read(r, &mut bytes)?);
    }
    Ok((read, bytes))
}

/// Answers of at least this many rows are decoded on two threads.
const TWO_THREADS: usize = 8192;

/// Rows of [`read_rows`] as beliefs, in their order.
///
/// Building an owned belief per row is most of a long answer's time (all
/// topics at 1M events: ~35,000 of them), so a long answer is decoded in two
/// halves on two threads where the machine has two cores. The claims the
/// rows name are looked up first, on the connection's thread.
fn decode_rows(store: &Store, rows: &[VersionRow], bytes: &[u8]) -> rusqlite::Result<Vec<Belief>> {
    decode_rows_from(store, rows, bytes, TWO_THREADS)
}

/// [`decode_rows`] on two threads from `two_threads` rows on.
fn decode_rows_from(
    store: &Store,
    rows: &[VersionRow],
    bytes: &[u8],
    two_threads: usize,
) -> rusqlite::Result<Vec<Belief>> {
    let mut decoder = store.decoder(false);
    decoder.resolve_claims(store.connection(), rows.iter().map(|r| r.claim))?;
    let decode = |rows: &[VersionRow], d: &mut Decoder, capacity: usize| {
        let mut beliefs = Vec::with_capacity(capacity);
        for row in rows {
            let (version, supported_by) = row.decode_known(bytes, d)?;
            beliefs.push(Belief {
                version,
                supported_by,
            });
        }
        Ok::<_, rusqlite::Error>(beliefs)
    };
    let two = rows.len() >= two_threads
        && std::thread::available_parallelism().is_ok_and(|n| n.get() >= 2);
    if !two {
        return decode(rows, &mut decoder, rows.len());
    }
    let mut other = decoder.sibling();
    let (first, second) = rows.split_at(rows.len() / 2);
    let (beliefs, rest) = std::thread::scope(|s| {
        let rest = s.spawn(|| decode(second, &mut other, second.len()));
        let beliefs = decode(first, &mut decoder, rows.len());
        let rest = rest
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (beliefs, rest)
    });
    let mut beliefs = beliefs?;
    beliefs.extend(rest?);
    Ok(beliefs)
}

/// Adds `filter`'s clauses, with numbered parameters (a clause may appear in
/// more than one branch of a query).
fn push_filter(store: &Store, filter: &Filter, clauses: &mut Vec<String>, args: &mut Vec<Value>) {
    // Rows name agents and topics by header position; an unknown id matches none.
    if let Some(agent) = &filter.agent {
        args.push(Value::Integer(store.agent_code(agent)));
        clauses.push(format!("v.agent = ?{}", args.len()));
    }
    if let Some(topic) = &filter.topic {
        args.push(Value::Integer(store.topic_code(topic)));
        clauses.push(format!("v.topic = ?{}", args.len()));
    }
}

/// Orders rows as people read them: topics and agents in dataset order (the
/// rows code them by header position), then valid time, recorded time, id.
///
/// A long answer holds a few rows per (topic, agent) pair, so the rows are
/// counted into their pairs first (one pass, no comparisons) and only each
/// pair's few are compared; a row coded outside the header (a damaged store,
/// refused when decoded) sends all of them through one comparison sort.
fn sort_for_reading(rows: Vec<VersionRow>, topics: usize, agents: usize) -> Vec<VersionRow> {
    let by_time = |r: &VersionRow| (r.valid_from, r.recorded_at, r.id);
    let pair = |r: &VersionRow| {
        let (t, a) = (
            usize::try_from(r.topic).ok()?,
            usize::try_from(r.agent).ok()?,
        );
        (t < topics && a < agents).then_some(t * agents + a)
    };
    let pairs = topics.saturating_mul(agents);
    if rows.len() < 64
        || pairs > rows.len().saturating_mul(4)
        || rows.iter().any(|r| pair(r).is_none())
    {
        let mut rows = rows;
        rows.sort_unstable_by_key(|r| (r.topic, r.agent, by_time(r)));
        return rows;
    }
    // starts[p]: where pair p's rows begin in the sorted answer.
    let mut starts = vec![0usize; pairs + 1];
    for r in &rows {
        starts[pair(r).unwrap_or(0) + 1] += 1;
    }
    for p in 0..pairs {
        starts[p + 1] += starts[p];
    }
    let mut next = starts.clone();
    let mut sorted = rows.clone();
    for r in rows {
        let p = pair(&r).unwrap_or(0);
        sorted[next[p]] = r;
        next[p] += 1;
    }
    for w in starts.windows(2) {
        sorted[w[0]..w[1]].sort_unstable_by_key(by_time);
    }
    sorted
}

/// The beliefs `from` selects (`?1`: the recorded time `at`) narrowed by
/// `clauses`, the valid time `about` and `filter`, in reading order.
fn beliefs_where(
    store: &Store,
    from: &str,
    mut clauses: Vec<String>,
    at: Micros,
    about: Option<Micros>,
    filter: &Filter,
) -> rusqlite::Result<Vec<Belief>> {
    let mut args = vec![Value::Integer(at)];
    if let Some(t) = about {
        args.push(Value::Integer(t));
        let n = args.len();
        clauses.extend([
            format!("v.valid_from <= ?{n}"),
            format!("v.valid_to > ?{n}"),
        ]);
    }
    push_filter(store, filter, &mut clauses, &mut args);
    let (rows, bytes) = read_rows(store, &select_beliefs(from, &clauses), args)?;
    decode_for_reading(store, rows, &bytes)
}

/// Rows of an answer as beliefs, in reading order.
fn decode_for_reading(
    store: &Store,
    rows: Vec<VersionRow>,
    bytes: &[u8],
) -> rusqlite::Result<Vec<Belief>> {
    let header = store.header();
    let rows = sort_for_reading(rows, header.topics.len(), header.agents.len());
    decode_rows(store, &rows, bytes)
}

/// The evidence items matching an SQL `condition` over `events e` (with
/// numbered parameters `args`), in recorded order.
fn evidence_where(
    store: &Store,
    condition: &str,
    args: &[i64],
) -> rusqlite::Result<Vec<EvidenceItem>> {
    let mut stmt = store.connection().prepare_cached(&format!(
        "SELECT e.seq, e.id, e.evidence_kind, e.source, e.locator, e.observed_at, e.observed_until,
                e.recorded_at, e.reliability, e.text,
                (SELECT group_concat(x.id, char(31) ORDER BY x.recorded_at, x.seq)
                   FROM citations c JOIN events x ON x.seq = c.seq WHERE c.evidence = e.id),
                (SELECT w.text FROM contents w WHERE w.seq = e.seq),
                (SELECT group_concat(x.recorded_at, ',' ORDER BY x.recorded_at, x.seq)
                   FROM citations c JOIN events x ON x.seq = c.seq WHERE c.evidence = e.id)
         FROM events e WHERE e.kind = '{}' AND ({condition}) ORDER BY e.recorded_at, e.seq",
        EventKind::Evidence.as_str()
    ))?;
    let rows = stmt.query_map(params_from_iter(args), |r| {
        Ok(EvidenceItem {
            seq: r.get::<_, i64>(0)? as u64,
            evidence: Evidence {
                id: r.get(1)?,
                kind: r.get(2)?,
                source: r.get(3)?,
                locator: r.get(4)?,
                observed_at: r.get(5)?,
                observed_until: r.get(6)?,
                recorded_at: r.get(7)?,
                reliability: r.get(8)?,
                summary: r.get(9)?,
                content: r.get(11)?,
            },
            cited_by: split(r.get(10)?),
            cited_at: r
                .get::<_, Option<String>>(12)?
                .map(|s| s.split(',').filter_map(|x| x.parse().ok()).collect())
                .unwrap_or_default(),
        })
    })?;
    rows.collect()
}

impl Store {
    /// A trace's model calls from the `model_calls` table, in order; `None`
    /// when the store has none there (a store made before the table, or not
    /// from a trace).
    pub(crate) fn model_call_rows(
        &self,
    ) -> super::Result<Option<Vec<asof_core::model::ModelCall>>> {
        let calls = super::read::model_call_rows(self.connection())?;
        if calls.is_empty() {
            return Ok(None);
        }
        // A row that does not read is damage, said, never a call left out.
        let calls = calls
            .iter()
            .map(|(_, c)| {
                serde_json::from_str(c).map_err(|e| {
                    rusqlite::Error::FromSqlConversionFailure(
                        1,
                        rusqlite::types::Type::Text,
                        Box::new(e),
                    )
                })
            })
            .collect::<rusqlite::Result<_>>()?;
        Ok(Some(calls))
    }

    /// The beliefs held at recorded time `at` (and, with `about`, valid then)
    /// that `filter` admits, in reading order: one topic's from its covering
    /// index, all topics' from the version pages (a short run of them per
    /// lifespan, see [`super::pages`]).
    pub(crate) fn beliefs_held(
        &self,
        at: Micros,
        about: Option<Micros>,
        filter: &Filter,
    ) -> super::Result<Vec<Belief>> {
        if filter.topic.is_none() {
            let agent = filter.agent.as_deref().map(|a| self.agent_code(a));
            let (rows, bytes) = self.held_at(at, about, agent)?;
            return Ok(decode_for_reading(self, rows, &bytes)?);
        }
        let held = vec![
            "v.recorded_at <= ?1".to_owned(),
            "v.superseded_at > ?1".to_owned(),
        ];
        Ok(beliefs_where(self, OF_TOPIC, held, at, about, filter)?)
    }

    /// [`Store::beliefs_held`] read from the version rows, one range per
    /// lifespan, instead of the version pages.
    pub(crate) fn beliefs_held_by_rows(
        &self,
        at: Micros,
        about: Option<Micros>,
        filter: &Filter,
    ) -> super::Result<Vec<Belief>> {
        Ok(beliefs_where(
            self,
            &held_at(),
            Vec::new(),
            at,
            about,
            filter,
        )?)
    }

    /// Every version of the topic `filter` names (and of its agent, if it
    /// names one), unordered.
    pub(crate) fn topic_versions(&self, filter: &Filter) -> super::Result<Vec<Belief>> {
        let mut clauses = Vec::new();
        let mut args = Vec::new();
        push_filter(self, filter, &mut clauses, &mut args);
        Ok(run(self, &select_beliefs(OF_TOPIC, &clauses), args)?)
    }

    /// The events of `topic` (and `agent`, if given) that changed no version
    /// — reconfirmations, zero-width and unmatched events — in recorded order.
    pub(crate) fn notes_of(&self, topic: &str, agent: Option<&str>) -> super::Result<Vec<Note>> {
        let mut stmt = self.connection().prepare_cached(
            "SELECT o.seq, e.id, o.effect, e.recorded_at, e.agent, e.claim,
                (SELECT group_concat(c.evidence, char(31)) FROM citations c WHERE c.seq = e.seq),
                (SELECT group_concat(r.version, ',') FROM reconfirmations r WHERE r.seq = e.seq)
             FROM outcomes o JOIN events e ON e.seq = o.seq
             WHERE o.effect IN ('reconfirmed', 'zero_width', 'no_match')
               AND COALESCE(e.topic, (SELECT a.topic FROM events a WHERE a.id = e.assertion)) = ?1
               AND (?2 IS NULL OR e.agent = ?2)
             ORDER BY e.recorded_at, o.seq",
        )?;
        let notes = stmt
            .query_map(rusqlite::params![topic, agent], |r| {
                let versions: Option<String> = r.get(7)?;
                Ok(Note {
                    seq: r.get::<_, i64>(0)? as u64,
                    event: r.get(1)?,
                    effect: EffectKind::parse(r.get_ref(2)?.as_str()?),
                    recorded_at: r.get(3)?,
                    agent: r.get::<_, Option<String>>(4)?.unwrap_or_default(),
                    claim: r.get(5)?,
                    cites: split(r.get(6)?),
                    versions: versions
                        .map(|s| s.split(',').filter_map(|x| x.parse().ok()).collect())
                        .unwrap_or_default(),
                })
            })?
            .collect::<rusqlite::Result<_>>()?;
        Ok(notes)
    }

    /// The versions `filter` admits that were recorded in `(after, until]`,
    /// unordered.
    pub(crate) fn created_in(
        &self,
        after: Micros,
        until: Micros,
        filter: &Filter,
    ) -> super::Result<Vec<Belief>> {
        let created_in = "v.recorded_at > ?1 AND v.recorded_at <= ?2";
        let from = by_lifespan(
            &format!(
                "v.superseded_at > ?1 AND {} AND {created_in}",
                closed_before(2)
            ),
            Some(created_in),
        );
        Ok(self.window(&from, after, until, filter)?)
    }

    /// The versions `filter` admits that were closed in `(after, until]`,
    /// unordered.
    pub(crate) fn closed_in(
        &self,
        after: Micros,
        until: Micros,
        filter: &Filter,
    ) -> super::Result<Vec<Belief>> {
        let from = by_lifespan("v.superseded_at > ?1 AND v.superseded_at <= ?2", None);
        Ok(self.window(&from, after, until, filter)?)
    }

    /// The beliefs `from` selects over the recorded window `?1`, `?2`.
    fn window(
        &self,
        from: &str,
        after: Micros,
        until: Micros,
        filter: &Filter,
    ) -> rusqlite::Result<Vec<Belief>> {
        let mut clauses = Vec::new();
        let mut args = vec![Value::Integer(after), Value::Integer(until)];
        push_filter(self, filter, &mut clauses, &mut args);
        run(self, &select_beliefs(from, &clauses), args)
    }

    /// The claim of the version of `agent` and `topic` held at `at` with the
    /// greatest `valid_from` (ties: the later `recorded_at`, then id), or none.
    pub(crate) fn claim_held(
        &self,
        agent: &str,
        topic: &str,
        at: Micros,
    ) -> super::Result<Option<String>> {
        Ok(self
            .connection()
            .prepare_cached(
                "SELECT c.text FROM versions v JOIN claims c ON c.code = v.claim
                 WHERE v.agent = ?1 AND v.topic = ?2 AND v.recorded_at <= ?3 AND v.superseded_at > ?3
                 ORDER BY v.valid_from DESC, v.recorded_at DESC, v.id DESC LIMIT 1",
            )?
            .query_row(
                rusqlite::params![self.agent_code(agent), self.topic_code(topic), at],
                |r| r.get(0),
            )
            .optional()?)
    }

    /// Every evidence item, in recorded order.
    pub(crate) fn evidence_items(&self) -> super::Result<Vec<EvidenceItem>> {
        Ok(evidence_where(self, "1", &[])?)
    }

    /// The evidence items among the events `seqs`, in recorded order (the
    /// timeline's batches: at most a few hundred at a time).
    pub(crate) fn evidence_items_at(&self, seqs: &[i64]) -> super::Result<Vec<EvidenceItem>> {
        let mut items = Vec::new();
        for chunk in seqs.chunks(BATCH) {
            let condition = format!("e.seq IN ({})", placeholders(chunk.len()));
            items.extend(evidence_where(self, &condition, chunk)?);
        }
        Ok(items)
    }

    /// The versions with these ids, with their citations, decoded by
    /// `decoder` (whose names they share), in no particular order.
    pub(crate) fn versions_with_ids(
        &self,
        ids: &[i64],
        decoder: &mut Decoder,
    ) -> super::Result<Vec<(Version, Cited)>> {
        let conn = self.connection();
        let mut read = Vec::with_capacity(ids.len());
        for chunk in ids.chunks(BATCH) {
            let sql = format!(
                "SELECT {VERSION_COLUMNS} FROM versions v WHERE v.id IN ({})",
                placeholders(chunk.len())
            );
            let mut stmt = conn.prepare_cached(&sql)?;
            let mut rows = stmt.query(params_from_iter(chunk))?;
            while let Some(r) = rows.next()? {
                read.push(super::read::read_version(r, conn, decoder)?);
            }
        }
        Ok(read)
    }

    /// The events `seqs` as the timeline shows them, their names interned in
    /// `names`, in no particular order.
    pub(crate) fn mark_rows(&self, seqs: &[i64], names: &mut Names) -> super::Result<Vec<MarkRow>> {
        let conn = self.connection();
        let mut read = Vec::with_capacity(seqs.len());
        for chunk in seqs.chunks(BATCH) {
            let marks = placeholders(chunk.len());
            let mut cites: std::collections::HashMap<i64, Vec<String>> = Default::default();
            let mut stmt = conn.prepare_cached(&format!(
                "SELECT seq, evidence FROM citations WHERE seq IN ({marks}) ORDER BY seq, pos"
            ))?;
            let mut rows = stmt.query(params_from_iter(chunk))?;
            while let Some(r) = rows.next()? {
                cites.entry(r.get(0)?).or_default().push(r.get(1)?);
            }
            let mut covering: std::collections::HashMap<i64, Vec<u64>> = Default::default();
            let mut stmt = conn.prepare_cached(&format!(
                "SELECT seq, version FROM reconfirmations WHERE seq IN ({marks}) ORDER BY seq, version"
            ))?;
            let mut rows = stmt.query(params_from_iter(chunk))?;
            while let Some(r) = rows.next()? {
                covering
                    .entry(r.get(0)?)
                    .or_default()
                    .push(r.get::<_, i64>(1)? as u64);
            }
            let mut stmt = conn.prepare_cached(&format!(
                "SELECT seq, id, agent, topic, claim, source, verifies, state
                 FROM events WHERE seq IN ({marks})"
            ))?;
            let mut rows = stmt.query(params_from_iter(chunk))?;
            while let Some(r) = rows.next()? {
                let seq: i64 = r.get(0)?;
                let mut name = |i: usize| -> rusqlite::Result<Option<Name>> {
                    Ok(r.get_ref(i)?.as_str_or_null()?.map(|s| names.get(s)))
                };
                read.push(MarkRow {
                    seq,
                    id: r.get(1)?,
                    agent: name(2)?,
                    topic: name(3)?,
                    claim: name(4)?,
                    source: name(5)?,
                    verifies: r.get(6)?,
                    state: name(7)?,
                    cites: cites.remove(&seq).unwrap_or_default(),
                    covering: covering.remove(&seq).unwrap_or_default(),
                });
            }
        }
        Ok(read)
    }

    /// The seq of the event `id` (of the evidence item `id`, when
    /// `evidence_only`), if the log has it.
    pub(crate) fn seq_of(&self, id: &str, evidence_only: bool) -> super::Result<Option<i64>> {
        let sql = if evidence_only {
            "SELECT seq FROM events WHERE id = ?1 AND kind = 'evidence'"
        } else {
            "SELECT seq FROM events WHERE id = ?1"
        };
        Ok(self
            .connection()
            .prepare_cached(sql)?
            .query_row([id], |r| r.get(0))
            .optional()?)
    }

    /// When the event `id` was recorded, if the log has it (by the
    /// `events_by_id` index).
    pub(crate) fn recorded_at_of(&self, id: &str) -> super::Result<Option<Micros>> {
        Ok(super::read::recorded_at_of(self.connection(), id)?)
    }

    /// The first and last recorded instants of the log, if it has any events.
    pub(crate) fn recorded_span(&self) -> super::Result<Option<(Micros, Micros)>> {
        Ok(super::read::span(self.connection())?)
    }
    /// The verifications among the events `seqs` names, each with its seq:
    /// of the whole log by the verifications index (what the quality ledger
    /// reads), of a range by seq.
    pub(crate) fn verifications(
        &self,
        seqs: &super::read::Seqs,
    ) -> super::Result<Vec<(u64, Verification)>> {
        const COLUMNS: &str = "SELECT seq, id, verifies, state, source, recorded_at, text";
        let mut read = Vec::new();
        let mut take = |rows: &mut rusqlite::Rows| -> rusqlite::Result<()> {
            while let Some(r) = rows.next()? {
                let state: String = r.get(3)?;
                let Some(state) = VerifyState::parse(&state) else {
                    continue; // the schema's CHECK admits only the six states
                };
                let v = Verification {
                    id: r.get(1)?,
                    evidence: r.get(2)?,
                    state,
                    by: r.get::<_, Option<String>>(4)?.unwrap_or_default(),
                    recorded_at: r.get(5)?,
                    note: r.get(6)?,
                };
                read.push((r.get::<_, i64>(0)? as u64, v));
            }
            Ok(())
        };
        let conn = self.connection();
        if *seqs == super::read::Seqs::all() {
            let mut stmt = conn.prepare_cached(&format!(
                "{COLUMNS} FROM events INDEXED BY events_verifications WHERE kind = 'verify'"
            ))?;
            take(&mut stmt.query([])?)?;
        } else {
            seqs.each_range(|low, high| {
                let mut stmt = conn.prepare_cached(&format!(
                    "{COLUMNS} FROM events WHERE seq BETWEEN ?1 AND ?2 AND kind = 'verify'"
                ))?;
                take(&mut stmt.query([low, high])?)
            })?;
        }
        Ok(read)
    }

    /// The assumed fields of the assertions among the events `seqs` names,
    /// each with its seq and id, in log order.
    pub(crate) fn assumed_by_id(
        &self,
        seqs: &super::read::Seqs,
    ) -> super::Result<Vec<(u64, String, Vec<Assumed>)>> {
        Ok(super::read::assumptions_by_id(self.connection(), seqs)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A long answer decoded on two threads equals the same rows decoded on
    /// one: the same beliefs, citations and order, whatever the split.
    #[test]
    fn two_threads_decode_what_one_does() {
        let store = crate::testing::store_of(asof_synth::GenConfig {
            events: 4000,
            topics: 40,
            agents: 3,
            seed: 3,
        });
        let (first, last) = store.recorded_span().expect("span").expect("events");
        let at = first + (last - first) / 2;
        let (rows, bytes) =
            crate::store::pages::held_at(store.connection(), at, None, None, (0, 0))
                .expect("pages");
        assert!(rows.len() > 100, "{} rows held", rows.len());
        let header = store.header();
        let rows = sort_for_reading(rows, header.topics.len(), header.agents.len());
        let one = decode_rows_from(&store, &rows, &bytes, usize::MAX).expect("one thread");
        for from in [1, 2, rows.len()] {
            let two = decode_rows_from(&store, &rows, &bytes, from).expect("two threads");
            assert_eq!(two, one, "two threads from {from} rows");
        }
        // A row naming a claim the store does not hold is refused on either.
        let mut bad = rows.clone();
        let last = bad.len() - 1;
        bad[last].claim = 999_999;
        for from in [1, usize::MAX] {
            let error = decode_rows_from(&store, &bad, &bytes, from).unwrap_err();
            assert!(error.to_string().contains("claim #999999"), "{error}");
        }
    }

    /// The first answer for all topics turns on mapped reads (and answers as
    /// the version rows do, mapped); one topic's answer leaves them off.
    #[test]
    fn an_answer_for_all_topics_maps_the_store_and_one_topics_does_not() {
        let (log, replay) = asof_synth::log_of(asof_synth::GenConfig {
            events: 3000,
            topics: 12,
            agents: 3,
            seed: 9,
        });
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("s.db");
        let contents = crate::store::Contents {
            dataset: &log,
            replay: &replay,
            source: "test",
            meta: Vec::new(),
        };
        Store::create_with(&path, &contents, false).expect("writes");
        let store = Store::open(&path).expect("opens");
        let mapped = || -> i64 {
            let conn = store.connection();
            conn.query_row("PRAGMA mmap_size", [], |r| r.get(0))
                .expect("reads the pragma")
        };
        let (first, last) = store.recorded_span().expect("span").expect("events");
        let at = first + (last - first) / 2;
        let one = Filter {
            agent: None,
            topic: Some(log.header.topics[1].id.clone()),
        };
        assert!(
            !store
                .beliefs_held(at, None, &one)
                .expect("one topic")
                .is_empty()
        );
        assert_eq!(mapped(), 0, "one topic's answer maps nothing");
        let all = store
            .beliefs_held(at, None, &Filter::default())
            .expect("all topics");
        assert!(mapped() > 0, "an answer for all topics maps the store");
        assert!(all.len() > 12, "{} beliefs", all.len());
        for at in [first, at, last] {
            let pages = store
                .beliefs_held(at, None, &Filter::default())
                .expect("mapped");
            let rows = store
                .beliefs_held_by_rows(at, None, &Filter::default())
                .expect("rows");
            assert_eq!(pages, rows, "at {at}");
        }
    }
}
