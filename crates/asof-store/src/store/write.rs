//! Writing a store: the log as loaded, then the derived rows, in one transaction.

use super::Ranks;
use super::schema::{APPLICATION_ID, DERIVED_INDEXES, FORMAT_VERSION, LOG_INDEXES, SCHEMA};
use asof_core::engine::answers::{self, Truth};
use asof_core::engine::{Effect, Replay};
use asof_core::model::{Dataset, Event, EventBody, EventKind, Header, IdMap, IdSet, RetractTarget};
use asof_core::time::OPEN;
use rusqlite::{Connection, OptionalExtension, Statement, Transaction, params};

/// Session settings for writing a whole store: a large page cache and in-memory
/// sorting for the index builds.
pub(super) const BULK: &str =
    "PRAGMA cache_size = -131072; PRAGMA temp_store = MEMORY; PRAGMA threads = 2;";

/// The page size of a new store, in bytes (SQLite's default is 4096). The
/// store's blobs (the scrub index's 256 KiB chunks, the version pages) then
/// take a quarter as many overflow pages, which a fork's patch of the scrub
/// index reads and writes one by one, so a fork takes less time
/// (docs/decisions.md, Store). A store keeps the size it was
/// written with; a fork, a copy, keeps its parent's.
pub(super) const PAGE_SIZE: u32 = 16384;

/// Writes a whole store (log and derived rows) in one transaction.
pub(super) fn write_all(conn: &mut Connection, contents: &super::Contents) -> rusqlite::Result<()> {
    conn.execute_batch(BULK)?;
    let tx = conn.transaction()?;
    write_log(&tx, contents.dataset, contents.source, &contents.meta)?;
    let truths = truths_of(contents.dataset, contents.replay);
    write_derived(&tx, contents.dataset, contents.replay, &truths)?;
    tx.commit()
}

/// The first phase of writing a store: schema, meta, header, the log and the
/// log's indexes. Needs no replay, so a load runs replay beside it.
pub(super) fn write_log(
    tx: &Transaction,
    dataset: &Dataset,
    source: &str,
    extra_meta: &[(&'static str, String)],
) -> rusqlite::Result<()> {
    write_head(tx, &dataset.header, source, extra_meta)?;
    let mut log = LogWriter::new(tx)?;
    for event in &dataset.events {
        log.write(event)?;
    }
    for indexes in LOG_INDEXES {
        super::schema::build_indexes(tx, indexes)?;
    }
    Ok(())
}

/// The review table and the meta rows naming its file (docs/review.md).
pub(super) fn write_review(
    tx: &Transaction,
    file: &str,
    sha256: &str,
    findings: &[asof_core::review::Finding],
) -> rusqlite::Result<()> {
    let mut meta = tx.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)")?;
    meta.execute(params!["review_file", file])?;
    meta.execute(params!["review_sha256", sha256])?;
    let rows: Vec<(i64, String, String)> = (findings.iter().enumerate())
        .map(|(pos, f)| (pos as i64, f.id.clone(), f.line()))
        .collect();
    write_review_rows(tx, &rows)
}

/// Rows of the review table, (pos, id, line) each, as [`read::review_rows`]
/// gives them back.
///
/// [`read::review_rows`]: super::read::review_rows
pub(super) fn write_review_rows(
    conn: &rusqlite::Connection,
    rows: &[(i64, String, String)],
) -> rusqlite::Result<()> {
    let mut row = conn.prepare("INSERT INTO review (pos, id, line) VALUES (?1, ?2, ?3)")?;
    for (pos, id, line) in rows {
        row.execute(params![pos, id, line])?;
    }
    Ok(())
}

/// The `meta` key under which an import hands over a trace's model calls
/// (a JSON array, one element per call, in order): written to the
/// `model_calls` table, a row each, not to `meta`.
pub const MODEL_CALLS: &str = "model_calls";

/// Writes the calls of `json` (a JSON array) as rows 1, 2, … of
/// `model_calls`, each written as [`write_calls`] writes it.
fn write_calls_json(tx: &Transaction, json: &str) -> rusqlite::Result<()> {
    let calls: Vec<asof_core::model::ModelCall> = serde_json::from_str(json)
        .map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))?;
    write_calls(tx, 0, &calls)
}

