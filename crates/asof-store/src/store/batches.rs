//! What each of a follow's batches changed, kept in the `batches` table so a
//! reader that holds the store in memory (a following TUI's timeline) reads
//! again only that: the scrub index's rows the batch wrote or deleted, and
//! the log's events it wrote (design.md §6, "A live screen reads what
//! changed").
//!
//! ```text
//! n         the batch's number: its commit's instant (µs since the epoch),
//!           at least one past the last, so a table made again never
//!           repeats a number a reader saw
//! log_from  every event from this seq on may have been written
//! log_only  and these seqs before it (space-separated)
//! scrub     the scrub rows written or deleted (space-separated; "*": all)
//! ```
//!
//! A reader that saw batch `n` takes the rows after it, as long as row `n`
//! is still there; otherwise (the table was cleared, made again, or `n` is
//! older than the [`KEPT`] rows kept) it reads the store whole. So every
//! writer of the index or the log in place either records its batch here
//! (a follow) or clears the table (a rebuild, a fork's patch): a reader can
//! never take a change it was not told of for no change.

use super::read::Seqs;
use rusqlite::{Connection, OptionalExtension};
use std::collections::HashSet;

/// The table, made by the first batch that records in a store.
const TABLE: &str = "CREATE TABLE IF NOT EXISTS batches (
    n        INTEGER PRIMARY KEY,
    log_from INTEGER NOT NULL,
    log_only TEXT NOT NULL,
    scrub    TEXT NOT NULL
)";

/// How many batches are kept: a reader further behind reads the store whole.
pub(crate) const KEPT: i64 = 4096;

/// Records a batch that wrote the log's events `log` names and the scrub
/// rows `rows`, in the batch's transaction.
pub(crate) fn record(conn: &Connection, log: &Seqs, rows: &[String]) -> rusqlite::Result<()> {
    conn.execute_batch(TABLE)?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_micros()).unwrap_or(i64::MAX));
    let last: Option<i64> = conn
        .prepare_cached("SELECT max(n) FROM batches")?
        .query_row([], |r| r.get(0))?;
    let n = last.map_or(now, |last| now.max(last.saturating_add(1)));
    let mut rows: Vec<&str> = rows.iter().map(String::as_str).collect();
    rows.sort_unstable();
    rows.dedup();
    let only: Vec<String> = log.only.iter().map(u64::to_string).collect();
    conn.prepare_cached(
        "INSERT INTO batches (n, log_from, log_only, scrub) VALUES (?1, ?2, ?3, ?4)",
    )?
    .execute(rusqlite::params![
        n,
        i64::try_from(log.from).unwrap_or(i64::MAX),
        only.join(" "),
        rows.join(" "),
    ])?;
    // Kept by count, not by time (n is an instant).
    conn.prepare_cached(
        "DELETE FROM batches WHERE n < (SELECT n FROM batches ORDER BY n DESC LIMIT 1 OFFSET ?1)",
    )?
    .execute([KEPT - 1])?;
    Ok(())
}

/// Forgets every batch recorded: a writer changed the store otherwise, and
/// a reader must read it whole.
pub(crate) fn clear(conn: &Connection) -> rusqlite::Result<()> {
    if exists(conn)? {
        conn.execute("DELETE FROM batches", [])?;
    }
    Ok(())
}

fn exists(conn: &Connection) -> rusqlite::Result<bool> {
    conn.prepare_cached(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'batches'",
    )?
    .query_row([], |r| r.get::<_, i64>(0))
    .map(|n| n > 0)
}

/// What the batches after one a reader saw changed, together.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Since {
    /// The newest batch recorded (the one seen, when none came after).
    pub newest: Option<i64>,
    /// The log's events written.
    pub log: Seqs,
    /// The scrub rows written or deleted (`None`: every one).
    pub rows: Option<HashSet<String>>,
}

/// The newest batch recorded, if any.
pub(crate) fn newest(conn: &Connection) -> rusqlite::Result<Option<i64>> {
    if !exists(conn)? {
        return Ok(None);
    }
    conn.prepare_cached("SELECT max(n) FROM batches")?
        .query_row([], |r| r.get(0))
}

