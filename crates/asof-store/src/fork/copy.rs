//! A fork of a store file that re-derives only what the removed evidence reaches.
//!
//! Removing evidence changes only the (agent, topic) pairs whose events cite it,
//! and scopes never interact (design.md §3). So instead of replaying and writing the
//! whole log again, the fork starts as a byte copy of the parent (hashed on the
//! way for its lineage); in the copy, one transaction deletes the removed and
//! dropped events, rewrites changed citations and scaled confidences, and replaces
//! the versions, outcomes, reconfirmations and truths of those pairs with a replay
//! of their events alone, and patches what queries read instead of rows (the
//! scrub index and the version pages) where those versions and events changed.
//! The rows are those of a fork written from scratch except
//! for version ids, which continue after the parent's (`Store::check` matches
//! versions by what they are). Deleted rows are overwritten (`secure_delete`), so
//! removed evidence does not linger in the fork's free pages.
//!
//! ```text
//!   parent.db ──copy + SHA-256──▶ .asof-new-….tmp ──patch pairs──▶ sync ──link──▶ fork.db
//!        │                                                   ▲
//!        └── events of the cited pairs ──policy──▶ replay ───┘──▶ diff of those pairs
//! ```

use super::diff::{self, Diff};
use super::{Fork, ForkError, PolicyReport, transform};
use crate::store::{self, Store, StoreError, read, scrub, write};
use asof_core::engine;
use asof_core::engine::answers;
use asof_core::model::{Event, EventBody};
use asof_core::time::Micros;
use rusqlite::{Connection, OptionalExtension, Transaction, params};
use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::Path;
use std::sync::mpsc::RecvTimeoutError;

/// An (agent, topic) pair.
pub type Pair = (String, String);

#[derive(Debug, thiserror::Error)]
pub enum CopyError {
    #[error(transparent)]
    Fork(#[from] ForkError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<rusqlite::Error> for CopyError {
    fn from(e: rusqlite::Error) -> Self {
        CopyError::Store(StoreError::from(e))
    }
}

/// What making a fork file did.
#[derive(Debug, Clone)]
pub struct Made {
    pub report: PolicyReport,
    pub diff: Diff,
    pub parent_sha256: String,
    /// The (agent, topic) pairs whose answers can differ: the pairs replayed
    /// (every other pair is the parent's), or for a whole replay the pairs
    /// whose answers differ or have a resolution.
    pub pairs: Vec<Pair>,
}

/// Forks the store at `parent_path` (open as `parent`) without `removed` into a
/// new store file at `out`; `meta` adds lineage rows (see [`super::lineage`]).
pub fn fork_file(
    parent: &Store,
    parent_path: &Path,
    removed: &[String],
    out: &Path,
    force: bool,
    meta: impl FnOnce(&str, &PolicyReport) -> Result<Vec<(&'static str, String)>, StoreError>,
) -> Result<Made, CopyError> {
    if removed.is_empty() {
        return Err(ForkError::NothingToRemove.into());
    }
    // A read transaction: the parent cannot change while it is read and copied.
    let conn = parent.connection();
    conn.execute_batch("BEGIN")?;
    let made = (|| -> Result<Made, CopyError> {
        let plan = plan(parent, removed)?;
        let parent_span = read::span(parent.connection())?;
        let mut sha = String::new();
        let mut report = plan.fork.report.clone();
        report.noop_retractions = noop_retractions(parent, &plan)?;
        store::write_atomically(out, force, |file| -> Result<(), StoreError> {
            // The parent's SHA-256 (its lineage) takes longer than the copy:
            // a second thread reads the parent from the page cache while the
            // kernel copies it and the copy is patched, and the lineage rows
            // go in last.
            std::thread::scope(|scope| {
                let hashing = scope.spawn(|| {
                    std::fs::File::open(parent_path)
                        .and_then(super::sha256_of)
                        .map_err(io_error(parent_path))
                });
                copy(parent_path, file)?;
                // The copy's pages go to the disk while it is patched, and
                // what the patch writes follows them every few milliseconds
                // until it is done, so the sync before the fork is linked
                // into place finds little left to write (it found the
                // 106 MB scrub index, written again, on the 1M store). The
                // thread stops once `patched` is dropped: after the patch, or
                // on any way out before it.
                let copied = file.as_file();
                let (patched, patching) = std::sync::mpsc::channel::<()>();
                let flushing = scope.spawn(move || {
                    let pause = std::time::Duration::from_millis(10);
                    loop {
                        copied.sync_data()?;
                        // Nothing is sent: only the end of the patch wakes it.
                        if let Err(RecvTimeoutError::Disconnected) = patching.recv_timeout(pause) {
                            return Ok::<_, std::io::Error>(());
                        }
                    }
                });
                let mut conn = Connection::open(file.path())?;
                conn.execute_batch(
                    "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA secure_delete = ON;",
                )?;
                let tx = conn.transaction()?;
                patch(&tx, parent, &plan, parent_span)?;
                drop(patched);
                sha = hashing
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))?;
                flushing
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
                    .map_err(io_error(file.path()))?;
                let mut rows = meta(&sha, &report)?;
                // Which pairs differ from the parent at all: `asof diff` compares only these
                // when the parent's SHA-256 still matches.
                let pairs: Vec<&Pair> = plan.pairs.iter().collect();
                rows.push((
                    "fork_pairs",
                    serde_json::to_string(&pairs).unwrap_or_default(),
                ));
                write_meta(&tx, parent, &rows)?;
                tx.commit()?;
                conn.close().map_err(|(_, e)| e)?;
                Ok(())
            })
        })?;
        let diff = diff::compare_pairs(parent, &plan.pairs, &plan.fork.replay.versions)?;
        Ok(Made {
            report,
            diff,
            parent_sha256: sha,
            pairs: plan.pairs.into_iter().collect(),
        })
    })();
    conn.execute_batch("COMMIT")?;
    made
}

