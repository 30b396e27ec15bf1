//! Queries over a store (design.md §3). The same functions serve the CLI, the TUI,
//! forks and export; JSON shapes (design.md §8) live beside them in [`json`].

pub mod json;
pub mod quality;
pub mod timeline;

use crate::store::{
    Store,
    read::{Decoder, VERSION_COLUMNS, VersionRow},
};
use asof_core::model::{EventKind, Evidence, Version};
use asof_core::time::{Micros, OPEN};
use rusqlite::{params_from_iter, types::Value};

/// Evidence that reached the agent at least this long (µs) after it happened is
/// "late-arriving": marked in the TUI, listed apart in the audit report.
pub const LATE: i64 = 3_600_000_000;

use asof_core::model::Cited;

/// A version with the evidence its assertion cited.
#[derive(Debug, Clone, PartialEq)]
pub struct Belief {
    pub version: Version,
    pub supported_by: Cited,
}

/// Restricts a query to one agent and/or one topic.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub agent: Option<String>,
    pub topic: Option<String>,
}

pub(crate) use crate::store::codec::split;

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

/// `believed(T′)` and `believed(T′, about T)`: versions held at recorded time `at`
/// (`recorded_at ≤ at < superseded_at`), and if `about` is given, only those whose
/// valid interval contains it.
pub fn believed(
    store: &Store,
    at: Micros,
    about: Option<Micros>,
    filter: &Filter,
) -> crate::store::Result<Vec<Belief>> {
    // One topic: its covering index. Otherwise: the version pages, a short
    // run of them per lifespan (see crates/asof-store/src/store/pages.rs).
    if filter.topic.is_none() {
        let agent = filter.agent.as_deref().map(|a| store.agent_code(a));
        let (rows, bytes) = store.held_at(at, about, agent)?;
        return Ok(decode_for_reading(store, rows, &bytes)?);
    }
    let held = vec![
        "v.recorded_at <= ?1".to_owned(),
        "v.superseded_at > ?1".to_owned(),
    ];
    Ok(beliefs_where(store, OF_TOPIC, held, at, about, filter)?)
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

/// [`believed`] for all topics read from the version rows, one range per
/// lifespan, instead of the version pages: the path the pages replaced, kept
/// as the reference they are tested against (and measured beside them).
pub fn believed_by_rows(
    store: &Store,
    at: Micros,
    about: Option<Micros>,
    filter: &Filter,
) -> crate::store::Result<Vec<Belief>> {
    Ok(beliefs_where(
        store,
        &held_at(),
        Vec::new(),
        at,
        about,
        filter,
    )?)
}

/// `current`: what is believed now about now, with one captured `now`.
pub fn current(store: &Store, now: Micros, filter: &Filter) -> crate::store::Result<Vec<Belief>> {
    believed(store, now, Some(now), filter)
}

/// An event listed beside the versions in a history: one that changed no version.
#[derive(Debug, Clone, PartialEq)]
pub struct Note {
    pub seq: u64,
    pub event: String,
    /// `reconfirmed`, `zero_width` or `no_match`.
    pub effect: asof_core::engine::EffectKind,
    pub recorded_at: Micros,
    pub agent: String,
    pub claim: Option<String>,
    pub cites: Vec<String>,
    /// For reconfirmations: the versions that covered the assertion.
    pub versions: Vec<u64>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct History {
    pub versions: Vec<Belief>,
    pub notes: Vec<Note>,
}

/// The versions of [`history`] alone (what answers are computed from).
pub fn versions_of(
    store: &Store,
    topic: &str,
    agent: Option<&str>,
) -> crate::store::Result<Vec<Belief>> {
    let filter = Filter {
        agent: agent.map(str::to_owned),
        topic: Some(topic.to_owned()),
    };
    let mut clauses = Vec::new();
    let mut args = Vec::new();
    push_filter(store, &filter, &mut clauses, &mut args);
    let mut beliefs = run(store, &select_beliefs(OF_TOPIC, &clauses), args)?;
    beliefs.sort_by_key(|b| {
        let v = &b.version;
        (v.recorded_at, v.created_by, v.valid.from, v.id)
    });
    Ok(beliefs)
}

/// `history(agent, topic)`: every version ordered by `recorded_at`, `seq`,
/// `valid_from`, with the reconfirmations and zero-width events beside them.
pub fn history(store: &Store, topic: &str, agent: Option<&str>) -> crate::store::Result<History> {
    let versions = versions_of(store, topic, agent)?;

    let mut stmt = store.connection().prepare_cached(
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
                effect: asof_core::engine::EffectKind::parse(r.get_ref(2)?.as_str()?),
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
    Ok(History { versions, notes })
}

/// `changes(T1, T2]`: versions created and versions closed in a recorded window.
#[derive(Debug, Clone, PartialEq)]
pub struct Changes {
    pub created: Vec<Belief>,
    pub closed: Vec<Belief>,
}

pub fn changes(
    store: &Store,
    after: Micros,
    until: Micros,
    filter: &Filter,
) -> crate::store::Result<Changes> {
    let window = |from: String| {
        let mut clauses = Vec::new();
        let mut args = vec![Value::Integer(after), Value::Integer(until)];
        push_filter(store, filter, &mut clauses, &mut args);
        run(store, &select_beliefs(&from, &clauses), args)
    };
    let created_in = "v.recorded_at > ?1 AND v.recorded_at <= ?2";
    let mut created = window(by_lifespan(
        &format!(
            "v.superseded_at > ?1 AND {} AND {created_in}",
            closed_before(2)
        ),
        Some(created_in),
    ))?;
    created.sort_by_key(|b| {
        let v = &b.version;
        (v.recorded_at, v.created_by, v.valid.from, v.id)
    });
    let mut closed = window(by_lifespan(
        "v.superseded_at > ?1 AND v.superseded_at <= ?2",
        None,
    ))?;
    closed.sort_by_key(|b| {
        let v = &b.version;
        (
            v.superseded_at,
            v.closed.as_ref().map(|c| c.seq),
            v.valid.from,
            v.id,
        )
    });
    Ok(Changes { created, closed })
}

/// `answer(agent, topic, T′)`: the claim of the held version with the greatest
/// `valid_from` (ties: the later `recorded_at`), or none.
pub fn answer(
    store: &Store,
    agent: &str,
    topic: &str,
    at: Micros,
) -> crate::store::Result<Option<String>> {
    use rusqlite::OptionalExtension;
    Ok(store
        .connection()
        .prepare_cached(
            "SELECT c.text FROM versions v JOIN claims c ON c.code = v.claim
             WHERE v.agent = ?1 AND v.topic = ?2 AND v.recorded_at <= ?3 AND v.superseded_at > ?3
             ORDER BY v.valid_from DESC, v.recorded_at DESC, v.id DESC LIMIT 1",
        )?
        .query_row(
            rusqlite::params![store.agent_code(agent), store.topic_code(topic), at],
            |r| r.get(0),
        )
        .optional()?)
}

/// One evidence item with the events that cite it.
#[derive(Debug, Clone, PartialEq)]
pub struct EvidenceItem {
    pub seq: u64,
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

/// Every evidence item, in recorded order.
pub fn evidence(store: &Store) -> crate::store::Result<Vec<EvidenceItem>> {
    Ok(evidence_where(store, "1", &[])?)
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

/// When each belief's agent began holding its claim without a break
/// (design.md §8, SINCE): the recorded time of its origin assertion — the version's own
/// for an asserted version, the assertion's for a split piece of it (a split
/// re-inserts what was held, it does not start holding it). Only split
/// versions are looked up.
pub fn held_since(store: &Store, beliefs: &[Belief]) -> crate::store::Result<Vec<Micros>> {
    let mut looked_up: std::collections::HashMap<&str, Micros> = Default::default();
    let mut since = Vec::with_capacity(beliefs.len());
    for b in beliefs {
        let v = &b.version;
        if v.origin != asof_core::model::Origin::Split {
            since.push(v.recorded_at);
            continue;
        }
        let t = match looked_up.get(&*v.assertion) {
            Some(&t) => t,
            None => {
                let t = crate::store::read::recorded_at_of(store.connection(), &v.assertion)?
                    .unwrap_or(v.recorded_at);
                looked_up.insert(&v.assertion, t);
                t
            }
        };
        since.push(t);
    }
    Ok(since)
}

/// The first and last recorded instants of the log, if it has any events.
pub fn recorded_span(store: &Store) -> crate::store::Result<Option<(Micros, Micros)>> {
    Ok(crate::store::read::span(store.connection())?)
}

/// The evaluations an imported trace made of its evidence and assertions
/// (`gen_ai.evaluation.result`, kept in the import summary's
/// `evaluations`), by evidence or assertion id; none for any other store.
pub fn evaluations(
    store: &Store,
) -> crate::store::Result<std::collections::BTreeMap<String, Vec<serde_json::Value>>> {
    let Some(json) = crate::store::read::meta(store.connection(), "import_report")? else {
        return Ok(Default::default());
    };
    Ok(serde_json::from_str::<serde_json::Value>(&json)
        .ok()
        .and_then(|report| report.get("evaluations").cloned())
        .and_then(|by_id| serde_json::from_value(by_id).ok())
        .unwrap_or_default())
}

/// A trace's model calls in order, kept with the import summary of a store
/// `asof import otlp` wrote (or a trace read as a SOURCE); `None` when the
/// store was not read from a trace.
pub fn model_calls(
    store: &Store,
) -> crate::store::Result<Option<Vec<asof_core::model::ModelCall>>> {
    let Some(json) = crate::store::read::meta(store.connection(), "import_report")? else {
        return Ok(None);
    };
    let Ok(report) = serde_json::from_str::<serde_json::Value>(&json) else {
        return Ok(None);
    };
    if report.get("format").and_then(|f| f.as_str()) != Some("otlp") {
        return Ok(None);
    }
    Ok(Some(
        report
            .get("calls")
            .cloned()
            .and_then(|calls| serde_json::from_value(calls).ok())
            .unwrap_or_default(),
    ))
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
        let (first, last) = recorded_span(&store).expect("span").expect("events");
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
        let (first, last) = recorded_span(&store).expect("span").expect("events");
        let at = first + (last - first) / 2;
        let one = Filter {
            agent: None,
            topic: Some(log.header.topics[1].id.clone()),
        };
        assert!(
            !believed(&store, at, None, &one)
                .expect("one topic")
                .is_empty()
        );
        assert_eq!(mapped(), 0, "one topic's answer maps nothing");
        let all = believed(&store, at, None, &Filter::default()).expect("all topics");
        assert!(mapped() > 0, "an answer for all topics maps the store");
        assert!(all.len() > 12, "{} beliefs", all.len());
        for at in [first, at, last] {
            let pages = believed(&store, at, None, &Filter::default()).expect("mapped");
            let rows = believed_by_rows(&store, at, None, &Filter::default()).expect("rows");
            assert_eq!(pages, rows, "at {at}");
        }
    }
}