/// Brings `model_calls` to its first `kept` rows followed by `new` (each
/// call in order): the rows after `kept` written again, those after `new`
/// removed. A store made before the table existed gets it.
pub(super) fn write_calls(
    tx: &Transaction,
    kept: usize,
    new: &[asof_core::model::ModelCall],
) -> rusqlite::Result<()> {
    tx.execute_batch(
        "CREATE TABLE IF NOT EXISTS model_calls (n INTEGER PRIMARY KEY, call TEXT NOT NULL);",
    )?;
    tx.execute("DELETE FROM model_calls WHERE n > ?1", [kept as i64])?;
    let mut row = tx.prepare("INSERT INTO model_calls (n, call) VALUES (?1, ?2)")?;
    for (i, call) in new.iter().enumerate() {
        row.execute(params![(kept + i + 1) as i64, call_row(call)?])?;
    }
    Ok(())
}

/// A model call as its `model_calls` row holds it.
pub(super) fn call_row(call: &asof_core::model::ModelCall) -> rusqlite::Result<String> {
    serde_json::to_string(call).map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))
}

/// Schema, meta and header rows: everything before the log.
pub(super) fn write_head(
    tx: &Transaction,
    header: &Header,
    source: &str,
    extra_meta: &[(&'static str, String)],
) -> rusqlite::Result<()> {
    tx.execute_batch(&format!("PRAGMA page_size = {PAGE_SIZE};"))?;
    tx.execute_batch(SCHEMA)?;
    tx.execute_batch(&format!(
        "PRAGMA application_id = {APPLICATION_ID}; PRAGMA user_version = {FORMAT_VERSION};"
    ))?;
    let mut meta = tx.prepare("INSERT INTO meta (key, value) VALUES (?1, ?2)")?;
    meta.execute(params!["source", source])?;
    meta.execute(params![
        "loaded_at",
        asof_core::time::format(asof_core::time::now())
    ])?;
    meta.execute(params!["asof_version", env!("CARGO_PKG_VERSION")])?;
    for (key, value) in extra_meta {
        // A trace's model calls (a JSON array) go to their table, a row each.
        if *key == MODEL_CALLS {
            write_calls_json(tx, value)?;
            continue;
        }
        meta.execute(params![key, value])?;
    }
    header_rows(tx, header)
}

/// Puts `header` in place of the store's: its incident's rows of `meta`,
/// its agents and topics, packed too. What depends on their order (the
/// versions number them) is derived again by the caller.
pub(super) fn write_header(tx: &Transaction, header: &Header) -> rusqlite::Result<()> {
    tx.execute_batch("DELETE FROM agents; DELETE FROM topics;")?;
    header_rows(tx, header)
}

/// The header's incident (its rows of `meta`), its agents and topics, a row
/// each, and the header packed.
fn header_rows(tx: &Transaction, header: &Header) -> rusqlite::Result<()> {
    let mut meta = tx.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)")?;
    meta.execute(params!["incident_id", header.incident.id])?;
    meta.execute(params!["incident_title", header.incident.title])?;
    let mut agent = tx.prepare("INSERT INTO agents (idx, id, name) VALUES (?1, ?2, ?3)")?;
    for (i, a) in header.agents.iter().enumerate() {
        agent.execute(params![i as i64, a.id, a.name])?;
    }
    let mut topic = tx.prepare(
        "INSERT INTO topics (idx, id, question, cardinality, resolution, half_life, stale_after)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?;
    for (i, t) in header.topics.iter().enumerate() {
        topic.execute(params![
            i as i64,
            t.id,
            t.question,
            t.cardinality.as_str(),
            t.resolution,
            t.half_life,
            t.stale_after
        ])?;
    }
    super::packed_header::write(tx, header)
}

/// Writes `dataset` (replayed as `replay`) over everything the store on `conn`
/// holds, in one transaction: every table is dropped and written again as a
/// new store's would be, so a reader sees the old store or the new one.
pub(super) fn rewrite(
    conn: &mut Connection,
    dataset: &Dataset,
    source: &str,
    replay: &Replay,
    meta: &[(&'static str, String)],
) -> rusqlite::Result<()> {
    let truths = truths_of(dataset, replay);
    // A follow goes on with this connection: its page cache is put back.
    let cache: i64 = conn.query_row("PRAGMA cache_size", [], |r| r.get(0))?;
    conn.execute_batch(BULK)?;
    let tx = conn.transaction()?;
    let tables: Vec<String> = tx
        .prepare(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
        )?
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    for table in tables {
        tx.execute_batch(&format!("DROP TABLE \"{}\"", table.replace('"', "\"\"")))?;
    }
    write_log(&tx, dataset, source, meta)?;
    write_derived(&tx, dataset, replay, &truths)?;
    tx.commit()?;
    conn.execute_batch(&format!("PRAGMA cache_size = {cache}"))
}

/// The second phase: what replay derived from `dataset`, and its indexes.
pub(super) fn write_derived(
    tx: &Transaction,
    dataset: &Dataset,
    replay: &Replay,
    truths: &[((String, String), Truth)],
) -> rusqlite::Result<()> {
    derived(tx, dataset, replay, truths)?;
    super::schema::build_indexes(tx, DERIVED_INDEXES)?;
    super::write_read_indexes(tx, &dataset.header)
}

/// The `truths` rows of a whole log's replay (pure; a load computes them on the
/// replay thread).
pub(super) fn truths_of(dataset: &Dataset, replay: &Replay) -> Vec<((String, String), Truth)> {
    let span = dataset.span().unwrap_or((0, 0));
    answers::truths(&dataset.header, replay.versions.iter(), span)
}

/// Appends events to the log (`events` and `citations`), and each believe
/// event's claim, the first time it appears, to `claims`: so a claim's code is
/// its order of first appearance in the file, whichever way the store is
/// written (whole, streamed, rebuilt).
pub(super) struct LogWriter<'t> {
    /// One insert per kind of event, naming only the columns that kind fills
    /// (the others are NULL): a 1M-event load binds about half as many values.
    evidence: Statement<'t>,
    believe: Statement<'t>,
    retract: Statement<'t>,
    verify: Statement<'t>,
    cite: Statement<'t>,
    content: Statement<'t>,
    assume: Statement<'t>,
    claim: Statement<'t>,
    claims: IdSet<String>,
}

impl<'t> LogWriter<'t> {
    pub(super) fn new(tx: &'t Transaction) -> rusqlite::Result<Self> {
        Self::with_claims(tx, IdSet::default())
    }

    /// A writer appending to a log whose `claims` table holds `claims` (in
    /// code order, so new claims get the next codes).
    pub(super) fn with_claims(
        tx: &'t Transaction,
        claims: IdSet<String>,
    ) -> rusqlite::Result<Self> {
        // `kind` is written as the literal of each statement.
        let insert = |kind: EventKind, columns: &str| {
            let marks: Vec<String> = (1..=columns.split(',').count())
                .map(|i| format!("?{i}"))
                .collect();
            tx.prepare(&format!(
                "INSERT INTO events (kind, {columns}) VALUES ('{}', {})",
                kind.as_str(),
                marks.join(", ")
            ))
        };
        Ok(LogWriter {
            evidence: insert(
                EventKind::Evidence,
                "seq, id, recorded_at, evidence_kind, source, locator, observed_at, \
                 observed_until, reliability, text, crc",
            )?,
            believe: insert(
                EventKind::Believe,
                "seq, id, recorded_at, agent, topic, claim, confidence, valid_from, valid_to, \
                 clip, text, crc",
            )?,
            retract: insert(
                EventKind::Retract,
                "seq, id, recorded_at, agent, topic, claim, valid_from, valid_to, assertion, text, crc",
            )?,
            // `source` holds who judged, `text` the note.
            verify: insert(
                EventKind::Verify,
                "seq, id, recorded_at, source, text, verifies, state, crc",
            )?,
            cite: tx.prepare("INSERT INTO citations (seq, pos, evidence) VALUES (?1, ?2, ?3)")?,
            content: tx.prepare("INSERT INTO contents (seq, text) VALUES (?1, ?2)")?,
            assume: tx.prepare("INSERT INTO assumptions (seq, field) VALUES (?1, ?2)")?,
            claim: tx.prepare("INSERT INTO claims (code, text) VALUES (?1, ?2)")?,
            claims,
        })
    }

    /// The claims the log holds now.
    pub(super) fn into_claims(self) -> IdSet<String> {
        self.claims
    }

    pub(super) fn write(&mut self, event: &Event) -> rusqlite::Result<()> {
        let open_as_null = |t: i64| (t != OPEN).then_some(t);
        let min_as_null = |t: i64| (t != i64::MIN).then_some(t);
        if let EventBody::Believe(a) = &event.body
            && !self.claims.contains(&a.claim)
        {
            self.claim
                .execute(params![self.claims.len() as i64, a.claim])?;
            self.claims.insert(a.claim.clone());
        }
        let seq = event.seq as i64;
        let crc = super::digest::event_crc(event);
        match &event.body {
            EventBody::Evidence(e) => {
                self.evidence.execute(params![
                    seq,
                    e.id,
                    e.recorded_at,
                    e.kind,
                    e.source,
                    e.locator,
                    e.observed_at,
                    e.observed_until,
                    e.reliability,
                    e.summary,
                    crc,
                ])?;
                if let Some(text) = &e.content {
                    self.content.execute(params![seq, text])?;
                }
                0
            }
            EventBody::Believe(a) => {
                for field in &a.assumed {
                    self.assume.execute(params![seq, field.as_str()])?;
                }
                self.believe.execute(params![
                    seq,
                    a.id,
                    a.recorded_at,
                    a.agent,
                    a.topic,
                    a.claim,
                    a.confidence,
                    a.valid.from,
                    open_as_null(a.valid.to),
                    a.clip,
                    a.rationale,
                    crc,
                ])?
            }
            EventBody::Retract(r) => {
                let (topic, claim, assertion) = match &r.target {
                    RetractTarget::Topic { topic, claim } => {
                        (Some(topic.as_str()), claim.as_deref(), None)
                    }
                    RetractTarget::Assertion(id) => (None, None, Some(id.as_str())),
                };
                self.retract.execute(params![
                    seq,
                    r.id,
                    r.recorded_at,
                    r.agent,
                    topic,
                    claim,
                    r.valid.and_then(|v| min_as_null(v.from)),
                    r.valid.and_then(|v| open_as_null(v.to)),
                    assertion,
                    r.reason,
                    crc,
                ])?
            }
            EventBody::Verify(v) => self.verify.execute(params![
                seq,
                v.id,
                v.recorded_at,
                v.by,
                v.note,
                v.evidence,
                v.state.as_str(),
                crc,
            ])?,
        };
        for (pos, evidence) in event.cites().iter().enumerate() {
            self.cite.execute(params![seq, pos as i64, evidence])?;
        }
        Ok(())
    }
}

/// Writes what replay derived from the whole log: versions, outcomes,
/// reconfirmations and truths.
pub(super) fn derived(
    tx: &Transaction,
    dataset: &Dataset,
    replay: &Replay,
    truths: &[((String, String), Truth)],
) -> rusqlite::Result<()> {
    replayed(tx, replay, 0, &assertion_seqs(&dataset.events))?;
    write_truths(tx, truths)
}

/// Where a version's assertion sits in the log: its seq and the evidence it cites.
#[derive(Clone, Copy)]
pub(crate) struct AssertionRef<'a> {
    pub seq: i64,
    pub cites: &'a [String],
}

/// Assertion id → its seq and citations, for the `assertion_seq` and
/// `supported_by` columns of the versions of `events`.
pub(crate) fn assertion_seqs(events: &[asof_core::model::Event]) -> IdMap<&str, AssertionRef<'_>> {
    events
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::Believe(a) => Some((
                a.id.as_str(),
                AssertionRef {
                    seq: e.seq as i64,
                    cites: &a.supported_by,
                },
            )),
            _ => None,
        })
        .collect()
}

