//! A redacted copy of a store, in memory (docs/review.md): every text of the
//! log, the header, the meta rows and the review table passed through a
//! redactor, so any export read from the copy writes no secret. What replay
//! derived is kept as it was derived from the unredacted log (two claims
//! that differ only in a secret stay two claims); the file the store came
//! from is never written.

use super::{Result, Store, packed_header, read};
use rusqlite::{Connection, params};

impl Store {
    /// An in-memory copy of this store with `redact` applied to every text
    /// a person reads: evidence summaries and whole contents, sources,
    /// locators, claims, rationales, reasons and notes, the incident's
    /// title, agent names, topic questions and resolutions, meta values
    /// (an import's summary) and the review table. Ids are not texts: they
    /// key the log and stay as they are.
    pub fn redacted(&self, redact: &dyn Fn(&str) -> String) -> Result<Store> {
        let mut copy = Connection::open_in_memory()?;
        {
            let backup = rusqlite::backup::Backup::new(&self.conn, &mut copy)?;
            backup.run_to_completion(4096, std::time::Duration::ZERO, None)?;
        }
        let tx = copy.transaction()?;
        {
            let mut rows = tx.prepare(
                "SELECT seq, claim, source, locator, text FROM events \
                 WHERE claim IS NOT NULL OR source IS NOT NULL OR locator IS NOT NULL OR text IS NOT NULL",
            )?;
            let mut set = tx.prepare(
                "UPDATE events SET claim = ?2, source = ?3, locator = ?4, text = ?5 WHERE seq = ?1",
            )?;
            let mut changed = Vec::new();
            let mut q = rows.query([])?;
            while let Some(r) = q.next()? {
                let seq: i64 = r.get(0)?;
                let before: [Option<String>; 4] = [r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?];
                let after = before.clone().map(|t| t.map(|t| redact(&t)));
                if after != before {
                    changed.push((seq, after));
                }
            }
            for (seq, [claim, source, locator, text]) in changed {
                set.execute(params![seq, claim, source, locator, text])?;
            }
        }
        rewrite(&tx, "contents", "seq", "text", redact)?;
        rewrite(&tx, "review", "pos", "line", redact)?;
        rewrite(&tx, "meta", "key", "value", redact)?;
        // Two claims may redact to one text: the copy's claims need not be
        // unique (it is read, never written to again).
        tx.execute_batch(
            "CREATE TABLE claims_redacted (code INTEGER PRIMARY KEY, text TEXT NOT NULL);
             INSERT INTO claims_redacted SELECT code, text FROM claims;
             DROP TABLE claims;
             ALTER TABLE claims_redacted RENAME TO claims;",
        )?;
        rewrite(&tx, "claims", "code", "text", redact)?;
        rewrite(&tx, "agents", "idx", "name", redact)?;
        rewrite(&tx, "topics", "idx", "question", redact)?;
        rewrite(&tx, "topics", "idx", "resolution", redact)?;
        let mut header = self.header.clone();
        header.incident.title = redact(&header.incident.title);
        for a in &mut header.agents {
            a.name = redact(&a.name);
        }
        for t in &mut header.topics {
            t.question = redact(&t.question);
            t.resolution = t.resolution.as_deref().map(redact);
        }
        packed_header::write(&tx, &header)?;
        tx.commit()?;
        let header = read::header(&copy)?;
        Ok(Store::of(copy, self.label.clone(), header))
    }
}

/// `UPDATE table SET column = redact(column)` for the rows it changes.
fn rewrite(
    tx: &rusqlite::Transaction,
    table: &str,
    key: &str,
    column: &str,
    redact: &dyn Fn(&str) -> String,
) -> rusqlite::Result<()> {
    let changed: Vec<(rusqlite::types::Value, String)> = {
        let mut rows = tx.prepare(&format!(
            "SELECT {key}, {column} FROM {table} WHERE {column} IS NOT NULL"
        ))?;
        let mut out = Vec::new();
        let mut q = rows.query([])?;
        while let Some(r) = q.next()? {
            let text: String = r.get(1)?;
            let after = redact(&text);
            if after != text {
                out.push((r.get(0)?, after));
            }
        }
        out
    };
    let mut set = tx.prepare(&format!(
        "UPDATE {table} SET {column} = ?2 WHERE {key} = ?1"
    ))?;
    for (k, text) in changed {
        set.execute(params![k, text])?;
    }
    Ok(())
}
