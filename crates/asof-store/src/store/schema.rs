//! The store's schema. `PRAGMA application_id` marks a file as an asof store;
//! `PRAGMA user_version` is its format version.

/// "asof" in ASCII.
pub const APPLICATION_ID: i32 = 0x6173_6f66;
/// The format version this build writes and reads.
pub const FORMAT_VERSION: i32 = 16;

/// The canonical log (`events`, `citations`) is written once at load and never
/// updated; `versions`, `outcomes` and `reconfirmations` are derived by replay and
/// can be rebuilt from the log at any time.
pub const SCHEMA: &str = r#"
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE agents (
    idx  INTEGER PRIMARY KEY,
    id   TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL
);

CREATE TABLE topics (
    idx         INTEGER PRIMARY KEY,
    id          TEXT NOT NULL UNIQUE,
    question    TEXT NOT NULL,
    cardinality TEXT NOT NULL CHECK (cardinality IN ('one', 'many')),
    resolution  TEXT,
    half_life   INTEGER CHECK (half_life > 0),   -- µs (design.md §4)
    stale_after INTEGER CHECK (stale_after > 0)  -- µs
);

-- Derived: the incident, agents and topics above packed in one row
-- (crates/asof-store/src/store/packed_header.rs), what opening a store reads instead of their rows.
CREATE TABLE header_packed (
    data BLOB NOT NULL
);

-- The event log exactly as loaded; seq is the position in the file (1-based).
-- NULL means "absent in the dataset" (valid_to NULL: open-ended). A verify
-- event keeps the evidence it judges in `verifies`, its state in `state`, who
-- judged in `source` and the note in `text`.
CREATE TABLE events (
    seq            INTEGER PRIMARY KEY,
    id             TEXT NOT NULL,
    -- The checks below spell out each value with OR: SQLite builds a
    -- lookup table for an `IN (…)` list on every row it checks (measured:
    -- 1.2–1.8 s of a 1M-event load for the two lists; docs/performance-log.md).
    kind           TEXT NOT NULL CHECK (kind = 'evidence' OR kind = 'believe'
                                        OR kind = 'retract' OR kind = 'verify'),
    recorded_at    INTEGER NOT NULL,
    agent          TEXT,
    topic          TEXT,
    claim          TEXT,
    confidence     REAL,
    valid_from     INTEGER,
    valid_to       INTEGER,
    clip           INTEGER,
    assertion      TEXT,
    evidence_kind  TEXT,
    source         TEXT,
    locator        TEXT,
    observed_at    INTEGER,
    observed_until INTEGER,
    reliability    REAL,
    text           TEXT,
    verifies       TEXT,
    state          TEXT CHECK (state = 'candidate' OR state = 'direct-read'
                                   OR state = 'claim-supported' OR state = 'conflicted'
                                   OR state = 'stale' OR state = 'rejected'),
    -- CRC-32 of the event as written, its citations, whole text and assumed
    -- fields included (crates/asof-store/src/store/digest.rs): `asof check`
    -- finds a changed byte inside a row by it.
    crc            INTEGER
);

-- supported_by (assertions) and because (retractions), in order.
CREATE TABLE citations (
    seq      INTEGER NOT NULL,
    pos      INTEGER NOT NULL,
    evidence TEXT NOT NULL,
    PRIMARY KEY (seq, pos)
) WITHOUT ROWID;

-- The whole text of an evidence item whose summary is not all of it (what the
-- agent read: a tool result, a message; design.md §7). Part of the log, read
-- only when an item is shown whole.
CREATE TABLE contents (
    seq  INTEGER PRIMARY KEY,
    text TEXT NOT NULL
);

-- The fields of an assertion that an importer filled in by default rather
-- than read from its input (design.md §7), one row each. Part of the log.
CREATE TABLE assumptions (
    seq   INTEGER NOT NULL,
    field TEXT NOT NULL CHECK (field = 'agent' OR field = 'confidence'
                               OR field = 'valid_from' OR field = 'supported_by'),
    PRIMARY KEY (seq, field)
) WITHOUT ROWID;

-- The review (docs/review.md): a reviewer's findings about the log, loaded
-- with `asof load --review FILE` (meta `review_file`, `review_sha256`). Not
-- part of the log: no event, no replay and no as-of answer reads them. Each
-- row is the finding's line as its review file holds it.
CREATE TABLE review (
    pos  INTEGER PRIMARY KEY,
    id   TEXT NOT NULL UNIQUE,
    line TEXT NOT NULL
);

-- Derived: what replaying an event did, for the events whose outcome is worth
-- showing (reconfirmed, zero_width, no_match); absent = recorded or applied.
CREATE TABLE outcomes (
    seq      INTEGER PRIMARY KEY,
    effect   TEXT NOT NULL,
    inserted INTEGER NOT NULL,
    closed   INTEGER NOT NULL
);