/// What the batches after batch `seen` changed; `None` when the store
/// cannot say (no batch seen, or that batch is no longer recorded: read the
/// store whole).
pub(crate) fn since(conn: &Connection, seen: Option<i64>) -> rusqlite::Result<Option<Since>> {
    let Some(seen) = seen else {
        return Ok(None);
    };
    if !exists(conn)? {
        return Ok(None);
    }
    let still: Option<i64> = conn
        .prepare_cached("SELECT n FROM batches WHERE n = ?1")?
        .query_row([seen], |r| r.get(0))
        .optional()?;
    if still.is_none() {
        return Ok(None);
    }
    let mut stmt = conn.prepare_cached(
        "SELECT n, log_from, log_only, scrub FROM batches WHERE n > ?1 ORDER BY n",
    )?;
    let mut q = stmt.query([seen])?;
    let mut since = Since {
        newest: Some(seen),
        log: Seqs {
            from: u64::MAX,
            only: Vec::new(),
        },
        rows: Some(HashSet::new()),
    };
    while let Some(r) = q.next()? {
        since.newest = Some(r.get(0)?);
        let Ok(from) = u64::try_from(r.get::<_, i64>(1)?) else {
            return Ok(None);
        };
        since.log.from = since.log.from.min(from);
        for seq in r.get_ref(2)?.as_str()?.split_ascii_whitespace() {
            let Ok(seq) = seq.parse() else {
                return Ok(None);
            };
            since.log.only.push(seq);
        }
        for row in r.get_ref(3)?.as_str()?.split_ascii_whitespace() {
            match row == super::scrub::EVERY_ROW {
                true => since.rows = None,
                false => {
                    if let Some(rows) = &mut since.rows {
                        rows.insert(row.to_owned());
                    }
                }
            }
        }
    }
    let from = since.log.from;
    since.log.only.retain(|&seq| seq < from);
    since.log.only.sort_unstable();
    since.log.only.dedup();
    Ok(Some(since))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seqs(from: u64, only: &[u64]) -> Seqs {
        Seqs {
            from,
            only: only.to_vec(),
        }
    }

    fn rows(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| n.to_string()).collect()
    }

    /// Batches after one seen are taken together; one no longer recorded
    /// (cleared, or never seen) says to read the store whole.
    #[test]
    fn the_batches_after_one_seen_are_taken_together() {
        let conn = Connection::open_in_memory().expect("memory");
        assert_eq!(newest(&conn).expect("newest"), None, "no table yet");
        clear(&conn).expect("clearing no table");
        record(&conn, &seqs(10, &[]), &rows(&["marks/3", "claims"])).expect("one");
        let first = newest(&conn).expect("newest");
        assert!(first.is_some());
        assert_eq!(
            since(&conn, first).expect("since"),
            Some(Since {
                newest: first,
                log: seqs(u64::MAX, &[]),
                rows: Some(HashSet::new()),
            }),
            "nothing after the newest"
        );
        record(&conn, &seqs(20, &[4, 12]), &rows(&["marks/3", "marks/4"])).expect("two");
        record(&conn, &seqs(15, &[2, 17]), &rows(&["versions"])).expect("three");
        let last = newest(&conn).expect("newest");
        assert!(last > first, "{last:?} after {first:?}");
        let got = since(&conn, first).expect("since").expect("recorded");
        assert_eq!(got.newest, last);
        assert_eq!(got.log, seqs(15, &[2, 4, 12]), "17 lies past 15");
        let mut names: Vec<String> = got.rows.expect("rows").into_iter().collect();
        names.sort();
        assert_eq!(names, ["marks/3", "marks/4", "versions"]);
        assert_eq!(since(&conn, None).expect("since"), None, "none seen");
        assert_eq!(
            since(&conn, Some(1)).expect("since"),
            None,
            "never recorded"
        );
        record(
            &conn,
            &seqs(30, &[]),
            &rows(&[super::super::scrub::EVERY_ROW]),
        )
        .expect("all");
        assert_eq!(
            since(&conn, first).expect("since").expect("recorded").rows,
            None
        );
        clear(&conn).expect("clear");
        assert_eq!(since(&conn, last).expect("since"), None, "cleared");
    }

    /// Only the last [`KEPT`] batches are kept: a reader further behind
    /// reads the store whole.
    #[test]
    fn only_the_last_batches_are_kept() {
        let conn = Connection::open_in_memory().expect("memory");
        record(&conn, &seqs(1, &[]), &[]).expect("first");
        let first = newest(&conn).expect("newest");
        for k in 0..KEPT {
            record(&conn, &seqs(k as u64 + 2, &[]), &[]).expect("record");
        }
        let count: i64 = conn
            .query_row("SELECT count(*) FROM batches", [], |r| r.get(0))
            .expect("count");
        assert_eq!(count, KEPT);
        assert_eq!(
            since(&conn, first).expect("since"),
            None,
            "the first let go"
        );
    }
}
