//! Reads what belief quality (SPEC §9, [`crate::engine::quality`]) needs from a
//! store: only what the beliefs in hand need, so a query over a few topics of
//! a large store reads a few index ranges, not the whole log.

use super::Belief;
use crate::engine::quality::{Ledger, Verdict};
use crate::model::{Origin, VerifyState};
use crate::store::Store;
use crate::time::{Interval, Micros};
use std::collections::HashSet;

/// Every verification in the store, into `ledger`.
fn add_verdicts(store: &Store, ledger: &mut Ledger) -> rusqlite::Result<()> {
    let mut stmt = store.connection().prepare_cached(
        "SELECT seq, id, verifies, state, source, recorded_at, text
         FROM events INDEXED BY events_verifications WHERE kind = 'verify'",
    )?;
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        let state: String = r.get(3)?;
        let Some(state) = VerifyState::parse(&state) else {
            continue; // the schema's CHECK admits only the six states
        };
        let evidence: String = r.get(2)?;
        ledger.add_verdict(
            &evidence,
            Verdict {
                seq: r.get::<_, i64>(0)? as u64,
                id: r.get(1)?,
                state,
                by: r.get::<_, Option<String>>(4)?.unwrap_or_default(),
                since: r.get(5)?,
                note: r.get(6)?,
            },
        );
    }
    Ok(())
}

/// The reconfirmations of one (agent, topic) pair's assertions, into `ledger`.
fn add_reconfirmations(
    store: &Store,
    agent: &str,
    topic: &str,
    ledger: &mut Ledger,
) -> rusqlite::Result<()> {
    let mut stmt = store.connection().prepare_cached(
        "SELECT e.recorded_at, v.assertion, v.valid_from, v.valid_to
         FROM events e JOIN reconfirmations r ON r.seq = e.seq JOIN versions v ON v.id = r.version
         WHERE e.topic = ?1 AND e.agent = ?2 AND e.kind <> 'evidence'",
    )?;
    let mut rows = stmt.query(rusqlite::params![topic, agent])?;
    while let Some(r) = rows.next()? {
        let assertion: String = r.get(1)?;
        ledger.add_reconfirmation(&assertion, r.get(0)?, Interval::new(r.get(2)?, r.get(3)?));
    }
    Ok(())
}

/// Every reconfirmation in the store, into `ledger`.
fn add_all_reconfirmations(store: &Store, ledger: &mut Ledger) -> rusqlite::Result<()> {
    let mut stmt = store.connection().prepare_cached(
        "SELECT e.recorded_at, v.assertion, v.valid_from, v.valid_to
         FROM reconfirmations r JOIN events e ON e.seq = r.seq JOIN versions v ON v.id = r.version",
    )?;
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        let assertion: String = r.get(1)?;
        ledger.add_reconfirmation(&assertion, r.get(0)?, Interval::new(r.get(2)?, r.get(3)?));
    }
    Ok(())
}

/// Above this many (agent, topic) pairs, [`ledger_for`] reads every
/// reconfirmation at once instead of looking each pair up.
const PAIRS_LOOKED_UP: usize = 8;

/// A ledger for `beliefs`: their topics' settings, every verification, the
/// reconfirmations of their (agent, topic) pairs and when the assertions of
/// split versions were recorded.
pub fn ledger_for<'a>(
    store: &Store,
    beliefs: impl IntoIterator<Item = &'a Belief>,
) -> rusqlite::Result<Ledger> {
    let mut ledger = Ledger::new(store.header());
    add_verdicts(store, &mut ledger)?;
    let beliefs: Vec<&Belief> = beliefs.into_iter().collect();
    let pairs: HashSet<(&str, &str)> = beliefs
        .iter()
        .map(|b| (&*b.version.agent, &*b.version.topic))
        .collect();
    // A pair's look-up reads every assertion of the pair, so for many pairs
    // (all topics) reading the reconfirmations table once is far cheaper: it
    // holds one row per reconfirmed version, a small fraction of the log.
    if pairs.len() > PAIRS_LOOKED_UP {
        add_all_reconfirmations(store, &mut ledger)?;
    } else {
        for (agent, topic) in pairs {
            add_reconfirmations(store, agent, topic, &mut ledger)?;
        }
    }
    let mut asserted = store
        .connection()
        .prepare_cached("SELECT recorded_at FROM events WHERE id = ?1")?;
    for b in beliefs {
        let v = &b.version;
        if v.origin == Origin::Split && !ledger.knows_assertion(&v.assertion) {
            let at: Micros = asserted.query_row([&*v.assertion], |r| r.get(0))?;
            ledger.set_asserted_at(&v.assertion, at);
        }
    }
    ledger.seal();
    Ok(ledger)
}

/// A ledger for the whole store (the TUI, the report).
pub fn ledger(store: &Store) -> rusqlite::Result<Ledger> {
    let mut ledger = Ledger::new(store.header());
    add_verdicts(store, &mut ledger)?;
    add_all_reconfirmations(store, &mut ledger)?;
    let conn = store.connection();
    let mut stmt = conn.prepare(
        "SELECT DISTINCT a.id, a.recorded_at FROM versions v JOIN events a ON a.seq = v.assertion_seq
         WHERE v.origin = 'split'",
    )?;
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        let id: String = r.get(0)?;
        ledger.set_asserted_at(&id, r.get(1)?);
    }
    ledger.seal();
    Ok(ledger)
}

/// The end of the log: where a history reads still-held versions' quality.
pub fn end_of_log(store: &Store) -> rusqlite::Result<Micros> {
    Ok(super::recorded_span(store)?.map_or(0, |(_, last)| last))
}

/// [`crate::engine::quality::answer`] over beliefs of one topic held at `at`.
pub fn answer_of(
    ledger: &Ledger,
    held: &[&Belief],
    cardinality: crate::model::Cardinality,
    at: Micros,
    about: Option<Micros>,
) -> crate::engine::quality::Answer {
    crate::engine::quality::answer(
        ledger,
        held.iter().map(|b| (&b.version, &b.supported_by[..])),
        cardinality,
        at,
        about,
    )
}