-- Derived: reconfirming assertions and the versions that covered them.
CREATE TABLE reconfirmations (
    seq     INTEGER NOT NULL,
    version INTEGER NOT NULL,
    PRIMARY KEY (seq, version)
) WITHOUT ROWID;

-- Derived belief versions. Open ends are stored as 9223372036854775807
-- (valid_to, superseded_at) so range predicates stay sargable.
--
-- Rows are clustered by `lifespan`, the bit length of how long the version was
-- held (superseded_at - recorded_at; 64 while still held), then by when it was
-- closed. A version of lifespan k held at T' was closed in (T', T' + 2^k), so
-- `believed(T')` reads one short contiguous range per lifespan, of which at
-- least half the rows are held, instead of every version recorded before T'
-- (see docs/performance-log.md); and a replay, which closes versions in time
-- order, appends to each lifespan's range.
--
-- Rows are narrow (SQLite decodes a row's header once per column it reads):
-- topic and agent are their header positions (`topics.idx`, `agents.idx`),
-- the claim a code of `claims`, and the fields read only to show a version
-- (confidence, assertion and its seq, origin, how it was closed or clipped,
-- the valid end asked for, the evidence its assertion cites, its support
-- times) are packed into `rest` (crates/asof-store/src/store/codec.rs, `Rest`).
CREATE TABLE versions (
    lifespan      INTEGER NOT NULL CHECK (lifespan BETWEEN 1 AND 64),
    id            INTEGER NOT NULL,
    recorded_at   INTEGER NOT NULL,
    superseded_at INTEGER NOT NULL,
    valid_from    INTEGER NOT NULL,
    valid_to      INTEGER NOT NULL,
    topic         INTEGER NOT NULL,
    agent         INTEGER NOT NULL,
    claim         INTEGER NOT NULL,
    rest          BLOB NOT NULL,
    PRIMARY KEY (lifespan, superseded_at, recorded_at, id),
    CHECK (recorded_at < superseded_at),
    CHECK (valid_from < valid_to)
) WITHOUT ROWID;

-- An imported trace's model calls in order (`asof calls`): call n as JSON. Kept as rows, not in
-- the import summary, so a follow writes again only the calls a batch changed.
CREATE TABLE model_calls (
    n    INTEGER PRIMARY KEY,
    call TEXT NOT NULL
);

-- Derived: the distinct claims of the versions, coded in the order first written.
CREATE TABLE claims (
    code INTEGER PRIMARY KEY,
    text TEXT NOT NULL UNIQUE
);

-- Derived: for each (agent, topic) of a topic with a resolution, how the working
-- answer converged on it over this store's log span (design.md §5). A fork's diff reads
-- the pairs it did not replay from here instead of re-deriving their answers.
CREATE TABLE truths (
    topic         TEXT NOT NULL,
    agent         TEXT NOT NULL,
    converged_at  INTEGER,
    time_wrong_ms INTEGER NOT NULL,
    PRIMARY KEY (topic, agent)
) WITHOUT ROWID;

-- Derived: the scrub index (crates/asof-store/src/store/scrub/), what the TUI's timeline reads
-- at open instead of every row: version keys, checkpoints of the held set,
-- the marks of the scrubber. One little-endian blob per part.
CREATE TABLE scrub (
    part TEXT PRIMARY KEY,
    data BLOB NOT NULL
);

-- Derived: version pages (crates/asof-store/src/store/pages.rs), every version row again, a
-- blob per lifespan and bucket of its key (superseded_at; for lifespan 64,
-- still held, recorded_at) shifted right by the lifespan's width, what
-- `believed(T')` for all topics reads instead of tens of thousands of rows.
CREATE TABLE page_widths (
    lifespan INTEGER PRIMARY KEY CHECK (lifespan BETWEEN 1 AND 64),
    shift    INTEGER NOT NULL
);

CREATE TABLE pages (
    lifespan INTEGER NOT NULL CHECK (lifespan BETWEEN 1 AND 64),
    bucket   INTEGER NOT NULL,
    data     BLOB NOT NULL,
    PRIMARY KEY (lifespan, bucket)
) WITHOUT ROWID;
"#;

/// Indexes of the log, built after its bulk insert (sorting once beats a million
/// random B-tree inserts; ids were checked unique by validation).
pub const LOG_INDEXES: [&str; 2] = [LOG_INDEXES_FIRST, LOG_INDEXES_LATER];

/// The log's indexes a streaming load builds while its last slice replays:
/// the one by id, which what is derived from the versions reads (the scrub
/// index's marks), and the one by cited evidence.
pub const LOG_INDEXES_FIRST: &str = r#"
CREATE UNIQUE INDEX events_by_id ON events (id);
CREATE INDEX citations_by_evidence ON citations (evidence);
"#;

/// The log's other indexes, which a streaming load builds beside the scrub index.
pub const LOG_INDEXES_LATER: &str = r#"
-- A fork reads only the events of the (agent, topic) pairs citing removed evidence:
-- assertions and topic retractions by pair, assertion retractions by their target.
CREATE INDEX events_by_pair ON events (topic, agent) WHERE kind <> 'evidence';
CREATE INDEX events_by_target ON events (assertion) WHERE assertion IS NOT NULL;
-- Verifications by the evidence they judge, in recorded order (design.md §4).
CREATE INDEX events_verifications ON events (verifies, recorded_at, seq) WHERE kind = 'verify';
-- The log's first and last instants (the span answers converge over).
CREATE INDEX events_by_recorded ON events (recorded_at);
"#;

/// Indexes of the derived versions, built after their bulk insert.
pub const DERIVED_INDEXES: &str = r#"
-- Covers the held/about filter of one-topic queries, so only matching rows are read.
CREATE INDEX versions_by_topic ON versions (topic, recorded_at, superseded_at, valid_from, valid_to, agent, claim);
CREATE UNIQUE INDEX versions_by_id ON versions (id);
"#;

/// The page cache, in KiB, while indexes are built (see [`build_indexes`]).
const SORTING_CACHE_KIB: i64 = 4096;

/// Runs `indexes` (`CREATE INDEX` statements) with a small page cache.
///
/// SQLite's sorter holds in memory as much as the page cache would, and sorts
/// what it holds on the calling thread; beyond that it sorts runs of it on
/// worker threads (`PRAGMA threads`) while the calling thread reads on, then
/// merges them. With the load's 128 MiB cache every index of the 1M store fit
/// in one run, sorted on one core; with a small cache the runs are sorted on
/// both cores (docs/performance-log.md). The cache size is
/// put back afterwards, also when a build fails. Every index build goes
/// through here; a session whose temporary store is in memory (`write::BULK`,
/// a dataset already read whole) sorts in memory whatever the cache.
pub(super) fn build_indexes(conn: &rusqlite::Connection, indexes: &str) -> rusqlite::Result<()> {
    let cache: i64 = conn.query_row("PRAGMA cache_size", [], |r| r.get(0))?;
    conn.execute_batch(&format!("PRAGMA cache_size = -{SORTING_CACHE_KIB};"))?;
    let built = conn.execute_batch(indexes);
    conn.execute_batch(&format!("PRAGMA cache_size = {cache};"))?;
    built
}

#[cfg(test)]
mod tests {
    use super::{SCHEMA, build_indexes};
    use rusqlite::Connection;

    /// The kind and state checks, spelled out with OR, still refuse what the
    /// lists refused and let an absent state through.
    #[test]
    fn the_log_refuses_an_unknown_kind_or_state() -> rusqlite::Result<()> {
        let conn = Connection::open_in_memory()?;
        conn.execute_batch(SCHEMA)?;
        let insert = |seq: i64, kind: &str, state: Option<&str>| {
            conn.execute(
                "INSERT INTO events (seq, id, kind, recorded_at, state) VALUES (?1, ?2, ?3, 0, ?4)",
                rusqlite::params![seq, format!("E{seq}"), kind, state],
            )
        };
        for (seq, kind) in ["evidence", "believe", "retract", "verify"]
            .iter()
            .enumerate()
        {
            insert(seq as i64, kind, None)?;
        }
        let states = [
            "candidate",
            "direct-read",
            "claim-supported",
            "conflicted",
            "stale",
            "rejected",
        ];
        for (seq, state) in states.iter().enumerate() {
            insert(10 + seq as i64, "verify", Some(state))?;
        }
        assert!(insert(20, "believed", None).is_err());
        assert!(insert(21, "Evidence", None).is_err());
        assert!(insert(22, "verify", Some("verified")).is_err());
        let kept: i64 = conn.query_row("SELECT count(*) FROM events", [], |r| r.get(0))?;
        assert_eq!(kept, 10);
        Ok(())
    }

    #[test]
    fn indexes_are_built_and_the_cache_size_put_back_even_when_a_build_fails()
    -> rusqlite::Result<()> {
        let conn = Connection::open_in_memory()?;
        conn.execute_batch(
            "PRAGMA cache_size = -131072; CREATE TABLE t (a INTEGER, b TEXT);
             INSERT INTO t VALUES (2, 'x'), (1, 'y');",
        )?;
        let cache = |conn: &Connection| -> rusqlite::Result<i64> {
            conn.query_row("PRAGMA cache_size", [], |r| r.get(0))
        };
        build_indexes(
            &conn,
            "CREATE INDEX t_a ON t (a); CREATE INDEX t_b ON t (b);",
        )?;
        let built: i64 = conn.query_row(
            "SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND tbl_name = 't'",
            [],
            |r| r.get(0),
        )?;
        assert_eq!(built, 2);
        assert_eq!(cache(&conn)?, -131072);
        assert!(build_indexes(&conn, "CREATE INDEX t_c ON t (c);").is_err());
        assert_eq!(cache(&conn)?, -131072);
        Ok(())
    }
}