/// The part of the log a fork replays, and what the policy did to it.
struct Plan {
    removed_seqs: Vec<u64>,
    pairs: BTreeSet<Pair>,
    /// Every event of those pairs, by seq, as in the parent.
    original: Vec<Event>,
    fork: Fork,
}

/// Finds the removed evidence, the pairs citing it and their events, and applies
/// the policy to those events and replays them.
fn plan(parent: &Store, removed: &[String]) -> Result<Plan, CopyError> {
    let conn = parent.connection();
    let mut find = conn.prepare("SELECT seq FROM events WHERE id = ?1 AND kind = 'evidence'")?;
    let mut removed_seqs = Vec::new();
    let mut unknown = Vec::new();
    for id in removed {
        match find.query_row([id], |r| r.get::<_, i64>(0)).optional()? {
            Some(seq) => removed_seqs.push(seq as u64),
            None => unknown.push(id.clone()),
        }
    }
    if !unknown.is_empty() {
        return Err(ForkError::UnknownEvidence(unknown).into());
    }
    // Verifications of removed evidence go with it (they touch no pair).
    let mut judged = conn.prepare(
        "SELECT seq, id FROM events WHERE kind = 'verify' AND verifies = ?1 ORDER BY seq",
    )?;
    let mut dropped_verifications = Vec::new();
    for id in removed {
        let rows = judged.query_map([id], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))?;
        for row in rows {
            let (seq, verification) = row?;
            removed_seqs.push(seq as u64);
            dropped_verifications.push((seq, verification));
        }
    }
    dropped_verifications.sort();

    let mut citing = conn.prepare(
        "SELECT e.agent, e.topic, e.assertion FROM citations c JOIN events e ON e.seq = c.seq
         WHERE c.evidence = ?1",
    )?;
    let mut owner =
        conn.prepare("SELECT agent, topic FROM events WHERE id = ?1 AND kind = 'believe'")?;
    let mut pairs = BTreeSet::new();
    for id in removed {
        let rows = citing.query_map([id], |r| {
            Ok((
                r.get::<_, Option<String>>(0)?,
                r.get::<_, Option<String>>(1)?,
                r.get::<_, Option<String>>(2)?,
            ))
        })?;
        for row in rows {
            let pair = match row? {
                (_, _, Some(assertion)) => owner
                    .query_row([&assertion], |r| Ok((r.get(0)?, r.get(1)?)))
                    .optional()?,
                (Some(agent), Some(topic), None) => Some((agent, topic)),
                _ => None,
            };
            pairs.extend(pair);
        }
    }

    let mut original = Vec::new();
    let mut by_pair = conn.prepare(&format!(
        "SELECT {cols} FROM events WHERE topic = ?1 AND agent = ?2 AND kind <> 'evidence'
         UNION ALL
         SELECT {cols} FROM events WHERE assertion IS NOT NULL AND assertion IN
            (SELECT id FROM events WHERE topic = ?1 AND agent = ?2 AND kind <> 'evidence'
               AND kind = 'believe')",
        cols = read::EVENT_COLUMNS
    ))?;
    let mut cited = conn.prepare("SELECT evidence FROM citations WHERE seq = ?1 ORDER BY pos")?;
    for (agent, topic) in &pairs {
        let rows = by_pair.query_map(params![topic, agent], |r| read::event(r, Vec::new()))?;
        for row in rows {
            let mut event = row?;
            let ids = cited
                .query_map([event.seq as i64], |r| r.get::<_, String>(0))?
                .collect::<rusqlite::Result<Vec<String>>>()?;
            if let Some(cites) = event.cites_mut() {
                *cites = ids;
            }
            original.push(event);
        }
    }
    original.sort_by_key(|e| e.seq);

    let mut reliability_of =
        conn.prepare("SELECT reliability FROM events WHERE id = ?1 AND kind = 'evidence'")?;
    let mut reliability: HashMap<String, f64> = HashMap::new();
    for id in original.iter().flat_map(Event::cites) {
        if !reliability.contains_key(id) {
            let r: Option<f64> = reliability_of.query_row([id], |r| r.get(0)).optional()?;
            reliability.insert(id.clone(), r.unwrap_or(1.0));
        }
    }
    let reliability: HashMap<&str, f64> =
        reliability.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    let gone: HashSet<&str> = removed.iter().map(String::as_str).collect();
    let mut report = PolicyReport {
        removed: removed.to_vec(),
        dropped_verifications: dropped_verifications
            .into_iter()
            .map(|(_, id)| id)
            .collect(),
        ..PolicyReport::default()
    };
    let events = transform(&original, &reliability, &gone, &mut report);
    let replay = engine::replay(parent.header(), &events);
    let dataset = asof_core::model::Dataset {
        header: parent.header().clone(),
        events,
    };
    Ok(Plan {
        removed_seqs,
        pairs,
        original,
        fork: Fork {
            dataset,
            replay,
            report,
        },
    })
}

