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
//! Every writer of derived rows (load, rebuild, fork) calls `write` once the
//! versions are final, and a follow grows the index it keeps (`Growing`);
//! `check` compares the stored index with `compute` on the same tables,
//! byte for byte, and `rebuild` writes it afresh. The blobs
//! are little-endian fixed-width records; a blob of the wrong length is a
//! damaged store, never a panic.

use asof_core::engine::EffectKind;
use asof_core::model::{Header, ShortKeys};
use asof_core::time::{Micros, OPEN};
use rusqlite::{Connection, OptionalExtension, params};
use std::collections::{HashMap, HashSet};

/// Versions per checkpoint stride, in recorded order.
pub const CHECKPOINT: usize = 8192;

/// "No header position": a mark without a topic or agent, or one not in the header.
pub const NONE: u32 = u32::MAX;

/// What kind of mark an event leaves on the timeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MarkKind {
    /// An evidence event.
    Evidence,
    /// An assertion that changed what was held.
    Assertion,
    /// An assertion that changed nothing (it reconfirmed what was held).
    Reconfirmation,
    /// A retraction.
    Retraction,
    /// A verify event (design.md §4): its agent is who judged, its claim the state,
    /// and it cites the evidence judged.
    Verification,
}

impl MarkKind {
    /// The kinds, in the order of their lanes.
    pub const ALL: [MarkKind; 5] = [
        MarkKind::Evidence,
        MarkKind::Assertion,
        MarkKind::Reconfirmation,
        MarkKind::Retraction,
        MarkKind::Verification,
    ];

    /// The kind's place in [`MarkKind::ALL`].
    pub fn index(self) -> usize {
        match self {
            MarkKind::Evidence => 0,
            MarkKind::Assertion => 1,
            MarkKind::Reconfirmation => 2,
            MarkKind::Retraction => 3,
            MarkKind::Verification => 4,
        }
    }

    /// What replaying an event of stored `kind` did when `outcomes` holds
    /// no row of it: recorded (evidence, a verification) or applied.
    pub(crate) fn unrecorded(kind: &str) -> EffectKind {
        match kind {
            "evidence" | "verify" => EffectKind::Recorded,
            _ => EffectKind::Applied,
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
    /// The version's id.
    pub id: u64,
    /// When it started being held.
    pub recorded_at: Micros,
    /// When it stopped (`OPEN` while held).
    pub superseded_at: Micros,
    /// Where its valid time starts.
    pub valid_from: Micros,
    /// Its topic's header position.
    pub topic: u32,
    /// Its agent's header position.
    pub agent: u32,
    /// Its claim's place in [`ScrubIndex::claims`].
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
    /// The event's seq.
    pub seq: u64,
    /// When it was recorded.
    pub recorded_at: Micros,
    /// What kind of mark.
    pub kind: MarkKind,
    /// What replaying it did.
    pub effect: EffectKind,
    /// For a retraction of an assertion, that assertion's topic.
    pub topic: u32,
    /// For a verification, who judged (when it is an agent of the header).
    pub agent: u32,
}

/// Display widths (characters) of an evidence item's columns in the TUI.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EvidenceWidths {
    /// The id's width.
    pub id: u16,
    /// The source's width.
    pub source: u16,
    /// The ids of the events citing it, comma-separated.
    pub cited: u16,
}

impl EvidenceWidths {
    /// The widths of an item's own columns, its id and source (as stored:
    /// none is empty), cited by nothing yet.
    pub(crate) fn own(id: &str, source: Option<&str>) -> EvidenceWidths {
        EvidenceWidths {
            id: compute::width(id),
            source: compute::width(source.unwrap_or("")),
            cited: 0,
        }
    }
}

/// The whole index, decoded.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScrubIndex {
    /// Versions per checkpoint stride ([`CHECKPOINT`] in a store).
    pub stride: usize,
    /// Every version's key, by id.
    pub versions: Vec<VersionKey>,
    /// The claims' texts, by code.
    pub claims: Vec<String>,
    /// Version positions ordered by `(recorded_at, id)`.
    pub by_recorded: Vec<u32>,
    /// Version positions ordered by `(superseded_at, id)`.
    pub by_superseded: Vec<u32>,
    /// `checkpoints[c]`: of the first `c · stride` of `by_recorded`, those still held just
    /// after the last of them was recorded ([`checkpoints`]).
    pub checkpoints: Vec<Vec<u32>>,
    /// Every event's mark, in replay order.
    pub marks: Vec<MarkKey>,
    /// One per evidence mark, in the order of `marks`.
    pub evidence: Vec<EvidenceWidths>,
}

mod blob;
mod compute;
mod held;
mod patch;
mod stored;

use blob::*;
pub(crate) use compute::*;
pub use held::{Held, ReadAgain};
pub(crate) use held::{read_again, read_held};
pub use patch::*;
pub use stored::*;

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

type Positions<'a> = HashMap<&'a str, u32, asof_core::model::ShortKeys>;

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
pub(crate) fn write(conn: &Connection, header: &Header) -> rusqlite::Result<()> {
    store(conn, &compute(conn, header)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn index(n: usize) -> ScrubIndex {
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

    pub(super) fn scrub_table() -> Connection {
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
        store_parts(&mut Chunks::new(&conn), &new, Some(&old)).unwrap();
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
        crate::testing::store_of(asof_synth::GenConfig {
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
