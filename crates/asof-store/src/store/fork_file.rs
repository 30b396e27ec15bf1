//! The SQL of a what-if fork ([`crate::fork`]): what the fork reads from its
//! parent (the removed evidence, the pairs citing it and their events), and
//! the fork's file — a byte copy of the parent, patched in one transaction.
//!
//! Removing evidence changes only the (agent, topic) pairs whose events cite
//! it, and scopes never interact (design.md §3). So the fork starts as a byte
//! copy of the parent (hashed on the way for its lineage); in the copy, one
//! transaction deletes the removed and dropped events, rewrites changed
//! citations and scaled confidences, replaces the versions, outcomes,
//! reconfirmations and truths of those pairs with a replay of their events
//! alone, and patches what queries read instead of rows (the scrub index and
//! the version pages) where those versions and events changed. The rows are
//! those of a fork written from scratch except for version ids, which
//! continue after the parent's (`Store::check` matches versions by what they
//! are). Deleted rows are overwritten (`secure_delete`), so removed evidence
//! does not linger in the fork's free pages.

use super::{Store, StoreError, read, scrub, write};
use asof_core::engine::{Replay, answers};
use asof_core::model::{Event, EventBody};
use asof_core::time::Micros;
use rusqlite::{Connection, OptionalExtension, Transaction, params};
use std::collections::{BTreeSet, HashMap};
use std::path::Path;
use std::sync::mpsc::RecvTimeoutError;

/// An (agent, topic) pair.
pub type Pair = (String, String);

/// What a fork reads from its parent before it replays anything.
#[derive(Debug, Default)]
pub(crate) struct Reach {
    /// The seqs of the removed evidence and of the verifications judging it.
    pub removed_seqs: Vec<u64>,
    /// The ids of those verifications, by seq.
    pub dropped_verifications: Vec<String>,
    /// The pairs whose events cite the removed evidence.
    pub pairs: BTreeSet<Pair>,
    /// Every event of those pairs, by seq, with its citations.
    pub original: Vec<Event>,
    /// The reliability of each item those events cite (1.0 if the log lacks it).
    pub reliability: HashMap<String, f64>,
}

/// What the fork's copy is patched with.
pub(crate) struct Patch<'a> {
    pub removed_seqs: &'a [u64],
    pub pairs: &'a BTreeSet<Pair>,
    /// The parent's events of the pairs, by seq.
    pub original: &'a [Event],
    /// The fork's events of the pairs (after the policy), by seq.
    pub events: &'a [Event],
    /// Their replay.
    pub replay: &'a Replay,
}

impl Store {
    /// Runs `read` in one read transaction: the store cannot change while a
    /// fork reads and copies it, or a live screen reads what changed.
    pub fn reading<T, E: From<StoreError>>(
        &self,
        read: impl FnOnce() -> Result<T, E>,
    ) -> Result<T, E> {
        self.connection()
            .execute_batch("BEGIN")
            .map_err(StoreError::from)?;
        let done = read();
        self.connection()
            .execute_batch("COMMIT")
            .map_err(StoreError::from)?;
        done
    }

    /// What removing the evidence `removed` reaches, or the ids the log has
    /// no evidence item for.
    pub(crate) fn reach_of(
        &self,
        removed: &[String],
    ) -> super::Result<std::result::Result<Reach, Vec<String>>> {
        let conn = self.connection();
        let mut find =
            conn.prepare("SELECT seq FROM events WHERE id = ?1 AND kind = 'evidence'")?;
        let mut reach = Reach::default();
        let mut unknown = Vec::new();
        for id in removed {
            match find.query_row([id], |r| r.get::<_, i64>(0)).optional()? {
                Some(seq) => reach.removed_seqs.push(seq as u64),
                None => unknown.push(id.clone()),
            }
        }
        if !unknown.is_empty() {
            return Ok(Err(unknown));
        }
        // Verifications of removed evidence go with it (they touch no pair).
        let mut judged = conn.prepare(
            "SELECT seq, id FROM events WHERE kind = 'verify' AND verifies = ?1 ORDER BY seq",
        )?;
        let mut dropped = Vec::new();
        for id in removed {
            let rows =
                judged.query_map([id], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))?;
            for row in rows {
                let (seq, verification) = row?;
                reach.removed_seqs.push(seq as u64);
                dropped.push((seq, verification));
            }
        }
        dropped.sort();
        reach.dropped_verifications = dropped.into_iter().map(|(_, id)| id).collect();

