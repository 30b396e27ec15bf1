//! Reads what belief quality (design.md §4, [`asof_core::engine::quality`]) needs from a
//! store beyond the versions themselves (which carry their support times):
//! the topics' aging settings and the verifications, one index range.

use super::Belief;
use crate::store::Store;
use asof_core::engine::quality::Ledger;
use asof_core::model::{Verification, VerifyState};
use asof_core::time::Micros;

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
        let v = Verification {
            id: r.get(1)?,
            evidence: r.get(2)?,
            state,
            by: r.get::<_, Option<String>>(4)?.unwrap_or_default(),
            recorded_at: r.get(5)?,
            note: r.get(6)?,
        };
        ledger.add_verification(v, r.get::<_, i64>(0)? as u64);
    }
    Ok(())
}

/// Every assertion's assumed fields, into `ledger`.
fn add_assumed(store: &Store, ledger: &mut Ledger) -> rusqlite::Result<()> {
    for (id, fields) in crate::store::read::assumptions_by_id(store.connection())? {
        ledger.add_assumed(&id, fields);
    }
    Ok(())
}

/// The ledger of a store: its topics' aging settings and every verification
/// (a version carries its own support times, so nothing else is read).
pub fn ledger(store: &Store) -> crate::store::Result<Ledger> {
    let mut ledger = Ledger::new(store.header());
    add_verdicts(store, &mut ledger)?;
    add_assumed(store, &mut ledger)?;
    ledger.seal();
    Ok(ledger)
}

/// The end of the log: where a history reads still-held versions' quality.
pub fn end_of_log(store: &Store) -> crate::store::Result<Micros> {
    Ok(super::recorded_span(store)?.map_or(0, |(_, last)| last))
}

/// [`asof_core::engine::quality::answer`] over beliefs of one topic held at `at`.
pub fn answer_of(
    ledger: &Ledger,
    held: &[&Belief],
    cardinality: asof_core::model::Cardinality,
    at: Micros,
    about: Option<Micros>,
) -> asof_core::engine::quality::Answer {
    asof_core::engine::quality::answer(
        ledger,
        held.iter().map(|b| (&b.version, &b.supported_by[..])),
        cardinality,
        at,
        about,
    )
}