/// The bit length of how long a version was held (1..=63), or 64 while it is
/// still held: the `lifespan` the versions table is clustered by.
pub(crate) fn lifespan(recorded_at: i64, superseded_at: i64) -> i64 {
    if superseded_at == OPEN {
        return 64;
    }
    match superseded_at.checked_sub(recorded_at) {
        Some(held) if held > 0 => 64 - i64::from(held.leading_zeros()),
        _ => 63,
    }
}

/// Writes one replay's versions (ids shifted by `id_offset`), outcomes and
/// reconfirmations. `origins` maps the versions' assertion ids to their seqs and
/// citations.
pub(crate) fn replayed(
    tx: &Transaction,
    replay: &Replay,
    id_offset: u64,
    origins: &IdMap<&str, AssertionRef>,
) -> rusqlite::Result<()> {
    let codes = Codes::load(tx)?;
    let origin = |_: usize, v: &asof_core::model::Version| origins.get(&*v.assertion).copied();
    Ready::of(replay, id_offset, origin, &codes.header).write_with(tx, codes)
}

/// One replay's rows made ready to insert away from the connection (a load
/// packs them on its replay thread): each version's fields, codes and packed
/// `rest`, in the versions table's key order, but its claim still as text —
/// only the store can code a claim (the first time the log names it).
pub(crate) struct Ready {
    versions: Vec<ReadyVersion>,
    /// Each version's packed `rest`, end to end.
    rest: Vec<u8>,
    /// Outcomes worth a row, and the (shifted) ids each reconfirmed.
    outcomes: Vec<(i64, &'static str, i64, i64, Vec<i64>)>,
}

struct ReadyVersion {
    /// The first eight columns of its row, in order: lifespan, id,
    /// recorded_at, superseded_at, valid_from, valid_to, topic, agent.
    fields: [i64; 8],
    claim: asof_core::model::Name,
    /// Its `rest`: this range of [`Ready::rest`].
    rest: std::ops::Range<usize>,
}

impl Ready {
    /// `replay`'s rows (ids shifted by `id_offset`; `origin(i, version)`
    /// gives the seq and citations of the assertion of the `i`-th version),
    /// agents and topics coded by `codes`.
    pub(crate) fn of<'a>(
        replay: &Replay,
        id_offset: u64,
        origin: impl Fn(usize, &asof_core::model::Version) -> Option<AssertionRef<'a>>,
        codes: &Ranks,
    ) -> Ready {
        // In primary-key order, so every insert appends to the table's B-tree.
        let mut ordered: Vec<(i64, usize, &asof_core::model::Version)> = (replay.versions.iter())
            .enumerate()
            .map(|(i, v)| (lifespan(v.recorded_at, v.superseded_at), i, v))
            .collect();
        ordered.sort_unstable_by_key(|&(span, _, v)| (span, v.superseded_at, v.recorded_at, v.id));
        let mut rest = Vec::new();
        let mut versions = Vec::with_capacity(ordered.len());
        for (span, i, v) in ordered {
            let origin = origin(i, v);
            let start = rest.len();
            crate::store::codec::Rest {
                split: v.origin == asof_core::model::Origin::Split,
                confidence: v.confidence,
                created_by: v.created_by,
                assertion_seq: origin.map_or(0, |o| o.seq),
                requested_valid_to: v.requested_valid_to,
                supported_at: v.supported_at,
                assertion: &v.assertion,
                closed: v.closed.as_ref().map(|c| {
                    (
                        c.seq,
                        &*c.event,
                        c.kind == asof_core::model::CloseKind::Retracted,
                    )
                }),
                clipped_by: v.clipped_by.as_deref(),
                supported_by: origin.map_or(&[][..], |o| o.cites),
                reconfirmed: v.reconfirmed.clone(),
            }
            .pack(
                crate::store::codec::Anchor {
                    recorded_at: v.recorded_at,
                    valid_to: v.valid.to,
                },
                &mut rest,
            );
            versions.push(ReadyVersion {
                fields: [
                    span,
                    (v.id + id_offset) as i64,
                    v.recorded_at,
                    v.superseded_at,
                    v.valid.from,
                    v.valid.to,
                    codes.topic(&v.topic),
                    codes.agent(&v.agent),
                ],
                claim: v.claim.clone(),
                rest: start..rest.len(),
            });
        }
        let outcomes = replay
            .outcomes
            .iter()
            // Evidence is only recorded and most assertions simply apply: the
            // table keeps the outcomes worth showing (absent = recorded or applied).
            .filter(|o| !matches!(o.effect, Effect::Recorded | Effect::Applied { .. }))
            .map(|o| {
                let (inserted, closed) = match &o.effect {
                    Effect::Applied { inserted, closed } => (*inserted, *closed),
                    Effect::ZeroWidth { closed } => (0, *closed),
                    _ => (0, 0),
                };
                let reconfirmed = match &o.effect {
                    Effect::Reconfirmed { versions } => {
                        versions.iter().map(|id| (id + id_offset) as i64).collect()
                    }
                    _ => Vec::new(),
                };
                (
                    o.seq as i64,
                    o.effect.as_str(),
                    inserted as i64,
                    closed as i64,
                    reconfirmed,
                )
            })
            .collect();
        Ready {
            versions,
            rest,
            outcomes,
        }
    }