        let mut citing = conn.prepare(
            "SELECT e.agent, e.topic, e.assertion FROM citations c JOIN events e ON e.seq = c.seq
             WHERE c.evidence = ?1",
        )?;
        let mut owner =
            conn.prepare("SELECT agent, topic FROM events WHERE id = ?1 AND kind = 'believe'")?;
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
                reach.pairs.extend(pair);
            }
        }

        let mut by_pair = conn.prepare(&format!(
            "SELECT {cols} FROM events WHERE topic = ?1 AND agent = ?2 AND kind <> 'evidence'
             UNION ALL
             SELECT {cols} FROM events WHERE assertion IS NOT NULL AND assertion IN
                (SELECT id FROM events WHERE topic = ?1 AND agent = ?2 AND kind <> 'evidence'
                   AND kind = 'believe')",
            cols = read::EVENT_COLUMNS
        ))?;
        let mut cited =
            conn.prepare("SELECT evidence FROM citations WHERE seq = ?1 ORDER BY pos")?;
        for (agent, topic) in &reach.pairs {
            let rows = by_pair.query_map(params![topic, agent], |r| read::event(r, Vec::new()))?;
            for row in rows {
                let mut event = row?;
                let ids = cited
                    .query_map([event.seq as i64], |r| r.get::<_, String>(0))?
                    .collect::<rusqlite::Result<Vec<String>>>()?;
                if let Some(cites) = event.cites_mut() {
                    *cites = ids;
                }
                reach.original.push(event);
            }
        }
        reach.original.sort_by_key(|e| e.seq);

        let mut reliability_of =
            conn.prepare("SELECT reliability FROM events WHERE id = ?1 AND kind = 'evidence'")?;
        for id in reach.original.iter().flat_map(Event::cites) {
            if !reach.reliability.contains_key(id) {
                let r: Option<f64> = reliability_of.query_row([id], |r| r.get(0)).optional()?;
                reach.reliability.insert(id.clone(), r.unwrap_or(1.0));
            }
        }
        Ok(Ok(reach))
    }

    /// The log's retractions that found nothing: (recorded at, seq, id).
    pub(crate) fn unmatched_retractions(&self) -> super::Result<Vec<(Micros, u64, String)>> {
        let mut stmt = self.connection().prepare(
            "SELECT e.recorded_at, e.seq, e.id FROM outcomes o JOIN events e ON e.seq = o.seq
             WHERE o.effect = 'no_match'",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)? as u64, r.get(2)?))
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Writes the fork of this store (whose file is `parent_path`) to `out`:
    /// a copy of the parent's file patched with `patch`, its `meta` rows
    /// those `meta` gives for the parent's SHA-256 (which `hash` computes, on
    /// a second thread while the file is copied). Returns that SHA-256.
    pub(crate) fn write_fork(
        &self,
        parent_path: &Path,
        out: &Path,
        force: bool,
        patch: &Patch,
        hash: impl FnOnce() -> std::io::Result<String> + Send,
        meta: impl FnOnce(&str) -> super::Result<Vec<(&'static str, String)>>,
    ) -> super::Result<String> {
        let parent_span = read::span(self.connection())?;
        let mut sha = String::new();
        super::write_atomically(out, force, |file| -> Result<(), StoreError> {
            // The parent's SHA-256 (its lineage) takes longer than the copy:
            // a second thread reads the parent from the page cache while the
            // kernel copies it and the copy is patched, and the lineage rows
            // go in last.
            std::thread::scope(|scope| {
                let hashing = scope.spawn(|| hash().map_err(io_error(parent_path)));
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
                self.patch(&tx, patch, parent_span)?;
                drop(patched);
                sha = hashing
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))?;
                flushing
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
                    .map_err(io_error(file.path()))?;
                let mut rows = meta(&sha)?;
                // Which pairs differ from the parent at all: `asof diff` compares only these
                // when the parent's SHA-256 still matches.
                let pairs: Vec<&Pair> = patch.pairs.iter().collect();
                rows.push((
                    "fork_pairs",
                    serde_json::to_string(&pairs).unwrap_or_default(),
                ));
                self.write_fork_meta(&tx, &rows)?;
                tx.commit()?;
                conn.close().map_err(|(_, e)| e)?;
                Ok(())
            })
        })?;
        Ok(sha)
    }

    /// Turns the parent's rows in the copy into the fork's.
    fn patch(
        &self,
        tx: &Transaction,
        plan: &Patch,
        parent_span: Option<(Micros, Micros)>,
    ) -> Result<(), StoreError> {
        // The log: removed and dropped events go, changed citations and confidences change.
        let kept: HashMap<u64, &Event> = plan.events.iter().map(|e| (e.seq, e)).collect();
        let mut delete_event = tx.prepare("DELETE FROM events WHERE seq = ?1")?;
        let mut delete_content = tx.prepare("DELETE FROM contents WHERE seq = ?1")?;
        let mut delete_assumed = tx.prepare("DELETE FROM assumptions WHERE seq = ?1")?;
        let mut delete_cites = tx.prepare("DELETE FROM citations WHERE seq = ?1")?;
        let mut cite =
            tx.prepare("INSERT INTO citations (seq, pos, evidence) VALUES (?1, ?2, ?3)")?;
        let mut confidence = tx.prepare("UPDATE events SET confidence = ?2 WHERE seq = ?1")?;
        let mut crc = tx.prepare("UPDATE events SET crc = ?2 WHERE seq = ?1")?;
        for &seq in plan.removed_seqs {
            delete_event.execute([seq as i64])?;
            delete_content.execute([seq as i64])?;
        }
        for before in plan.original {
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
                    if let (EventBody::Believe(a), EventBody::Believe(b)) =
                        (&after.body, &before.body)
                        && a.confidence != b.confidence
                    {
                        confidence.execute(params![seq, a.confidence])?;
                    }
                    if after.cites() != before.cites() || after.body != before.body {
                        crc.execute(params![seq, super::digest::event_crc(after)])?;
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
        for (agent, topic) in plan.pairs {
            let pair = params![self.topic_code(topic), self.agent_code(agent)];
            let mut rows = replaced.query(pair)?;
            while let Some(r) = rows.next()? {
                changed.push((r.get(0)?, r.get(1)?));
            }
            versions.execute(pair)?;
            truths.execute(params![topic, agent])?;
        }
        changed.extend(
            plan.replay
                .versions
                .iter()
                .map(|v| (v.recorded_at, v.superseded_at)),
        );
        let mut outcome = tx.prepare("DELETE FROM outcomes WHERE seq = ?1")?;
        let mut reconfirmation = tx.prepare("DELETE FROM reconfirmations WHERE seq = ?1")?;
        for e in plan.original {
            outcome.execute([e.seq as i64])?;
            reconfirmation.execute([e.seq as i64])?;
        }
        let offset: i64 =
            self.connection()
                .query_row("SELECT COALESCE(max(id), 0) FROM versions", [], |r| {
                    r.get(0)
                })?;
        let assertion_seq = write::assertion_seqs(plan.events);
        write::replayed(tx, plan.replay, offset as u64, &assertion_seq)?;

        // Truths over the fork's own span: only the replayed pairs change, unless the
        // removed events were the log's first or last (then every pair's span moved).
        let span = read::span(tx)?;
        let header = self.header();
        if span == parent_span {
            let fresh =
                answers::truths(header, plan.replay.versions.iter(), span.unwrap_or((0, 0)));
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
                    Some((code(self.topic_code(topic))?, code(self.agent_code(agent))?))
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
        super::pages::patch(tx, &changed)?;
        Ok(())
    }

    /// The fork's `meta`: where it came from, when, by which asof, and `meta`
    /// (its lineage).
    fn write_fork_meta(
        &self,
        tx: &Transaction,
        meta: &[(&'static str, String)],
    ) -> Result<(), StoreError> {
        let mut set = tx.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)")?;
        set.execute(params!["source", self.label()])?;
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
