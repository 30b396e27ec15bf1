//! Whether a store file is whole (`asof check`), and the way out when it is
//! not: SQLite's own integrity check over every page, and every event of the
//! log against its checksum (`store/digest.rs`). The log is what everything
//! else derives from, so the verdict is one of three:
//!
//! ```text
//!   SQLite ok, log ok        → compare the derived rows with a fresh replay
//!   SQLite damaged, log ok   → `asof rebuild STORE` (writes a new file from the log)
//!   log damaged              → load it again from its source (`asof load …`)
//! ```

use super::{StoreError, digest, read};
use asof_core::model::Dataset;
use rusqlite::{Connection, OpenFlags};
use std::path::Path;

/// What SQLite and the log's checksums say of a store file.
#[derive(Debug, Clone, Default)]
pub struct Diagnosis {
    /// SQLite's integrity check where it found damage (its first lines).
    pub sqlite: Vec<String>,
    /// What is wrong with the log itself: rows that do not read, events that
    /// do not match their checksum. Empty when the log is whole.
    pub log: Vec<String>,
    /// The source the store was made from, as its meta names it, when the
    /// meta reads: `(how, what)`, e.g. `("load", "datasets/x.jsonl")`.
    pub made_from: Option<(String, String)>,
}

impl Diagnosis {
    /// Whether SQLite and the log's own checks found nothing wrong.
    pub fn is_whole(&self) -> bool {
        self.sqlite.is_empty() && self.log.is_empty()
    }

    /// The one command that recovers the store at `path` (as the user named
    /// it): `rebuild` when only derived rows are damaged, the command that
    /// made it again when its log is.
    pub fn recovery(&self, path: &str) -> String {
        if self.log.is_empty() {
            return format!("asof rebuild {path}");
        }
        match &self.made_from {
            Some((how, input)) if how == "load" => {
                format!("asof load {input} --db {path} --force")
            }
            Some((how, without)) if how == "fork" => {
                format!("asof fork {without} --out {path} --force")
            }
            Some((how, input)) => format!("asof import {how} {input} --db {path} --force"),
            None => format!("asof load DATASET --db {path} --force"),
        }
    }
}

/// The log's tables: what a store cannot be derived again without.
const LOG_TABLES: [&str; 7] = [
    "meta",
    "agents",
    "topics",
    "events",
    "citations",
    "contents",
    "assumptions",
];

/// How many lines of SQLite's integrity check are kept.
const SQLITE_LINES: usize = 20;

/// Checks the store file at `path`: SQLite's integrity check, then every log
/// row read and every event against its checksum.
pub fn diagnose(path: &Path) -> Result<Diagnosis, StoreError> {
    if !path.is_file() {
        return Err(StoreError::NotFound(path.to_owned()));
    }
    // What no check can mend is refused as opening refuses it: a truncated
    // file, one that is no SQLite at all, a store of another application
    // or of another format.
    let in_header = super::file::check_file_header(path)?;
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    super::identify(path, in_header, &conn)?;
    let mut d = Diagnosis {
        sqlite: integrity(&conn),
        ..Diagnosis::default()
    };
    // Each log table read whole, every column of every row.
    for table in LOG_TABLES {
        let scanned = conn
            .prepare(&format!("SELECT * FROM {table}"))
            .and_then(|mut stmt| {
                let columns = stmt.column_count();
                let mut rows = stmt.query([])?;
                while let Some(r) = rows.next()? {
                    for c in 0..columns {
                        r.get_ref(c)?;
                    }
                }
                Ok(())
            });
        if let Err(e) = scanned {
            d.log
                .push(format!("the log's table `{table}` does not read: {e}"));
        }
    }
    d.made_from = made_from(&conn);
    if !d.log.is_empty() {
        return Ok(d);
    }
    match read::events(&conn) {
        Ok(events) => {
            let mut stmt = conn.prepare("SELECT seq, crc FROM events ORDER BY seq")?;
            let stored: Vec<(i64, Option<i64>)> = stmt
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect::<rusqlite::Result<_>>()?;
            for (e, (seq, crc)) in events.iter().zip(&stored) {
                if Some(digest::event_crc(e)) != *crc || e.seq as i64 != *seq {
                    d.log.push(format!(
                        "event #{} ({}) does not match its checksum: a byte of it changed",
                        e.seq,
                        e.id()
                    ));
                    if d.log.len() >= SQLITE_LINES {
                        break;
                    }
                }
            }
        }
        Err(e) => d.log.push(format!("the log does not read: {e}")),
    }
    Ok(d)
}

/// SQLite's `integrity_check`: empty when it says `ok`.
fn integrity(conn: &Connection) -> Vec<String> {
    let lines = conn
        .prepare(&format!("PRAGMA integrity_check({SQLITE_LINES})"))
        .and_then(|mut stmt| {
            stmt.query_map([], |r| r.get::<_, String>(0))?
                .collect::<rusqlite::Result<Vec<String>>>()
        });
    match lines {
        Ok(lines) if lines == ["ok"] => Vec::new(),
        Ok(lines) => lines,
        Err(e) => vec![e.to_string()],
    }
}