    /// Inserts the rows, coding each claim through the store's `claims`.
    pub(crate) fn write(&self, tx: &Transaction) -> rusqlite::Result<()> {
        self.write_with(tx, Codes::load(tx)?)
    }

    /// [`Ready::write`] with the store's `codes`, loaded already.
    pub(crate) fn write_with(&self, tx: &Transaction, mut codes: Codes) -> rusqlite::Result<()> {
        let mut version = tx.prepare_cached(
            "INSERT INTO versions (lifespan, id, recorded_at, superseded_at, valid_from, valid_to,
                topic, agent, claim, rest)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        )?;
        for v in &self.versions {
            // The fields in the columns' order, then the claim and rest.
            for (at, field) in v.fields.iter().enumerate() {
                version.raw_bind_parameter(at + 1, field)?;
            }
            version.raw_bind_parameter(9, codes.claim(tx, &v.claim)?)?;
            version.raw_bind_parameter(10, &self.rest[v.rest.clone()])?;
            version.raw_execute()?;
        }
        let mut outcome = tx.prepare_cached(
            "INSERT INTO outcomes (seq, effect, inserted, closed) VALUES (?1, ?2, ?3, ?4)",
        )?;
        let mut reconfirm =
            tx.prepare_cached("INSERT INTO reconfirmations (seq, version) VALUES (?1, ?2)")?;
        for (seq, effect, inserted, closed, reconfirmed) in &self.outcomes {
            outcome.execute(params![seq, effect, inserted, closed])?;
            for id in reconfirmed {
                reconfirm.execute(params![seq, id])?;
            }
        }
        Ok(())
    }
}