/// Retractions that find nothing in the fork: those of the replayed pairs, and
/// the parent's own (a fork of a fork) elsewhere, in replay order.
fn noop_retractions(parent: &Store, plan: &Plan) -> Result<Vec<String>, CopyError> {
    let replayed: HashSet<u64> = plan.original.iter().map(|e| e.seq).collect();
    let mut found: Vec<(Micros, u64, String)> = Vec::new();
    let by_seq: HashMap<u64, &Event> = plan
        .fork
        .dataset
        .events
        .iter()
        .map(|e| (e.seq, e))
        .collect();
    for seq in plan.fork.replay.unmatched_retractions() {
        if let Some(e) = by_seq.get(&seq) {
            found.push((e.recorded_at(), seq, e.id().to_owned()));
        }
    }
    let mut stmt = parent.connection().prepare(
        "SELECT e.recorded_at, e.seq, e.id FROM outcomes o JOIN events e ON e.seq = o.seq
         WHERE o.effect = 'no_match'",
    )?;
    let rows = stmt.query_map([], |r| {
        Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)? as u64, r.get(2)?))
    })?;
    for row in rows {
        let row = row?;
        if !replayed.contains(&row.1) {
            found.push(row);
        }
    }
    found.sort();
    Ok(found.into_iter().map(|(_, _, id)| id).collect())
}