/// How the store was made, from its meta: an import's format and input, or
/// the dataset it was loaded from.
fn made_from(conn: &Connection) -> Option<(String, String)> {
    if let Ok(Some(parent)) = read::meta(conn, "fork_parent") {
        let removed = read::meta(conn, "fork_removed").ok()??;
        return Some(("fork".to_owned(), format!("{parent} --without {removed}")));
    }
    if let Ok(Some(json)) = read::meta(conn, "import_report")
        && let Ok(report) = serde_json::from_str::<serde_json::Value>(&json)
        && let (Some(format), Some(input)) = (report["format"].as_str(), report["input"].as_str())
    {
        // The options it was read with, as flags again (the ids follow
        // from them).
        let inputs = input.replace(", ", " ");
        let with = match report["read_with"].as_str() {
            Some(flags) => format!("{inputs} {flags}"),
            None => inputs,
        };
        return Some((format.to_owned(), with));
    }
    let source = read::meta(conn, "source").ok()??;
    (!source.is_empty() && source != "demo").then(|| ("load".to_owned(), source))
}

/// Writes the store at `path` again from its log, into a new file that
/// replaces it (a damaged file's derived rows may not even delete): the log,
/// the meta, a review's findings and a trace's model calls as they are,
/// everything else derived afresh. Refused when the log itself is damaged,
/// or the review cannot be read. Returns the number of versions derived.
pub fn salvage(path: &Path, diagnosis: &Diagnosis) -> Result<usize, StoreError> {
    if !diagnosis.log.is_empty() {
        return Err(StoreError::Damaged {
            path: path.to_owned(),
            reason: format!(
                "its log is damaged ({}); load it again: `{}`",
                diagnosis.log[0],
                diagnosis.recovery(&path.display().to_string())
            ),
        });
    }
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    let header = read::header_from_rows(&conn)?;
    let events = read::events(&conn)?;
    let mut stmt = conn.prepare("SELECT key, value FROM meta")?;
    let meta: Vec<(String, String)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    drop(stmt);
    let calls = read::model_call_rows(&conn)?;
    // A review's findings are not derived from the log: a damaged review
    // table is said, not dropped.
    let review = match meta.iter().any(|(k, _)| k == "review_file") {
        true => read::review_rows(&conn).map_err(|e| StoreError::Damaged {
            path: path.to_owned(),
            reason: format!(
                "its review table cannot be read ({e}), and a review is not derived from the log: load the store again with its review file (`--review`)"
            ),
        })?,
        false => Vec::new(),
    };
    drop(conn);
    let source = meta
        .iter()
        .find(|(k, _)| k == "source")
        .map_or_else(|| path.display().to_string(), |(_, v)| v.clone());
    let dataset = Dataset { header, events };
    let replay = asof_core::engine::replay(&dataset.header, &dataset.events);
    let versions = replay.versions.len();
    let contents = super::Contents {
        dataset: &dataset,
        replay: &replay,
        source: &source,
        meta: Vec::new(),
    };
    super::atomic::write_atomically(path, true, |file| -> Result<(), StoreError> {
        let mut conn = Connection::open(file.path())?;
        conn.execute_batch("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;")?;
        super::write::write_all(&mut conn, &contents)?;
        // The meta as it was (where it came from, an import's summary, a
        // fork's lineage), over what a fresh write puts there.
        let mut put = conn.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)")?;
        for (key, value) in &meta {
            put.execute([key, value])?;
        }
        drop(put);
        // A review's findings, as they were (never part of the log).
        super::write::write_review_rows(&conn, &review)?;
        // A trace's model calls, as they were (not derived from the log).
        let mut put = conn.prepare("INSERT INTO model_calls (n, call) VALUES (?1, ?2)")?;
        for (n, call) in &calls {
            put.execute(rusqlite::params![n, call])?;
        }
        drop(put);
        conn.close().map_err(|(_, e)| e)?;
        Ok(())
    })?;
    Ok(versions)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_way_out_is_rebuild_for_a_whole_log_else_what_made_the_store() {
        let mut d = Diagnosis {
            sqlite: vec!["database disk image is malformed".into()],
            ..Diagnosis::default()
        };
        assert_eq!(d.recovery("x.db"), "asof rebuild x.db");
        d.log
            .push("event #4 (B1) does not match its checksum".into());
        d.made_from = Some(("load".into(), "incident.jsonl".into()));
        assert_eq!(
            d.recovery("x.db"),
            "asof load incident.jsonl --db x.db --force"
        );
        d.made_from = Some(("otlp".into(), "run.jsonl --rules r.yaml".into()));
        assert_eq!(
            d.recovery("x.db"),
            "asof import otlp run.jsonl --rules r.yaml --db x.db --force"
        );
        d.made_from = Some(("fork".into(), "p.db --without E15".into()));
        assert_eq!(
            d.recovery("x.db"),
            "asof fork p.db --without E15 --out x.db --force"
        );
    }
}