/// The codes version rows use for agents and topics (their header positions)
/// and claims (the `claims` table, which a writer extends with each new claim).
pub(crate) struct Codes {
    pub(crate) header: Ranks,
    /// Claims met by this writer, each looked up in the store (or added to
    /// it) the first time: a batch of rows reads the claims it names, not
    /// every claim of the store.
    claims: IdMap<String, i64>,
    next_claim: i64,
}

/// How many claims a [`Codes`] keeps; past that it starts again (a claim
/// it no longer holds is looked up in the store).
const CLAIMS_KEPT: usize = 1 << 16;

impl Codes {
    /// The codes of the store `tx` writes (loaded once per batch of rows).
    pub(crate) fn load(tx: &Transaction) -> rusqlite::Result<Codes> {
        let next_claim =
            tx.query_row("SELECT coalesce(max(code) + 1, 0) FROM claims", [], |r| {
                r.get(0)
            })?;
        Ok(Codes {
            header: Ranks::of(&super::read::header_from_rows(tx)?),
            claims: IdMap::default(),
            next_claim,
        })
    }

    /// A claim's code, adding the claim to the store the first time.
    pub(crate) fn claim(&mut self, tx: &Transaction, text: &str) -> rusqlite::Result<i64> {
        if let Some(&code) = self.claims.get(text) {
            return Ok(code);
        }
        let stored: Option<i64> = tx
            .prepare_cached("SELECT code FROM claims WHERE text = ?1")?
            .query_row([text], |r| r.get(0))
            .optional()?;
        let code = match stored {
            Some(code) => code,
            None => {
                let code = self.next_claim;
                self.next_claim += 1;
                tx.prepare_cached("INSERT INTO claims (code, text) VALUES (?1, ?2)")?
                    .execute(params![code, text])?;
                code
            }
        };
        if self.claims.len() >= CLAIMS_KEPT {
            self.claims.clear();
        }
        self.claims.insert(text.to_owned(), code);
        Ok(code)
    }
}