/// A path's I/O error as a store error naming it.
fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> StoreError {
    let path = path.to_owned();
    move |source| StoreError::Io { path, source }
}

/// Copies the parent file into the new, empty `file` through its open handle
/// (the kernel copies, with `copy_file_range` where the platform has it). The
/// fork keeps the new file's permissions, not the parent's (which may be
/// read-only). Not `std::fs::copy`: it opens the target again with
/// `O_TRUNC`, and ext4 writes a truncated file's pages back as soon as it
/// is closed, on the closing thread (a measurable part of a large fork; docs/performance-log.md).
fn copy(parent: &Path, file: &tempfile::NamedTempFile) -> Result<(), StoreError> {
    let mut from = std::fs::File::open(parent).map_err(io_error(parent))?;
    std::io::copy(&mut from, &mut file.as_file()).map_err(io_error(file.path()))?;
    Ok(())
}

/// Turns the parent's rows in the copy into the fork's.
fn patch(
    tx: &Transaction,
    parent: &Store,
    plan: &Plan,
    parent_span: Option<(Micros, Micros)>,
) -> Result<(), StoreError> {
    // The log: removed and dropped events go, changed citations and confidences change.
    let kept: HashMap<u64, &Event> = plan
        .fork
        .dataset
        .events
        .iter()
        .map(|e| (e.seq, e))
        .collect();
    let mut delete_event = tx.prepare("DELETE FROM events WHERE seq = ?1")?;
    let mut delete_content = tx.prepare("DELETE FROM contents WHERE seq = ?1")?;
    let mut delete_assumed = tx.prepare("DELETE FROM assumptions WHERE seq = ?1")?;
    let mut delete_cites = tx.prepare("DELETE FROM citations WHERE seq = ?1")?;
    let mut cite = tx.prepare("INSERT INTO citations (seq, pos, evidence) VALUES (?1, ?2, ?3)")?;
    let mut confidence = tx.prepare("UPDATE events SET confidence = ?2 WHERE seq = ?1")?;
    let mut crc = tx.prepare("UPDATE events SET crc = ?2 WHERE seq = ?1")?;
    for &seq in &plan.removed_seqs {
        delete_event.execute([seq as i64])?;
        delete_content.execute([seq as i64])?;
    }
    for before in &plan.original {
        let seq = before.seq as i64;
        match kept.get(&before.seq) {
            None => {
                delete_event.execute([seq])?;
                delete_cites.execute([seq])?;
                delete_assumed.execute([seq])?;
            }
            Some(after) => {
                if after.cites() != before.cites() {
                    delete_cites.execute([seq])?;
                    for (pos, id) in after.cites().iter().enumerate() {
                        cite.execute(params![seq, pos as i64, id])?;
                    }
                }
                if let (EventBody::Believe(a), EventBody::Believe(b)) = (&after.body, &before.body)
                    && a.confidence != b.confidence
                {
                    confidence.execute(params![seq, a.confidence])?;
                }
                if after.cites() != before.cites() || after.body != before.body {
                    crc.execute(params![seq, crate::store::digest::event_crc(after)])?;
                }
            }
        }
    }

    // Derived rows of the replayed pairs.
    // Version rows name topics and agents by header position.
    // The instants of every version replaced or written, for the pages.
    let mut changed: Vec<(i64, i64)> = Vec::new();
    let mut replaced = tx.prepare(
        "SELECT recorded_at, superseded_at FROM versions WHERE topic = ?1 AND agent = ?2",
    )?;
    let mut versions = tx.prepare("DELETE FROM versions WHERE topic = ?1 AND agent = ?2")?;
    let mut truths = tx.prepare("DELETE FROM truths WHERE topic = ?1 AND agent = ?2")?;
    for (agent, topic) in &plan.pairs {
        let pair = params![parent.topic_code(topic), parent.agent_code(agent)];
        let mut rows = replaced.query(pair)?;
        while let Some(r) = rows.next()? {
            changed.push((r.get(0)?, r.get(1)?));
        }
        versions.execute(pair)?;
        truths.execute(params![topic, agent])?;
    }
    changed.extend(
        plan.fork
            .replay
            .versions
            .iter()
            .map(|v| (v.recorded_at, v.superseded_at)),
    );
    let mut outcome = tx.prepare("DELETE FROM outcomes WHERE seq = ?1")?;
    let mut reconfirmation = tx.prepare("DELETE FROM reconfirmations WHERE seq = ?1")?;
    for e in &plan.original {
        outcome.execute([e.seq as i64])?;
        reconfirmation.execute([e.seq as i64])?;
    }
    let offset: i64 =
        parent
            .connection()
            .query_row("SELECT COALESCE(max(id), 0) FROM versions", [], |r| {
                r.get(0)
            })?;
    let assertion_seq = write::assertion_seqs(&plan.fork.dataset.events);
    write::replayed(tx, &plan.fork.replay, offset as u64, &assertion_seq)?;

    // Truths over the fork's own span: only the replayed pairs change, unless the
    // removed events were the log's first or last (then every pair's span moved).
    let span = read::span(tx)?;
    let header = parent.header();
    if span == parent_span {
        let fresh = answers::truths(
            header,
            plan.fork.replay.versions.iter(),
            span.unwrap_or((0, 0)),
        );
        write::write_truths(tx, &fresh)?;
    } else {
        tx.execute("DELETE FROM truths", [])?;
        let all = read::versions(tx)?;
        let fresh = answers::truths(header, all.iter(), span.unwrap_or((0, 0)));
        write::write_truths(tx, &fresh)?;
    }
    // The scrub index and the pages only where versions and marks changed.
    let replaced = scrub::Replaced {
        pairs: plan
            .pairs
            .iter()
            .filter_map(|(agent, topic)| {
                let code = |c: i64| u32::try_from(c).ok();
                Some((
                    code(parent.topic_code(topic))?,
                    code(parent.agent_code(agent))?,
                ))
            })
            .collect(),
        events: (plan.original.iter().map(|e| e.seq))
            .chain(plan.removed_seqs.iter().copied())
            .collect(),
        cited: plan
            .original
            .iter()
            .flat_map(Event::cites)
            .map(String::as_str)
            .collect(),
    };
    scrub::patch(tx, header, &replaced)?;
    crate::store::pages::patch(tx, &changed)?;
    Ok(())
}

/// The fork's `meta`: where it came from, when, by which asof, and `meta`
/// (its lineage).
fn write_meta(
    tx: &Transaction,
    parent: &Store,
    meta: &[(&'static str, String)],
) -> Result<(), StoreError> {
    let mut set = tx.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)")?;
    set.execute(params!["source", parent.label()])?;
    set.execute(params![
        "loaded_at",
        asof_core::time::format(asof_core::time::now())
    ])?;
    set.execute(params!["asof_version", env!("CARGO_PKG_VERSION")])?;
    // A review judged the parent's log, not this what-if's: it stays with
    // the parent (a fork from a review names it in its lineage).
    tx.execute("DELETE FROM review", [])?;
    tx.execute(
        "DELETE FROM meta WHERE key = 'review_file' OR key = 'review_sha256'",
        [],
    )?;
    for (key, value) in meta {
        set.execute(params![key, value])?;
    }
    Ok(())
}