/// Inserts (or replaces) rows of the `truths` table.
pub(crate) fn write_truths(
    tx: &Transaction,
    truths: &[((String, String), Truth)],
) -> rusqlite::Result<()> {
    let mut insert = tx.prepare(
        "INSERT OR REPLACE INTO truths (topic, agent, converged_at, time_wrong_ms) VALUES (?1, ?2, ?3, ?4)",
    )?;
    for ((agent, topic), t) in truths {
        insert.execute(params![topic, agent, t.converged_at, t.time_wrong_ms])?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A store written again whole on a follow's connection leaves that
    /// connection's page cache as it was (the bulk write's is large, and a
    /// follow runs for days).
    #[test]
    fn a_store_written_again_puts_the_page_cache_back() {
        let (log, replay) = asof_synth::log_of(asof_synth::GenConfig {
            events: 200,
            topics: 3,
            agents: 2,
            seed: 1,
        });
        let mut conn = Connection::open_in_memory().expect("opens");
        conn.execute_batch("PRAGMA cache_size = -4000")
            .expect("sets");
        rewrite(&mut conn, &log, "gen", &replay, &[]).expect("written");
        let cache: i64 = (conn.query_row("PRAGMA cache_size", [], |r| r.get(0))).expect("reads");
        assert_eq!(cache, -4000);
        let events: i64 =
            (conn.query_row("SELECT count(*) FROM events", [], |r| r.get(0))).expect("counts");
        assert_eq!(events as usize, log.events.len());
    }

    /// A writer finds the claims the store holds, numbers new ones after
    /// them, and a later writer finds those (a follow's next batch).
    #[test]
    fn claims_keep_their_codes_from_one_writer_to_the_next() {
        let store = crate::testing::store_of(asof_synth::GenConfig {
            events: 200,
            topics: 3,
            agents: 2,
            seed: 1,
        });
        let tx = store.connection().unchecked_transaction().expect("tx");
        let held: Vec<(i64, String)> = tx
            .prepare("SELECT code, text FROM claims ORDER BY code")
            .expect("prepare")
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .expect("query")
            .collect::<rusqlite::Result<_>>()
            .expect("claims");
        assert!(!held.is_empty());
        let next = held.len() as i64;
        let mut first = Codes::load(&tx).expect("codes");
        for (code, text) in &held {
            assert_eq!(first.claim(&tx, text).expect("code"), *code, "{text}");
        }
        assert_eq!(first.claim(&tx, "a new claim").expect("code"), next);
        assert_eq!(first.claim(&tx, "a new claim").expect("code"), next);
        let mut second = Codes::load(&tx).expect("codes");
        assert_eq!(second.claim(&tx, "another").expect("code"), next + 1);
        assert_eq!(second.claim(&tx, "a new claim").expect("code"), next);
        assert_eq!(second.claim(&tx, &held[0].1).expect("code"), held[0].0);
    }

    #[test]
    fn lifespan_is_the_bit_length_of_how_long_a_version_was_held() {
        assert_eq!(lifespan(10, 11), 1);
        assert_eq!(lifespan(10, 12), 2);
        assert_eq!(lifespan(10, 13), 2);
        assert_eq!(lifespan(10, 14), 3);
        assert_eq!(lifespan(0, 1 << 40), 41);
        assert_eq!(lifespan(0, (1 << 41) - 1), 41);
        assert_eq!(lifespan(-5, OPEN), 64);
        // Held at T, lifespan k: closed in (T, T + 2^k) (what the queries rely on).
        for (recorded, superseded) in [(0, 1), (3, 4), (0, 1 << 20), (7, 1000), (-9, 9)] {
            let k = lifespan(recorded, superseded);
            for t in recorded..superseded {
                assert!(
                    superseded < t + (1 << k),
                    "({recorded}, {superseded}) at {t}"
                );
            }
        }
    }

    /// The model calls' rows follow the calls: those after the rows kept
    /// written again, those past the end removed, the rest left as they are.
    #[test]
    fn model_call_rows_are_written_from_the_first_changed_call() {
        let call = |n: usize, model: &str| asof_core::model::ModelCall {
            n,
            agent: "a".into(),
            trace: "t".into(),
            span: format!("s{n}"),
            started: n as i64,
            ended: n as i64 + 1,
            model: Some(model.into()),
            read_new: Vec::new(),
            said: Vec::new(),
            tool_calls: Vec::new(),
        };
        let mut conn = Connection::open_in_memory().expect("memory");
        let rows = |conn: &Connection| -> Vec<(i64, String)> {
            conn.prepare("SELECT n, call FROM model_calls ORDER BY n")
                .and_then(|mut s| {
                    s.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
                        .collect::<rusqlite::Result<_>>()
                })
                .expect("rows")
        };
        let first = vec![call(1, "m"), call(2, "m"), call(3, "m")];
        let tx = conn.transaction().expect("tx");
        write_calls(&tx, 0, &first).expect("written");
        tx.commit().expect("commit");
        assert_eq!(rows(&conn).len(), 3);
        let kept = rows(&conn)[0].clone();
        let second = [call(1, "m"), call(2, "other"), call(3, "m"), call(4, "m")];
        let tx = conn.transaction().expect("tx");
        write_calls(&tx, 1, &second[1..]).expect("written");
        tx.commit().expect("commit");
        let now = rows(&conn);
        assert_eq!(now.len(), 4);
        assert_eq!(now[0], kept);
        assert!(now[1].1.contains("\"other\""), "{:?}", now[1]);
        let tx = conn.transaction().expect("tx");
        write_calls(&tx, 1, &[]).expect("written");
        tx.commit().expect("commit");
        assert_eq!(rows(&conn), vec![kept]);
    }
}
